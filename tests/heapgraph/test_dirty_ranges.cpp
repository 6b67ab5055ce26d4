#include <doctest/doctest.h>

#include "heapgraph/dirty_ranges.hpp"

using gcvm::DirtyRanges;
using gcvm::IndexRange;

TEST_CASE("dirty chunks coalesce into ranges and clip to the array length") {
  DirtyRanges dirty;
  CHECK_FALSE(dirty.any());
  constexpr auto C = DirtyRanges::kEdgeChunk;
  dirty.mark_edge(5);
  dirty.mark_edge(C + 1);
  dirty.mark_edge(5 * C);
  dirty.mark_edges(200 * C - 1, 200 * C + 1);
  CHECK(dirty.any());
  const auto ranges = dirty.edge_ranges(200 * C + 10);
  REQUIRE(ranges.size() == 3);
  CHECK(ranges[0] == IndexRange{0, 2 * C});
  CHECK(ranges[1] == IndexRange{5 * C, 6 * C});
  CHECK(ranges[2] == IndexRange{199 * C, 200 * C + 10});
  CHECK(dirty.vertex_ranges(100).empty());
  dirty.mark_vertices(0, 3000);
  CHECK(dirty.vertex_ranges(2500) == std::vector<IndexRange>{{0, 2500}});
  dirty.clear();
  CHECK_FALSE(dirty.any());
  CHECK(dirty.edge_ranges(1 << 30).empty());
}
