// Thin host-side launchers of the partitioned mark's CUDA kernels
// (kernels/cuda/partition_kernels.cu, kernels/common/partition_mark.h). Each enqueues
// one kernel on `stream` and returns the launch's error code.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gcvm::cuda {

/// What both partition kernels read: the partition, its table and its buffers.
struct PartitionArgs {
  const std::uint64_t* begin;
  const std::uint32_t* degree;
  const std::uint32_t* edges;
  std::uint32_t self, partitions;
  const std::uint32_t* table;
  std::uint32_t* marks;
  std::uint32_t* sent;
  std::uint32_t* queues[2];
  std::uint32_t queue_capacity;
  std::uint32_t* outbox;
  std::uint32_t* state;
  std::uint32_t groups;
};

/// gcvm_part_claim of inbox entries [0, count) into queue `queue_index`.
cudaError_t launch_partition_claim(const PartitionArgs& args, const std::uint32_t* inbox, std::uint32_t count,
                                   std::uint32_t queue_index, cudaStream_t stream);
/// gcvm_part_scan of round `round`.
cudaError_t launch_partition_scan(const PartitionArgs& args, std::uint32_t round, cudaStream_t stream);

}  // namespace gcvm::cuda
