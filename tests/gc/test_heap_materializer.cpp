// HeapMaterializer's generated batches (bulk:N:DEGREE): stored on several threads, the
// heap, its reference graph and the graph's change record are the same for any thread
// count, equal to the independent model's, and marked alike.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "gc/heap/heap.hpp"
#include "gc/heap/heap_materializer.hpp"
#include "gc/markers/serial_marker.hpp"
#include "heapgraph/adjacency_graph.hpp"
#include "heapgraph/graph_spec.hpp"
#include "heapgraph/synthetic_heaps.hpp"

using namespace gcvm;

namespace {

struct Materialized {
  std::unique_ptr<Heap> heap;
  std::unique_ptr<HeapMaterializer> builder;
};

Materialized materialize(const std::string& spec, unsigned threads, HeapConfig config = {}) {
  Materialized m{std::make_unique<Heap>(config), nullptr};
  m.builder = std::make_unique<HeapMaterializer>(*m.heap, threads);
  build_synthetic_heap(parse_graph_spec(spec), *m.builder, 7);
  return m;
}

/// Every object's references, as ids, in handle order.
std::vector<ObjectId> references(const Materialized& m) {
  std::vector<ObjectId> out;
  const RefGraph& graph = m.heap->graph();
  for (std::uint64_t h = 0; h < m.builder->object_count(); ++h) {
    const auto edges = graph.out_edges(m.builder->object(h));
    out.insert(out.end(), edges.begin(), edges.end());
  }
  return out;
}

void check_same_as_model(const std::string& spec, const Materialized& m) {
  AdjacencyGraph model;
  build_synthetic_heap(parse_graph_spec(spec), model, 7);
  REQUIRE(model.object_count() == m.builder->object_count());
  const RefGraph& graph = m.heap->graph();
  for (std::uint64_t h = 0; h < model.object_count(); ++h) {
    const auto edges = graph.out_edges(m.builder->object(h));
    const auto& want = model.out_edges(h);
    REQUIRE(edges.size() == want.size());
    for (std::size_t i = 0; i < want.size(); ++i) REQUIRE(edges[i] == m.builder->object(want[i]));
  }
  CHECK(m.builder->roots().size() == model.roots().size());
  MarkBitmap marks;
  const MarkStats stats = SerialMarker().mark({graph, m.builder->roots(), m.heap->blocks().high_water()}, marks);
  CHECK(stats.marked_objects == model.reachable_count());
  CHECK(stats.edges_traversed == model.reachable_reference_count());
}

}  // namespace

TEST_CASE("bulk specs parse, estimate their size, and refuse degrees a plain object cannot hold") {
  const GraphSpec spec = parse_graph_spec("bulk:1000000000:2");
  CHECK(spec.kind == SpecKind::Bulk);
  CHECK(spec.estimate().objects == 1000000000);
  CHECK(spec.estimate().references == 2000000000);
  CHECK(parse_graph_spec("bulk:10:0").estimate().references == 0);
  CHECK_THROWS_WITH_AS(parse_graph_spec("bulk:10:17"), doctest::Contains("DEGREE must be between 0 and 16"), SpecError);
  CHECK_THROWS_WITH_AS(parse_graph_spec("bulk:10"), doctest::Contains("is not one of"), SpecError);
}

TEST_CASE("a bulk heap is the same for any thread count and equals the model's") {
  // Several store tasks each (a task holds at least 2^18 edge slots); degree 16 fills
  // blocks of 32 slots, so its ids are not consecutive (the looked-up targets).
  for (const std::string spec : {"bulk:100000:16", "bulk:300000:2", "bulk:5000:1", "bulk:3000:0"}) {
    CAPTURE(spec);
    const Materialized one = materialize(spec, 1);
    check_same_as_model(spec, one);
    CHECK(one.heap->verify_graph().empty());
    const std::vector<ObjectId> want = references(one);
    const RefGraph& graph = one.heap->graph();
    const std::uint64_t changed = graph.changes().edges.count(graph.edge_count());
    for (unsigned threads : {2u, 3u, 8u}) {
      CAPTURE(threads);
      const Materialized many = materialize(spec, threads);
      CHECK(references(many) == want);
      CHECK(many.heap->verify_graph().empty());
      const RefGraph& g = many.heap->graph();
      CHECK(g.changes().edges.count(g.edge_count()) == changed);  // no change bit lost to a race
    }
  }
}

TEST_CASE("bulk heaps with generations (stored on one thread) or a rebuilt graph are the same heap") {
  const std::string spec = "bulk:100000:8";
  const std::vector<ObjectId> want = references(materialize(spec, 1));
  const Materialized generational = materialize(spec, 4, HeapConfig{.promotion_age = 1});
  CHECK(references(generational) == want);
  Materialized rebuilt = materialize(spec, 4, HeapConfig{.graph_mode = RefGraphMode::Rebuild});
  rebuilt.heap->rebuild_graph();
  CHECK(references(rebuilt) == want);
}
