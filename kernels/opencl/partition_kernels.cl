/* OpenCL entry points of the partitioned mark (kernels/common/partition_mark.h), thin
 * wrappers like those of mark_kernels.cl; embedded after it (cmake/EmbedOpenCl.cmake). */
#include "partition_mark.h"

__kernel __attribute__((reqd_work_group_size(GCVM_GROUP_SIZE, 1, 1))) void gcvm_part_claim_kernel(
    __global const uint* inbox, uint count, uint self, uint partitions, __global const uint* table,
    __global uint* marks, __global uint* queue, uint queue_capacity, __global uint* state, uint queue_index) {
  gcvm_part_claim(inbox, count, self, partitions, table, marks, queue, queue_capacity, state, queue_index);
}

__kernel __attribute__((reqd_work_group_size(GCVM_GROUP_SIZE, 1, 1))) void gcvm_part_scan_kernel(
    __global const ulong* begin, __global const uint* degree, __global const uint* edges, uint self,
    uint partitions, __global const uint* table, __global uint* marks, __global uint* sent,
    __global const uint* in_queue, __global uint* out_queue, uint queue_capacity, __global uint* outbox,
    __global uint* state, uint round) {
  __local struct gcvm_part_shared shared;
  gcvm_part_scan(begin, degree, edges, self, partitions, table, marks, sent, in_queue, out_queue, queue_capacity,
                 outbox, state, round, &shared);
}
