#include <doctest/doctest.h>

#include <sstream>

#include "heapgraph/adjacency_graph.hpp"
#include "heapgraph/import/import_error.hpp"
#include "heapgraph/import/v8_importer.hpp"
#include "sample_dumps.hpp"

using gcvm::AdjacencyGraph;
using gcvm::ImportSummary;
using gcvm::kNoHandle;
using gcvm::SinkHandle;
using gcvm::test::sample_v8;

namespace {

ImportSummary import(const std::string& text, AdjacencyGraph& graph) {
  std::istringstream in(text);
  return gcvm::import_v8_snapshot(in, "sample.heapsnapshot", graph);
}

std::string import_error(const std::string& text) {
  AdjacencyGraph g;
  try {
    import(text, g);
  } catch (const gcvm::ImportError& e) {
    return e.what();
  }
  return "";
}

constexpr SinkHandle N = kNoHandle;

}  // namespace

TEST_CASE("V8: nodes, edges, weak edges, root = node 0, in any section order") {
  for (const char* order : {"snapshot,nodes,edges", "edges,nodes,snapshot", "nodes,snapshot,edges"}) {
    CAPTURE(order);
    AdjacencyGraph g;
    const ImportSummary s = import(sample_v8(order), g);
    CHECK(s.format == "v8");
    REQUIRE(s.objects == 6);
    CHECK(g.out_edges(0) == std::vector<SinkHandle>{1, 2});
    CHECK(g.out_edges(1) == std::vector<SinkHandle>{N, 2});  // the weak edge is not stored
    CHECK(g.out_edges(2) == std::vector<SinkHandle>{4});
    CHECK(g.out_edges(3).empty());
    CHECK(g.out_edges(4) == std::vector<SinkHandle>{0});
    CHECK(g.out_edges(5) == std::vector<SinkHandle>{4});
    CHECK(s.edges_kept == 6);
    CHECK(s.edges_weak == 1);
    CHECK(s.edges_dropped == 0);
    CHECK(s.roots == 1);
    CHECK(g.roots() == std::vector<SinkHandle>{0});
    CHECK(g.reachable_count() == 4);
    CHECK(s.bytes == 210);
    CHECK(s.bytes_per_object() == doctest::Approx(35.0));
  }
}

TEST_CASE("V8: field layout comes from snapshot.meta") {
  // Fields reordered and one extra per node and per edge.
  const std::string text = R"({"snapshot":{"meta":{"node_fields":["edge_count","x","self_size"],)"
                           R"("edge_fields":["to_node","type","y","name_or_index"],)"
                           R"("edge_types":["node",["weak","strong"],"z","n"]}},)"
                           R"("nodes":[1,0,8, 2,0,8, 0,0,8],"edges":[3,1,0,0, 6,1,0,0, 0,0,0,0]})";
  AdjacencyGraph g;
  const ImportSummary s = import(text, g);
  CHECK(s.objects == 3);
  CHECK(g.out_edges(0) == std::vector<SinkHandle>{1});
  CHECK(g.out_edges(1) == std::vector<SinkHandle>{2, N});
  CHECK(s.edges_weak == 1);
  CHECK(g.reachable_count() == 3);
}

TEST_CASE("V8: malformed snapshots are reported with the file and byte offset") {
  const std::string good = sample_v8();
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string t = good;
    t.replace(t.find(from), from.size(), to);
    return t;
  };
  struct Case {
    std::string text;
    const char* says;
  };
  for (const auto& c : {
           Case{good.substr(0, good.size() / 2), "malformed JSON"},
           Case{replace("\"edge_count\",", "\"edges\","), "does not name \"edge_count\""},
           Case{replace("2,1,7,", "2,1,8,"), "edge to_node 8 is not the start of a node"},
           Case{replace("2,1,7,", "2,1,7000,"), "edge to_node 7000"},
           Case{replace("\n4,1,28]", "\n4,1,28,4,1,28]"), "more edges than"},
           Case{replace(",\n4,1,28]", "]"), "the nodes declare 7"},
           Case{replace("9,0,1,10,2,0,0,", "9,0,1,10,2,0,"), "not a multiple of the 7 node fields"},
           Case{replace("9,0,1,10,2,", "9,0,1,10,4000000000,"), "more than the file could hold"},
           Case{replace("9,0,1,10,2,", "9,0,1,-10,2,"), "non-negative integer"},
           Case{replace("\"nodes\":[9", "\"nodes\":[[9]"), "flat array"},
           Case{replace("\"nodes\":", "\"nodez\":"), "no \"nodes\" section"},
           Case{"[1,2,3]", "not an array"},
       }) {
    CAPTURE(std::string(c.says));
    const std::string message = import_error(c.text);
    CHECK(message.starts_with("sample.heapsnapshot: byte "));
    CAPTURE(message);
    CHECK(message.find(c.says) != std::string::npos);
    CHECK(message.find('\n') == std::string::npos);
  }
}
