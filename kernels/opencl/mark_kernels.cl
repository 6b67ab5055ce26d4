/* OpenCL entry points of the mark kernels: each is a thin wrapper that declares the
 * work-group memory and calls the shared algorithm (kernels/common/bfs_mark.h).
 * The build embeds the common headers (mark_layout.h, portable.h, mark_bits.h, ...)
 * ahead of this file (cmake/EmbedOpenCl.cmake), so the program is compiled from one
 * string. The kernels that read the roots find them in the level state's buffer,
 * after the state (mark_layout.h, GCVM_STATE_ROOTS). */
#include "bfs_mark.h"
#include "memory_ops.h"

__kernel __attribute__((reqd_work_group_size(GCVM_GROUP_SIZE, 1, 1))) void gcvm_bfs_seed_kernel(
    uint root_count, uint marked_count, __global uint* marks, __global uint* out_queue, __global uint* state) {
  __local struct gcvm_bfs_shared shared;
  gcvm_bfs_seed(state + GCVM_STATE_ROOTS, root_count, marked_count, marks, out_queue, state, &shared);
}

__kernel __attribute__((reqd_work_group_size(GCVM_GROUP_SIZE, 1, 1))) void gcvm_bfs_level_kernel(
    __global const ulong* begin, __global const uint* degree, __global const uint* edges, __global uint* marks,
    __global const uint* in_queue, __global uint* out_queue, __global uint* state, __global ulong* chunk_items,
    uint chunk_capacity, uint level, uint flags, uint wide_threshold, uint fallback_threshold,
    uint fallback_min_level, uint deep_fallback_threshold, uint deep_fallback_level, uint expand_batches) {
  __local struct gcvm_bfs_shared shared;
  gcvm_bfs_level(begin, degree, edges, marks, in_queue, out_queue, state, chunk_items, chunk_capacity, level, flags,
                 wide_threshold, fallback_threshold, fallback_min_level, deep_fallback_threshold, deep_fallback_level,
                 expand_batches, &shared);
}

__kernel __attribute__((reqd_work_group_size(GCVM_GROUP_SIZE, 1, 1))) void gcvm_bfs_frontier_kernel(
    __global const uint* marks, __global uint* seen, uint words, __global uint* queue, __global uint* state,
    uint level) {
  __local struct gcvm_bfs_shared shared;
  gcvm_bfs_frontier(marks, seen, words, queue, state, level, &shared);
}

__kernel __attribute__((reqd_work_group_size(GCVM_GROUP_SIZE, 1, 1))) void gcvm_bfs_lane_kernel(
    __global const ulong* begin, __global const uint* degree, __global const uint* edges, __global uint* marks,
    uint root_count, __global uint* pool, __global uint* tables, uint pool_chunks, uint table_chunks,
    __global uint* state, uint flags, uint wide_threshold) {
  __local struct gcvm_bfs_shared shared;
  gcvm_bfs_lane(begin, degree, edges, marks, state + GCVM_STATE_ROOTS, root_count, pool, tables, pool_chunks,
                table_chunks, state, flags, wide_threshold, &shared);
}

__kernel __attribute__((reqd_work_group_size(GCVM_GROUP_SIZE, 1, 1))) void gcvm_fill_kernel(
    __global uint* words, ulong count, uint even, uint odd) {
  gcvm_fill_words(words, count, even, odd);
}

__kernel __attribute__((reqd_work_group_size(GCVM_GROUP_SIZE, 1, 1))) void gcvm_count_marks_kernel(
    __global const uint* marks, uint words, __global uint* state) {
  __local uint group_total;
  gcvm_count_marks(marks, words, state + GCVM_STATE_MARKED, &group_total);
}

__kernel __attribute__((reqd_work_group_size(GCVM_GROUP_SIZE, 1, 1))) void gcvm_apply_patch_kernel(
    __global ulong* begin, __global uint* degree, __global uint* edges, __global const uint* patch) {
  gcvm_apply_patch(begin, degree, edges, patch);
}

/* ---- gpu-bfs async mode (async_mark.h, embedded after bfs_mark.h) ---- */
#include "async_mark.h"

__kernel __attribute__((reqd_work_group_size(GCVM_GROUP_SIZE, 1, 1))) void gcvm_bfs_async_seed_kernel(
    uint root_count, __global uint* marks, __global uint* queue, __global uint* state) {
  __local struct gcvm_bfs_shared shared;
  gcvm_bfs_async_seed(state + GCVM_STATE_ROOTS, root_count, marks, queue, state, &shared);
}

__kernel __attribute__((reqd_work_group_size(GCVM_ASYNC_GROUP_SIZE, 1, 1))) void gcvm_bfs_async_kernel(
    __global const ulong* begin, __global const uint* degree, __global const uint* edges, __global uint* marks,
    __global uint* queue, uint capacity, __global ulong* chunk_items, uint chunk_capacity, __global uint* state,
    uint flags, uint fallback_threshold, uint narrow_rounds) {
  __local struct gcvm_async_shared shared;
  gcvm_bfs_async(begin, degree, edges, marks, queue, capacity, chunk_items, chunk_capacity, state, flags,
                 fallback_threshold, narrow_rounds, &shared);
}

__kernel __attribute__((reqd_work_group_size(GCVM_GROUP_SIZE, 1, 1))) void gcvm_async_gather_kernel(
    __global const uint* queue, uint tail, __global uint* out, uint capacity) {
  gcvm_async_gather(queue, tail, out, capacity);
}

/* ---- gpu-dfs (dfs_mark.h, embedded after bfs_mark.h) ---- */
#include "dfs_mark.h"

__kernel __attribute__((reqd_work_group_size(GCVM_GROUP_SIZE, 1, 1))) void gcvm_dfs_seed_kernel(
    __global const uint* state, uint root_count, __global uint* marks, __global uint* storage, __global uint* tops,
    uint flags) {
  gcvm_dfs_seed(state + GCVM_STATE_ROOTS, root_count, marks, storage, tops, flags);
}

__kernel __attribute__((reqd_work_group_size(GCVM_GROUP_SIZE, 1, 1))) void gcvm_dfs_run_kernel(
    __global const ulong* begin, __global const uint* degree, __global const uint* edges, __global uint* marks,
    __global uint* storage, __global uint* tops, __global uint* pool, __global ulong* chunk_table,
    __global uint* state, uint launch, uint flags, uint local_cap, uint wide_threshold, uint pool_slots,
    uint chunk_edges, uint rounds_per_launch, uint steps) {
  __local struct gcvm_dfs_shared shared;
  gcvm_dfs_run(begin, degree, edges, marks, storage, tops, pool, chunk_table, state, launch, flags, local_cap,
               wide_threshold, pool_slots, chunk_edges, rounds_per_launch, steps, &shared);
}

__kernel __attribute__((reqd_work_group_size(GCVM_GROUP_SIZE, 1, 1))) void gcvm_dfs_gather_kernel(
    __global const uint* storage, __global const uint* tops, __global uint* out, uint capacity) {
  gcvm_dfs_gather(storage, tops, out, capacity);
}
