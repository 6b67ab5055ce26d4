// Builds the heap a GraphSpec names into any HeapSink.
//
// Shapes: list nodes have one reference and one scalar; leaves have one scalar and no
// references; the nodes of `complete` are reference arrays; rmat and random vertices
// with at most kMaxInlineReferences out-references are plain objects with that many
// reference fields (so they share SOA blocks by degree), larger ones are reference
// arrays. Every object a spec names is created, garbage included. Creation order is
// allocation order, so list nodes are contiguous, as a bump-allocating mutator would
// leave them.
#pragma once

#include <cstdint>

#include "heapgraph/graph_spec.hpp"
#include "heapgraph/heap_sink.hpp"

namespace gcvm {

inline constexpr std::uint32_t kMaxInlineReferences = 16;
inline constexpr std::uint64_t kDefaultGraphSeed = 42;

void build_synthetic_heap(const GraphSpec& spec, HeapSink& sink, std::uint64_t seed = kDefaultGraphSeed);

}  // namespace gcvm
