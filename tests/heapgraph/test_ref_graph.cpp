#include <doctest/doctest.h>

#include "heapgraph/ref_graph.hpp"

using namespace gcvm;

TEST_CASE("reserved edges are null, stores land in the vertex's range and mark it dirty") {
  RefGraph graph(1 << 16, 1 << 20);
  REQUIRE(graph.grow_vertices(128));
  const auto base = graph.reserve_edges(64 * 3);
  REQUIRE(base);
  for (ObjectId v = 0; v < 64; ++v) graph.assign_vertex(v, *base + v * 3, 3);
  for (ObjectId v = 0; v < 64; ++v)
    for (ObjectId t : graph.out_edges(v)) CHECK(t == kNullRef);
  graph.dirty().clear();
  graph.record_store(10, 2, 7);
  CHECK(graph.out_edges(10)[2] == 7);
  CHECK(graph.out_edges(10)[0] == kNullRef);
  const auto ranges = graph.dirty().edge_ranges(graph.edge_count());
  REQUIRE(ranges.size() == 1);
  CHECK(ranges[0].begin <= *base + 32);
  CHECK(ranges[0].end > *base + 32);
  graph.clear_out_edges(10);
  CHECK(graph.out_edges(10)[2] == kNullRef);
  CHECK(graph.degree(100) == 0);
}

TEST_CASE("the graph grows in place") {
  RefGraph graph(1 << 20, std::uint64_t{1} << 28);
  REQUIRE(graph.grow_vertices(10));
  const ObjectId* before = graph.edge_data();
  REQUIRE(graph.reserve_edges(16));
  REQUIRE(graph.reserve_edges(std::uint64_t{1} << 24));
  CHECK(graph.edge_data() == before);
  REQUIRE(graph.grow_vertices(1 << 20));
  CHECK(graph.vertex_count() == (1u << 20));
  CHECK_FALSE(graph.grow_vertices((1 << 20) + 1));
}
