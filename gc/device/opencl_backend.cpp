#define CL_TARGET_OPENCL_VERSION 120
#include "gc/device/opencl_backend.hpp"

#include <CL/cl.h>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gc/device/driver_teardown.hpp"
#include "kernels/common/mark_layout.h"
#include "kernels/common/partition_layout.h"
#include "kernels/opencl_sources.hpp"

namespace gcvm {

namespace {

const char* cl_error_name(cl_int status) {
  switch (status) {
    case CL_DEVICE_NOT_FOUND: return "CL_DEVICE_NOT_FOUND";
    case CL_DEVICE_NOT_AVAILABLE: return "CL_DEVICE_NOT_AVAILABLE";
    case CL_MEM_OBJECT_ALLOCATION_FAILURE: return "CL_MEM_OBJECT_ALLOCATION_FAILURE (device out of memory)";
    case CL_OUT_OF_RESOURCES: return "CL_OUT_OF_RESOURCES";
    case CL_OUT_OF_HOST_MEMORY: return "CL_OUT_OF_HOST_MEMORY";
    case CL_BUILD_PROGRAM_FAILURE: return "CL_BUILD_PROGRAM_FAILURE";
    case CL_INVALID_VALUE: return "CL_INVALID_VALUE";
    case CL_INVALID_BUFFER_SIZE: return "CL_INVALID_BUFFER_SIZE";
    case CL_INVALID_KERNEL_ARGS: return "CL_INVALID_KERNEL_ARGS";
    case CL_INVALID_WORK_GROUP_SIZE: return "CL_INVALID_WORK_GROUP_SIZE";
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR (no OpenCL platform installed)";
    default: return "OpenCL error";
  }
}

void check(cl_int status, const char* what) {
  if (status != CL_SUCCESS) throw DeviceError(fmt::format("OpenCL error in {}: {} ({})", what, cl_error_name(status), status));
}

std::string device_string(cl_device_id device, cl_device_info what) {
  std::size_t size = 0;
  if (clGetDeviceInfo(device, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
  std::string text(size, '\0');
  clGetDeviceInfo(device, what, size, text.data(), nullptr);
  text.resize(text.find('\0') == std::string::npos ? size : text.find('\0'));
  return text;
}

std::string platform_string(cl_platform_id platform, cl_platform_info what) {
  std::size_t size = 0;
  if (clGetPlatformInfo(platform, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
  std::string text(size, '\0');
  clGetPlatformInfo(platform, what, size, text.data(), nullptr);
  text.resize(text.find('\0') == std::string::npos ? size : text.find('\0'));
  return text;
}

struct ClDevice {
  cl_platform_id platform;
  cl_device_id device;
  DeviceInfo info;
};

std::vector<ClDevice> enumerate() {
  std::vector<ClDevice> found;
  cl_uint platform_count = 0;
  if (clGetPlatformIDs(0, nullptr, &platform_count) != CL_SUCCESS || platform_count == 0) return found;
  std::vector<cl_platform_id> platforms(platform_count);
  if (clGetPlatformIDs(platform_count, platforms.data(), nullptr) != CL_SUCCESS) return found;
  for (cl_platform_id platform : platforms) {
    cl_uint count = 0;
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count) != CL_SUCCESS || count == 0) continue;
    std::vector<cl_device_id> devices(count);
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, devices.data(), nullptr) != CL_SUCCESS) continue;
    for (cl_device_id device : devices) {
      DeviceInfo info;
      info.backend = "opencl";
      info.index = static_cast<unsigned>(found.size());
      info.platform = platform_string(platform, CL_PLATFORM_NAME) + " " + platform_string(platform, CL_PLATFORM_VERSION);
      info.name = device_string(device, CL_DEVICE_NAME);
      cl_device_type type = 0;
      clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof(type), &type, nullptr);
      info.type = (type & CL_DEVICE_TYPE_GPU) ? "gpu" : (type & CL_DEVICE_TYPE_CPU) ? "cpu" : "accelerator";
      cl_ulong memory = 0;
      clGetDeviceInfo(device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(memory), &memory, nullptr);
      info.memory_bytes = memory;
      cl_uint units = 0;
      clGetDeviceInfo(device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(units), &units, nullptr);
      info.compute_units = units;
      // OpenCL has no occupancy query: assume 8 groups of 256 per compute unit on a
      // GPU (2048 threads, an H100 SM's limit) and 1 on a CPU core.
      info.resident_groups = units * (info.type == "gpu" ? 8u : 1u);
      found.push_back({platform, device, info});
    }
  }
  return found;
}

class ClBuffer {
 public:
  ClBuffer() = default;
  ClBuffer(const ClBuffer&) = delete;
  ClBuffer& operator=(const ClBuffer&) = delete;
  ~ClBuffer() {
    if (mem_ != nullptr) clReleaseMemObject(mem_);
  }
  /// Makes room for `bytes`. Where it must reallocate, the first `keep` bytes are
  /// copied to the new buffer on `queue` (device to device) before the old one is
  /// released; everything else is undefined.
  void reserve(cl_context context, std::size_t bytes, const char* what, std::size_t keep = 0,
               cl_command_queue queue = nullptr) {
    bytes = std::max<std::size_t>(bytes, 16);
    if (bytes <= capacity_) return;
    const std::size_t grown = std::max(bytes, capacity_ + capacity_ / 2);
    cl_int status = CL_SUCCESS;
    cl_mem fresh = clCreateBuffer(context, CL_MEM_READ_WRITE, grown, nullptr, &status);
    if (status != CL_SUCCESS)
      throw DeviceError(fmt::format("device out of memory: clCreateBuffer of {:.1f} MiB for {} failed ({})",
                                    grown / 1048576.0, what, cl_error_name(status)));
    keep = std::min(keep, capacity_);
    if (keep != 0) {
      check(clEnqueueCopyBuffer(queue, mem_, fresh, 0, 0, keep, 0, nullptr, nullptr), what);
      check(clFinish(queue), what);
    }
    if (mem_ != nullptr) clReleaseMemObject(mem_);
    mem_ = fresh;
    capacity_ = grown;
  }
  cl_mem get() const { return mem_; }
  std::size_t capacity() const { return capacity_; }

