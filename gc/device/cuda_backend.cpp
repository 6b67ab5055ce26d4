#include "gc/device/cuda_backend.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <memory>
#include <utility>

#include "gc/device/cuda_host_pinner.hpp"
#include "gc/device/cuda_memory.hpp"
#include "gc/device/driver_teardown.hpp"
#include "gc/device/mirror_plan.hpp"
#include "gc/heap/mark_word_allocator.hpp"
#include "kernels/common/mark_layout.h"
#include "kernels/common/partition_layout.h"
#include "kernels/cuda/launchers.hpp"
#include "kernels/cuda/partition_launchers.hpp"

namespace gcvm {

namespace {

using cuda_memory::check;
using cuda_memory::DeviceBuffer;
using cuda_memory::PinnedBuffer;
using cuda_memory::PinnedReadback;
using cuda_memory::PinnedStaging;

constexpr std::size_t element_bytes(MirrorArray array) {
  return array == MirrorArray::Begin ? sizeof(std::uint64_t) : sizeof(std::uint32_t);
}

class CudaBackend final : public DeviceBackend {
 public:
  CudaBackend(DeviceInfo info, int device) : info_(std::move(info)), device_(device) {
    check(cudaSetDevice(device_), "cudaSetDevice");
    note_driver_state();
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cudaEventCreate(&start_), "cudaEventCreate");
    check(cudaEventCreate(&stop_), "cudaEventCreate");
    int cooperative = 0;
    if (cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device_) == cudaSuccess && cooperative != 0)
      together_groups_ = info_.compute_units * static_cast<std::uint32_t>(cuda::bfs_levels_together_groups_per_sm());
    state_and_roots_.reserve((GCVM_STATE_ROOTS + 1) * sizeof(std::uint32_t), "the level state and the roots");
    staging_.prepare();
    readback_.prepare();
    // Mark bitmaps allocated from now on are page-locked: the marks are read into them
    // directly (PinnedReadback).
    install_mark_word_pinner(CudaHostPinner::instance());
    try {
      setup_host_.reserve(kSetupHostBytes, "the level state and the roots");
    } catch (const DeviceError&) {
      // No page-locked memory to spare: the state and roots go through the staging copies.
    }
    try {
      patch_host_.reserve(kInitialPatchBytes, "the mirror patch");
      // The device's piece buffer too: growing it in a sync frees the old one, and
      // cudaFree waits for the whole device, the direct copies queued before included.
      patch_.reserve(kInitialPatchBytes, "the mirror patch");
    } catch (const DeviceError&) {
      // Likewise: patches are staged until grow_patch_buffer finds some.
    }
  }
  ~CudaBackend() override {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
    cudaStreamDestroy(stream_);
  }

  const DeviceInfo& info() const override { return info_; }
  void make_current() override { check(cudaSetDevice(device_), "cudaSetDevice"); }

  void reserve_graph(std::uint64_t vertices, std::uint64_t edges, std::uint64_t keep_vertices,
                     std::uint64_t keep_edges) override {
    check(cudaSetDevice(device_), "cudaSetDevice");
    const std::uint64_t padded = (edges + GCVM_EDGE_PAD - 1) / GCVM_EDGE_PAD * GCVM_EDGE_PAD + GCVM_EDGE_PAD;
    begin_.reserve(vertices * sizeof(std::uint64_t), "the mirror's begin array", keep_vertices * sizeof(std::uint64_t),
                   stream());
    degree_.reserve(vertices * sizeof(std::uint32_t), "the mirror's degree array",
                    keep_vertices * sizeof(std::uint32_t), stream());
    edges_.reserve(padded * sizeof(std::uint32_t), "the mirror's edge array", keep_edges * sizeof(std::uint32_t),
                   stream());
    vertices_ = vertices;
    queue_bytes_ = std::max<std::uint64_t>(vertices, 1) * sizeof(std::uint32_t);
  }

  std::shared_ptr<HostPinner> host_pinner() override { return CudaHostPinner::instance(); }

  void upload_ranges(MirrorArray array, const void* host, std::span<const ElementRange> ranges) override {
    const std::size_t size = element_bytes(array);
    auto* device = mirror_array(array).as<std::byte>();
    const auto* from = static_cast<const std::byte*>(host);
    const CudaHostPinner& pinner = *CudaHostPinner::instance();
    batch_to_.clear();
    batch_from_.clear();
    batch_bytes_.clear();
    for (const ElementRange r : ranges) {
      for (std::size_t at = r.begin * size, end = r.end * size; at < end;) {
        // The pinned part from `at` goes into the batch; an unpinned part is staged.
        std::size_t bytes = std::min(pinner.pinned_from(from + at), end - at);
        if (bytes != 0) {
          batch_to_.push_back(device + at);
          batch_from_.push_back(from + at);
          batch_bytes_.push_back(bytes);
        } else {
          bytes = pinner.unpinned_from(from + at, end - at);
          staging_.copy(device + at, from + at, bytes, stream());
        }
        at += bytes;
      }
    }
    if (batch_to_.empty()) return;
    cudaMemcpyAttributes attributes{};
    attributes.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    std::size_t first = 0;
    check(cudaMemcpyBatchAsync(batch_to_.data(), batch_from_.data(), batch_bytes_.data(), batch_to_.size(), &attributes,
                               &first, 1, stream()),
          "uploading the reference graph (cudaMemcpyBatchAsync)");
  }

