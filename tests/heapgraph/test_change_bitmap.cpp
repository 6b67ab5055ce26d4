#include <doctest/doctest.h>

#include <atomic>
#include <random>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "heapgraph/change_bitmap.hpp"

using gcvm::ChangeBitmap;
using Runs = std::vector<std::pair<std::uint64_t, std::uint64_t>>;

namespace {

Runs runs_of(const ChangeBitmap& bits, std::uint64_t limit, std::uint64_t from = 0) {
  Runs runs;
  bits.for_each_run(from, limit, [&](std::uint64_t b, std::uint64_t e) { runs.emplace_back(b, e); });
  return runs;
}

/// Maximal runs of `set` in [from, limit): the reference the bitmap is checked against.
Runs runs_of(const std::set<std::uint64_t>& set, std::uint64_t limit, std::uint64_t from = 0) {
  Runs runs;
  for (std::uint64_t i : set) {
    if (i < from) continue;
    if (i >= limit) break;
    if (!runs.empty() && runs.back().second == i)
      ++runs.back().second;
    else
      runs.emplace_back(i, i + 1);
  }
  return runs;
}

}  // namespace

TEST_CASE("change runs are maximal, ordered, cross word and chunk boundaries and clip to the limit") {
  ChangeBitmap bits(1 << 24);
  REQUIRE(bits.resize(3 * ChangeBitmap::kIndicesPerChunk + 100));
  CHECK_FALSE(bits.any());
  for (std::uint64_t i : {5ull, 6ull, 7ull, 63ull, 64ull, 65ull, 4095ull, 4096ull, 8191ull, 12000ull}) bits.mark(i);
  CHECK(bits.any());
  CHECK(runs_of(bits, bits.size()) == Runs{{5, 8}, {63, 66}, {4095, 4097}, {8191, 8192}, {12000, 12001}});
  CHECK(runs_of(bits, 4096) == Runs{{5, 8}, {63, 66}, {4095, 4096}});
  CHECK(runs_of(bits, bits.size(), 64) == Runs{{64, 66}, {4095, 4097}, {8191, 8192}, {12000, 12001}});
  CHECK(runs_of(bits, 8192, 4096) == Runs{{4096, 4097}, {8191, 8192}});
  CHECK(runs_of(bits, 12000, 8192).empty());
  CHECK(bits.count(bits.size()) == 10);
  CHECK(bits.count(4096) == 7);   // a limit on a word boundary
  CHECK(bits.count(65) == 5);     // inside a word: 5, 6, 7, 63, 64
  CHECK(bits.count(64) == 4);
  CHECK(bits.count(0) == 0);
  CHECK(bits.count_up_to(100) == 10);  // every set bit, when fewer than the cap
  CHECK(bits.count_up_to(10) == 10);
  CHECK(bits.count_up_to(3) >= 3);     // stops once the cap is reached
  CHECK(bits.count_up_to(3) <= 10);
  CHECK(bits.count_up_to(0) == 0);
  const auto before = bits.generation();
  bits.clear();
  CHECK(bits.generation() == before + 1);
  CHECK_FALSE(bits.any());
  CHECK(runs_of(bits, bits.size()).empty());
}

