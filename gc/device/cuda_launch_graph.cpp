#include "gc/device/cuda_launch_graph.hpp"

#include <algorithm>

#include "gc/device/cuda_memory.hpp"

namespace gcvm {

using cuda_memory::check;

CudaLaunchGraph::~CudaLaunchGraph() { drop(); }

void CudaLaunchGraph::drop() {
  if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
  exec_ = nullptr;
  key_.clear();
}

void CudaLaunchGraph::launch(std::span<const std::uint64_t> key, cudaStream_t stream,
                             const std::function<void(cudaStream_t)>& enqueue) {
  if (exec_ == nullptr || !std::ranges::equal(key, key_)) {
    capture(stream, enqueue);
    key_.assign(key.begin(), key.end());
  }
  check(cudaGraphLaunch(exec_, stream), "launching a captured run of kernels (cudaGraphLaunch)");
}

void CudaLaunchGraph::capture(cudaStream_t stream, const std::function<void(cudaStream_t)>& enqueue) {
  // Relaxed: other threads of the process (the mirror's refresher, a concurrent mark)
  // may call CUDA while this thread captures.
  check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed), "capturing kernel launches");
  cudaGraph_t graph = nullptr;
  try {
    enqueue(stream);
  } catch (...) {
    cudaStreamEndCapture(stream, &graph);
    if (graph != nullptr) cudaGraphDestroy(graph);
    cudaGetLastError();
    drop();
    throw;
  }
  check(cudaStreamEndCapture(stream, &graph), "capturing kernel launches");
  ++captures_;
  std::size_t nodes = 0;
  const cudaError_t counted = cudaGraphGetNodes(graph, nullptr, &nodes);
  // The same launches with other arguments update the instantiated graph in place;
  // another number of launches is a new graph.
  cudaGraphExecUpdateResultInfo result{};
  const bool updated = counted == cudaSuccess && exec_ != nullptr && nodes == nodes_ &&
                       cudaGraphExecUpdate(exec_, graph, &result) == cudaSuccess;
  nodes_ = nodes;
  if (!updated) {
    cudaGetLastError();  // a refused update is not an error: the graph is instantiated anew
    drop();
    const cudaError_t instantiated = cudaGraphInstantiate(&exec_, graph, 0);
    if (instantiated != cudaSuccess) exec_ = nullptr;
    cudaGraphDestroy(graph);
    check(instantiated, "instantiating a captured run of kernels");
    return;
  }
  cudaGraphDestroy(graph);
}

}  // namespace gcvm