  std::span<std::byte> patch_buffer(std::uint64_t bytes) override {
    // The buffer is about to be rewritten: a patch held back for the setup launch goes
    // now, and the device must be done reading it (it reads a held-back patch across the
    // link, a copied one in its copy).
    if (pending_.patch_groups != 0) launch_setup();
    if (host_reads_.patch) wait("waiting for the last mirror patch");
    patch_staged_ = bytes > patch_host_.capacity();
    if (!patch_staged_) return {patch_host_.data(), bytes};
    // Too large for the page-locked buffer: packed into pageable memory and staged
    // (grow_patch_buffer page-locks a larger buffer after the pause).
    want_patch_buffer(bytes);
    if (bytes > patch_spill_bytes_) {
      patch_spill_bytes_ = bytes + bytes / 2;
      patch_spill_ = std::make_unique_for_overwrite<std::byte[]>(patch_spill_bytes_);
    }
    return {patch_spill_.get(), bytes};
  }

  std::uint64_t patch_buffer_capacity() const override { return patch_host_.capacity(); }

  void want_patch_buffer(std::uint64_t bytes) override {
    wanted_patch_bytes_ = std::max(wanted_patch_bytes_, std::min(bytes, kMostGrownPatchBytes));
  }

  void grow_patch_buffer() override {
    if (wanted_patch_bytes_ <= patch_host_.capacity()) return;
    make_current();
    drain("waiting for the last mirror patch");
    patch_host_.reserve(wanted_patch_bytes_, "the mirror patch");
    wanted_patch_bytes_ = 0;
    patch_spill_.reset();
    patch_spill_bytes_ = 0;
  }

  void apply_patch(const MirrorPatchLayout& layout, std::uint64_t offset) override {
    if (!patch_staged_ && offset == 0 && layout.bytes <= kHostReadPatchBytes) {
      // Held back: the setup launch reads it from the page-locked buffer.
      if (pending_.patch_groups != 0) launch_setup();
      pending_.patch_groups = std::max(layout.kernel_groups(), 1u);
      return;
    }
    // Every piece goes to the device buffer's start: the stream orders a piece's copy
    // after the kernel that applies the one before.
    patch_.reserve(layout.bytes, "the mirror patch");
    if (patch_staged_) {
      staging_.copy(patch_.as<void>(), patch_spill_.get() + offset, layout.bytes, stream());
    } else {
      check(cudaMemcpyAsync(patch_.as<void>(), patch_host_.data() + offset, layout.bytes, cudaMemcpyHostToDevice,
                            stream()),
            "uploading the mirror patch");
      host_reads_.patch = true;
    }
    check(cuda::launch_apply_patch(begin_.as<std::uint64_t>(), degree_.as<std::uint32_t>(), edges_.as<std::uint32_t>(),
                                   patch_.as<std::uint32_t>(), layout.kernel_groups(), stream()),
          "launching the mirror patch kernel");
  }

  void finish_sync() override { drain("syncing the reference graph"); }

  void launch_held_back() override {
    if (!pending_.empty()) launch_setup();
  }

  void begin_mark(std::span<const ObjectId> roots, std::uint64_t mark_words,
                  std::span<const std::uint64_t> premarked) override {
    marks_counted_ = false;
    state_and_roots_.reserve((GCVM_STATE_ROOTS + std::max<std::size_t>(roots.size(), 1)) * sizeof(std::uint32_t),
                             "the level state and the roots");
    marks_.reserve(std::max<std::uint64_t>(mark_words, 1) * sizeof(std::uint32_t), "the mark bitmap");
    const std::uint64_t bytes = mark_words * sizeof(std::uint32_t);
    const std::uint64_t premarked_bytes = std::min<std::uint64_t>(premarked.size_bytes(), bytes);
    copy_in(marks_.as<void>(), premarked.data(), premarked_bytes);
    const std::uint64_t state_words = GCVM_STATE_ROOTS + roots.size();
    if (state_words * sizeof(std::uint32_t) <= setup_host_.capacity()) {
      // Held back for the setup launch, which reads the state and roots from here.
      if (host_reads_.setup) wait("waiting for the last pause's setup");
      auto* host = reinterpret_cast<std::uint32_t*>(setup_host_.data());
      std::copy(initial_state_.begin(), initial_state_.end(), host);
      std::copy(roots.begin(), roots.end(), host + GCVM_STATE_ROOTS);
      pending_.copy_words = state_words;
    } else {
      const std::array<std::span<const std::byte>, 2> state_and_roots{std::as_bytes(std::span(initial_state_)),
                                                                      std::as_bytes(roots)};
      staging_.copy(state_and_roots_.as<void>(), state_and_roots, stream());
    }
    pending_.clear_from = premarked_bytes / sizeof(std::uint32_t);
    pending_.clear_words = (bytes - premarked_bytes) / sizeof(std::uint32_t);
  }