TEST_CASE("marking a word marks exactly its set bits") {
  ChangeBitmap bits(1 << 16);
  REQUIRE(bits.resize(1 << 16));
  bits.mark_word(70, 0x8000'0000'0000'0003ull);
  bits.mark(70 * 64 + 2);
  CHECK(runs_of(bits, 1 << 16) == Runs{{70 * 64, 70 * 64 + 3}, {70 * 64 + 63, 70 * 64 + 64}});
  CHECK(bits.count(1 << 16) == 4);
  CHECK(bits.marked_chunks() == 1);
}

TEST_CASE("a full word and a run that fills whole chunks come back as one run") {
  ChangeBitmap bits(1 << 20);
  REQUIRE(bits.resize(1 << 20));
  for (std::uint64_t i = 128; i < 192; ++i) bits.mark(i);
  for (std::uint64_t i = 4000; i < 3 * ChangeBitmap::kIndicesPerChunk + 7; ++i) bits.mark(i);
  CHECK(runs_of(bits, bits.size()) == Runs{{128, 192}, {4000, 3 * ChangeBitmap::kIndicesPerChunk + 7}});
}

TEST_CASE("random marks match a reference set, across clears and growth") {
  std::mt19937_64 rng(7);
  ChangeBitmap bits(std::uint64_t{1} << 26);
  std::set<std::uint64_t> reference;
  std::uint64_t size = 1000;
  REQUIRE(bits.resize(size));
  for (int round = 0; round < 40; ++round) {
    size += rng() % 50000;
    REQUIRE(bits.resize(size));
    const int marks = static_cast<int>(rng() % 3000);
    for (int k = 0; k < marks; ++k) {
      // Clustered and scattered indices alike.
      const std::uint64_t i = rng() % 2 == 0 ? rng() % size : (rng() % (size / 64 + 1)) * 64 + rng() % 8;
      if (i >= size) continue;
      bits.mark(i);
      reference.insert(i);
    }
    const std::uint64_t limit = rng() % 4 == 0 ? rng() % size : size;
    REQUIRE(runs_of(bits, limit) == runs_of(reference, limit));
    // Slices that cut runs, as a parallel sync visits them: together, the same bits.
    const std::uint64_t from = rng() % size;
    REQUIRE(runs_of(bits, limit, from) == runs_of(reference, limit, from));
    if (rng() % 3 == 0) {
      bits.clear();
      reference.clear();
      CHECK_FALSE(bits.any());
    }
  }
}

TEST_CASE("next_marked finds the next chunk marked in the summary, from the chunk of its start, below its limit") {
  constexpr std::uint64_t chunk = ChangeBitmap::kIndicesPerChunk;
  ChangeBitmap bits(std::uint64_t{1} << 24);
  const std::uint64_t size = 200 * chunk + 99;
  REQUIRE(bits.resize(size));
  CHECK(bits.next_marked(0, size) == size);  // nothing marked
  for (const std::uint64_t i : {std::uint64_t{5}, 3 * chunk + 17, 70 * chunk, 130 * chunk + 1, 200 * chunk + 50})
    bits.mark(i);
  CHECK(bits.next_marked(0, size) == 0);
  CHECK(bits.next_marked(4, size) == 0);  // from the chunk of its start
  CHECK(bits.next_marked(chunk, size) == 3 * chunk);
  CHECK(bits.next_marked(3 * chunk + 4000, size) == 3 * chunk);
  CHECK(bits.next_marked(4 * chunk, size) == 70 * chunk);  // across a summary word
  CHECK(bits.next_marked(71 * chunk, size) == 130 * chunk);
  CHECK(bits.next_marked(131 * chunk, size) == 200 * chunk);  // the partial last chunk
  CHECK(bits.next_marked(131 * chunk, 150 * chunk) == 150 * chunk);  // none below the limit
  CHECK(bits.next_marked(4 * chunk, 70 * chunk) == 70 * chunk);
  bits.take_runs(0, 4 * chunk, [](std::uint64_t, std::uint64_t) {});
  CHECK(bits.next_marked(0, size) == 70 * chunk);  // taken chunks are no longer marked
}

TEST_CASE("take_runs takes exactly the bits below its limit, in chunk-aligned slices") {
  std::mt19937_64 rng(11);
  ChangeBitmap bits(std::uint64_t{1} << 22);
  const std::uint64_t size = 3 * ChangeBitmap::kIndicesPerChunk * 64 + 777;  // a partial last chunk and word
  REQUIRE(bits.resize(size));
  std::set<std::uint64_t> reference;
  for (int k = 0; k < 20000; ++k) {
    const std::uint64_t i = rng() % size;
    bits.mark(i);
    reference.insert(i);
  }
  const std::uint64_t limit = size - 500;
  const std::uint64_t slice = 2 * ChangeBitmap::kIndicesPerChunk;
  Runs taken;
  for (std::uint64_t from = 0; from < limit; from += slice)
    bits.take_runs(from, std::min(from + slice, limit), [&](std::uint64_t b, std::uint64_t e) { taken.emplace_back(b, e); });
  // Runs are cut at slice boundaries: compare entry by entry.
  std::set<std::uint64_t> taken_entries;
  for (auto [b, e] : taken)
    for (std::uint64_t i = b; i < e; ++i) taken_entries.insert(i);
  std::set<std::uint64_t> below(reference.begin(), reference.lower_bound(limit));
  CHECK(taken_entries == below);
  // What is left: the bits at or above the limit, still found by a plain walk.
  CHECK(runs_of(bits, size) == runs_of(reference, size, limit));
}

TEST_CASE("a taker running beside the writer never loses a mark") {
  // The writer marks; a second thread takes runs as it goes. Every mark must be taken
  // by some pass or still be set when the writer is done (change_bitmap.hpp).
  ChangeBitmap bits(std::uint64_t{1} << 22);
  const std::uint64_t size = 1 << 20;
  REQUIRE(bits.resize(size));
  std::vector<std::uint64_t> marked;
  std::set<std::uint64_t> taken;
  std::atomic<bool> done{false};
  std::thread taker([&] {
    while (!done.load(std::memory_order_acquire))
      bits.take_runs(0, size, [&](std::uint64_t b, std::uint64_t e) {
        for (std::uint64_t i = b; i < e; ++i) taken.insert(i);
      });
  });
  std::mt19937_64 rng(3);
  for (int k = 0; k < 400000; ++k) {
    const std::uint64_t i = rng() % 8 == 0 ? rng() % size : (rng() % 512) * 64 + rng() % 64;  // hot words too
    bits.mark(i);
    marked.push_back(i);
  }
  done.store(true, std::memory_order_release);
  taker.join();
  bits.for_each_run(0, size, [&](std::uint64_t b, std::uint64_t e) {
    for (std::uint64_t i = b; i < e; ++i) taken.insert(i);
  });
  for (std::uint64_t i : marked) REQUIRE(taken.count(i) == 1);
}

TEST_CASE("dense stretches go whole, at half density or more, the rest as maximal runs, every set bit once") {
  constexpr std::uint64_t kChunk = ChangeBitmap::kIndicesPerChunk;
  std::mt19937_64 rng(7);
  for (int round = 0; round < 40; ++round) {
    const std::uint64_t size = 40 * kChunk + rng() % kChunk;
    ChangeBitmap bits(size);
    bits.resize(size);
    std::set<std::uint64_t> set;
    // Stretches of chunks each marked at a density of its own: empty, sparse, near half,
    // dense, full; some in runs, some at random.
    for (std::uint64_t c = 0; c * kChunk < size; ++c) {
      const unsigned density = static_cast<unsigned>(rng() % 6);  // in tenths, 0 to 10
      const unsigned tenths[] = {0, 1, 4, 5, 7, 10};
      for (std::uint64_t i = c * kChunk; i < std::min(size, (c + 1) * kChunk); ++i)
        if (rng() % 10 < tenths[density]) {
          bits.mark(i);
          set.insert(i);
        }
    }
    const std::uint64_t from = rng() % (3 * kChunk);
    const std::uint64_t limit = size - rng() % (3 * kChunk);
    const std::uint64_t least = (1 + rng() % 4) * kChunk - rng() % 100;
    Runs runs;
    std::vector<std::uint64_t> visited;  // every set bit a visit covers, in order
    std::uint64_t last_end = from, dense_count = 0;
    auto covered = [&](std::uint64_t b, std::uint64_t e) {
      CHECK(b >= last_end);
      last_end = e;
      for (std::uint64_t i = b; i < e; ++i)
        if (set.count(i) != 0) visited.push_back(i);
    };
    bits.for_each_run_or_dense(
        from, limit, least,
        [&](std::uint64_t b, std::uint64_t e) {
          covered(b, e);
          for (std::uint64_t i = b; i < e; ++i) CHECK(set.count(i) == 1);
          runs.emplace_back(b, e);
        },
        [&](std::uint64_t b, std::uint64_t e, std::uint64_t in) {
          covered(b, e);
          ++dense_count;
          CHECK(e - b >= least);
          CHECK(from <= b / kChunk * kChunk);
          CHECK((e + kChunk - 1) / kChunk * kChunk <= limit);
          std::uint64_t count = 0;
          for (std::uint64_t i = b; i < e; ++i) count += set.count(i);
          CHECK(in == count);
          CHECK(2 * in >= e - b);
          CHECK(set.count(b) == 1);
          CHECK(set.count(e - 1) == 1);
        });
    const std::vector<std::uint64_t> expected(set.lower_bound(from), set.lower_bound(limit));
    CHECK(visited == expected);
    CHECK(dense_count > 0);
    // Runs between dense stretches are maximal there: no two visited runs touch unless a
    // chunk boundary where a stretch began or ended cut them.
    for (std::size_t r = 1; r < runs.size(); ++r)
      if (runs[r - 1].second == runs[r].first) CHECK(runs[r].first % kChunk == 0);
  }
}

TEST_CASE("a stretch of dense chunks shorter than the least span is visited run by run") {
  constexpr std::uint64_t kChunk = ChangeBitmap::kIndicesPerChunk;
  ChangeBitmap bits(8 * kChunk);
  bits.resize(8 * kChunk);
  for (std::uint64_t i = kChunk; i < 3 * kChunk; i += 2) bits.mark(i);  // two chunks at half density
  std::uint64_t run_count = 0, dense_count = 0;
  auto count_runs = [&](std::uint64_t, std::uint64_t) { ++run_count; };
  auto count_dense = [&](std::uint64_t, std::uint64_t, std::uint64_t) { ++dense_count; };
  bits.for_each_run_or_dense(0, 8 * kChunk, 2 * kChunk, count_runs, count_dense);
  CHECK(dense_count == 0);
  CHECK(run_count == kChunk);
  run_count = 0;
  bits.for_each_run_or_dense(0, 8 * kChunk, 2 * kChunk - 1, count_runs, count_dense);
  CHECK(dense_count == 1);
  CHECK(run_count == 0);
}