 private:
  cl_mem mem_ = nullptr;
  std::size_t capacity_ = 0;
};

/// Host memory for mirror patches: a CL_MEM_ALLOC_HOST_PTR buffer kept mapped, which
/// NVIDIA's platform allocates page-locked, so writing from it is a DMA; on a CPU
/// device (PoCL) it is plain host memory. At least doubles when it grows; contents not
/// kept. Unmapping needs the command queue it was mapped with, so its owner calls
/// `release()` before releasing that queue.
class MappedHostBuffer {
 public:
  MappedHostBuffer() = default;
  MappedHostBuffer(const MappedHostBuffer&) = delete;
  MappedHostBuffer& operator=(const MappedHostBuffer&) = delete;
  ~MappedHostBuffer() { release(); }
  std::byte* reserve(cl_context context, cl_command_queue queue, std::size_t bytes, const char* what) {
    bytes = std::max<std::size_t>(bytes, 16);
    if (bytes <= capacity_) return data_;
    const std::size_t grown = std::max(bytes + bytes / 2, 2 * capacity_);
    release();
    queue_ = queue;
    cl_int status = CL_SUCCESS;
    mem_ = clCreateBuffer(context, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, grown, nullptr, &status);
    check(status, what);
    void* mapped = clEnqueueMapBuffer(queue, mem_, CL_TRUE, CL_MAP_WRITE, 0, grown, 0, nullptr, nullptr, &status);
    check(status, what);
    data_ = static_cast<std::byte*>(mapped);
    capacity_ = grown;
    return data_;
  }
  std::byte* data() const { return data_; }

  void release() {
    if (mem_ == nullptr) return;
    if (data_ != nullptr) {
      clEnqueueUnmapMemObject(queue_, mem_, data_, 0, nullptr, nullptr);
      clFinish(queue_);
    }
    clReleaseMemObject(mem_);
    mem_ = nullptr;
    data_ = nullptr;
    capacity_ = 0;
  }

 private:
  cl_command_queue queue_ = nullptr;
  cl_mem mem_ = nullptr;
  std::byte* data_ = nullptr;
  std::size_t capacity_ = 0;
};

/// The context and the in-order command queue of one OpenCL device, shared by every
/// backend open on it at once (the partitions of `--device=opencl:0,0`), so that their
/// commands run one after another, as they would contend for the device anyway. Two
/// queues of one device running launches of one kernel at once, of different grid
/// widths, made PoCL 5.0 (Ubuntu 24.04's package, built with assertions) abort: its
/// kernel cache gives the first launch's completion back to the entry made for the
/// second (pocl_release_dlhandle_cache); one in-order queue never has two launches in
/// flight.
class DeviceQueue {
 public:
  /// The device's queue, made when no backend holds one.
  static std::shared_ptr<DeviceQueue> open(cl_platform_id platform, cl_device_id device) {
    static std::mutex mutex;
    static std::map<cl_device_id, std::weak_ptr<DeviceQueue>> open_queues;
    const std::lock_guard lock(mutex);
    std::weak_ptr<DeviceQueue>& slot = open_queues[device];
    if (std::shared_ptr<DeviceQueue> held = slot.lock()) return held;
    auto made = std::shared_ptr<DeviceQueue>(new DeviceQueue());
    cl_int status = CL_SUCCESS;
    const cl_context_properties properties[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(platform),
                                                0};
    made->context_ = clCreateContext(properties, 1, &device, nullptr, nullptr, &status);
    check(status, "clCreateContext");
    made->queue_ = clCreateCommandQueue(made->context_, device, CL_QUEUE_PROFILING_ENABLE, &status);
    check(status, "clCreateCommandQueue");
    slot = made;
    return made;
  }
  DeviceQueue(const DeviceQueue&) = delete;
  DeviceQueue& operator=(const DeviceQueue&) = delete;
  ~DeviceQueue() {
    if (queue_ != nullptr) clReleaseCommandQueue(queue_);
    if (context_ != nullptr) clReleaseContext(context_);
  }
  cl_context context() const { return context_; }
  cl_command_queue queue() const { return queue_; }