  void launch_bfs_seed(std::uint32_t root_count, std::uint32_t marked_count, std::uint32_t groups) override {
    reserve_frontier_queues();
    check(cuda::launch_bfs_seed(device_roots(), root_count, marked_count, marks_.as<std::uint32_t>(),
                                queues_[1].as<std::uint32_t>(), level_state(), groups, stream()),
          "launching the BFS seed kernel");
  }

  void launch_bfs_level(std::uint32_t level, const BfsLaunch& launch) override {
    const cuda::BfsLevelArgs args{begin_.as<std::uint64_t>(),
                                  degree_.as<std::uint32_t>(),
                                  edges_.as<std::uint32_t>(),
                                  marks_.as<std::uint32_t>(),
                                  queues_[level % 2].as<std::uint32_t>(),
                                  queues_[(level + 1) % 2].as<std::uint32_t>(),
                                  level_state(),
                                  chunks_.as<std::uint64_t>(),
                                  chunk_capacity_,
                                  level,
                                  launch.flags,
                                  launch.wide_threshold,
                                  launch.fallback_threshold,
                                  launch.fallback_min_level,
                                  launch.deep_fallback_threshold,
                                  launch.deep_fallback_level,
                                  launch.expand_batches,
                                  launch.groups};
    check(cuda::launch_bfs_level(args, stream()), "launching the BFS level kernel");
  }

  std::uint32_t bfs_levels_together_groups() const override { return together_groups_; }

  void launch_bfs_levels_together(std::uint32_t root_count, std::uint32_t marked_count, std::uint64_t mark_words,
                                  const BfsLaunch& launch) override {
    if (launch.groups == 0 || launch.groups > together_groups_)
      throw DeviceError(fmt::format("gpu-bfs: {} groups for the levels in one launch, where at most {} are resident",
                                    launch.groups, together_groups_));
    reserve_frontier_queues();
    // What is held back runs in the launch, before the seed: it is launched here, so it
    // must not go through stream(), which would launch it on its own first.
    const cuda::BfsTogetherArgs args{pending_.empty() ? cuda::PauseSetupArgs{} : take_setup(),
                                     begin_.as<std::uint64_t>(),
                                     degree_.as<std::uint32_t>(),
                                     edges_.as<std::uint32_t>(),
                                     marks_.as<std::uint32_t>(),
                                     device_roots(),
                                     queues_[0].as<std::uint32_t>(),
                                     queues_[1].as<std::uint32_t>(),
                                     level_state(),
                                     chunks_.as<std::uint64_t>(),
                                     static_cast<std::uint32_t>(mark_words),
                                     root_count,
                                     marked_count,
                                     chunk_capacity_,
                                     launch.flags,
                                     launch.wide_threshold,
                                     launch.fallback_threshold,
                                     launch.fallback_min_level,
                                     launch.deep_fallback_threshold,
                                     launch.deep_fallback_level,
                                     launch.expand_batches};
    check(cuda::launch_bfs_levels_together(args, launch.groups, stream_), "launching the BFS levels in one launch");
    marks_counted_ = true;
  }

  void snapshot_marks(std::uint64_t mark_words) override {
    const std::uint64_t bytes = std::max<std::uint64_t>(mark_words, 1) * sizeof(std::uint32_t);
    seen_.reserve(bytes, "the bitmap frontier's snapshot");
    check(cudaMemcpyAsync(seen_.as<void>(), marks_.as<void>(), bytes, cudaMemcpyDeviceToDevice, stream()),
          "copying the mark bitmap for the bitmap frontier");
  }

  void launch_bfs_frontier(std::uint32_t level, std::uint64_t mark_words) override {
    check(cuda::launch_bfs_frontier(marks_.as<std::uint32_t>(), seen_.as<std::uint32_t>(),
                                    static_cast<std::uint32_t>(mark_words), queues_[level % 2].as<std::uint32_t>(),
                                    level_state(), level, stream()),
          "launching the bitmap frontier kernel");
  }

  void begin_chunks(std::uint64_t capacity) override {
    chunk_capacity_ = static_cast<std::uint32_t>(std::max<std::uint64_t>(capacity, 1));
    chunks_.reserve(std::uint64_t{chunk_capacity_} * sizeof(std::uint64_t), "the chunk queue");
    pending_.fill_words = std::uint64_t{chunk_capacity_} * 2;  // held back for the setup launch
  }

  std::vector<std::uint64_t> read_chunk_items(std::uint32_t from, std::uint32_t to) override {
    std::vector<std::uint64_t> items(to > from ? to - from : 0);
    copy_out(items.data(), chunks_.as<std::uint64_t>() + from, items.size() * sizeof(std::uint64_t),
             "reading the chunk queue");
    return items;
  }

  void launch_bfs_async_seed(std::uint32_t root_count, std::uint32_t groups) override {
    queues_[0].reserve(queue_bytes_, "the async queue");
    check(cudaMemsetAsync(queues_[0].as<void>(), 0xFF, queue_bytes_, stream()), "clearing the async queue");
    check(cuda::launch_bfs_async_seed(device_roots(), root_count, marks_.as<std::uint32_t>(),
                                      queues_[0].as<std::uint32_t>(), level_state(), groups, stream()),
          "launching the async seed kernel");
  }

