#include <doctest/doctest.h>

#include "heapgraph/adjacency_graph.hpp"

using namespace gcvm;

TEST_CASE("adjacency reachability follows references from roots only") {
  AdjacencyGraph g;
  const auto a = g.new_object(2, 0);
  const auto b = g.new_object(1, 0);
  const auto c = g.new_ref_array(3);
  const auto garbage = g.new_object(1, 0);
  g.store_ref(a, 0, b);
  g.store_ref(b, 0, a);  // cycle
  g.store_ref(a, 1, c);
  g.store_ref(c, 2, c);  // self loop
  g.store_ref(garbage, 0, a);
  g.add_root(a);
  CHECK(g.reachable_count() == 3);
  CHECK(g.reachable_reference_count() == 4);
  CHECK(g.reference_count() == 5);
  CHECK_FALSE(g.reachable()[garbage]);
}
