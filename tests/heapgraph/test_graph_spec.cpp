#include <doctest/doctest.h>

#include "heapgraph/adjacency_graph.hpp"
#include "heapgraph/graph_spec.hpp"
#include "heapgraph/synthetic_heaps.hpp"

using namespace gcvm;

TEST_CASE("every spec form parses and estimates its size") {
  CHECK(parse_graph_spec("single").estimate().objects == 1);
  CHECK(parse_graph_spec("list:2000000").estimate().objects == 2000000);
  const auto lists = parse_graph_spec("lists:2560x3000");
  CHECK(lists.a == 2560);
  CHECK(lists.b == 3000);
  CHECK(parse_graph_spec("wide:1000").estimate().objects == 1001);
  CHECK(parse_graph_spec("vp-list").estimate().objects == 131072);
  CHECK(parse_graph_spec("vp-array").estimate().objects == 1049600);
  CHECK(parse_graph_spec("complete:5000:100").estimate().references == 5000ull * 4999);
  CHECK(parse_graph_spec("tree:16").estimate().objects == 131071);
  CHECK(parse_graph_spec("tree:0").estimate().references == 0);
  CHECK(parse_graph_spec("rmat:22").estimate().references == (16ull << 22));
  CHECK(parse_graph_spec("rmat:10:8").b == 8);
  CHECK(parse_graph_spec("random:1000:4").estimate().references == 4000);
}

TEST_CASE("bad specs give one clear message") {
  auto message = [](const char* text) {
    try {
      parse_graph_spec(text);
    } catch (const SpecError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(message("ring:5").find("is not one of") != std::string::npos);
  CHECK(message("tree:31").find("DEPTH must be between 0 and 30") != std::string::npos);
  CHECK(message("tree").find("is not one of") != std::string::npos);
  CHECK(message("list") .find("is not one of") != std::string::npos);
  CHECK(message("list:abc").find("'abc' is not a whole number") != std::string::npos);
  CHECK(message("list:0").find("between 1 and") != std::string::npos);
  CHECK(message("list:10x").find("not a whole number") != std::string::npos);
  CHECK(message("lists:10").find("is not one of") != std::string::npos);
  CHECK(message("complete:10:11").find("R must be between 0 and 10") != std::string::npos);
  CHECK(message("rmat:40").find("SCALE must be between 1 and 31") != std::string::npos);
  CHECK(message("list:99999999999999999999999").find("not a whole number") != std::string::npos);
  CHECK(message("").find("is not one of") != std::string::npos);
}

TEST_CASE("tree:DEPTH is a complete binary tree under one root") {
  AdjacencyGraph tree;
  build_synthetic_heap(parse_graph_spec("tree:3"), tree, 1);
  CHECK(tree.object_count() == 15);
  CHECK(tree.reference_count() == 14);
  CHECK(tree.roots().size() == 1);
  CHECK(tree.reachable_count() == 15);
  for (SinkHandle v = 0; v < tree.object_count(); ++v) CHECK((tree.out_edges(v).size() == 0 || tree.out_edges(v).size() == 2));
}

TEST_CASE("random graphs are deterministic for a seed and differ across seeds") {
  AdjacencyGraph a, b, c;
  build_synthetic_heap(parse_graph_spec("rmat:10"), a, 7);
  build_synthetic_heap(parse_graph_spec("rmat:10"), b, 7);
  build_synthetic_heap(parse_graph_spec("rmat:10"), c, 8);
  CHECK(a.object_count() == 1024);
  CHECK(a.reference_count() == 16 * 1024);
  CHECK(a.reachable_count() == b.reachable_count());
  CHECK(a.roots() == b.roots());
  bool same = a.roots() == c.roots();
  for (SinkHandle v = 0; same && v < a.object_count(); ++v) same = a.out_edges(v) == c.out_edges(v);
  CHECK_FALSE(same);
}
