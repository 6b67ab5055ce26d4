// The CPU end of a GPU mark's fallback (gpu-bfs and gpu-dfs fallback=<threshold>:<min>):
// when the device's remaining work is too narrow to keep a GPU busy, the marker
// downloads the mark bitmap and the objects that are marked but not yet scanned (a
// BFS level's queue, the async queue's untaken slots, or the entries of the DFS
// threads' saved stacks), and chunks of huge objects not yet scanned (the chunk queue,
// kernels/common/mark_layout.h), and finishes here on the host CSR: the chunks on the
// calling thread, then the pending objects with a serial depth-first mark, or, when
// many are pending (a heap of many parallel chains, whose every level is too narrow
// for the device: 256 lists of 10,000 objects took 8 ms on one thread of the H200
// host, where the parallel marker takes 1.6), with the parallel marker (CpuFinish), on
// the threads the pause already keeps awake for the sweep when it offers them.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "gc/markers/marker.hpp"
#include "heapgraph/object_id.hpp"
#include "kernels/common/mark_layout.h"

namespace gcvm {

class ParallelMarker;

/// Scans every object of `pending` (each must be marked in `out` and not yet scanned)
/// and everything newly reachable from them, marking into `out`. Returns the non-null
/// references traversed, so that GPU count + CPU count equals the serial marker's.
/// `chunks` are chunk-queue items (vertex << 32 | chunk index): references
/// [chunk * chunk_edges, +chunk_edges) of a marked object not yet scanned (chunk_edges:
/// GCVM_CHUNK_EDGES, or GCVM_ASYNC_CHUNK_EDGES for gpu-bfs's async mode).
std::uint64_t finish_mark_on_cpu(const MarkRequest& request, std::vector<ObjectId> pending, MarkBitmap& out,
                                 std::span<const std::uint64_t> chunks = {},
                                 std::uint32_t chunk_edges = GCVM_CHUNK_EDGES);

/// A GPU marker's CPU end: finish_mark_on_cpu's work, with the pending objects marked
/// by a ParallelMarker when at least kParallelObjects are pending: on the request's
/// host_pool when it has one (the Collector's sweep pool, polling since the device got
/// the mark), else on a pool of every hardware thread made with the CpuFinish, outside
/// any pause. Fewer (a chain or two: more threads would not help it, and their claims
/// cost more per object) stay on the caller's thread. The pending objects' bits are
/// cleared in the parallel mark's premarked copy of the marks, so that it marks and
/// scans them as roots, each once.
class CpuFinish {
 public:
  static constexpr std::size_t kParallelObjects = 64;

  CpuFinish();
  ~CpuFinish();
  /// As finish_mark_on_cpu (the same marks and count of references traversed).
  std::uint64_t finish(const MarkRequest& request, std::vector<ObjectId> pending, MarkBitmap& out,
                       std::span<const std::uint64_t> chunks = {}, std::uint32_t chunk_edges = GCVM_CHUNK_EDGES);
  /// Threads that took part in the last finish (1 on the caller's thread alone).
  unsigned last_threads() const { return last_threads_; }

 private:
  std::unique_ptr<ParallelMarker> parallel_;
  std::vector<std::uint64_t> premarked_;  // kept for its capacity
  unsigned last_threads_ = 1;
};

}  // namespace gcvm
