// How a heap is cut into the partitions of a multi-device mark: contiguous ranges of
// object ids, of whole blocks (invariant 1: a block's 64 slots stay together, so each
// partition's mark words are whole words of the heap's bitmap), chosen so that each
// partition holds about the same number of EDGES (references), not objects: marking
// time and mirror memory follow the references, and real heaps put most of them in
// few objects (arrays).
//
// Invariants of the bounds b[0..K] returned:
//   b[0] = 0, b[K] = the vertex count, b nondecreasing, and every b[p] with 0 < p < K
//   a multiple of kSlotsPerBlock; partition p owns [b[p], b[p+1]), possibly empty.
// The cut is greedy over block prefix sums: b[p] is the first block boundary where
// the edges before it reach p/K of the total (a block heavier than a share makes the
// partitions after it lighter, or empty). A heap without edges is cut by blocks.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace gcvm {

/// Bounds of `partitions` edge-balanced partitions of the vertices whose degrees are
/// `degrees` (see above).
std::vector<std::uint32_t> edge_balanced_bounds(std::span<const std::uint32_t> degrees, unsigned partitions);

/// The partition of `bounds` that owns `id` (the last one for ids past the end).
unsigned partition_of(std::span<const std::uint32_t> bounds, std::uint32_t id);

}  // namespace gcvm
