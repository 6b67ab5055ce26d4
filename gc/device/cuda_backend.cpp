#include "gc/device/cuda_backend.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>

#include "kernels/common/mark_layout.h"
#include "kernels/cuda/launchers.hpp"

namespace gcvm {

namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw DeviceError(fmt::format("CUDA error in {}: {} ({})", what, cudaGetErrorString(status), cudaGetErrorName(status)));
}

/// A device allocation that grows by half again and frees itself.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (data_ != nullptr) cudaFree(data_);
  }
  /// True if the contents were kept (no reallocation was needed).
  bool reserve(std::size_t bytes, const char* what) {
    if (bytes <= capacity_) return true;
    const std::size_t grown = std::max(bytes, capacity_ + capacity_ / 2);
    if (data_ != nullptr) cudaFree(data_);
    data_ = nullptr;
    capacity_ = 0;
    const cudaError_t status = cudaMalloc(&data_, grown);
    if (status != cudaSuccess) {
      cudaGetLastError();
      throw DeviceError(fmt::format("device out of memory: cudaMalloc of {:.1f} MiB for {} failed ({})",
                                    grown / 1048576.0, what, cudaGetErrorString(status)));
    }
    capacity_ = grown;
    return false;
  }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  std::size_t capacity() const { return capacity_; }

 private:
  void* data_ = nullptr;
  std::size_t capacity_ = 0;
};

/// Host-to-device copies through pinned memory. cudaMemcpyAsync from pageable memory
/// reached only 0.7-1.9 GB/s for the mirror's uploads on the H100 host
/// (docs/PERFORMANCE.md), so a large copy goes through two pinned chunks instead: the
/// host fills one while the copy engine drains the other. Small copies, and every copy
/// if pinned memory cannot be had, go directly.
class PinnedStaging {
 public:
  static constexpr std::size_t kChunkBytes = std::size_t{8} << 20;
  static constexpr std::size_t kDirectBelow = std::size_t{256} << 10;

  PinnedStaging() = default;
  PinnedStaging(const PinnedStaging&) = delete;
  PinnedStaging& operator=(const PinnedStaging&) = delete;
  ~PinnedStaging() { release(); }

  /// Enqueues the copy on `stream`; `from` may be reused when this returns.
  void copy(void* to, const void* from, std::size_t bytes, cudaStream_t stream) {
    if (bytes < kDirectBelow || !ready()) {
      check(cudaMemcpyAsync(to, from, bytes, cudaMemcpyHostToDevice, stream), "a host-to-device copy");
      return;
    }
    std::size_t i = 0;
    for (std::size_t done = 0; done < bytes; done += kChunkBytes, i ^= 1) {
      const std::size_t n = std::min(kChunkBytes, bytes - done);
      check(cudaEventSynchronize(drained_[i]), "a staged host-to-device copy");  // chunk i is free again
      std::memcpy(chunks_[i], static_cast<const std::byte*>(from) + done, n);
      check(cudaMemcpyAsync(static_cast<std::byte*>(to) + done, chunks_[i], n, cudaMemcpyHostToDevice, stream),
            "a staged host-to-device copy");
      check(cudaEventRecord(drained_[i], stream), "a staged host-to-device copy");
    }
  }

 private:
  bool ready() {
    if (tried_) return usable_;
    tried_ = true;
    for (std::size_t i = 0; i < 2; ++i)
      if (cudaMallocHost(&chunks_[i], kChunkBytes) != cudaSuccess ||
          cudaEventCreateWithFlags(&drained_[i], cudaEventDisableTiming) != cudaSuccess) {
        cudaGetLastError();
        release();
        return false;
      }
    usable_ = true;
    return true;
  }
  void release() {
    for (std::size_t i = 0; i < 2; ++i) {
      if (drained_[i] != nullptr) {
        cudaEventSynchronize(drained_[i]);
        cudaEventDestroy(drained_[i]);
      }
      if (chunks_[i] != nullptr) cudaFreeHost(chunks_[i]);
      drained_[i] = nullptr;
      chunks_[i] = nullptr;
    }
    usable_ = false;
  }

  std::array<void*, 2> chunks_{};
  std::array<cudaEvent_t, 2> drained_{};
  bool tried_ = false;
  bool usable_ = false;
};