  void launch_bfs_async(const BfsLaunch& launch) override {
    const cuda::BfsAsyncArgs args{begin_.as<std::uint64_t>(),
                                  degree_.as<std::uint32_t>(),
                                  edges_.as<std::uint32_t>(),
                                  marks_.as<std::uint32_t>(),
                                  queues_[0].as<std::uint32_t>(),
                                  static_cast<std::uint32_t>(queue_bytes_ / sizeof(std::uint32_t)),
                                  chunks_.as<std::uint64_t>(),
                                  chunk_capacity_,
                                  level_state(),
                                  launch.flags,
                                  launch.fallback_threshold,
                                  launch.narrow_rounds,
                                  launch.groups};
    check(cuda::launch_bfs_async(args, stream()), "launching the async mark kernel");
  }

  std::vector<ObjectId> gather_async_queue(std::uint32_t tail, std::uint32_t capacity) override {
    gather_.reserve((std::size_t{capacity} + 1) * sizeof(std::uint32_t), "the async gather");
    check(cudaMemsetAsync(gather_.as<void>(), 0, sizeof(std::uint32_t), stream()), "clearing the async gather count");
    const std::uint32_t groups = std::clamp<std::uint32_t>((tail + GCVM_GROUP_SIZE - 1) / GCVM_GROUP_SIZE, 1, 4096);
    check(cuda::launch_async_gather(queues_[0].as<std::uint32_t>(), tail, gather_.as<std::uint32_t>(), capacity, groups,
                                    stream()),
          "launching the async gather kernel");
    std::uint32_t count = 0;
    copy_out(&count, gather_.as<void>(), sizeof(count), "reading the async gather count");
    if (count > capacity) throw DeviceError("gpu-bfs async: more queued objects than pending work (an internal error)");
    std::vector<ObjectId> pending(count);
    copy_out(pending.data(), gather_.as<std::uint32_t>() + 1, count * sizeof(ObjectId), "reading the async gather");
    return pending;
  }

  std::uint32_t async_resident_groups() const override {
    return static_cast<std::uint32_t>(std::max(1u, info_.compute_units) * cuda::bfs_async_groups_per_sm());
  }

  void launch_bfs_lanes(std::uint32_t root_count, const BfsLaunch& launch) override {
    const auto [table_chunks, pool_chunks] = lane_pool_size(vertices_, launch.groups);
    lane_pool_.reserve(std::uint64_t{pool_chunks} * GCVM_LANE_CHUNK * sizeof(std::uint32_t), "the lanes' queue pool");
    lane_tables_.reserve(std::uint64_t{table_chunks} * launch.groups * sizeof(std::uint32_t), "the lanes' chunk tables");
    check(cuda::launch_bfs_lanes(begin_.as<std::uint64_t>(), degree_.as<std::uint32_t>(), edges_.as<std::uint32_t>(),
                                 marks_.as<std::uint32_t>(), device_roots(), root_count,
                                 lane_pool_.as<std::uint32_t>(), lane_tables_.as<std::uint32_t>(), pool_chunks,
                                 table_chunks, level_state(), launch.flags, launch.wide_threshold,
                                 launch.groups, stream()),
          "launching the BFS lane kernel");
  }

  std::vector<std::uint32_t> read_state() override {
    std::vector<std::uint32_t> state(GCVM_STATE_WORDS);
    copy_out(state.data(), level_state(), state.size() * sizeof(std::uint32_t), "reading the level state");
    return state;
  }

  std::vector<ObjectId> read_level_queue(std::uint32_t level, std::uint32_t count) override {
    std::vector<ObjectId> queue(count);
    copy_out(queue.data(), queues_[level % 2].as<void>(), count * sizeof(ObjectId), "reading a frontier queue");
    return queue;
  }

  void read_marks(std::uint64_t* words, std::uint64_t word_count) override {
    copy_out(words, marks_.as<void>(), word_count * sizeof(std::uint64_t), "reading the mark bitmap");
  }

  std::vector<std::uint32_t> read_state_and_marks(std::uint64_t* words, std::uint64_t word_count) override {
    const auto mark_words = static_cast<std::uint32_t>(word_count * 2);
    if (!std::exchange(marks_counted_, false))
      check(cuda::launch_count_marks(marks_.as<std::uint32_t>(), mark_words, level_state(), info_.resident_groups,
                                     stream()),
            "launching the mark count kernel");
    std::vector<std::uint32_t> state(GCVM_STATE_WORDS);
    const std::array<PinnedReadback::Read, 2> reads{{
        {state.data(), level_state(), state.size() * sizeof(std::uint32_t)},
        {words, marks_.as<void>(), word_count * sizeof(std::uint64_t)},
    }};
    readback_.read(reads, stream(), "reading the level state and the mark bitmap");
    host_reads_ = {};  // the read waited for the stream
    return state;
  }

