// Sweep (DESIGN.md invariant 2): per block, `alloc &= mark`, then the block-state
// transitions of BlockAllocator (full -> active, emptied -> free), releasing the
// array storage and CSR edge ranges of what died. Work is word-wise per block;
// blocks whose allocation word is 0 (free) or unchanged cost one load and a compare.
#pragma once

#include <cstdint>

#include "gc/heap.hpp"
#include "gc/mark_bitmap.hpp"

namespace gcvm {

struct SweepStats {
  std::uint64_t objects_before = 0;  // live objects entering the sweep
  std::uint64_t freed_objects = 0;
  std::uint64_t blocks_freed = 0;
  double sweep_ms = 0;
};

/// Frees every allocated object whose mark bit is clear. `marks` covers the heap.
SweepStats sweep(Heap& heap, const MarkBitmap& marks);

}  // namespace gcvm
