// CUDA entry points of the mark kernels: each is a thin wrapper that declares the
// work-group memory and calls the shared algorithm (kernels/common/bfs_mark.h).
#include <algorithm>

#include "kernels/common/async_mark.h"
#include "kernels/common/bfs_mark.h"
#include "kernels/common/memory_ops.h"
#include "kernels/cuda/launchers.hpp"

static_assert(sizeof(gcvm_bfs_shared) <= 48 * 1024, "BFS work-group memory must fit the default shared memory");
static_assert(sizeof(gcvm_async_shared) <= 48 * 1024, "async work-group memory must fit the default shared memory");
static_assert((GCVM_ASYNC_RING & (GCVM_ASYNC_RING - 1)) == 0, "the async ring is indexed modulo its size");
static_assert(GCVM_ASYNC_GROUP_SIZE == GCVM_WARP_SIZE, "an async group is one warp: its barriers are warp barriers");
static_assert(GCVM_ASYNC_GROUP_SIZE <= GCVM_GROUP_SIZE && GCVM_GROUP_SIZE % GCVM_ASYNC_GROUP_SIZE == 0,
              "async groups divide the other kernels' groups");
static_assert(GCVM_ASYNC_RING_LIMIT >= GCVM_ASYNC_RING / 2 && GCVM_ASYNC_RING / 2 >= GCVM_ASYNC_GROUP_SIZE,
              "a ring keeps one round's worth and has room for a step and a round's found objects");

