#include <doctest/doctest.h>

#include <atomic>
#include <functional>
#include <set>
#include <span>
#include <thread>
#include <vector>

#include "heapgraph/edge_space.hpp"
#include "heapgraph/random.hpp"

using gcvm::EdgeSpace;

TEST_CASE("small sizes are exact classes, large sizes round up by at most a quarter") {
  CHECK(EdgeSpace::size_class(0) == 0);
  CHECK(EdgeSpace::size_class(1) == 1);
  CHECK(EdgeSpace::size_class(4096) == 4096);
  for (std::uint64_t n : {4097ull, 5000ull, 100000ull, 123456789ull}) {
    const auto c = EdgeSpace::size_class(n);
    CHECK(c >= n);
    CHECK(c - n <= n / 4);
  }
}

TEST_CASE("ranges do not overlap and freed ranges are reused") {
  EdgeSpace space(1 << 20);
  std::set<std::pair<std::uint64_t, std::uint64_t>> ranges;
  for (std::uint64_t n : {64ull, 128ull, 64ull, 5000ull, 1ull}) {
    const auto base = space.allocate(n);
    REQUIRE(base);
    for (const auto& [b, len] : ranges) CHECK((*base + n <= b || b + len <= *base));
    ranges.insert({*base, EdgeSpace::size_class(n)});
  }
  const auto high = space.high_water();
  const auto a = space.allocate(640);
  space.release(*a, 640);
  const auto b = space.allocate(640);
  CHECK(*a == *b);
  CHECK(space.high_water() == high + 640);
  CHECK(space.in_use() == high + 640);
}

TEST_CASE("the edge space refuses what does not fit") {
  EdgeSpace space(100);
  CHECK(space.allocate(60));
  CHECK_FALSE(space.allocate(50));
  CHECK(space.allocate(40));
  CHECK(space.high_water() == 100);
}

TEST_CASE("class indices are dense, distinct per class and below kClassCount") {
  std::set<std::size_t> seen;
  std::uint64_t last_class = 0;
  for (std::uint64_t n = 1; n < (std::uint64_t{1} << 40); n += 1 + n / 7) {
    const std::uint64_t c = EdgeSpace::size_class(n);
    const std::size_t index = EdgeSpace::class_index(n);
    CHECK(index < EdgeSpace::kClassCount);
    CHECK(EdgeSpace::class_index(c) == index);
    if (c != last_class) CHECK(seen.insert(index).second);
    last_class = c;
  }
  CHECK(EdgeSpace::class_index(~std::uint64_t{0} >> 1) < EdgeSpace::kClassCount);
}

TEST_CASE("releasing batches in order on many threads leaves the free lists serial release leaves") {
  // Two spaces hand out the same ranges; one releases them one by one, the other in
  // batches on threads that run the batches in reverse; then both hand out the same
  // sequence of sizes and must return the same bases. In either release order, with
  // the batches counted by the release or beforehand (as a parallel sweep's tasks do).
  for (const auto& [last_first, counted] : {std::pair{false, false}, std::pair{true, false}, std::pair{true, true}}) {
    CAPTURE(last_first);
    CAPTURE(counted);
    gcvm::SplitMix64 rng(7);
    const std::uint64_t sizes[] = {1, 2, 5, 17, 64, 128, 4096, 5000, 9000, 70000};
    EdgeSpace serial(std::uint64_t{1} << 36), batched(std::uint64_t{1} << 36);
    std::vector<gcvm::EdgeRange> taken;
    for (int i = 0; i < 40000; ++i) {
      const std::uint64_t n = sizes[rng.below(std::size(sizes))] + (rng.below(4) == 0 ? rng.below(3) : 0);
      const auto a = serial.allocate(n);
      const auto b = batched.allocate(n);
      REQUIRE(a);
      REQUIRE(*a == *b);
      taken.push_back({*a, n});
    }
    for (std::size_t i = taken.size() - 1; i > 0; --i) std::swap(taken[i], taken[rng.below(i + 1)]);
    std::vector<std::span<const gcvm::EdgeRange>> batches;
    for (std::size_t at = 0; at < taken.size();) {
      const std::size_t n = std::min<std::size_t>(taken.size() - at, rng.below(3000));
      batches.emplace_back(taken.data() + at, n);
      at += n;
    }
    if (last_first)
      for (auto r = taken.rbegin(); r != taken.rend(); ++r) serial.release(r->base, r->count);
    else
      for (const gcvm::EdgeRange& r : taken) serial.release(r.base, r.count);
    const auto order = last_first ? EdgeSpace::ReleaseOrder::LastFirst : EdgeSpace::ReleaseOrder::InOrder;
    const auto on_threads = [](std::uint64_t count, const std::function<void(std::uint64_t)>& body) {
      std::atomic<std::uint64_t> next{0};
      std::vector<std::thread> threads;
      for (int t = 0; t < 4; ++t)
        threads.emplace_back([&] {
          for (std::uint64_t i; (i = next.fetch_add(1)) < count;) body(count - 1 - i);
        });
      for (std::thread& t : threads) t.join();
    };
    if (counted) {
      std::vector<EdgeSpace::BatchCounts> counts(batches.size());
      std::vector<EdgeSpace::BatchCounts*> each;
      on_threads(batches.size(), [&](std::uint64_t b) { EdgeSpace::count(batches[b], counts[b]); });
      for (EdgeSpace::BatchCounts& c : counts) each.push_back(&c);
      batched.release_in_order(batches, each, order, on_threads);
    } else {
      batched.release_in_order(batches, order, on_threads);
    }
    CHECK(batched.in_use() == serial.in_use());
    CHECK(batched.in_use() == 0);
    for (const gcvm::EdgeRange& r : taken) {
      const auto a = serial.allocate(r.count);
      const auto b = batched.allocate(r.count);
      REQUIRE(a);
      REQUIRE(b);
      CHECK(*a == *b);
    }
    CHECK(batched.high_water() == serial.high_water());
  }
}
