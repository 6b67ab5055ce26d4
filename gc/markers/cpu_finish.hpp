// The CPU end of a GPU mark's fallback (gpu-bfs and gpu-dfs fallback=<threshold>:<min>):
// when the device's remaining work is too narrow to keep a GPU busy, the marker
// downloads the mark bitmap and the objects that are marked but not yet scanned (a
// BFS level's queue, the async queue's untaken slots, or the entries of the DFS
// threads' saved stacks), and chunks of huge objects not yet scanned (the chunk queue,
// kernels/common/mark_layout.h), and finishes here with a serial depth-first mark on
// the host CSR.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "gc/markers/marker.hpp"
#include "heapgraph/object_id.hpp"
#include "kernels/common/mark_layout.h"

namespace gcvm {

/// Scans every object of `pending` (each must be marked in `out` and not yet scanned)
/// and everything newly reachable from them, marking into `out`. Returns the non-null
/// references traversed, so that GPU count + CPU count equals the serial marker's.
/// `chunks` are chunk-queue items (vertex << 32 | chunk index): references
/// [chunk * chunk_edges, +chunk_edges) of a marked object not yet scanned (chunk_edges:
/// GCVM_CHUNK_EDGES, or GCVM_ASYNC_CHUNK_EDGES for gpu-bfs's async mode).
std::uint64_t finish_mark_on_cpu(const MarkRequest& request, std::vector<ObjectId> pending, MarkBitmap& out,
                                 std::span<const std::uint64_t> chunks = {},
                                 std::uint32_t chunk_edges = GCVM_CHUNK_EDGES);

}  // namespace gcvm
