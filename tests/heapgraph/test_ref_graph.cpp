#include <doctest/doctest.h>

#include <utility>
#include <vector>

#include "heapgraph/ref_graph.hpp"

using namespace gcvm;

TEST_CASE("reserved edges are null, stores land in the vertex's range and mark exactly their slot") {
  RefGraph graph(1 << 16, 1 << 20);
  REQUIRE(graph.grow_vertices(128));
  const auto base = graph.reserve_edges(64 * 3);
  REQUIRE(base);
  for (ObjectId v = 0; v < 64; ++v) graph.assign_vertex(v, *base + v * 3, 3);
  for (ObjectId v = 0; v < 64; ++v)
    for (ObjectId t : graph.out_edges(v)) CHECK(t == kNullRef);
  CHECK_FALSE(graph.changes().edges.any());  // fresh edges are growth: a consumer copies them by length
  graph.changes().clear();
  graph.record_store(10, 2, 7);
  CHECK(graph.out_edges(10)[2] == 7);
  CHECK(graph.out_edges(10)[0] == kNullRef);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> runs;
  graph.changes().edges.for_each_run(0, graph.edge_count(), [&](auto b, auto e) { runs.emplace_back(b, e); });
  CHECK(runs == std::vector<std::pair<std::uint64_t, std::uint64_t>>{{*base + 32, *base + 33}});
  CHECK_FALSE(graph.changes().vertices.any());
  graph.changes().clear();
  graph.record_store(10, 2, 7);  // the same value: no change
  CHECK_FALSE(graph.changes().any());
  graph.clear_out_edges(10);
  CHECK(graph.out_edges(10)[2] == kNullRef);
  CHECK(graph.changes().edges.count(graph.edge_count()) == 1);
  graph.assign_vertex(10, *base + 30, 3);  // the same range: no change
  CHECK_FALSE(graph.changes().vertices.any());
  graph.assign_vertex(10, *base, 2);
  CHECK(graph.changes().vertices.count(graph.vertex_count()) == 1);
  CHECK(graph.degree(100) == 0);
}

TEST_CASE("a reused edge range is nulled, and only its non-null slots count as changes") {
  RefGraph graph(1 << 16, 1 << 20);
  REQUIRE(graph.grow_vertices(64));
  const auto first = graph.reserve_edges(8);
  REQUIRE(first);
  graph.assign_vertex(0, *first, 8);
  graph.record_store(0, 1, 5);
  graph.record_store(0, 6, 9);
  graph.release_edges(*first, 8);
  graph.changes().clear();
  const auto again = graph.reserve_edges(8);
  REQUIRE(again);
  CHECK(*again == *first);
  for (std::uint64_t e = *again; e < *again + 8; ++e) CHECK(graph.edge_data()[e] == kNullRef);
  CHECK(graph.changes().edges.count(graph.edge_count()) == 2);
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

TEST_CASE("a vertex run writes growth without change bits and marks exactly the held vertices it changes") {
  RefGraph graph(1 << 16, 1 << 20);
  REQUIRE(graph.grow_vertices(64));
  const auto base = graph.reserve_edges(64 * 2);
  REQUIRE(base);
  for (ObjectId v = 32; v < 40; ++v) graph.assign_vertex(v, *base + (v - 32) * 2, 2);  // already what the run writes
  graph.changes().clear();
  REQUIRE(graph.assign_vertex_run(32, 64, *base, 2));
  CHECK(graph.vertex_count() == 96);
  for (ObjectId v = 32; v < 96; ++v) {
    CHECK(graph.begin(v) == *base + (v - 32) * 2);
    CHECK(graph.degree(v) == 2);
  }
  std::vector<std::pair<std::uint64_t, std::uint64_t>> runs;
  graph.changes().vertices.for_each_run(0, graph.vertex_count(), [&](auto b, auto e) { runs.emplace_back(b, e); });
  CHECK(runs == std::vector<std::pair<std::uint64_t, std::uint64_t>>{{40, 64}});  // 64..95 are growth
  graph.changes().clear();
  REQUIRE(graph.assign_vertex_run(32, 64, *base, 2));  // the same run again: nothing changes
  CHECK_FALSE(graph.changes().any());
  REQUIRE(graph.assign_vertex_run(64, 3, *base + 10, 1));  // one word of changed vertices
  CHECK(graph.changes().vertices.count(graph.vertex_count()) == 3);
  CHECK(graph.begin(66) == *base + 12);
  CHECK(graph.degree(66) == 1);
  CHECK_FALSE(graph.assign_vertex_run(static_cast<ObjectId>(graph.max_vertices() - 8), 16, 0, 0));  // nothing written
  CHECK(graph.vertex_count() == 96);
}
