#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <random>
#include <thread>
#include <vector>

#include "gc/heap/hierarchical_bitmap.hpp"

using gcvm::HierarchicalBitmap;

namespace {

std::size_t model_find_next(const std::vector<bool>& model, std::size_t from) {
  for (std::size_t i = from; i < model.size(); ++i)
    if (model[i]) return i;
  return HierarchicalBitmap::npos;
}

constexpr std::size_t kContendedSize = 64 * 64 * 8;
constexpr unsigned kContendingThreads = 4;

/// Runs body(t, rng) on kContendingThreads threads at once, each with its own seeded
/// random engine, and joins them.
template <typename Body>
void on_contending_threads(Body&& body) {
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < kContendingThreads; ++t)
    workers.emplace_back([&body, t] {
      std::mt19937 rng(t);
      body(t, rng);
    });
  for (auto& w : workers) w.join();
}

/// A random change to level-0 word `w` of a bitmap of `size` bits: whole words, nothing
/// or sparse masks (a word that fills, empties or stays), to set or to clear.
struct WordChange {
  std::uint64_t mask = 0;
  bool set = false;
};
WordChange random_word_change(std::mt19937_64& rng, std::size_t size, std::size_t w) {
  const std::size_t valid = std::min<std::size_t>(64, size - w * 64);
  const std::uint64_t in_range = valid == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << valid) - 1;
  const std::uint64_t choice = rng() % 4;
  const std::uint64_t mask = in_range & (choice == 0 ? ~std::uint64_t{0} : choice == 1 ? 0 : rng() & rng());
  return {mask, rng() % 2 == 0};
}

/// The same change made bit by bit with the plain operations.
void apply_bit_by_bit(HierarchicalBitmap& bits, std::size_t w, const WordChange& change) {
  for (std::uint64_t m = change.mask; m != 0; m &= m - 1) {
    const std::size_t i = w * 64 + static_cast<std::size_t>(std::countr_zero(m));
    if (change.set)
      bits.set(i);
    else
      bits.clear(i);
  }
}

/// Checks `tested` against `model` (changed bit by bit): summaries, a search from a
/// random bit, and with `every_bit` the count and every bit.
void require_same_bits(const HierarchicalBitmap& tested, const HierarchicalBitmap& model, std::mt19937_64& rng,
                       bool every_bit) {
  REQUIRE(tested.check_invariant());
  const std::size_t from = rng() % model.size();
  REQUIRE(tested.find_next(from) == model.find_next(from));
  if (!every_bit) return;
  REQUIRE(tested.count() == model.count());
  for (std::size_t i = 0; i < model.size(); ++i) REQUIRE(tested.test(i) == model.test(i));
}

}  // namespace

TEST_CASE("hierarchical bitmap matches a flat model under random set/clear") {
  for (std::size_t size : {1u, 63u, 64u, 65u, 4095u, 4096u, 4097u, 300000u}) {
    CAPTURE(size);
    HierarchicalBitmap bitmap(size);
    std::vector<bool> model(size, false);
    std::mt19937_64 rng(size);
    CHECK(bitmap.empty());
    CHECK(bitmap.find_first() == HierarchicalBitmap::npos);
    for (int step = 0; step < 20000; ++step) {
      const std::size_t i = rng() % size;
      if (rng() % 3 == 0) {
        bitmap.clear(i);
        model[i] = false;
      } else {
        bitmap.set(i);
        model[i] = true;
      }
      if (step % 97 == 0) {
        const std::size_t from = rng() % size;
        REQUIRE(bitmap.find_next(from) == model_find_next(model, from));
        REQUIRE(bitmap.find_first() == model_find_next(model, 0));
      }
    }
    CHECK(bitmap.check_invariant());
    std::size_t count = 0;
    for (bool b : model) count += b;
    CHECK(bitmap.count() == count);
    std::vector<std::size_t> visited;
    bitmap.for_each_set([&](std::size_t i) { visited.push_back(i); });
    CHECK(visited.size() == count);
    for (std::size_t i : visited) CHECK(model[i]);
  }
}

TEST_CASE("clearing the last bit of a word empties every summary level") {
  HierarchicalBitmap bitmap(64 * 64 * 64 + 1);
  bitmap.set(64 * 64 * 64);
  CHECK(bitmap.find_first() == 64 * 64 * 64);
  bitmap.clear(64 * 64 * 64);
  CHECK(bitmap.empty());
  CHECK(bitmap.check_invariant());
  CHECK(bitmap.find_next(0) == HierarchicalBitmap::npos);
}

