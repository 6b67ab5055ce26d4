// How an imported object becomes a HeapSink object, shared by every importer.
// Objects with at most kMaxImportedRefFields reference slots become plain objects
// with their size approximated by up to kMaxImportedScalarWords 8-byte scalars, both
// derived from the heap block size (GCVM_BLOCK_BYTES, the build option gc/heap/shape.hpp
// uses) so that every such shape fits one block (256 refs + 64 words in 2 KiB blocks);
// wider objects (and every reference array of the source VM) become reference arrays.
#pragma once

#include <algorithm>
#include <cstdint>

#include "heapgraph/heap_sink.hpp"

#ifndef GCVM_BLOCK_BYTES
#define GCVM_BLOCK_BYTES 2048
#endif

namespace gcvm {

inline constexpr std::uint64_t kImportBlockBytes = GCVM_BLOCK_BYTES;
inline constexpr std::uint64_t kMaxImportedRefFields = kImportBlockBytes / 8;
inline constexpr std::uint64_t kMaxImportedScalarWords = kImportBlockBytes / 32;
// References are 4 bytes and scalars 8 in a heap object (gc/heap/shape.hpp).
static_assert(kMaxImportedRefFields * 4 + kMaxImportedScalarWords * 8 <= kImportBlockBytes,
              "every imported plain object must fit one heap block");

/// Creates an object with `ref_slots` null references standing for `bytes` bytes of the source heap.
inline SinkHandle create_imported_object(HeapSink& sink, std::uint64_t ref_slots, std::uint64_t bytes) {
  if (ref_slots > kMaxImportedRefFields) return sink.new_ref_array(ref_slots);
  const std::uint64_t words = std::min(kMaxImportedScalarWords, bytes / 8 + (bytes % 8 != 0));
  return sink.new_object(static_cast<std::uint32_t>(ref_slots), static_cast<std::uint32_t>(words));
}

}  // namespace gcvm
