#include <doctest/doctest.h>

#include <set>

#include "heapgraph/edge_space.hpp"

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
