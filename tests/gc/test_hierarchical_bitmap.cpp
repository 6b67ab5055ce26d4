#include <doctest/doctest.h>

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
  constexpr std::size_t kSize = 64 * 64 * 8;
  HierarchicalBitmap bitmap(kSize);
  const unsigned threads = 4;
  // Each thread owns the bits i with i % threads == t, so the final state is known,
  // while summary words are shared and contended.
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      std::mt19937 rng(t);
      for (int round = 0; round < 20000; ++round) {
        const std::size_t i = (rng() % (kSize / threads)) * threads + t;
        bitmap.set_atomic(i);
        bitmap.clear_atomic(i);
      }
      for (std::size_t i = t; i < kSize; i += threads * 7) bitmap.set_atomic(i);
    });
  for (auto& w : workers) w.join();
  CHECK(bitmap.check_invariant());
  for (std::size_t i = 0; i < kSize; ++i) REQUIRE(bitmap.test(i) == ((i % (threads * 7)) < threads));
}