 private:
  DeviceQueue() = default;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
};

constexpr std::size_t element_bytes(MirrorArray array) {
  return array == MirrorArray::Begin ? sizeof(std::uint64_t) : sizeof(std::uint32_t);
}

template <typename... Args>
void set_args(cl_kernel kernel, const Args&... args) {
  cl_uint index = 0;
  ((check(clSetKernelArg(kernel, index++, sizeof(Args), &args), "clSetKernelArg")), ...);
}

class OpenClBackend final : public DeviceBackend {
 public:
  explicit OpenClBackend(const ClDevice& device)
      : info_(device.info),
        device_(device.device),
        device_queue_(DeviceQueue::open(device.platform, device.device)),
        context_(device_queue_->context()),
        queue_(device_queue_->queue()) {
    if (info_.type == "gpu") note_driver_state();  // a CPU platform (PoCL) has no driver to tear down
    build_program();
    state_and_roots_.reserve(context_, (GCVM_STATE_ROOTS + 1) * sizeof(std::uint32_t),
                             "the level state and the roots");
  }
  ~OpenClBackend() override {
    release_events();
    patch_host_.release();  // unmaps through queue_, so before it goes
    for (cl_kernel k : {seed_, level_, frontier_, lanes_, fill_, count_marks_, apply_patch_, async_seed_, async_,
                        async_gather_, dfs_seed_, dfs_run_, dfs_gather_, part_claim_, part_scan_})
      if (k != nullptr) clReleaseKernel(k);
    if (program_ != nullptr) clReleaseProgram(program_);
  }

  const DeviceInfo& info() const override { return info_; }

  void reserve_graph(std::uint64_t vertices, std::uint64_t edges, std::uint64_t keep_vertices,
                     std::uint64_t keep_edges) override {
    const std::uint64_t padded = (edges + GCVM_EDGE_PAD - 1) / GCVM_EDGE_PAD * GCVM_EDGE_PAD + GCVM_EDGE_PAD;
    begin_.reserve(context_, vertices * sizeof(std::uint64_t), "the mirror's begin array",
                   keep_vertices * sizeof(std::uint64_t), queue_);
    degree_.reserve(context_, vertices * sizeof(std::uint32_t), "the mirror's degree array",
                    keep_vertices * sizeof(std::uint32_t), queue_);
    edges_.reserve(context_, padded * sizeof(std::uint32_t), "the mirror's edge array",
                   keep_edges * sizeof(std::uint32_t), queue_);
    vertices_ = vertices;
  }

  /// OpenCL (1.2 and 3.0) has no way to page-lock memory it did not allocate: direct
  /// ranges are written from the host arrays as they are (NVIDIA's platform stages
  /// pageable memory itself; PoCL copies with memcpy).
  std::shared_ptr<HostPinner> host_pinner() override { return nullptr; }

  void upload_ranges(MirrorArray array, const void* host, std::span<const ElementRange> ranges) override {
    const std::size_t size = element_bytes(array);
    const auto* from = static_cast<const std::byte*>(host);
    for (const ElementRange r : ranges)
      check(clEnqueueWriteBuffer(queue_, mirror_array(array).get(), CL_FALSE, r.begin * size, (r.end - r.begin) * size,
                                 from + r.begin * size, 0, nullptr, nullptr),
            "uploading the reference graph");
  }

  std::span<std::byte> patch_buffer(std::uint64_t bytes) override {
    check(clFinish(queue_), "waiting for the last mirror patch");
    return {patch_host_.reserve(context_, queue_, bytes, "the mirror patch"), bytes};
  }

  void apply_patch(const MirrorPatchLayout& layout, std::uint64_t offset) override {
    // Every piece goes to the device buffer's start: the queue is in order, so a piece's
    // copy waits for the kernel that applies the one before.
    patch_.reserve(context_, layout.bytes, "the mirror patch");
    check(clEnqueueWriteBuffer(queue_, patch_.get(), CL_FALSE, 0, layout.bytes, patch_host_.data() + offset, 0, nullptr,
                               nullptr),
          "uploading the mirror patch");
    set_args(apply_patch_, begin_.get(), degree_.get(), edges_.get(), patch_.get());
    launch_kernel(apply_patch_, layout.kernel_groups(), "the mirror patch kernel");
  }

  void finish_sync() override { check(clFinish(queue_), "syncing the reference graph"); }

