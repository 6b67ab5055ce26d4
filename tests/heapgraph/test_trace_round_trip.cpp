#include <doctest/doctest.h>

#include <sstream>
#include <stdexcept>

#include "heapgraph/adjacency_graph.hpp"
#include "heapgraph/trace/trace_error.hpp"
#include "heapgraph/trace/trace_heap_loader.hpp"
#include "trace_fixtures.hpp"

using namespace gcvm;
using namespace gcvm::trace;
using gcvm::test::read_trace;
using gcvm::test::write_trace;

namespace {

void check_same(const TraceEvent& a, const TraceEvent& b) {
  REQUIRE(a.kind == b.kind);
  switch (a.kind) {
    case EventKind::AllocObject:
      CHECK(a.ref_fields == b.ref_fields);
      CHECK(a.scalar_fields == b.scalar_fields);
      [[fallthrough]];
    case EventKind::AllocRefArray:
    case EventKind::AllocScalarArray:
      CHECK(a.id == b.id);
      CHECK(a.length == b.length);
      CHECK(a.bytes == b.bytes);
      break;
    case EventKind::Store:
      CHECK(a.id == b.id);
      CHECK(a.slot == b.slot);
      CHECK(a.target == b.target);
      break;
    case EventKind::Roots: CHECK(a.roots == b.roots); break;
    case EventKind::Collection: CHECK(a.reason == b.reason); break;
    case EventKind::End: break;
  }
}

std::string error_of(const std::string& bytes) {
  try {
    read_trace(bytes);
  } catch (const TraceError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("trace round trip: random event streams at every chunk size") {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const auto events = gcvm::test::random_trace_events(seed, 1500);
    for (std::uint32_t chunk : {1u, 3u, 64u, 4096u, kDefaultChunkPayload}) {
      CAPTURE(seed);
      CAPTURE(chunk);
      const std::string bytes = write_trace(events, chunk);
      std::uint64_t chunks = 0;
      const auto back = read_trace(bytes, &chunks);
      REQUIRE(back.size() == events.size());
      for (std::size_t i = 0; i < events.size(); ++i) check_same(events[i], back[i]);
      CHECK(back.front().offset == kFileHeaderBytes + kChunkHeaderBytes);
      for (std::size_t i = 1; i < back.size(); ++i) CHECK(back[i].offset > back[i - 1].offset);
      CHECK(chunks == gcvm::test::chunk_offsets(bytes).size());
      if (chunk == 1) CHECK(chunks == bytes.size() - kFileHeaderBytes - chunks * kChunkHeaderBytes);
    }
  }
}

TEST_CASE("trace encoding is compact: consecutive allocations and near stores cost few bytes") {
  std::ostringstream out;
  TraceWriter writer(out, "memory");
  for (ObjectId id = 0; id < 10000; ++id) writer.allocate_object(id, 1, 1, 12);
  for (ObjectId id = 1; id < 10000; ++id) writer.store_ref(id, 0, id - 1);
  writer.end();
  // alloc: tag + delta + refs + scalars + bytes = 5 bytes; store: tag + delta + slot + target = 4 bytes.
  CHECK(writer.totals().bytes < 10000 * 5 + 10000 * 4 + 200);
  CHECK(writer.totals().bytes == out.str().size());
  CHECK(writer.totals().events == 20000);
}

TEST_CASE("the heap loader rebuilds the final heap: latest objects, all stores, last roots") {
  std::ostringstream out;
  TraceWriter w(out, "memory");
  w.allocate_object(10, 2, 0, 8);
  w.allocate_ref_array(11, 3, 28);
  w.allocate_scalar_array(12, 5, 56);
  w.store_ref(10, 0, 11);
  w.store_ref(11, 2, 12);
  w.roots(std::vector<ObjectId>{10});
  w.collection("explicit");
  w.allocate_object(12, 1, 0, 4);  // id 12 reused after the collection: a new object
  w.store_ref(12, 0, 10);
  w.store_ref(11, 1, 12);
  w.roots(std::vector<ObjectId>{12});
  w.end();

  AdjacencyGraph graph;
  std::istringstream in(out.str());
  TraceReader reader(in, "memory");
  const TraceLoadSummary s = load_trace_heap(reader, graph);
  CHECK(s.objects == 4);
  CHECK(s.stores == 4);
  CHECK(s.collections == 1);
  CHECK(s.roots == 1);
  CHECK(graph.object_count() == 4);
  REQUIRE(graph.roots().size() == 1);
  CHECK(graph.roots()[0] == 3);  // the second #12
  // #12(new) -> #10 -> #11 -> {old #12, new #12}: all four reachable.
  CHECK(graph.reachable_count() == 4);
  CHECK(graph.reference_count() == 4);
}

TEST_CASE("the writer refuses what the format cannot hold") {
  std::ostringstream out;
  TraceWriter w(out, "memory");
  CHECK_THROWS_AS(w.allocate_object(kNullRef, 0, 0, 0), std::invalid_argument);
  CHECK_THROWS_AS(w.allocate_object(0, kMaxFields + 1, 0, 0), std::invalid_argument);
  CHECK_THROWS_AS(w.allocate_ref_array(0, kMaxArrayLength + 1, 0), std::invalid_argument);
  CHECK_THROWS_AS(w.collection(""), std::invalid_argument);
  CHECK_THROWS_AS(w.collection("two words"), std::invalid_argument);
  w.end();
  CHECK_THROWS_AS(w.store_ref(0, 0, 0), std::logic_error);
}

TEST_CASE("events that no recording could produce are rejected with their offset") {
  auto trace = [](auto&& fill) {
    std::ostringstream out;
    TraceWriter w(out, "memory");
    fill(w);
    w.end();
    return out.str();
  };
  const std::string first = std::to_string(kFileHeaderBytes + kChunkHeaderBytes);
  CHECK(error_of(trace([](TraceWriter& w) { w.store_ref(5, 0, kNullRef); })) ==
        "memory: byte " + first + ": event out of order: store into #5, which was never allocated");
  CHECK(error_of(trace([](TraceWriter& w) {
          w.allocate_object(5, 1, 0, 4);
          w.store_ref(5, 0, 6);
        })).find("store target #6 was never allocated") != std::string::npos);
  CHECK(error_of(trace([](TraceWriter& w) {
          w.allocate_object(5, 1, 0, 4);
          w.store_ref(5, 1, kNullRef);
        })).find("slot 1 of #5, which has 1 reference slots") != std::string::npos);
  CHECK(error_of(trace([](TraceWriter& w) {
          w.allocate_ref_array(5, 3, 28);
          w.allocate_object(5, 1, 0, 4);
        })).find("#5 allocated again without a collection since its allocation at byte " + first) !=
        std::string::npos);
  CHECK(error_of(trace([](TraceWriter& w) { w.roots(std::vector<ObjectId>{7}); }))
            .find("root #7 was never allocated") != std::string::npos);
  CHECK(error_of(trace([](TraceWriter& w) {
          w.allocate_ref_array(5, 3, 28);
          w.collection("explicit");
          w.allocate_object(5, 1, 0, 4);
          w.store_ref(5, 0, 5);
        })) == "");
}
