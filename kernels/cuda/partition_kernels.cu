// CUDA entry points of the partitioned mark (kernels/common/partition_mark.h).
#include "kernels/common/partition_mark.h"
#include "kernels/cuda/partition_launchers.hpp"

static_assert(sizeof(gcvm_part_shared) <= 48 * 1024, "partition work-group memory must fit the default shared memory");

namespace gcvm::cuda {

namespace {

__global__ void __launch_bounds__(GCVM_GROUP_SIZE)
    part_claim_kernel(const gcvm_u32* inbox, gcvm_u32 count, gcvm_u32 self, gcvm_u32 partitions,
                      const gcvm_u32* table, gcvm_u32* marks, gcvm_u32* queue, gcvm_u32 queue_capacity,
                      gcvm_u32* state, gcvm_u32 queue_index) {
  gcvm_part_claim(inbox, count, self, partitions, table, marks, queue, queue_capacity, state, queue_index);
}

__global__ void __launch_bounds__(GCVM_GROUP_SIZE)
    part_scan_kernel(const gcvm_u64* begin, const gcvm_u32* degree, const gcvm_u32* edges, gcvm_u32 self,
                     gcvm_u32 partitions, const gcvm_u32* table, gcvm_u32* marks, gcvm_u32* sent,
                     const gcvm_u32* in_queue, gcvm_u32* out_queue, gcvm_u32 queue_capacity, gcvm_u32* outbox,
                     gcvm_u32* state, gcvm_u32 round) {
  __shared__ gcvm_part_shared shared;
  gcvm_part_scan(begin, degree, edges, self, partitions, table, marks, sent, in_queue, out_queue, queue_capacity,
                 outbox, state, round, &shared);
}

}  // namespace

cudaError_t launch_partition_claim(const PartitionArgs& a, const std::uint32_t* inbox, std::uint32_t count,
                                   std::uint32_t queue_index, cudaStream_t stream) {
  part_claim_kernel<<<a.groups, GCVM_GROUP_SIZE, 0, stream>>>(inbox, count, a.self, a.partitions, a.table, a.marks,
                                                              a.queues[queue_index], a.queue_capacity, a.state,
                                                              queue_index);
  return cudaGetLastError();
}

cudaError_t launch_partition_scan(const PartitionArgs& a, std::uint32_t round, cudaStream_t stream) {
  part_scan_kernel<<<a.groups, GCVM_GROUP_SIZE, 0, stream>>>(
      reinterpret_cast<const gcvm_u64*>(a.begin), a.degree, a.edges, a.self, a.partitions, a.table, a.marks, a.sent,
      a.queues[round & 1u], a.queues[(round & 1u) ^ 1u], a.queue_capacity, a.outbox, a.state, round);
  return cudaGetLastError();
}

}  // namespace gcvm::cuda