  void timer_start() override {
    check(cudaEventRecord(start_, stream()), "cudaEventRecord");
    timer_ended_ = false;
  }
  void timer_end() override {
    check(cudaEventRecord(stop_, stream()), "cudaEventRecord");
    timer_ended_ = true;
  }
  double timer_stop_ms() override {
    if (!timer_ended_) check(cudaEventRecord(stop_, stream()), "cudaEventRecord");
    timer_ended_ = false;
    check(cudaEventSynchronize(stop_), "running the mark kernels");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
    return ms;
  }

  double copy_bandwidth(std::uint64_t bytes) override {
    DeviceBuffer from, to;
    from.reserve(bytes, "the bandwidth probe");
    to.reserve(bytes, "the bandwidth probe");
    check(cudaMemsetAsync(from.as<void>(), 1, bytes, stream()), "cudaMemset");
    check(cudaMemcpyAsync(to.as<void>(), from.as<void>(), bytes, cudaMemcpyDeviceToDevice, stream()), "warm-up copy");
    timer_start();
    constexpr int kCopies = 5;
    for (int i = 0; i < kCopies; ++i)
      check(cudaMemcpyAsync(to.as<void>(), from.as<void>(), bytes, cudaMemcpyDeviceToDevice, stream()), "copy");
    const double ms = timer_stop_ms();
    return 2.0 * kCopies * static_cast<double>(bytes) / (ms / 1000);  // read + write
  }

  std::uint64_t device_bytes() const override {
    return begin_.capacity() + degree_.capacity() + edges_.capacity() + queues_[0].capacity() +
           queues_[1].capacity() + marks_.capacity() + seen_.capacity() + state_and_roots_.capacity() + patch_.capacity() +
           chunks_.capacity() + lane_pool_.capacity() +
           lane_tables_.capacity() + dfs_state_.capacity() + gather_.capacity() + part_table_.capacity() +
           sent_.capacity() + outbox_.capacity() + inbox_.capacity() + part_state_.capacity() +
           dfs_stack_bytes();
  }

  void begin_dfs(std::uint64_t vertices, std::uint32_t threads, std::uint32_t pool_slots) override {
    storage_.reserve(std::max<std::uint64_t>(vertices, 1) * sizeof(std::uint32_t), "the DFS stack storage");
    tops_.reserve(std::max<std::size_t>(threads, 1) * sizeof(std::uint32_t), "the DFS stack tops");
    pool_.reserve(std::max<std::size_t>(pool_slots, 1) * sizeof(std::uint32_t), "the DFS donation pool");
    dfs_state_.reserve(GCVM_DFS_STATE_WORDS * sizeof(std::uint32_t), "the DFS state");
    check(cudaMemsetAsync(storage_.as<void>(), 0xFF, vertices * sizeof(std::uint32_t), stream()),
          "clearing the DFS stack storage");
    check(cudaMemsetAsync(pool_.as<void>(), 0xFF, std::size_t{pool_slots} * sizeof(std::uint32_t), stream()),
          "clearing the DFS pool");
    check(cudaMemsetAsync(dfs_state_.as<void>(), 0, GCVM_DFS_STATE_WORDS * sizeof(std::uint32_t), stream()),
          "clearing the DFS state");
    chunk_table_.reserve(GCVM_DFS_CHUNK_SLOTS * sizeof(std::uint64_t), "the DFS chunk table");
    free_chunk_slots_.assign(GCVM_DFS_CHUNK_SLOTS, std::uint64_t{GCVM_DFS_NO_VERTEX} << 32);
    copy_in(chunk_table_.as<void>(), free_chunk_slots_.data(), free_chunk_slots_.size() * sizeof(std::uint64_t));
  }

  void launch_dfs_seed(std::uint32_t root_count, const DfsLaunch& launch) override {
    check(cuda::launch_dfs_seed(device_roots(), root_count, marks_.as<std::uint32_t>(),
                                storage_.as<std::uint32_t>(), tops_.as<std::uint32_t>(), launch.flags, launch.groups,
                                stream()),
          "launching the DFS seed kernel");
  }

  void launch_dfs_run(std::uint32_t index, const DfsLaunch& launch) override {
    const cuda::DfsRunArgs args{begin_.as<std::uint64_t>(),  degree_.as<std::uint32_t>(), edges_.as<std::uint32_t>(),
                                marks_.as<std::uint32_t>(),  storage_.as<std::uint32_t>(), tops_.as<std::uint32_t>(),
                                pool_.as<std::uint32_t>(),   chunk_table_.as<std::uint64_t>(),
                                dfs_state_.as<std::uint32_t>(), index, launch.flags, launch.local_stack,
                                launch.wide_threshold, launch.pool_slots, launch.chunk_edges,
                                launch.rounds_per_launch, launch.steps, launch.groups};
    check(cuda::launch_dfs_run(args, stream()), "launching the DFS run kernel");
  }

  std::vector<std::uint32_t> read_dfs_state() override {
    std::vector<std::uint32_t> state(GCVM_DFS_STATE_WORDS);
    copy_out(state.data(), dfs_state_.as<void>(), state.size() * sizeof(std::uint32_t), "reading the DFS state");
    return state;
  }

