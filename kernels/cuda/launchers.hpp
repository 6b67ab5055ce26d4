// Thin host-side launchers of the CUDA mark kernels (kernels/cuda/mark_kernels.cu).
// Each enqueues one kernel on `stream` and returns the launch's error code; the
// caller (gc/device/cuda_backend.cpp) turns errors into DeviceError.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gcvm::cuda {

cudaError_t launch_bfs_seed(const std::uint32_t* roots, std::uint32_t root_count, std::uint32_t marked_count,
                            std::uint32_t* marks, std::uint32_t* out_queue, std::uint32_t* state, std::uint32_t groups,
                            cudaStream_t stream);

/// The arguments of one BFS level launch (kernels/common/bfs_mark.h, gcvm_bfs_level).
struct BfsLevelArgs {
  const std::uint64_t* begin;
  const std::uint32_t* degree;
  const std::uint32_t* edges;
  std::uint32_t* marks;
  const std::uint32_t* in_queue;
  std::uint32_t* out_queue;
  std::uint32_t* state;
  std::uint64_t* chunk_items;
  std::uint32_t chunk_capacity, level, flags, wide_threshold, fallback_threshold, fallback_min_level,
      deep_fallback_threshold, deep_fallback_level, expand_batches, groups;
};

cudaError_t launch_bfs_level(const BfsLevelArgs& args, cudaStream_t stream);

/// One launch that does a pause's small setup steps together: applies the mirror patch
/// at `patch` (none when null; the patch may lie in page-locked host memory, which the
/// kernel reads across the link), copies `copy_words` words from `copy_from` (host
/// memory likewise) to `copy_to`, clears `clear_words` words at `clear` and sets
/// `fill_words` words at `fill` to all ones. The four write disjoint buffers.
struct PauseSetupArgs {
  std::uint64_t* begin;
  std::uint32_t* degree;
  std::uint32_t* edges;
  const std::uint32_t* patch;
  std::uint32_t* copy_to;
  const std::uint32_t* copy_from;
  std::uint64_t copy_words;
  std::uint32_t* clear;
  std::uint64_t clear_words;
  std::uint32_t* fill;
  std::uint64_t fill_words;
  bool empty() const { return patch == nullptr && copy_words == 0 && clear_words == 0 && fill_words == 0; }
};
cudaError_t launch_pause_setup(const PauseSetupArgs& args, std::uint32_t groups, cudaStream_t stream);

/// The arguments of levels mode in one launch (gcvm_bfs_levels_together): the seed's
/// and every level's, the two queues, and the mark words it counts at the end; and
/// the pause's setup steps, which it runs first unless `setup` is empty (a grid-wide
/// barrier then stands in for the setup launch's boundary).
struct BfsTogetherArgs {
  PauseSetupArgs setup;
  const std::uint64_t* begin;
  const std::uint32_t* degree;
  const std::uint32_t* edges;
  std::uint32_t* marks;
  const std::uint32_t* roots;
  std::uint32_t* queue0;
  std::uint32_t* queue1;
  std::uint32_t* state;
  std::uint64_t* chunk_items;
  std::uint32_t mark_words, root_count, marked_count, chunk_capacity, flags, wide_threshold, fallback_threshold,
      fallback_min_level, deep_fallback_threshold, deep_fallback_level, expand_batches;
};
/// One cooperative launch of `groups` groups, which must all be resident at once (at
/// most bfs_levels_together_groups_per_sm() a multiprocessor).
cudaError_t launch_bfs_levels_together(const BfsTogetherArgs& args, std::uint32_t groups, cudaStream_t stream);
/// Groups of the one-launch levels kernel that are resident at once on one SM (0 if
/// the occupancy query fails).
int bfs_levels_together_groups_per_sm();
/// The bitmap frontier (gcvm_bfs_frontier): queue `level` from the bits of `marks`
/// clear in `seen`, which it then brings up to date; a group for every GCVM_GROUP_SIZE
/// of the `words` mark words.
cudaError_t launch_bfs_frontier(const std::uint32_t* marks, std::uint32_t* seen, std::uint32_t words,
                                std::uint32_t* queue, std::uint32_t* state, std::uint32_t level, cudaStream_t stream);