namespace gcvm::cuda {

namespace {

__global__ void __launch_bounds__(GCVM_GROUP_SIZE)
    bfs_seed_kernel(const gcvm_u32* roots, gcvm_u32 root_count, gcvm_u32 marked_count, gcvm_u32* marks,
                    gcvm_u32* out_queue, gcvm_u32* state) {
  __shared__ gcvm_bfs_shared shared;
  gcvm_bfs_seed(roots, root_count, marked_count, marks, out_queue, state, &shared);
}

/* Eight groups a multiprocessor (32 registers), as the level kernel held before shares
 * (GCVM_BFS_SHARES) came into its loop: its wide levels want the occupancy, and ptxas
 * would otherwise take 40 registers and leave it six. */
__global__ void __launch_bounds__(GCVM_GROUP_SIZE, 8)
    bfs_level_kernel(const gcvm_u64* begin, const gcvm_u32* degree, const gcvm_u32* edges, gcvm_u32* marks,
                     const gcvm_u32* in_queue, gcvm_u32* out_queue, gcvm_u32* state, gcvm_u64* chunk_items,
                     gcvm_u32 chunk_capacity, gcvm_u32 level, gcvm_u32 flags, gcvm_u32 wide_threshold,
                     gcvm_u32 fallback_threshold, gcvm_u32 fallback_min_level, gcvm_u32 deep_fallback_threshold,
                     gcvm_u32 deep_fallback_level, gcvm_u32 expand_batches) {
  __shared__ gcvm_bfs_shared shared;
  gcvm_bfs_level(begin, degree, edges, marks, in_queue, out_queue, state, chunk_items, chunk_capacity, level, flags,
                 wide_threshold, fallback_threshold, fallback_min_level, deep_fallback_threshold, deep_fallback_level,
                 expand_batches, &shared);
}

/* A pause's setup steps (launchers.hpp, PauseSetupArgs), each over the whole grid:
 * they write disjoint buffers and need no barrier between them. */
__device__ void run_pause_setup(const PauseSetupArgs& a) {
  if (a.patch != nullptr)
    gcvm_apply_patch(reinterpret_cast<gcvm_u64*>(a.begin), a.degree, a.edges, a.patch);
  gcvm_copy_words(a.copy_to, a.copy_from, a.copy_words);
  gcvm_fill_words(a.clear, a.clear_words, 0u, 0u);
  gcvm_fill_words(a.fill, a.fill_words, 0xFFFFFFFFu, 0xFFFFFFFFu);
}

/* Every level of the mark in one cooperative launch (gcvm_bfs_levels_together), after
 * the pause's setup where the launch took it (the condition is the same for every
 * group, so every group meets the barrier). */
__global__ void __launch_bounds__(GCVM_GROUP_SIZE) bfs_levels_together_kernel(BfsTogetherArgs a) {
  __shared__ gcvm_bfs_shared shared;
  __shared__ gcvm_u32 group_total;
  if (a.setup.patch != nullptr || a.setup.copy_words != 0u || a.setup.clear_words != 0u ||
      a.setup.fill_words != 0u) {
    run_pause_setup(a.setup);
    GCVM_GRID_BARRIER();
  }
  gcvm_bfs_levels_together(reinterpret_cast<const gcvm_u64*>(a.begin), a.degree, a.edges, a.marks, a.mark_words,
                           a.roots, a.root_count, a.marked_count, a.queue0, a.queue1, a.state,
                           reinterpret_cast<gcvm_u64*>(a.chunk_items), a.chunk_capacity, a.flags, a.wide_threshold,
                           a.fallback_threshold, a.fallback_min_level, a.deep_fallback_threshold,
                           a.deep_fallback_level, a.expand_batches, &shared, &group_total);
}

__global__ void __launch_bounds__(GCVM_GROUP_SIZE)
    bfs_frontier_kernel(const gcvm_u32* marks, gcvm_u32* seen, gcvm_u32 words, gcvm_u32* queue, gcvm_u32* state,
                        gcvm_u32 level) {
  __shared__ gcvm_bfs_shared shared;
  gcvm_bfs_frontier(marks, seen, words, queue, state, level, &shared);
}

__global__ void __launch_bounds__(GCVM_GROUP_SIZE)
    bfs_async_seed_kernel(const gcvm_u32* roots, gcvm_u32 root_count, gcvm_u32* marks, gcvm_u32* queue,
                          gcvm_u32* state) {
  __shared__ gcvm_bfs_shared shared;
  gcvm_bfs_async_seed(roots, root_count, marks, queue, state, &shared);
}

/* One warp a group, as many as an SM holds: a deep heap's mark is as fast as its
 * chains' hops, and hops of different chains overlap only across groups. */
__global__ void __launch_bounds__(GCVM_ASYNC_GROUP_SIZE, 32)
    bfs_async_kernel(const gcvm_u64* begin, const gcvm_u32* degree, const gcvm_u32* edges, gcvm_u32* marks,
                     gcvm_u32* queue, gcvm_u32 capacity, gcvm_u64* chunk_items, gcvm_u32 chunk_capacity,
                     gcvm_u32* state, gcvm_u32 flags, gcvm_u32 fallback_threshold, gcvm_u32 narrow_rounds) {
  __shared__ gcvm_async_shared shared;
  gcvm_bfs_async(begin, degree, edges, marks, queue, capacity, chunk_items, chunk_capacity, state, flags,
                 fallback_threshold, narrow_rounds, &shared);
}

__global__ void __launch_bounds__(GCVM_GROUP_SIZE)
    async_gather_kernel(const gcvm_u32* queue, gcvm_u32 tail, gcvm_u32* out, gcvm_u32 capacity) {
  gcvm_async_gather(queue, tail, out, capacity);
}

/* Six groups a multiprocessor (40 registers), as before the level's batch scan skipped
 * its unused collectives; ptxas would otherwise take 62 and leave it four. */
__global__ void __launch_bounds__(GCVM_GROUP_SIZE, 6)
    bfs_lane_kernel(const gcvm_u64* begin, const gcvm_u32* degree, const gcvm_u32* edges, gcvm_u32* marks,
                    const gcvm_u32* roots, gcvm_u32 root_count, gcvm_u32* pool, gcvm_u32* tables, gcvm_u32 pool_chunks,
                    gcvm_u32 table_chunks, gcvm_u32* state, gcvm_u32 flags, gcvm_u32 wide_threshold) {
  __shared__ gcvm_bfs_shared shared;
  gcvm_bfs_lane(begin, degree, edges, marks, roots, root_count, pool, tables, pool_chunks, table_chunks, state, flags,
                wide_threshold, &shared);
}

__global__ void __launch_bounds__(GCVM_GROUP_SIZE)
    count_marks_kernel(const gcvm_u32* marks, gcvm_u32 words, gcvm_u32* state) {
  __shared__ gcvm_u32 group_total;
  gcvm_count_marks(marks, words, state + GCVM_STATE_MARKED, &group_total);
}

__global__ void __launch_bounds__(GCVM_GROUP_SIZE)
    apply_patch_kernel(gcvm_u64* begin, gcvm_u32* degree, gcvm_u32* edges, const gcvm_u32* patch) {
  gcvm_apply_patch(begin, degree, edges, patch);
}

/* A pause's setup in one launch (launchers.hpp, PauseSetupArgs): each step writes its
 * own buffer, so the groups stride over all of them in one pass, no barriers. */
__global__ void __launch_bounds__(GCVM_GROUP_SIZE) pause_setup_kernel(PauseSetupArgs a) { run_pause_setup(a); }

}  // namespace

cudaError_t launch_bfs_seed(const std::uint32_t* roots, std::uint32_t root_count, std::uint32_t marked_count,
                            std::uint32_t* marks, std::uint32_t* out_queue, std::uint32_t* state,
                            std::uint32_t groups, cudaStream_t stream) {
  bfs_seed_kernel<<<groups, GCVM_GROUP_SIZE, 0, stream>>>(roots, root_count, marked_count, marks, out_queue, state);
  return cudaGetLastError();
}

cudaError_t launch_bfs_level(const BfsLevelArgs& a, cudaStream_t stream) {
  bfs_level_kernel<<<a.groups, GCVM_GROUP_SIZE, 0, stream>>>(
      reinterpret_cast<const gcvm_u64*>(a.begin), a.degree, a.edges, a.marks, a.in_queue, a.out_queue, a.state,
      reinterpret_cast<gcvm_u64*>(a.chunk_items), a.chunk_capacity, a.level, a.flags, a.wide_threshold,
      a.fallback_threshold, a.fallback_min_level, a.deep_fallback_threshold, a.deep_fallback_level, a.expand_batches);
  return cudaGetLastError();
}

cudaError_t launch_bfs_levels_together(const BfsTogetherArgs& args, std::uint32_t groups, cudaStream_t stream) {
  void* parameters[] = {const_cast<BfsTogetherArgs*>(&args)};
  return cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(&bfs_levels_together_kernel), dim3(groups),
                                     dim3(GCVM_GROUP_SIZE), parameters, 0, stream);
}