TEST_CASE("resize keeps set bits and summaries") {
  HierarchicalBitmap bitmap(100);
  bitmap.set(5);
  bitmap.set(99);
  bitmap.resize(1'000'000);
  CHECK(bitmap.size() == 1'000'000);
  CHECK(bitmap.test(5));
  CHECK(bitmap.test(99));
  CHECK(bitmap.find_next(100) == HierarchicalBitmap::npos);
  bitmap.set(999'999);
  CHECK(bitmap.find_next(100) == 999'999);
  CHECK(bitmap.check_invariant());
  bitmap.resize(10);  // never shrinks
  CHECK(bitmap.size() == 1'000'000);
}

TEST_CASE("concurrent atomic set/clear leaves a consistent bitmap") {
  constexpr std::size_t kSize = kContendedSize;
  constexpr unsigned threads = kContendingThreads;
  HierarchicalBitmap bitmap(kSize);
  // Each thread owns the bits i with i % threads == t, so the final state is known,
  // while summary words are shared and contended.
  on_contending_threads([&](unsigned t, std::mt19937& rng) {
    for (int round = 0; round < 20000; ++round) {
      const std::size_t i = (rng() % (kSize / threads)) * threads + t;
      bitmap.set_atomic(i);
      bitmap.clear_atomic(i);
    }
    for (std::size_t i = t; i < kSize; i += threads * 7) bitmap.set_atomic(i);
  });
  CHECK(bitmap.check_invariant());
  for (std::size_t i = 0; i < kSize; ++i) REQUIRE(bitmap.test(i) == ((i % (threads * 7)) < threads));
}

TEST_CASE("word-wise atomic set/clear match bit-wise operations, summaries included") {
  for (std::size_t size : {64u, 4096u, 4097u, 300000u}) {
    CAPTURE(size);
    HierarchicalBitmap words(size);
    HierarchicalBitmap bits(size);
    std::mt19937_64 rng(size);
    const std::size_t word_count = (size + 63) / 64;
    for (int step = 0; step < 4000; ++step) {
      const std::size_t w = rng() % word_count;
      const WordChange change = random_word_change(rng, size, w);
      if (change.set)
        words.set_word_bits_atomic(w, change.mask);
      else
        words.clear_word_bits_atomic(w, change.mask);
      apply_bit_by_bit(bits, w, change);
      if (step % 53 == 0) require_same_bits(words, bits, rng, false);
    }
    require_same_bits(words, bits, rng, true);
  }
}

TEST_CASE("concurrent word-wise set/clear leaves a consistent bitmap") {
  constexpr std::size_t kSize = kContendedSize;
  constexpr unsigned threads = kContendingThreads;
  HierarchicalBitmap bitmap(kSize);
  // Each thread owns bit t of every 4 in each word: the words are shared by all
  // threads, the summaries contended, and the final state known.
  on_contending_threads([&](unsigned t, std::mt19937& rng) {
    const std::uint64_t own = 0x1111111111111111ull << t;
    for (int round = 0; round < 20000; ++round) {
      const std::size_t w = rng() % (kSize / 64);
      bitmap.set_word_bits_atomic(w, own);
      bitmap.clear_word_bits_atomic(w, own);
    }
    for (std::size_t w = t; w < kSize / 64; w += threads) bitmap.set_word_bits_atomic(w, own);
  });
  CHECK(bitmap.check_invariant());
  for (std::size_t i = 0; i < kSize; ++i) {
    const std::size_t owner = (i % 64) % threads;
    REQUIRE(bitmap.test(i) == ((i / 64) % threads == owner));
  }
}

TEST_CASE("runs of words changed in place and summarized match bit-wise operations") {
  for (std::size_t size : {64u, 4096u, 4097u, 300000u}) {
    CAPTURE(size);
    HierarchicalBitmap runs(size);
    HierarchicalBitmap bits(size);
    std::mt19937_64 rng(size + 1);
    const std::size_t word_count = (size + 63) / 64;
    for (int step = 0; step < 600; ++step) {
      // A run of 1 to 100 words anywhere (across level-1 words too), several changes
      // to its words, then its summaries.
      const std::size_t first = rng() % word_count;
      const std::size_t last = std::min(word_count, first + 1 + rng() % 100);
      for (int changes = 0; changes < 8; ++changes) {
        const std::size_t w = first + rng() % (last - first);
        const WordChange change = random_word_change(rng, size, w);
        if (change.set)
          runs.set_word_bits_in_run(w, change.mask);
        else
          runs.clear_word_bits_in_run(w, change.mask);
        apply_bit_by_bit(bits, w, change);
      }
      runs.summarize_run(first, last);
      if (step % 37 == 0) require_same_bits(runs, bits, rng, false);
    }
    require_same_bits(runs, bits, rng, true);
  }
}

TEST_CASE("concurrent runs of words summarized side by side leave a consistent bitmap") {
  // Runs of 16 words (a parallel sweep's 1,024 blocks), four to a level-1 word, dealt to
  // the threads in turn: every level-1 word is shared, every level-0 word has one owner.
  constexpr std::size_t kSize = 64 * 64 * 64 * 3;
  constexpr std::size_t kRunWords = 16;
  constexpr std::size_t kRuns = kSize / 64 / kRunWords;
  constexpr unsigned threads = kContendingThreads;
  HierarchicalBitmap bitmap(kSize);
  std::vector<std::uint64_t> expected(kSize / 64, 0);
  on_contending_threads([&](unsigned t, std::mt19937& rng) {
    for (int round = 0; round < 3000; ++round) {
      const std::size_t run = (rng() % (kRuns / threads)) * threads + t;
      const std::size_t first = run * kRunWords;
      for (std::size_t w = first; w < first + kRunWords; ++w) {
        // Most words empty or fill whole (a sweep's emptied blocks), some partly.
        const std::uint32_t choice = rng() % 4;
        const std::uint64_t mask = choice == 0   ? 0
                                   : choice == 1 ? ~std::uint64_t{0}
                                                 : (std::uint64_t{rng()} << 32 | rng()) & rng();
        bitmap.clear_word_bits_in_run(w, ~std::uint64_t{0});
        bitmap.set_word_bits_in_run(w, mask);
        expected[w] = mask;
      }
      bitmap.summarize_run(first, first + kRunWords);
    }
  });
  CHECK(bitmap.check_invariant());
  for (std::size_t i = 0; i < kSize; ++i) REQUIRE(bitmap.test(i) == ((expected[i / 64] >> (i % 64)) & 1u));
}