  void begin_mark(std::span<const ObjectId> roots, std::uint64_t mark_words,
                  std::span<const std::uint64_t> premarked) override {
    // The level state, cleared, then the roots: one write.
    constexpr auto initial = initial_level_state();
    state_and_roots_host_.assign(initial.begin(), initial.end());
    state_and_roots_host_.insert(state_and_roots_host_.end(), roots.begin(), roots.end());
    state_and_roots_.reserve(context_, state_and_roots_host_.size() * sizeof(std::uint32_t),
                             "the level state and the roots");
    marks_.reserve(context_, mark_words * sizeof(std::uint32_t), "the mark bitmap");
    write(state_and_roots_, state_and_roots_host_.data(), state_and_roots_host_.size() * sizeof(std::uint32_t));
    fill(marks_, 0u, mark_words, "clearing the mark bitmap");
    write(marks_, premarked.data(), std::min<std::uint64_t>(premarked.size_bytes(), mark_words * sizeof(std::uint32_t)));
    check(clFinish(queue_), "uploading the roots");
  }

  void launch_bfs_seed(std::uint32_t root_count, std::uint32_t marked_count, std::uint32_t groups) override {
    for (ClBuffer& q : queues_) q.reserve(context_, vertices_ * sizeof(std::uint32_t), "a frontier queue");
    set_args(seed_, root_count, marked_count, marks_.get(), queues_[1].get(), state_and_roots_.get());
    launch_kernel(seed_, groups, "the BFS seed kernel");
  }

  void launch_bfs_level(std::uint32_t level, const BfsLaunch& l) override {
    set_args(level_, begin_.get(), degree_.get(), edges_.get(), marks_.get(), queues_[level % 2].get(),
             queues_[(level + 1) % 2].get(), state_and_roots_.get(), chunks_.get(), chunk_capacity_, level, l.flags,
             l.wide_threshold, l.fallback_threshold, l.fallback_min_level, l.deep_fallback_threshold,
             l.deep_fallback_level, l.expand_batches);
    launch_kernel(level_, l.groups, "the BFS level kernel");
  }

  void snapshot_marks(std::uint64_t mark_words) override {
    const std::uint64_t bytes = std::max<std::uint64_t>(mark_words, 1) * sizeof(std::uint32_t);
    seen_.reserve(context_, bytes, "the bitmap frontier's snapshot");
    check(clEnqueueCopyBuffer(queue_, marks_.get(), seen_.get(), 0, 0, bytes, 0, nullptr, nullptr),
          "copying the mark bitmap for the bitmap frontier");
  }

  void launch_bfs_frontier(std::uint32_t level, std::uint64_t mark_words) override {
    set_args(frontier_, marks_.get(), seen_.get(), static_cast<cl_uint>(mark_words), queues_[level % 2].get(),
             state_and_roots_.get(), level);
    launch_kernel(frontier_, static_cast<std::uint32_t>((mark_words + GCVM_GROUP_SIZE - 1) / GCVM_GROUP_SIZE),
                  "the bitmap frontier kernel");
  }

  void begin_chunks(std::uint64_t capacity) override {
    chunk_capacity_ = static_cast<cl_uint>(std::max<std::uint64_t>(capacity, 1));
    chunks_.reserve(context_, std::uint64_t{chunk_capacity_} * sizeof(std::uint64_t), "the chunk queue");
    fill(chunks_, 0xFFFFFFFFu, 2 * std::uint64_t{chunk_capacity_}, "clearing the chunk queue");
  }

  std::vector<std::uint64_t> read_chunk_items(std::uint32_t from, std::uint32_t to) override {
    std::vector<std::uint64_t> items(to > from ? to - from : 0);
    if (!items.empty())
      check(clEnqueueReadBuffer(queue_, chunks_.get(), CL_TRUE, from * sizeof(std::uint64_t),
                                items.size() * sizeof(std::uint64_t), items.data(), 0, nullptr, nullptr),
            "reading the chunk queue");
    return items;
  }

  void launch_bfs_async_seed(std::uint32_t root_count, std::uint32_t groups) override {
    queues_[0].reserve(context_, vertices_ * sizeof(std::uint32_t), "the async queue");
    fill(queues_[0], 0xFFFFFFFFu, std::max<std::uint64_t>(vertices_, 1), "clearing the async queue");
    set_args(async_seed_, root_count, marks_.get(), queues_[0].get(), state_and_roots_.get());
    launch_kernel(async_seed_, groups, "the async seed kernel");
  }

  void launch_bfs_async(const BfsLaunch& l) override {
    const auto capacity = static_cast<cl_uint>(std::max<std::uint64_t>(vertices_, 1));
    set_args(async_, begin_.get(), degree_.get(), edges_.get(), marks_.get(), queues_[0].get(), capacity,
             chunks_.get(), chunk_capacity_, state_and_roots_.get(), l.flags, l.fallback_threshold, l.narrow_rounds);
    launch_kernel(async_, l.groups, "the async mark kernel", GCVM_ASYNC_GROUP_SIZE);
  }