  std::uint32_t dfs_resident_groups() const override {
    return static_cast<std::uint32_t>(std::max(1u, info_.compute_units) * cuda::dfs_run_groups_per_sm());
  }

  std::uint64_t dfs_stack_bytes() const override {
    return storage_.capacity() + tops_.capacity() + pool_.capacity() + chunk_table_.capacity();
  }

  std::optional<std::vector<ObjectId>> gather_dfs_stacks(std::uint32_t groups, std::uint32_t capacity) override {
    gather_.reserve((std::size_t{capacity} + 1) * sizeof(std::uint32_t), "the DFS fallback gather");
    check(cudaMemsetAsync(gather_.as<void>(), 0, sizeof(std::uint32_t), stream()), "clearing the DFS gather count");
    check(cuda::launch_dfs_gather(storage_.as<std::uint32_t>(), tops_.as<std::uint32_t>(), gather_.as<std::uint32_t>(),
                                  capacity, groups, stream()),
          "launching the DFS gather kernel");
    std::uint32_t count = 0;
    copy_out(&count, gather_.as<void>(), sizeof(count), "reading the DFS gather count");
    if (count > capacity) return std::nullopt;
    std::vector<ObjectId> pending(count);
    copy_out(pending.data(), gather_.as<std::uint32_t>() + 1, count * sizeof(ObjectId), "reading the gathered DFS stacks");
    return pending;
  }

  void begin_partition_mark(const PartitionMarkSetup& setup, std::span<const std::uint64_t> premarked) override {
    make_current();
    part_self_ = setup.self;
    part_count_ = setup.partitions();
    part_table_.reserve(setup.table.size() * sizeof(std::uint32_t), "the partition table");
    copy_in(part_table_.as<void>(), setup.table.data(), setup.table.size() * sizeof(std::uint32_t));
    const std::uint64_t bytes = setup.mark_words * sizeof(std::uint32_t);
    marks_.reserve(std::max<std::uint64_t>(bytes, 4), "the mark bitmap");
    const std::uint64_t premarked_bytes = std::min<std::uint64_t>(premarked.size_bytes(), bytes);
    copy_in(marks_.as<void>(), premarked.data(), premarked_bytes);
    check(cudaMemsetAsync(marks_.as<std::byte>() + premarked_bytes, 0, bytes - premarked_bytes, stream()),
          "clearing the mark bitmap");
    sent_.reserve(std::max<std::uint64_t>(setup.sent_words, 1) * sizeof(std::uint32_t), "the sent filter");
    check(cudaMemsetAsync(sent_.as<void>(), 0, setup.sent_words * sizeof(std::uint32_t), stream()),
          "clearing the sent filter");
    outbox_.reserve(std::max<std::uint64_t>(setup.outbox_entries, 1) * sizeof(std::uint32_t), "the outbox");
    reserve_frontier_queues();
    part_state_.reserve(GCVM_PART_STATE_WORDS * sizeof(std::uint32_t), "the partition state");
    check(cudaMemsetAsync(part_state_.as<void>(), 0, GCVM_PART_STATE_WORDS * sizeof(std::uint32_t), stream()),
          "clearing the partition state");
    drain("preparing the partition");
  }

  void reserve_partition_inbox(std::uint64_t entries) override {
    make_current();
    inbox_.reserve(std::max<std::uint64_t>(entries, 1) * sizeof(std::uint32_t), "the inbox");
  }

  void write_partition_inbox(std::uint64_t offset, std::span<const ObjectId> ids) override {
    copy_in(inbox_.as<ObjectId>() + offset, ids.data(), ids.size_bytes());
  }

  std::vector<ObjectId> read_partition_outbox(std::uint64_t offset, std::uint64_t count) override {
    std::vector<ObjectId> ids(count);
    copy_out(ids.data(), outbox_.as<ObjectId>() + offset, count * sizeof(ObjectId), "reading the outbox");
    return ids;
  }

  void launch_partition_claim(std::uint32_t queue, std::uint32_t count, std::uint32_t groups) override {
    check(cuda::launch_partition_claim(partition_args(groups), inbox_.as<std::uint32_t>(), count, queue, stream()),
          "launching the partition claim kernel");
  }

  void launch_partition_scan(std::uint32_t round, std::uint32_t groups) override {
    check(cuda::launch_partition_scan(partition_args(groups), round, stream()), "launching the partition scan kernel");
  }

  std::vector<std::uint32_t> read_partition_state() override {
    std::vector<std::uint32_t> state(GCVM_PART_STATE_WORDS);
    copy_out(state.data(), part_state_.as<void>(), state.size() * sizeof(std::uint32_t), "reading the partition state");
    return state;
  }

  PartitionBuffers partition_buffers() override {
    return {outbox_.as<void>(), inbox_.as<void>(), static_cast<void*>(stream()), device_};
  }