class CudaBackend final : public DeviceBackend {
 public:
  CudaBackend(DeviceInfo info, int device) : info_(std::move(info)), device_(device) {
    check(cudaSetDevice(device_), "cudaSetDevice");
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cudaEventCreate(&start_), "cudaEventCreate");
    check(cudaEventCreate(&stop_), "cudaEventCreate");
    state_.reserve(GCVM_STATE_WORDS * sizeof(std::uint32_t), "the level state");
  }
  ~CudaBackend() override {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
    cudaStreamDestroy(stream_);
  }

  const DeviceInfo& info() const override { return info_; }

  bool reserve_graph(std::uint64_t vertices, std::uint64_t edges) override {
    check(cudaSetDevice(device_), "cudaSetDevice");
    const std::uint64_t padded = (edges + GCVM_EDGE_PAD - 1) / GCVM_EDGE_PAD * GCVM_EDGE_PAD + GCVM_EDGE_PAD;
    bool kept = begin_.reserve(vertices * sizeof(std::uint64_t), "the mirror's begin array");
    kept = degree_.reserve(vertices * sizeof(std::uint32_t), "the mirror's degree array") && kept;
    kept = edges_.reserve(padded * sizeof(std::uint32_t), "the mirror's edge array") && kept;
    vertices_ = vertices;
    queue_bytes_ = std::max<std::uint64_t>(vertices, 1) * sizeof(std::uint32_t);
    return kept;
  }

  void upload_graph(const std::uint64_t* begin, const std::uint32_t* degree, const ObjectId* edges,
                    std::uint64_t vertices, std::uint64_t edge_count) override {
    copy_in(begin_.as<void>(), begin, vertices * sizeof(std::uint64_t));
    copy_in(degree_.as<void>(), degree, vertices * sizeof(std::uint32_t));
    copy_in(edges_.as<void>(), edges, edge_count * sizeof(ObjectId));
    check(cudaStreamSynchronize(stream_), "uploading the reference graph");
  }

  void patch_graph(const MirrorPatch& patch) override {
    packed_.reserve(patch.packed.size() * sizeof(std::uint32_t), "the mirror patch");
    copy_in(packed_.as<void>(), patch.packed.data(), patch.packed.size() * sizeof(std::uint32_t));
    scatter(begin_.as<std::uint32_t>(), patch.begin_ranges, 0);
    scatter(degree_.as<std::uint32_t>(), patch.degree_ranges, 1);
    scatter(edges_.as<std::uint32_t>(), patch.edge_ranges, 2);
    check(cudaStreamSynchronize(stream_), "patching the reference graph");
  }

  void begin_mark(std::span<const ObjectId> roots, std::uint64_t mark_words,
                  std::span<const std::uint64_t> premarked) override {
    roots_.reserve(std::max<std::size_t>(roots.size(), 1) * sizeof(ObjectId), "the roots");
    marks_.reserve(std::max<std::uint64_t>(mark_words, 1) * sizeof(std::uint32_t), "the mark bitmap");
    copy_in(roots_.as<void>(), roots.data(), roots.size_bytes());
    const std::uint64_t bytes = mark_words * sizeof(std::uint32_t);
    const std::uint64_t premarked_bytes = std::min<std::uint64_t>(premarked.size_bytes(), bytes);
    copy_in(marks_.as<void>(), premarked.data(), premarked_bytes);
    check(cudaMemsetAsync(marks_.as<std::byte>() + premarked_bytes, 0, bytes - premarked_bytes, stream_),
          "clearing the mark bitmap");
    std::array<std::uint32_t, GCVM_STATE_WORDS> state{};
    state[GCVM_STATE_FALLBACK_LEVEL] = GCVM_NO_LEVEL;
    copy_in(state_.as<void>(), state.data(), sizeof(state));
  }

  void launch_bfs_seed(std::uint32_t root_count, std::uint32_t groups) override {
    queues_[0].reserve(queue_bytes_, "a frontier queue");
    queues_[1].reserve(queue_bytes_, "a frontier queue");
    check(cuda::launch_bfs_seed(roots_.as<std::uint32_t>(), root_count, marks_.as<std::uint32_t>(),
                                queues_[1].as<std::uint32_t>(), state_.as<std::uint32_t>(), groups, stream_),
          "launching the BFS seed kernel");
  }

  void launch_bfs_level(std::uint32_t level, const BfsLaunch& launch) override {
    check(cuda::launch_bfs_level(begin_.as<std::uint64_t>(), degree_.as<std::uint32_t>(), edges_.as<std::uint32_t>(),
                                 marks_.as<std::uint32_t>(), queues_[level % 2].as<std::uint32_t>(),
                                 queues_[(level + 1) % 2].as<std::uint32_t>(), state_.as<std::uint32_t>(), level,
                                 launch.flags, launch.wide_threshold, launch.fallback_threshold,
                                 launch.fallback_min_level, launch.groups, stream_),
          "launching the BFS level kernel");
  }

  void launch_bfs_lanes(std::uint32_t root_count, const BfsLaunch& launch) override {
    const auto [table_chunks, pool_chunks] = lane_pool_size(vertices_, launch.groups);
    lane_pool_.reserve(std::uint64_t{pool_chunks} * GCVM_LANE_CHUNK * sizeof(std::uint32_t), "the lanes' queue pool");
    lane_tables_.reserve(std::uint64_t{table_chunks} * launch.groups * sizeof(std::uint32_t), "the lanes' chunk tables");
    check(cuda::launch_bfs_lanes(begin_.as<std::uint64_t>(), degree_.as<std::uint32_t>(), edges_.as<std::uint32_t>(),
                                 marks_.as<std::uint32_t>(), roots_.as<std::uint32_t>(), root_count,
                                 lane_pool_.as<std::uint32_t>(), lane_tables_.as<std::uint32_t>(), pool_chunks,
                                 table_chunks, state_.as<std::uint32_t>(), launch.flags, launch.wide_threshold,
                                 launch.groups, stream_),
          "launching the BFS lane kernel");
  }

  std::vector<std::uint32_t> read_state() override {
    std::vector<std::uint32_t> state(GCVM_STATE_WORDS);
    copy_out(state.data(), state_.as<void>(), state.size() * sizeof(std::uint32_t), "reading the level state");
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

  void timer_start() override { check(cudaEventRecord(start_, stream_), "cudaEventRecord"); }
  double timer_stop_ms() override {
    check(cudaEventRecord(stop_, stream_), "cudaEventRecord");
    check(cudaEventSynchronize(stop_), "running the mark kernels");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
    return ms;
  }

  double copy_bandwidth(std::uint64_t bytes) override {
    DeviceBuffer from, to;
    from.reserve(bytes, "the bandwidth probe");
    to.reserve(bytes, "the bandwidth probe");
    check(cudaMemsetAsync(from.as<void>(), 1, bytes, stream_), "cudaMemset");
    check(cudaMemcpyAsync(to.as<void>(), from.as<void>(), bytes, cudaMemcpyDeviceToDevice, stream_), "warm-up copy");
    timer_start();
    constexpr int kCopies = 5;
    for (int i = 0; i < kCopies; ++i)
      check(cudaMemcpyAsync(to.as<void>(), from.as<void>(), bytes, cudaMemcpyDeviceToDevice, stream_), "copy");
    const double ms = timer_stop_ms();
    return 2.0 * kCopies * static_cast<double>(bytes) / (ms / 1000);  // read + write
  }

  std::uint64_t device_bytes() const override {
    return begin_.capacity() + degree_.capacity() + edges_.capacity() + queues_[0].capacity() +
           queues_[1].capacity() + marks_.capacity() + roots_.capacity() + state_.capacity() + packed_.capacity() +
           ranges_[0].capacity() + ranges_[1].capacity() + ranges_[2].capacity() + lane_pool_.capacity() +
           lane_tables_.capacity() + dfs_state_.capacity() + gather_.capacity() +
           dfs_stack_bytes();
  }

  void begin_dfs(std::uint64_t vertices, std::uint32_t threads, std::uint32_t pool_slots) override {
    storage_.reserve(std::max<std::uint64_t>(vertices, 1) * sizeof(std::uint32_t), "the DFS stack storage");
    tops_.reserve(std::max<std::size_t>(threads, 1) * sizeof(std::uint32_t), "the DFS stack tops");
    pool_.reserve(std::max<std::size_t>(pool_slots, 1) * sizeof(std::uint32_t), "the DFS donation pool");
    dfs_state_.reserve(GCVM_DFS_STATE_WORDS * sizeof(std::uint32_t), "the DFS state");
    check(cudaMemsetAsync(storage_.as<void>(), 0xFF, vertices * sizeof(std::uint32_t), stream_),
          "clearing the DFS stack storage");
    check(cudaMemsetAsync(pool_.as<void>(), 0xFF, std::size_t{pool_slots} * sizeof(std::uint32_t), stream_),
          "clearing the DFS pool");
    check(cudaMemsetAsync(dfs_state_.as<void>(), 0, GCVM_DFS_STATE_WORDS * sizeof(std::uint32_t), stream_),
          "clearing the DFS state");
    chunk_table_.reserve(GCVM_DFS_CHUNK_SLOTS * sizeof(std::uint64_t), "the DFS chunk table");
    free_chunk_slots_.assign(GCVM_DFS_CHUNK_SLOTS, std::uint64_t{GCVM_DFS_NO_VERTEX} << 32);
    copy_in(chunk_table_.as<void>(), free_chunk_slots_.data(), free_chunk_slots_.size() * sizeof(std::uint64_t));
  }

  void launch_dfs_seed(std::uint32_t root_count, const DfsLaunch& launch) override {
    check(cuda::launch_dfs_seed(roots_.as<std::uint32_t>(), root_count, marks_.as<std::uint32_t>(),
                                storage_.as<std::uint32_t>(), tops_.as<std::uint32_t>(), launch.flags, launch.groups,
                                stream_),
          "launching the DFS seed kernel");
  }

  void launch_dfs_run(std::uint32_t index, const DfsLaunch& launch) override {
    const cuda::DfsRunArgs args{begin_.as<std::uint64_t>(),  degree_.as<std::uint32_t>(), edges_.as<std::uint32_t>(),
                                marks_.as<std::uint32_t>(),  storage_.as<std::uint32_t>(), tops_.as<std::uint32_t>(),
                                pool_.as<std::uint32_t>(),   chunk_table_.as<std::uint64_t>(),
                                dfs_state_.as<std::uint32_t>(), index, launch.flags, launch.local_stack,
                                launch.wide_threshold, launch.pool_slots, launch.chunk_edges,
                                launch.rounds_per_launch, launch.steps, launch.groups};
    check(cuda::launch_dfs_run(args, stream_), "launching the DFS run kernel");
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
    check(cudaMemsetAsync(gather_.as<void>(), 0, sizeof(std::uint32_t), stream_), "clearing the DFS gather count");
    check(cuda::launch_dfs_gather(storage_.as<std::uint32_t>(), tops_.as<std::uint32_t>(), gather_.as<std::uint32_t>(),
                                  capacity, groups, stream_),
          "launching the DFS gather kernel");
    std::uint32_t count = 0;
    copy_out(&count, gather_.as<void>(), sizeof(count), "reading the DFS gather count");
    if (count > capacity) return std::nullopt;
    std::vector<ObjectId> pending(count);
    copy_out(pending.data(), gather_.as<std::uint32_t>() + 1, count * sizeof(ObjectId), "reading the gathered DFS stacks");
    return pending;
  }

 private:
  void copy_in(void* to, const void* from, std::size_t bytes) {
    if (bytes != 0) staging_.copy(to, from, bytes, stream_);
  }
  void copy_out(void* to, const void* from, std::size_t bytes, const char* what) {
    if (bytes != 0) check(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToHost, stream_), what);
    check(cudaStreamSynchronize(stream_), what);
  }
  void scatter(std::uint32_t* destination, const std::vector<MirrorRange>& ranges, int which) {
    if (ranges.empty()) return;
    static_assert(sizeof(MirrorRange) == 3 * sizeof(std::uint64_t), "ranges are uploaded as u64 triples");
    ranges_[which].reserve(ranges.size() * sizeof(MirrorRange), "the mirror patch ranges");
    copy_in(ranges_[which].as<void>(), ranges.data(), ranges.size() * sizeof(MirrorRange));
    check(cuda::launch_scatter(destination, packed_.as<std::uint32_t>(), ranges_[which].as<std::uint64_t>(),
                               static_cast<std::uint32_t>(ranges.size()), stream_),
          "launching the mirror scatter kernel");
  }

  DeviceInfo info_;
  int device_;
  cudaStream_t stream_ = nullptr;
  PinnedStaging staging_;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
  DeviceBuffer begin_, degree_, edges_, marks_, roots_, state_, packed_;
  DeviceBuffer queues_[2];
  DeviceBuffer ranges_[3];
  DeviceBuffer lane_pool_, lane_tables_;
  std::uint64_t queue_bytes_ = 0;
  std::uint64_t vertices_ = 0;
  DeviceBuffer storage_, tops_, pool_, chunk_table_, dfs_state_;
  DeviceBuffer gather_;  // the fallback gather: count, then entries
  std::vector<std::uint64_t> free_chunk_slots_;  // host source of the async chunk-table reset
};

}  // namespace

std::vector<DeviceInfo> cuda_devices() {
  std::vector<DeviceInfo> devices;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return devices;
  }
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
