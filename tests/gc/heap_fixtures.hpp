// Test helpers: build a synthetic spec both into a real Heap and into an independent
// adjacency model, so marks can be checked against a count that shares no code with
// the allocator, the CSR or the markers.
#pragma once

#include <memory>
#include <string>

#include "gc/heap/heap.hpp"
#include "gc/heap/heap_materializer.hpp"
#include "heapgraph/adjacency_graph.hpp"
#include "heapgraph/graph_spec.hpp"
#include "heapgraph/synthetic_heaps.hpp"

namespace gcvm::test {

struct BuiltHeap {
  std::unique_ptr<Heap> heap;
  std::unique_ptr<HeapMaterializer> builder;
  AdjacencyGraph model;
};

inline BuiltHeap build(const std::string& spec, std::uint64_t seed = kDefaultGraphSeed, HeapConfig config = {}) {
  BuiltHeap built;
  built.heap = std::make_unique<Heap>(config);
  built.builder = std::make_unique<HeapMaterializer>(*built.heap);
  const GraphSpec parsed = parse_graph_spec(spec);
  build_synthetic_heap(parsed, *built.builder, seed);
  build_synthetic_heap(parsed, built.model, seed);
  return built;
}

}  // namespace gcvm::test
