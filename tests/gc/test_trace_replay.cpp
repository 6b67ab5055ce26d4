#include <doctest/doctest.h>

#include <sstream>

#include "gc/heap/heap_materializer.hpp"
#include "gc/markers/marker_registry.hpp"
#include "gc/trace/trace_replay.hpp"
#include "heapgraph/adjacency_graph.hpp"
#include "heapgraph/trace/trace_error.hpp"
#include "heapgraph/trace/trace_heap_loader.hpp"
#include "heapgraph/trace/trace_writer.hpp"
#include "trace_mutator.hpp"

using namespace gcvm;

namespace {

struct Replayed {
  std::vector<CollectionStats> collections;
  ReplaySummary summary;
};

Replayed replay(const std::string& bytes, const std::string& collector_name, std::uint64_t heap_limit = 0,
                bool verify = true) {
  HeapConfig config;
  config.limit_bytes = heap_limit;
  Heap heap(config);
  CollectorChoice choice;
  choice.name = collector_name;
  Collector collector(heap, make_marker(choice), verify);
  TraceReplayer replayer(heap, collector, {.collect_on_failure = heap_limit != 0});
  std::istringstream in(bytes);
  trace::TraceReader reader(in, "memory");
  Replayed out;
  out.summary = replayer.run(reader, [&](const CollectionStats& s) { out.collections.push_back(s); });
  return out;
}

}  // namespace

TEST_CASE("replay reproduces the recorded marked and freed counts under every collector") {
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    const auto run = test::record_random_mutator(seed, 20000);
    REQUIRE(run.collections.size() > 100);
    for (std::string_view name : marker_names()) {
      CAPTURE(seed);
      CAPTURE(name);
      const Replayed r = replay(run.trace, std::string(name));
      REQUIRE(r.collections.size() == run.collections.size());
      CHECK(r.summary.budget_collections == 0);
      for (std::size_t i = 0; i < r.collections.size(); ++i) {
        CHECK(r.collections[i].mark.marked_objects == run.collections[i].mark.marked_objects);
        CHECK(r.collections[i].sweep.freed_objects == run.collections[i].sweep.freed_objects);
        CHECK(r.collections[i].mark.edges_traversed == run.collections[i].mark.edges_traversed);
        CHECK(r.collections[i].reason == run.collections[i].reason);
      }
    }
  }
}

TEST_CASE("heap-budget collections keep everything the mutator can still reach") {
  // Snapshot-at-the-beginning roots: a small heap forces extra collections, yet the
  // replay never touches a freed object and the recorded points mark the same counts.
  for (std::uint64_t seed = 5; seed <= 8; ++seed) {
    const auto run = test::record_random_mutator(seed, 40000, 10);
    std::uint64_t peak = 0;
    for (const auto& c : run.collections) peak = std::max(peak, c.heap_before_bytes);
    CAPTURE(seed);
    CAPTURE(peak);
    const Replayed r = replay(run.trace, "serial", peak * 3 / 4);
    CHECK(r.summary.budget_collections > 0);
    std::vector<const CollectionStats*> recorded;
    std::uint64_t freed_by_budget = 0;
    for (const auto& c : r.collections)
      if (c.reason != "heap-budget")
        recorded.push_back(&c);
      else
        freed_by_budget += c.sweep.freed_objects;
    CHECK(freed_by_budget > 0);
    REQUIRE(recorded.size() == run.collections.size());
    for (std::size_t i = 0; i < recorded.size(); ++i)
      CHECK(recorded[i]->mark.marked_objects == run.collections[i].mark.marked_objects);
  }
}

TEST_CASE("a heap too small even after collecting is HeapExhausted naming the event") {
  const auto run = test::record_random_mutator(3, 5000);
  CHECK_THROWS_WITH_AS(replay(run.trace, "serial", 4096), doctest::Contains("heap exhausted replaying the allocation"),
                       HeapExhausted);
}

TEST_CASE("a store into an object the recorder's roots missed is an inconsistent trace") {
  std::ostringstream out;
  trace::TraceWriter w(out, "memory");
  w.allocate_object(0, 1, 0, 4);
  w.allocate_object(1, 1, 0, 4);
  w.roots(std::vector<ObjectId>{0});
  w.collection("explicit");  // #1 is unreachable: freed
  w.store_ref(1, 0, 0);      // ...yet the mutator still uses it
  w.end();
  try {
    replay(out.str(), "serial");
    FAIL("no error");
  } catch (const trace::TraceError& e) {
    CHECK(std::string(e.what()).find("the trace is inconsistent: store source #1 was freed") != std::string::npos);
    CHECK(e.offset() > trace::kFileHeaderBytes);
  }
}

TEST_CASE("an id reused after a collection is a new object") {
  std::ostringstream out;
  trace::TraceWriter w(out, "memory");
  w.allocate_object(0, 1, 0, 4);
  w.allocate_object(1, 1, 0, 4);
  w.store_ref(0, 0, 1);
  w.roots(std::vector<ObjectId>{0});
  w.collection("explicit");
  w.allocate_object(1, 2, 0, 8);  // the recorder freed nothing, but may reuse an id once it has
  w.store_ref(1, 1, 0);
  w.roots(std::vector<ObjectId>{1});
  w.collection("explicit");
  w.end();
  const Replayed r = replay(out.str(), "serial");
  REQUIRE(r.collections.size() == 2);
  CHECK(r.collections[0].mark.marked_objects == 2);
  CHECK(r.collections[1].mark.marked_objects == 3);  // new #1 -> #0 -> old #1
  CHECK(r.collections[1].sweep.freed_objects == 0);
}

TEST_CASE("an object shape the heap cannot hold is bad input at its event") {
  std::ostringstream out;
  trace::TraceWriter w(out, "memory");
  w.allocate_object(0, 1000, 0, 4000);
  w.end();
  CHECK_THROWS_WITH_AS(replay(out.str(), "serial"), doctest::Contains("memory: byte 20: an object with 1000 reference"),
                       trace::TraceError);
}

TEST_CASE("the heap loader's final heap has exactly what the recording's last collection marked") {
  // An independent model: an adjacency list with a breadth-first count, no allocator,
  // CSR or marker involved.
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const auto run = test::record_random_mutator(seed, 10000);
    std::istringstream in(run.trace);
    trace::TraceReader reader(in, "memory");
    AdjacencyGraph graph;
    const trace::TraceLoadSummary loaded = trace::load_trace_heap(reader, graph);
    CAPTURE(seed);
    CHECK(loaded.collections == run.collections.size());
    CHECK(graph.reachable_count() == run.collections.back().mark.marked_objects);
    CHECK(graph.reachable_reference_count() == run.collections.back().mark.edges_traversed);
  }
}