/// Adds the set bits of the `words` mark words to state[GCVM_STATE_MARKED], on at most
/// `groups` groups (gcvm_count_marks).
cudaError_t launch_count_marks(const std::uint32_t* marks, std::uint32_t words, std::uint32_t* state,
                               std::uint32_t groups, cudaStream_t stream);

// ---- gpu-bfs async mode (kernels/common/async_mark.h) ----
cudaError_t launch_bfs_async_seed(const std::uint32_t* roots, std::uint32_t root_count, std::uint32_t* marks,
                                  std::uint32_t* queue, std::uint32_t* state, std::uint32_t groups,
                                  cudaStream_t stream);

/// The arguments of the async mark launch (gcvm_bfs_async).
struct BfsAsyncArgs {
  const std::uint64_t* begin;
  const std::uint32_t* degree;
  const std::uint32_t* edges;
  std::uint32_t* marks;
  std::uint32_t* queue;
  std::uint32_t capacity;
  std::uint64_t* chunk_items;
  std::uint32_t chunk_capacity;
  std::uint32_t* state;
  std::uint32_t flags, fallback_threshold, narrow_rounds, groups;
};

cudaError_t launch_bfs_async(const BfsAsyncArgs& args, cudaStream_t stream);

/// The STOP gather (gcvm_async_gather) of queue slots [0, tail).
cudaError_t launch_async_gather(const std::uint32_t* queue, std::uint32_t tail, std::uint32_t* out,
                                std::uint32_t capacity, std::uint32_t groups, cudaStream_t stream);

/// Groups of GCVM_ASYNC_GROUP_SIZE threads of the async kernel that fit on one SM.
int bfs_async_groups_per_sm();

cudaError_t launch_bfs_lanes(const std::uint64_t* begin, const std::uint32_t* degree, const std::uint32_t* edges,
                             std::uint32_t* marks, const std::uint32_t* roots, std::uint32_t root_count,
                             std::uint32_t* pool, std::uint32_t* tables, std::uint32_t pool_chunks,
                             std::uint32_t table_chunks, std::uint32_t* state, std::uint32_t flags,
                             std::uint32_t wide_threshold, std::uint32_t lanes, cudaStream_t stream);

// ---- the mirror patch (kernels/common/memory_ops.h) ----
/// Applies the whole patch at `patch` (its section table says what it holds) with
/// `groups` groups.
cudaError_t launch_apply_patch(std::uint64_t* begin, std::uint32_t* degree, std::uint32_t* edges,
                               const std::uint32_t* patch, std::uint32_t groups, cudaStream_t stream);


/// Groups of GCVM_GROUP_SIZE threads of the BFS level kernel that fit on one SM.
int bfs_level_groups_per_sm();

// ---- gpu-dfs ----
cudaError_t launch_dfs_seed(const std::uint32_t* roots, std::uint32_t root_count, std::uint32_t* marks,
                            std::uint32_t* storage, std::uint32_t* tops, std::uint32_t flags, std::uint32_t groups,
                            cudaStream_t stream);

/// The arguments of one DFS run launch (kernels/common/dfs_mark.h, gcvm_dfs_run).
struct DfsRunArgs {
  const std::uint64_t* begin;
  const std::uint32_t* degree;
  const std::uint32_t* edges;
  std::uint32_t* marks;
  std::uint32_t* storage;
  std::uint32_t* tops;
  std::uint32_t* pool;
  std::uint64_t* chunk_table;
  std::uint32_t* state;
  std::uint32_t launch, flags, local_cap, wide_threshold, pool_slots, chunk_edges, rounds_per_launch, steps, groups;
};

cudaError_t launch_dfs_run(const DfsRunArgs& args, cudaStream_t stream);

/// The fallback gather (gcvm_dfs_gather) over the `groups` groups of the run launches.
cudaError_t launch_dfs_gather(const std::uint32_t* storage, const std::uint32_t* tops, std::uint32_t* out,
                              std::uint32_t capacity, std::uint32_t groups, cudaStream_t stream);

/// Groups of GCVM_GROUP_SIZE threads of the DFS run kernel that fit on one SM.
int dfs_run_groups_per_sm();

}  // namespace gcvm::cuda
