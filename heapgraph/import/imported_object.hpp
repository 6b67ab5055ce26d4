// How an imported object becomes a HeapSink object, shared by every importer.
// Objects with at most kMaxImportedRefFields reference slots become plain objects
// with their size approximated by up to kMaxImportedScalarWords 8-byte scalars (so
// that every such shape fits one 2 KiB heap block: 256*4 + 64*8 bytes); wider objects
// (and every reference array of the source VM) become reference arrays.
#pragma once

#include <algorithm>
#include <cstdint>

#include "heapgraph/heap_sink.hpp"

namespace gcvm {

inline constexpr std::uint64_t kMaxImportedRefFields = 256;
inline constexpr std::uint64_t kMaxImportedScalarWords = 64;

/// Creates an object with `ref_slots` null references standing for `bytes` bytes of the source heap.
inline SinkHandle create_imported_object(HeapSink& sink, std::uint64_t ref_slots, std::uint64_t bytes) {
  if (ref_slots > kMaxImportedRefFields) return sink.new_ref_array(ref_slots);
  const std::uint64_t words = std::min(kMaxImportedScalarWords, (bytes + 7) / 8);
  return sink.new_object(static_cast<std::uint32_t>(ref_slots), static_cast<std::uint32_t>(words));
}

}  // namespace gcvm