  std::vector<ObjectId> gather_async_queue(std::uint32_t tail, std::uint32_t capacity) override {
    gather_.reserve(context_, (std::size_t{capacity} + 1) * sizeof(std::uint32_t), "the async gather");
    fill(gather_, 0u, 1, "clearing the async gather count");
    set_args(async_gather_, queues_[0].get(), tail, gather_.get(), capacity);
    launch_kernel(async_gather_, item_groups(tail), "the async gather kernel");
    std::uint32_t count = 0;
    read(gather_, &count, sizeof(count), "reading the async gather count");
    if (count > capacity) throw DeviceError("gpu-bfs async: more queued objects than pending work (an internal error)");
    std::vector<ObjectId> pending(count);
    if (count != 0)
      check(clEnqueueReadBuffer(queue_, gather_.get(), CL_TRUE, sizeof(std::uint32_t), count * sizeof(ObjectId),
                                pending.data(), 0, nullptr, nullptr),
            "reading the async gather");
    return pending;
  }

  std::uint32_t async_resident_groups() const override {
    return std::max(1u, info_.resident_groups) * (GCVM_GROUP_SIZE / GCVM_ASYNC_GROUP_SIZE);
  }

  void launch_bfs_lanes(std::uint32_t root_count, const BfsLaunch& l) override {
    const auto [table_chunks, pool_chunks] = lane_pool_size(vertices_, l.groups);
    lane_pool_.reserve(context_, std::uint64_t{pool_chunks} * GCVM_LANE_CHUNK * sizeof(std::uint32_t),
                       "the lanes' queue pool");
    lane_tables_.reserve(context_, std::uint64_t{table_chunks} * l.groups * sizeof(std::uint32_t),
                         "the lanes' chunk tables");
    set_args(lanes_, begin_.get(), degree_.get(), edges_.get(), marks_.get(), root_count, lane_pool_.get(),
             lane_tables_.get(), pool_chunks, table_chunks, state_and_roots_.get(), l.flags, l.wide_threshold);
    launch_kernel(lanes_, l.groups, "the BFS lane kernel");
  }

  std::vector<std::uint32_t> read_state() override {
    std::vector<std::uint32_t> state(GCVM_STATE_WORDS);
    read(state_and_roots_, state.data(), state.size() * sizeof(std::uint32_t), "reading the level state");
    return state;
  }

  std::vector<ObjectId> read_level_queue(std::uint32_t level, std::uint32_t count) override {
    std::vector<ObjectId> queue(count);
    read(queues_[level % 2], queue.data(), count * sizeof(ObjectId), "reading a frontier queue");
    return queue;
  }

  void read_marks(std::uint64_t* words, std::uint64_t word_count) override {
    read(marks_, words, word_count * sizeof(std::uint64_t), "reading the mark bitmap");
  }

  std::vector<std::uint32_t> read_state_and_marks(std::uint64_t* words, std::uint64_t word_count) override {
    const auto mark_words = static_cast<cl_uint>(word_count * 2);
    const std::uint32_t groups =
        std::min(std::max(1u, info_.resident_groups), (mark_words + GCVM_GROUP_SIZE - 1) / GCVM_GROUP_SIZE);
    set_args(count_marks_, marks_.get(), mark_words, state_and_roots_.get());
    launch_kernel(count_marks_, groups, "the mark count kernel");
    std::vector<std::uint32_t> state = read_state();
    read_marks(words, word_count);
    return state;
  }

  void timer_start() override {
    release_events();
    check(clEnqueueMarkerWithWaitList(queue_, 0, nullptr, &start_), "clEnqueueMarker");
  }
  void timer_end() override {
    if (stop_ != nullptr) clReleaseEvent(stop_);
    stop_ = nullptr;
    check(clEnqueueMarkerWithWaitList(queue_, 0, nullptr, &stop_), "clEnqueueMarker");
  }
  double timer_stop_ms() override {
    if (stop_ == nullptr) check(clEnqueueMarkerWithWaitList(queue_, 0, nullptr, &stop_), "clEnqueueMarker");
    check(clFinish(queue_), "running the mark kernels");
    cl_ulong start = 0;
    cl_ulong stop = 0;
    check(clGetEventProfilingInfo(start_, CL_PROFILING_COMMAND_END, sizeof(start), &start, nullptr), "profiling");
    check(clGetEventProfilingInfo(stop_, CL_PROFILING_COMMAND_END, sizeof(stop), &stop, nullptr), "profiling");
    return stop > start ? (stop - start) / 1e6 : 0.0;
  }

  double copy_bandwidth(std::uint64_t bytes) override {
    ClBuffer from, to;
    from.reserve(context_, bytes, "the bandwidth probe");
    to.reserve(context_, bytes, "the bandwidth probe");
    fill(from, 1u, bytes / 4, "filling the bandwidth probe");
    check(clEnqueueCopyBuffer(queue_, from.get(), to.get(), 0, 0, bytes, 0, nullptr, nullptr), "warm-up copy");
    timer_start();
    constexpr int kCopies = 5;
    for (int i = 0; i < kCopies; ++i)
      check(clEnqueueCopyBuffer(queue_, from.get(), to.get(), 0, 0, bytes, 0, nullptr, nullptr), "copy");
    const double ms = timer_stop_ms();
    return 2.0 * kCopies * static_cast<double>(bytes) / (ms / 1000);  // read + write
  }

