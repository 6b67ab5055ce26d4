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
      const std::size_t valid = std::min<std::size_t>(64, size - w * 64);
      const std::uint64_t in_range = valid == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << valid) - 1;
      // Sparse masks, whole words and nothing: a word that fills, empties or stays.
      const std::uint64_t choice = rng() % 4;
      const std::uint64_t mask = in_range & (choice == 0 ? ~std::uint64_t{0} : choice == 1 ? 0 : rng() & rng());
      const bool set = rng() % 2 == 0;
      if (set)
        words.set_word_bits_atomic(w, mask);
      else
        words.clear_word_bits_atomic(w, mask);
      for (std::uint64_t m = mask; m != 0; m &= m - 1) {
        const std::size_t i = w * 64 + static_cast<std::size_t>(std::countr_zero(m));
        if (set)
          bits.set(i);
        else
          bits.clear(i);
      }
      if (step % 53 == 0) {
        REQUIRE(words.check_invariant());
        const std::size_t from = rng() % size;
        REQUIRE(words.find_next(from) == bits.find_next(from));
      }
    }
    CHECK(words.check_invariant());
    CHECK(words.count() == bits.count());
    for (std::size_t i = 0; i < size; ++i) REQUIRE(words.test(i) == bits.test(i));
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