int bfs_levels_together_groups_per_sm() {
  int groups = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&groups, bfs_levels_together_kernel, GCVM_GROUP_SIZE, 0) !=
      cudaSuccess)
    return 0;
  return groups;
}

cudaError_t launch_count_marks(const std::uint32_t* marks, std::uint32_t words, std::uint32_t* state,
                               std::uint32_t groups, cudaStream_t stream) {
  groups = std::max<std::uint32_t>(1, std::min<std::uint32_t>(groups, (words + GCVM_GROUP_SIZE - 1) / GCVM_GROUP_SIZE));
  count_marks_kernel<<<groups, GCVM_GROUP_SIZE, 0, stream>>>(marks, words, state);
  return cudaGetLastError();
}

cudaError_t launch_bfs_frontier(const std::uint32_t* marks, std::uint32_t* seen, std::uint32_t words,
                                std::uint32_t* queue, std::uint32_t* state, std::uint32_t level, cudaStream_t stream) {
  const std::uint32_t groups = std::max<std::uint32_t>(1, (words + GCVM_GROUP_SIZE - 1) / GCVM_GROUP_SIZE);
  bfs_frontier_kernel<<<groups, GCVM_GROUP_SIZE, 0, stream>>>(marks, seen, words, queue, state, level);
  return cudaGetLastError();
}

cudaError_t launch_bfs_async_seed(const std::uint32_t* roots, std::uint32_t root_count, std::uint32_t* marks,
                                  std::uint32_t* queue, std::uint32_t* state, std::uint32_t groups,
                                  cudaStream_t stream) {
  bfs_async_seed_kernel<<<groups, GCVM_GROUP_SIZE, 0, stream>>>(roots, root_count, marks, queue, state);
  return cudaGetLastError();
}

cudaError_t launch_bfs_async(const BfsAsyncArgs& a, cudaStream_t stream) {
  bfs_async_kernel<<<a.groups, GCVM_ASYNC_GROUP_SIZE, 0, stream>>>(
      reinterpret_cast<const gcvm_u64*>(a.begin), a.degree, a.edges, a.marks, a.queue, a.capacity,
      reinterpret_cast<gcvm_u64*>(a.chunk_items), a.chunk_capacity, a.state, a.flags, a.fallback_threshold,
      a.narrow_rounds);
  return cudaGetLastError();
}

cudaError_t launch_async_gather(const std::uint32_t* queue, std::uint32_t tail, std::uint32_t* out,
                                std::uint32_t capacity, std::uint32_t groups, cudaStream_t stream) {
  async_gather_kernel<<<groups, GCVM_GROUP_SIZE, 0, stream>>>(queue, tail, out, capacity);
  return cudaGetLastError();
}

int bfs_async_groups_per_sm() {
  int groups = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&groups, bfs_async_kernel, GCVM_ASYNC_GROUP_SIZE, 0) !=
      cudaSuccess)
    return 1;
  return groups > 0 ? groups : 1;
}

cudaError_t launch_bfs_lanes(const std::uint64_t* begin, const std::uint32_t* degree, const std::uint32_t* edges,
                             std::uint32_t* marks, const std::uint32_t* roots, std::uint32_t root_count,
                             std::uint32_t* pool, std::uint32_t* tables, std::uint32_t pool_chunks,
                             std::uint32_t table_chunks, std::uint32_t* state, std::uint32_t flags,
                             std::uint32_t wide_threshold, std::uint32_t lanes, cudaStream_t stream) {
  bfs_lane_kernel<<<lanes, GCVM_GROUP_SIZE, 0, stream>>>(reinterpret_cast<const gcvm_u64*>(begin), degree, edges,
                                                          marks, roots, root_count, pool, tables, pool_chunks,
                                                          table_chunks, state, flags, wide_threshold);
  return cudaGetLastError();
}