  std::uint64_t device_bytes() const override {
    std::uint64_t total = 0;
    for (const ClBuffer* b : {&begin_, &degree_, &edges_, &marks_, &seen_, &state_and_roots_, &patch_, &queues_[0],
                              &queues_[1], &chunks_, &lane_pool_, &lane_tables_, &dfs_state_, &gather_,
                              &part_table_, &sent_, &outbox_, &inbox_, &part_state_})
      total += b->capacity();
    return total + dfs_stack_bytes();
  }

  void begin_dfs(std::uint64_t vertices, std::uint32_t threads, std::uint32_t pool_slots) override {
    storage_.reserve(context_, vertices * sizeof(std::uint32_t), "the DFS stack storage");
    tops_.reserve(context_, std::size_t{threads} * sizeof(std::uint32_t), "the DFS stack tops");
    pool_.reserve(context_, std::size_t{pool_slots} * sizeof(std::uint32_t), "the DFS donation pool");
    dfs_state_.reserve(context_, GCVM_DFS_STATE_WORDS * sizeof(std::uint32_t), "the DFS state");
    fill(storage_, 0xFFFFFFFFu, vertices, "clearing the DFS stack storage");
    fill(pool_, 0xFFFFFFFFu, pool_slots, "clearing the DFS pool");
    fill(dfs_state_, 0u, GCVM_DFS_STATE_WORDS, "clearing the DFS state");
    chunk_table_.reserve(context_, GCVM_DFS_CHUNK_SLOTS * sizeof(std::uint64_t), "the DFS chunk table");
    // Each u64 slot is {low word 0, high word GCVM_DFS_NO_VERTEX} (little-endian).
    fill_pattern(chunk_table_, 0u, GCVM_DFS_NO_VERTEX, 2 * std::uint64_t{GCVM_DFS_CHUNK_SLOTS},
                 "clearing the DFS chunk table");
    check(clFinish(queue_), "preparing the DFS stacks");
  }

  void launch_dfs_seed(std::uint32_t root_count, const DfsLaunch& l) override {
    set_args(dfs_seed_, state_and_roots_.get(), root_count, marks_.get(), storage_.get(), tops_.get(), l.flags);
    launch_kernel(dfs_seed_, l.groups, "the DFS seed kernel");
  }

  void launch_dfs_run(std::uint32_t index, const DfsLaunch& l) override {
    set_args(dfs_run_, begin_.get(), degree_.get(), edges_.get(), marks_.get(), storage_.get(), tops_.get(),
             pool_.get(), chunk_table_.get(), dfs_state_.get(), index, l.flags, l.local_stack, l.wide_threshold,
             l.pool_slots, l.chunk_edges, l.rounds_per_launch, l.steps);
    launch_kernel(dfs_run_, l.groups, "the DFS run kernel");
  }

  std::vector<std::uint32_t> read_dfs_state() override {
    std::vector<std::uint32_t> state(GCVM_DFS_STATE_WORDS);
    read(dfs_state_, state.data(), state.size() * sizeof(std::uint32_t), "reading the DFS state");
    return state;
  }

  std::uint32_t dfs_resident_groups() const override { return std::max(1u, info_.resident_groups); }

  std::uint64_t dfs_stack_bytes() const override {
    return storage_.capacity() + tops_.capacity() + pool_.capacity() + chunk_table_.capacity();
  }

  std::optional<std::vector<ObjectId>> gather_dfs_stacks(std::uint32_t groups, std::uint32_t capacity) override {
    gather_.reserve(context_, (std::size_t{capacity} + 1) * sizeof(std::uint32_t), "the DFS fallback gather");
    fill(gather_, 0u, 1, "clearing the DFS gather count");
    set_args(dfs_gather_, storage_.get(), tops_.get(), gather_.get(), capacity);
    launch_kernel(dfs_gather_, groups, "the DFS gather kernel");
    std::uint32_t count = 0;
    read(gather_, &count, sizeof(count), "reading the DFS gather count");
    if (count > capacity) return std::nullopt;
    std::vector<ObjectId> pending(count);
    if (count != 0)
      check(clEnqueueReadBuffer(queue_, gather_.get(), CL_TRUE, sizeof(std::uint32_t), count * sizeof(ObjectId),
                                pending.data(), 0, nullptr, nullptr),
            "reading the gathered DFS stacks");
    return pending;
  }