 private:
  cuda::PartitionArgs partition_args(std::uint32_t groups) {
    return {begin_.as<std::uint64_t>(), degree_.as<std::uint32_t>(), edges_.as<std::uint32_t>(), part_self_,
            part_count_, part_table_.as<std::uint32_t>(), marks_.as<std::uint32_t>(), sent_.as<std::uint32_t>(),
            {queues_[0].as<std::uint32_t>(), queues_[1].as<std::uint32_t>()},
            static_cast<std::uint32_t>(vertices_), outbox_.as<std::uint32_t>(), part_state_.as<std::uint32_t>(),
            groups};
  }
  /// The stream, for enqueueing anything: the pause's setup that is held back
  /// (pending_) is launched first, so every operation comes after it, as enqueued.
  cudaStream_t stream() {
    if (!pending_.empty()) launch_setup();
    return stream_;
  }
  /// Makes room for the two frontier queues that levels take in turn (one entry per
  /// vertex each).
  void reserve_frontier_queues() {
    queues_[0].reserve(queue_bytes_, "a frontier queue");
    queues_[1].reserve(queue_bytes_, "a frontier queue");
  }
  /// The groups a setup launch of what is held back needs.
  std::uint32_t setup_groups() const {
    const std::uint64_t widest = std::max({pending_.copy_words, pending_.clear_words, pending_.fill_words});
    const std::uint64_t needed = (widest + kSetupWordsPerGroup - 1) / kSetupWordsPerGroup;
    return static_cast<std::uint32_t>(
        std::clamp<std::uint64_t>(std::max<std::uint64_t>(pending_.patch_groups, needed), 1, GCVM_PATCH_MAX_GROUPS));
  }
  /// Takes what is held back as the arguments of one setup (kernels/cuda/launchers.hpp,
  /// PauseSetupArgs), its buffers as they are now; the caller launches it.
  cuda::PauseSetupArgs take_setup() {
    const PendingSetup p = std::exchange(pending_, PendingSetup{});
    host_reads_.patch = host_reads_.patch || p.patch_groups != 0;
    host_reads_.setup = host_reads_.setup || p.copy_words != 0;
    return {begin_.as<std::uint64_t>(),
            degree_.as<std::uint32_t>(),
            edges_.as<std::uint32_t>(),
            p.patch_groups != 0 ? reinterpret_cast<const std::uint32_t*>(patch_host_.data()) : nullptr,
            level_state(),
            reinterpret_cast<const std::uint32_t*>(setup_host_.data()),
            p.copy_words,
            marks_.as<std::uint32_t>() + p.clear_from,
            p.clear_words,
            chunks_.as<std::uint32_t>(),
            p.fill_words};
  }
  /// Launches what is held back as one setup launch.
  void launch_setup() {
    const std::uint32_t groups = setup_groups();
    const cuda::PauseSetupArgs args = take_setup();
    check(cuda::launch_pause_setup(args, groups, stream_), "launching the pause setup kernel");
  }
  /// Waits for everything launched (not for what is held back).
  void wait(const char* what) {
    check(cudaStreamSynchronize(stream_), what);
    host_reads_ = {};
  }
  /// Launches what is held back and waits for everything.
  void drain(const char* what) {
    stream();
    wait(what);
  }
  void copy_in(void* to, const void* from, std::size_t bytes) {
    if (bytes != 0) staging_.copy(to, from, bytes, stream());
  }
  void copy_out(void* to, const void* from, std::size_t bytes, const char* what) {
    readback_.read(to, from, bytes, stream(), what);
    host_reads_ = {};  // the read waited for the stream
  }
  std::uint32_t* level_state() const { return state_and_roots_.as<std::uint32_t>(); }
  const std::uint32_t* device_roots() const { return level_state() + GCVM_STATE_ROOTS; }
  DeviceBuffer& mirror_array(MirrorArray array) {
    return array == MirrorArray::Begin ? begin_ : array == MirrorArray::Degree ? degree_ : edges_;
  }

