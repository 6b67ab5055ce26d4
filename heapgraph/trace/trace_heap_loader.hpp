// Loads the heap a trace leaves behind into any HeapSink (for `gcvm analyze` of
// traces, and for tests' independent models): every allocated object, every store
// applied in order, and the last root snapshot as the roots.
//
// Collection points are not performed: objects the recording collector freed stay in
// the sink as garbage (unreachable from the final roots, as in a `-all` heap dump).
// An id allocated again after a collection names a new object from then on. Scalar
// arrays become objects with no fields (HeapSink has no scalar arrays; they hold no
// references, so the graph is the same).
#pragma once

#include <cstdint>
#include <string>

#include "heapgraph/heap_sink.hpp"
#include "heapgraph/trace/trace_reader.hpp"

namespace gcvm::trace {

struct TraceLoadSummary {
  std::uint64_t events = 0;
  std::uint64_t objects = 0;
  std::uint64_t stores = 0;
  std::uint64_t roots = 0;
  std::uint64_t collections = 0;
};

/// Reads the whole trace; throws TraceError for bad input (nothing is rolled back in the sink).
TraceLoadSummary load_trace_heap(TraceReader& reader, HeapSink& sink);
TraceLoadSummary load_trace_heap(const std::string& path, HeapSink& sink);

}  // namespace gcvm::trace