  void begin_partition_mark(const PartitionMarkSetup& setup, std::span<const std::uint64_t> premarked) override {
    part_self_ = setup.self;
    part_count_ = setup.partitions();
    part_table_.reserve(context_, setup.table.size() * sizeof(std::uint32_t), "the partition table");
    write(part_table_, setup.table.data(), setup.table.size() * sizeof(std::uint32_t));
    marks_.reserve(context_, setup.mark_words * sizeof(std::uint32_t), "the mark bitmap");
    fill(marks_, 0u, setup.mark_words, "clearing the mark bitmap");
    write(marks_, premarked.data(),
          std::min<std::uint64_t>(premarked.size_bytes(), setup.mark_words * sizeof(std::uint32_t)));
    sent_.reserve(context_, setup.sent_words * sizeof(std::uint32_t), "the sent filter");
    fill(sent_, 0u, setup.sent_words, "clearing the sent filter");
    outbox_.reserve(context_, setup.outbox_entries * sizeof(std::uint32_t), "the outbox");
    for (ClBuffer& q : queues_) q.reserve(context_, vertices_ * sizeof(std::uint32_t), "a frontier queue");
    part_state_.reserve(context_, GCVM_PART_STATE_WORDS * sizeof(std::uint32_t), "the partition state");
    fill(part_state_, 0u, GCVM_PART_STATE_WORDS, "clearing the partition state");
    check(clFinish(queue_), "preparing the partition");
  }

  void reserve_partition_inbox(std::uint64_t entries) override {
    inbox_.reserve(context_, entries * sizeof(std::uint32_t), "the inbox");
  }

  void write_partition_inbox(std::uint64_t offset, std::span<const ObjectId> ids) override {
    if (!ids.empty())
      check(clEnqueueWriteBuffer(queue_, inbox_.get(), CL_TRUE, offset * sizeof(ObjectId), ids.size_bytes(), ids.data(),
                                 0, nullptr, nullptr),
            "writing the inbox");
  }

  std::vector<ObjectId> read_partition_outbox(std::uint64_t offset, std::uint64_t count) override {
    std::vector<ObjectId> ids(count);
    if (count != 0)
      check(clEnqueueReadBuffer(queue_, outbox_.get(), CL_TRUE, offset * sizeof(ObjectId), count * sizeof(ObjectId),
                                ids.data(), 0, nullptr, nullptr),
            "reading the outbox");
    return ids;
  }

  void launch_partition_claim(std::uint32_t queue, std::uint32_t count, std::uint32_t groups) override {
    const auto capacity = static_cast<cl_uint>(vertices_);
    set_args(part_claim_, inbox_.get(), count, part_self_, part_count_, part_table_.get(), marks_.get(),
             queues_[queue].get(), capacity, part_state_.get(), queue);
    launch_kernel(part_claim_, groups, "the partition claim kernel");
  }

  void launch_partition_scan(std::uint32_t round, std::uint32_t groups) override {
    const auto capacity = static_cast<cl_uint>(vertices_);
    set_args(part_scan_, begin_.get(), degree_.get(), edges_.get(), part_self_, part_count_, part_table_.get(),
             marks_.get(), sent_.get(), queues_[round % 2].get(), queues_[(round + 1) % 2].get(), capacity,
             outbox_.get(), part_state_.get(), round);
    launch_kernel(part_scan_, groups, "the partition scan kernel");
  }

  std::vector<std::uint32_t> read_partition_state() override {
    std::vector<std::uint32_t> state(GCVM_PART_STATE_WORDS);
    read(part_state_, state.data(), state.size() * sizeof(std::uint32_t), "reading the partition state");
    return state;
  }