cudaError_t launch_apply_patch(std::uint64_t* begin, std::uint32_t* degree, std::uint32_t* edges,
                               const std::uint32_t* patch, std::uint32_t groups, cudaStream_t stream) {
  apply_patch_kernel<<<groups, GCVM_GROUP_SIZE, 0, stream>>>(reinterpret_cast<gcvm_u64*>(begin), degree, edges, patch);
  return cudaGetLastError();
}

cudaError_t launch_pause_setup(const PauseSetupArgs& args, std::uint32_t groups, cudaStream_t stream) {
  pause_setup_kernel<<<groups, GCVM_GROUP_SIZE, 0, stream>>>(args);
  return cudaGetLastError();
}

int bfs_level_groups_per_sm() {
  int groups = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&groups, bfs_level_kernel, GCVM_GROUP_SIZE, 0) != cudaSuccess)
    return 1;
  return groups > 0 ? groups : 1;
}

}  // namespace gcvm::cuda

// ---- gpu-dfs (kernels/common/dfs_mark.h) ----
#include "kernels/common/dfs_mark.h"

static_assert(sizeof(gcvm_dfs_shared) <= 48 * 1024, "DFS work-group memory must fit the default shared memory");

namespace gcvm::cuda {

namespace {

__global__ void __launch_bounds__(GCVM_GROUP_SIZE)
    dfs_seed_kernel(const gcvm_u32* roots, gcvm_u32 root_count, gcvm_u32* marks, gcvm_u32* storage, gcvm_u32* tops,
                    gcvm_u32 flags) {
  gcvm_dfs_seed(roots, root_count, marks, storage, tops, flags);
}

__global__ void __launch_bounds__(GCVM_GROUP_SIZE)
    dfs_run_kernel(const gcvm_u64* begin, const gcvm_u32* degree, const gcvm_u32* edges, gcvm_u32* marks,
                   gcvm_u32* storage, gcvm_u32* tops, gcvm_u32* pool, gcvm_u64* chunk_table, gcvm_u32* state,
                   gcvm_u32 launch, gcvm_u32 flags, gcvm_u32 local_cap, gcvm_u32 wide_threshold, gcvm_u32 pool_slots,
                   gcvm_u32 chunk_edges, gcvm_u32 rounds_per_launch, gcvm_u32 steps) {
  __shared__ gcvm_dfs_shared shared;
  gcvm_dfs_run(begin, degree, edges, marks, storage, tops, pool, chunk_table, state, launch, flags, local_cap,
               wide_threshold, pool_slots, chunk_edges, rounds_per_launch, steps, &shared);
}

__global__ void __launch_bounds__(GCVM_GROUP_SIZE)
    dfs_gather_kernel(const gcvm_u32* storage, const gcvm_u32* tops, gcvm_u32* out, gcvm_u32 capacity) {
  gcvm_dfs_gather(storage, tops, out, capacity);
}

}  // namespace

cudaError_t launch_dfs_seed(const std::uint32_t* roots, std::uint32_t root_count, std::uint32_t* marks,
                            std::uint32_t* storage, std::uint32_t* tops, std::uint32_t flags, std::uint32_t groups,
                            cudaStream_t stream) {
  dfs_seed_kernel<<<groups, GCVM_GROUP_SIZE, 0, stream>>>(roots, root_count, marks, storage, tops, flags);
  return cudaGetLastError();
}

cudaError_t launch_dfs_run(const DfsRunArgs& a, cudaStream_t stream) {
  dfs_run_kernel<<<a.groups, GCVM_GROUP_SIZE, 0, stream>>>(
      reinterpret_cast<const gcvm_u64*>(a.begin), a.degree, a.edges, a.marks, a.storage, a.tops, a.pool,
      reinterpret_cast<gcvm_u64*>(a.chunk_table), a.state, a.launch, a.flags, a.local_cap, a.wide_threshold,
      a.pool_slots, a.chunk_edges, a.rounds_per_launch, a.steps);
  return cudaGetLastError();
}

cudaError_t launch_dfs_gather(const std::uint32_t* storage, const std::uint32_t* tops, std::uint32_t* out,
                              std::uint32_t capacity, std::uint32_t groups, cudaStream_t stream) {
  dfs_gather_kernel<<<groups, GCVM_GROUP_SIZE, 0, stream>>>(storage, tops, out, capacity);
  return cudaGetLastError();
}

int dfs_run_groups_per_sm() {
  int groups = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&groups, dfs_run_kernel, GCVM_GROUP_SIZE, 0) != cudaSuccess)
    return 1;
  return groups > 0 ? groups : 1;
}

}  // namespace gcvm::cuda
