#include <doctest/doctest.h>

#include <numeric>

#include "heapgraph/adjacency_graph.hpp"
#include "heapgraph/csr_graph.hpp"
#include "heapgraph/graph_spec.hpp"
#include "heapgraph/heap_shape.hpp"
#include "heapgraph/synthetic_heaps.hpp"

using gcvm::analyze_heap_shape;
using gcvm::bfs_levels;
using gcvm::CsrGraph;
using Levels = std::vector<std::uint64_t>;

namespace {

CsrGraph build(const char* spec) {
  CsrGraph g;
  gcvm::build_synthetic_heap(gcvm::parse_graph_spec(spec), g);
  return g;
}

}  // namespace

TEST_CASE("BFS levels: uncapped steps are depths; a width cap spreads each level") {
  const CsrGraph wide = build("wide:1000");
  CHECK(bfs_levels(wide, 0) == Levels{1, 1000});
  CHECK(bfs_levels(wide, 128) == Levels{1, 128, 128, 128, 128, 128, 128, 128, 104});
  CHECK(bfs_levels(wide, 256) == Levels{1, 256, 256, 256, 232});
  CHECK(bfs_levels(wide, 32768) == Levels{1, 1000});
  CHECK(bfs_levels(build("list:100"), 0) == Levels(100, 1));
  CHECK(bfs_levels(build("lists:4x10"), 0) == Levels(10, 4));
  CHECK(bfs_levels(build("lists:4x10"), 3) == Levels{3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 1});
  CHECK(bfs_levels(build("vp-array"), 0) == Levels{64, 65536});
  CHECK(bfs_levels(build("vp-list"), 0) == Levels(8192, 1));
}

TEST_CASE("BFS levels: a cap defers the rest of a level, first in first out") {
  // r -> a, b; a -> c. Uncapped: {r}, {a, b}, {c}. Cap 1: r, a, b, c.
  CsrGraph g;
  const auto r = g.new_object(2, 0), a = g.new_object(1, 0), b = g.new_object(0, 0), c = g.new_object(0, 0);
  g.store_ref(r, 0, a);
  g.store_ref(r, 1, b);
  g.store_ref(a, 0, c);
  g.add_root(r);
  g.add_root(r);  // a duplicate root is taken once
  CHECK(bfs_levels(g, 0) == Levels{1, 2, 1});
  CHECK(bfs_levels(g, 1) == Levels{1, 1, 1, 1});
}

TEST_CASE("heap shape: counts, degree distribution and no-reference share") {
  const CsrGraph wide = build("wide:1000");
  const auto shape = analyze_heap_shape(wide, {128, 256, 0});
  CHECK(shape.objects == 1001);
  CHECK(shape.references == 1000);
  CHECK(shape.roots == 1);
  CHECK(shape.reachable == 1001);
  CHECK(shape.reachable_references == 1000);
  CHECK(shape.degree_histogram == std::map<std::uint64_t, std::uint64_t>{{0, 1000}, {1000, 1}});
  CHECK(shape.max_degree == 1000);
  CHECK(shape.no_reference_share() == doctest::Approx(1000.0 / 1001));
  CHECK(shape.share_with_at_most(4) == doctest::Approx(1000.0 / 1001));
  CHECK(shape.share_with_at_most(1000) == doctest::Approx(1.0));
  CHECK(shape.capped_levels.size() == 2);
  CHECK(shape.capped_levels.at(128).size() == 9);

  // vp-list: 16 lists of 8192, only the first rooted: garbage counts in objects only.
  const auto lists = analyze_heap_shape(build("vp-list"), {});
  CHECK(lists.objects == 131072);
  CHECK(lists.references == 16 * 8191);
  CHECK(lists.reachable == 8192);
  CHECK(lists.degree_histogram == std::map<std::uint64_t, std::uint64_t>{{0, 1}, {1, 8191}});

  // Random graphs: every row sums to the reachable count, which matches an independent BFS.
  gcvm::AdjacencyGraph model;
  gcvm::build_synthetic_heap(gcvm::parse_graph_spec("random:5000:3"), model);
  const CsrGraph random = build("random:5000:3");
  const auto r = analyze_heap_shape(random, {128, 1024});
  CHECK(r.reachable == model.reachable_count());
  CHECK(r.reachable_references == model.reachable_reference_count());
  CHECK(std::accumulate(r.levels.begin(), r.levels.end(), std::uint64_t{0}) == r.reachable);
  for (const auto& [cap, levels] : r.capped_levels) {
    CHECK(std::accumulate(levels.begin(), levels.end(), std::uint64_t{0}) == r.reachable);
    CHECK(levels.size() >= r.levels.size());
    for (auto l : levels) CHECK(l <= cap);
  }
}