 private:
  void build_program() {
    cl_int status = CL_SUCCESS;
    const char* source = kOpenClMarkSource;
    program_ = clCreateProgramWithSource(context_, 1, &source, nullptr, &status);
    check(status, "clCreateProgramWithSource");
    status = clBuildProgram(program_, 1, &device_, "-cl-std=CL1.2", nullptr, nullptr);
    if (status != CL_SUCCESS) {
      std::size_t size = 0;
      clGetProgramBuildInfo(program_, device_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
      std::string log(size, '\0');
      clGetProgramBuildInfo(program_, device_, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
      throw DeviceError(fmt::format("OpenCL kernels failed to build for {}: {}", info_.name, log));
    }
    seed_ = make_kernel("gcvm_bfs_seed_kernel");
    level_ = make_kernel("gcvm_bfs_level_kernel");
    frontier_ = make_kernel("gcvm_bfs_frontier_kernel");
    lanes_ = make_kernel("gcvm_bfs_lane_kernel");
    fill_ = make_kernel("gcvm_fill_kernel");
    count_marks_ = make_kernel("gcvm_count_marks_kernel");
    apply_patch_ = make_kernel("gcvm_apply_patch_kernel");
    async_seed_ = make_kernel("gcvm_bfs_async_seed_kernel");
    async_ = make_kernel("gcvm_bfs_async_kernel");
    async_gather_ = make_kernel("gcvm_async_gather_kernel");
    dfs_seed_ = make_kernel("gcvm_dfs_seed_kernel");
    dfs_run_ = make_kernel("gcvm_dfs_run_kernel");
    dfs_gather_ = make_kernel("gcvm_dfs_gather_kernel");
    part_claim_ = make_kernel("gcvm_part_claim_kernel");
    part_scan_ = make_kernel("gcvm_part_scan_kernel");
  }
  cl_kernel make_kernel(const char* name) {
    cl_int status = CL_SUCCESS;
    cl_kernel kernel = clCreateKernel(program_, name, &status);
    check(status, fmt::format("clCreateKernel({})", name).c_str());
    return kernel;
  }
  void launch_kernel(cl_kernel kernel, std::uint32_t groups, const char* what,
                     std::size_t local = GCVM_GROUP_SIZE) {
    const std::size_t global = std::size_t{std::max<std::uint32_t>(groups, 1)} * local;
    check(clEnqueueNDRangeKernel(queue_, kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr), what);
  }
  void write(ClBuffer& to, const void* from, std::size_t bytes) {
    if (bytes != 0)
      check(clEnqueueWriteBuffer(queue_, to.get(), CL_TRUE, 0, bytes, from, 0, nullptr, nullptr), "a host-to-device copy");
  }
  void read(ClBuffer& from, void* to, std::size_t bytes, const char* what) {
    if (bytes != 0) check(clEnqueueReadBuffer(queue_, from.get(), CL_TRUE, 0, bytes, to, 0, nullptr, nullptr), what);
    check(clFinish(queue_), what);
  }
  ClBuffer& mirror_array(MirrorArray array) {
    return array == MirrorArray::Begin ? begin_ : array == MirrorArray::Degree ? degree_ : edges_;
  }
  /// Groups for `items` items of one thread each, capped (the kernels stride).
  static std::uint32_t item_groups(std::uint64_t items) {
    return static_cast<std::uint32_t>(std::clamp<std::uint64_t>((items + GCVM_GROUP_SIZE - 1) / GCVM_GROUP_SIZE, 1, 4096));
  }
  /// Fills with the gcvm_fill_kernel (kernels/common/memory_ops.h says why not
  /// clEnqueueFillBuffer).
  void fill(ClBuffer& buffer, cl_uint value, std::uint64_t words, const char* what) {
    fill_pattern(buffer, value, value, words, what);
  }
  void fill_pattern(ClBuffer& buffer, cl_uint even, cl_uint odd, std::uint64_t words, const char* what) {
    if (words == 0) return;
    const cl_ulong count = words;
    set_args(fill_, buffer.get(), count, even, odd);
    launch_kernel(fill_, static_cast<std::uint32_t>(std::min<std::uint64_t>(4096, (words + GCVM_GROUP_SIZE - 1) / GCVM_GROUP_SIZE)),
                  what);
  }
  void release_events() {
    if (start_ != nullptr) clReleaseEvent(start_);
    if (stop_ != nullptr) clReleaseEvent(stop_);
    start_ = stop_ = nullptr;
  }

  DeviceInfo info_;
  cl_device_id device_;
  const std::shared_ptr<DeviceQueue> device_queue_;  // outlives every buffer below
  const cl_context context_;
  const cl_command_queue queue_;
  cl_program program_ = nullptr;
  cl_kernel seed_ = nullptr, level_ = nullptr, frontier_ = nullptr, lanes_ = nullptr, fill_ = nullptr;
  cl_kernel apply_patch_ = nullptr, count_marks_ = nullptr;
  cl_kernel async_seed_ = nullptr, async_ = nullptr, async_gather_ = nullptr;
  cl_event start_ = nullptr, stop_ = nullptr;
  ClBuffer begin_, degree_, edges_, marks_, patch_;
  ClBuffer seen_;  // the bitmap frontier's snapshot of the mark bitmap
  ClBuffer state_and_roots_;  // the level state, then the roots from word GCVM_STATE_ROOTS
  std::vector<std::uint32_t> state_and_roots_host_;  // what begin_mark writes to it
  ClBuffer queues_[2];
  MappedHostBuffer patch_host_;
  ClBuffer lane_pool_, lane_tables_;
  ClBuffer chunks_;  // the chunk queue of huge objects
  cl_uint chunk_capacity_ = 1;
  std::uint64_t vertices_ = 0;
  cl_kernel dfs_seed_ = nullptr, dfs_run_ = nullptr, dfs_gather_ = nullptr;
  ClBuffer storage_, tops_, pool_, chunk_table_, dfs_state_;
  ClBuffer gather_;  // the fallback gather: count, then entries
  cl_kernel part_claim_ = nullptr, part_scan_ = nullptr;
  ClBuffer part_table_, sent_, outbox_, inbox_, part_state_;  // a partition of a multi-device mark
  cl_uint part_self_ = 0, part_count_ = 1;
};

}  // namespace

std::vector<DeviceInfo> opencl_devices() {
  std::vector<DeviceInfo> devices;
  for (const ClDevice& d : enumerate()) devices.push_back(d.info);
  return devices;
}

std::unique_ptr<DeviceBackend> open_opencl_backend(unsigned index) {
  const auto devices = enumerate();
  if (index >= devices.size())
    throw DeviceError(devices.empty() ? std::string("no OpenCL device is usable on this machine")
                                      : fmt::format("OpenCL device {} does not exist ({} found)", index, devices.size()));
  return std::make_unique<OpenClBackend>(devices[index]);
}

}  // namespace gcvm
