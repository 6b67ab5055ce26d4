// A run of kernel launches replayed as one CUDA graph.
//
// Why. Back-to-back launches of a short kernel cost the device about 3.5-4 µs each
// (the H200, 1,056 groups of 256 threads); the same launches as the nodes of one graph
// cost about 1.9 µs each (docs/performance-gpu.md).
// gpu-bfs's levels mode launches one kernel per BFS level, and its first batch of a
// collection (as many levels as the last collection ran) is the same run of launches
// collection after collection, so it is captured once and replayed.
//
// Invariants. The graph replayed is the capture of the launches `enqueue` made for the
// key it was captured under: a launch whose key differs is captured again, and the
// instantiated graph is updated in place where CUDA allows (cudaGraphExecUpdate: the
// same launches with other arguments) or instantiated anew. A capture that fails ends
// the capture before the error propagates, so the stream is usable again; the graph
// is then dropped and the next launch captures anew.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace gcvm {

class CudaLaunchGraph {
 public:
  CudaLaunchGraph() = default;
  CudaLaunchGraph(const CudaLaunchGraph&) = delete;
  CudaLaunchGraph& operator=(const CudaLaunchGraph&) = delete;
  ~CudaLaunchGraph();

  /// Enqueues on `stream` the launches `enqueue` makes on the stream it is given, as one
  /// graph: the last one, if it was captured under the same `key`, else a new capture.
  /// Errors are DeviceError.
  void launch(std::span<const std::uint64_t> key, cudaStream_t stream,
              const std::function<void(cudaStream_t)>& enqueue);

  /// Captures so far (for tests and statistics).
  std::uint64_t captures() const { return captures_; }

 private:
  void capture(cudaStream_t stream, const std::function<void(cudaStream_t)>& enqueue);
  void drop();

  cudaGraphExec_t exec_ = nullptr;
  std::size_t nodes_ = 0;  // launches in the instantiated graph
  std::vector<std::uint64_t> key_;
  std::uint64_t captures_ = 0;
};

}  // namespace gcvm