  DeviceInfo info_;
  int device_;
  cudaStream_t stream_ = nullptr;  // enqueue through stream()
  /// A pause's small setup steps, held back to go in one launch (stream()): the mirror
  /// patch read from patch_host_ (patch_groups != 0), the level state and roots read
  /// from setup_host_, the mark bitmap's words from clear_from cleared, the chunk
  /// queue's items emptied. On the H200 the same steps as two copies, two fills and a
  /// launch cost the pause's thread 60-90 µs after the program had run.
  struct PendingSetup {
    std::uint32_t patch_groups = 0;
    std::uint64_t copy_words = 0;
    std::uint64_t clear_from = 0;
    std::uint64_t clear_words = 0;
    std::uint64_t fill_words = 0;
    bool empty() const { return patch_groups == 0 && copy_words == 0 && clear_words == 0 && fill_words == 0; }
  };
  PendingSetup pending_;
  /// Work launched that reads patch_host_ (a patch's copy or a setup that applies it) or
  /// setup_host_ (a setup that copies the state and roots): wait before rewriting them.
  struct HostReads {
    bool patch = false;
    bool setup = false;
  };
  HostReads host_reads_;
  PinnedBuffer setup_host_;  // the level state and the roots, read by the setup launch
  /// Page-locked at start-up: the level state and up to about 64 Ki roots (more go
  /// through the staging buffers).
  static constexpr std::size_t kSetupHostBytes = std::size_t{256} << 10;
  /// Patches up to this size are read by the setup launch across the link rather than
  /// copied first: the pause's patches (2-25 KiB on GCBench and binary-trees with the
  /// refresher at 100 µs) cost one launch instead of a copy and a launch; larger ones (a
  /// refresh after a burst of stores) go at the copy's speed (the kernel's reads across
  /// the link are slower than a copy, and a pause waits for a refresh in progress).
  static constexpr std::uint64_t kHostReadPatchBytes = std::uint64_t{32} << 10;
  /// The page-locked patch buffer from the start: eight pieces (mirror_plan.hpp; 24 MiB
  /// with PinnedBuffer's slack), so that a patch larger than any before goes over in
  /// parts of that size, not staged. A patch in two parts waits for the copies queued
  /// before its first part's (a sync's direct ranges, which the copy engines carry first)
  /// before its second part is packed: churn_array's first warm patch of 15 MB, behind
  /// 226 MB of direct ranges, synced in 6.2-6.5 ms in two parts of a 12 MiB buffer.
  static constexpr std::uint64_t kInitialPatchBytes = 8 * MirrorPlan::kPieceBytes;
  /// grow_patch_buffer grows it to at most this size (with its 1.5x slack): larger
  /// patches go in parts of this size, each waiting a piece's copy for the last's.
  static constexpr std::uint64_t kMostGrownPatchBytes = 32 * MirrorPlan::kPieceBytes;
  /// Words of one buffer a setup group covers (so a 64 MiB heap's mark bitmap, 64 Ki
  /// words, takes 32 groups).
  static constexpr std::uint64_t kSetupWordsPerGroup = 8 * GCVM_GROUP_SIZE;
  PinnedStaging staging_;
  PinnedReadback readback_;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
  bool timer_ended_ = false;  // timer_end recorded stop_ since timer_start
  bool marks_counted_ = false;  // the levels' one launch counted the marks into the state
  std::uint32_t together_groups_ = 0;  // bfs_levels_together_groups()
  DeviceBuffer begin_, degree_, edges_, marks_, patch_;
  DeviceBuffer seen_;  // the bitmap frontier's snapshot of the mark bitmap
  DeviceBuffer state_and_roots_;  // the level state, then the roots from word GCVM_STATE_ROOTS
  static constexpr std::array<std::uint32_t, GCVM_STATE_ROOTS> initial_state_ = initial_level_state();
  DeviceBuffer queues_[2];
  PinnedBuffer patch_host_;
  std::unique_ptr<std::byte[]> patch_spill_;  // a patch too large for patch_host_, until it grows
  std::uint64_t patch_spill_bytes_ = 0;
  std::uint64_t wanted_patch_bytes_ = 0;      // the largest patch that did not fit, since the last growth
  bool patch_staged_ = false;                 // the current patch is in patch_spill_
  std::vector<void*> batch_to_;  // the direct copies of one upload_ranges (cudaMemcpyBatchAsync)
  std::vector<const void*> batch_from_;
  std::vector<std::size_t> batch_bytes_;
  DeviceBuffer lane_pool_, lane_tables_;
  DeviceBuffer chunks_;  // the chunk queue of huge objects
  std::uint32_t chunk_capacity_ = 1;
  std::uint64_t queue_bytes_ = 0;
  std::uint64_t vertices_ = 0;
  DeviceBuffer storage_, tops_, pool_, chunk_table_, dfs_state_;
  DeviceBuffer gather_;  // the fallback gather: count, then entries
  std::vector<std::uint64_t> free_chunk_slots_;  // host source of the async chunk-table reset
  DeviceBuffer part_table_, sent_, outbox_, inbox_, part_state_;  // a partition of a multi-device mark
  std::uint32_t part_self_ = 0, part_count_ = 1;
};

}  // namespace

std::vector<DeviceInfo> cuda_devices() {
  std::vector<DeviceInfo> devices;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return devices;
  }
  note_driver_state();
  int driver = 0;
  cudaDriverGetVersion(&driver);
  const int groups_per_sm = cuda::bfs_level_groups_per_sm();
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    DeviceInfo info;
    info.backend = "cuda";
    info.index = static_cast<unsigned>(i);
    info.platform = fmt::format("CUDA driver {}.{}", driver / 1000, driver % 1000 / 10);
    info.name = fmt::format("{} (sm_{}{})", prop.name, prop.major, prop.minor);
    info.type = "gpu";
    info.memory_bytes = prop.totalGlobalMem;
    info.compute_units = static_cast<unsigned>(prop.multiProcessorCount);
    info.resident_groups = static_cast<unsigned>(prop.multiProcessorCount * groups_per_sm);
    devices.push_back(info);
  }
  return devices;
}

std::unique_ptr<DeviceBackend> open_cuda_backend(unsigned index) {
  const auto devices = cuda_devices();
  if (index >= devices.size())
    throw DeviceError(devices.empty() ? std::string("no CUDA device is usable on this machine")
                                      : fmt::format("CUDA device {} does not exist ({} found)", index, devices.size()));
  return std::make_unique<CudaBackend>(devices[index], static_cast<int>(index));
}

}  // namespace gcvm
