#include "gc/markers/gpu_dfs_marker.hpp"

#include <algorithm>

#include "gc/markers/cpu_finish.hpp"
#include "gc/markers/snapshot_mark.hpp"
#include "gc/util/stopwatch.hpp"
#include "kernels/common/mark_layout.h"

namespace gcvm {

namespace {

constexpr const char* kAccepted =
    "atomics=checked|plain, local-stack=<1..32>|off, balance=on|off, vector=on|off, wide=<threshold>, "
    "chunk=<references>|off, pool=<slots>, rounds=<n>, steps=<n>, groups=auto|<n>, launches-per-check=auto|<n>, "
    "fallback=<threshold>:<min-launches>|off, refresh=on|off|<10..10000000 microseconds>, "
    "refresh-wait=auto|poll|sleep";

static_assert(GCVM_DFS_STATE_EDGES_LO % 2 == 0, "the 64-bit edge counter must be 8-byte aligned");

/// Work-group memory of the hybrid stack: GCVM_DFS_LOCAL_MAX entries per thread.
constexpr std::uint64_t kLocalStackBytesPerGroup = std::uint64_t{GCVM_DFS_LOCAL_MAX} * GCVM_GROUP_SIZE * 4;

std::uint32_t parse_count(const GcOption& option, std::string_view text, std::uint32_t min, std::uint32_t max) {
  const auto value = parse_gc_count(text, min, max);
  if (!value) reject_gc_option("gpu-dfs", option, kAccepted);
  return *value;
}

std::uint32_t parse_count(const GcOption& option, std::uint32_t min, std::uint32_t max) {
  return parse_count(option, option.value, min, max);
}

bool parse_switch(const GcOption& option, std::string_view on, std::string_view off) {
  if (option.value == on) return true;
  if (option.value == off) return false;
  reject_gc_option("gpu-dfs", option, kAccepted);
}

}  // namespace

GpuDfsMarkerOptions GpuDfsMarkerOptions::parse(const GcOptions& options, const std::string& device) {
  GpuDfsMarkerOptions o;
  o.device = parse_device_selector(device);
  for (const GcOption& option : options) {
    if (option.key == "atomics") {
      o.checked_atomics = parse_switch(option, "checked", "plain");
    } else if (option.key == "local-stack") {
      o.local_stack = option.value == "off" ? 0 : parse_count(option, 1, GCVM_DFS_LOCAL_MAX);
    } else if (option.key == "refresh") {
      const auto interval = MirrorRefresher::parse_interval(option.value);
      if (!interval) reject_gc_option("gpu-dfs", option, kAccepted);
      o.refresh = *interval;
    } else if (option.key == "refresh-wait") {
      const auto wait = MirrorRefresher::parse_wait(option.value);
      if (!wait) reject_gc_option("gpu-dfs", option, kAccepted);
      o.refresh_wait = *wait;
    } else if (option.key == "balance") {
      o.balance = parse_switch(option, "on", "off");
    } else if (option.key == "vector") {
      o.vector_loads = parse_switch(option, "on", "off");
    } else if (option.key == "wide") {
      o.wide_threshold = parse_count(option, 1, 0xFFFFFFFFu);
    } else if (option.key == "chunk") {
      o.chunk_edges = option.value == "off" ? 0 : parse_count(option, 1, 1u << 30);
    } else if (option.key == "rounds") {
      o.rounds_per_launch = parse_count(option, 1, 1u << 30);
    } else if (option.key == "steps") {
      o.steps = parse_count(option, 1, 1u << 20);
    } else if (option.key == "pool") {
      o.pool_slots = parse_count(option, 1, 1u << 24);
    } else if (option.key == "groups") {
      o.groups = option.value == "auto" ? 0 : parse_count(option, 1, 1u << 16);
    } else if (option.key == "fallback") {
      if (option.value == "off") {
        o.fallback_threshold = 0;
        continue;
      }
      const std::string_view text = option.value;
      const auto colon = text.find(':');
      if (colon == std::string_view::npos) reject_gc_option("gpu-dfs", option, kAccepted);
      o.fallback_threshold = parse_count(option, text.substr(0, colon), 1, 0xFFFFFFFFu);
      o.fallback_min_launches = parse_count(option, text.substr(colon + 1), 0, 0xFFFFFFFFu);
    } else if (option.key == "launches-per-check") {
      o.launches_per_check = option.value == "auto" ? 0 : parse_count(option, 1, GCVM_DFS_MAX_LAUNCH_BATCH);
    } else {
      reject_gc_option("gpu-dfs", option, kAccepted);
    }
  }
  return o;
}

GpuDfsMarker::GpuDfsMarker(GpuDfsMarkerOptions options)
    : options_(std::move(options)), session_("gpu-dfs", options_.device, options_.refresh, options_.refresh_wait) {}

GpuDfsMarker::GpuDfsMarker(GpuDfsMarkerOptions options, std::unique_ptr<DeviceBackend> backend)
    : options_(std::move(options)), session_("gpu-dfs", std::move(backend), options_.refresh, options_.refresh_wait) {}

MarkStats GpuDfsMarker::mark(const MarkRequest& request, MarkBitmap& out) {
  return session_.mark(request, out, [&](DeviceBackend& backend, GraphMirror& mirror) {
    const Stopwatch clock;
    const Pause pause = begin_on_device(backend, mirror, request);
    MarkStats stats = finish_on_device(backend, pause, &request, out);
    stats.mark_ms = clock.elapsed_ms();
    return stats;
  });
}

std::unique_ptr<SnapshotMark> GpuDfsMarker::snapshot(const MarkRequest& request) {
  return session_.snapshot(*this, request, [&](DeviceBackend& backend, GraphMirror& mirror) {
    const Pause pause = begin_on_device(backend, mirror, request);
    auto mark = std::make_unique<DeferredMark>([this, &backend, pause](MarkBitmap& out) {
      backend.make_current();
      return finish_on_device(backend, pause, nullptr, out);
    });
    mark->pause_details = pause.sync.details();
    mark->pause_details.emplace_back("root_upload_ms", pause.roots_ms);
    return mark;
  });
}

namespace {
constexpr std::uint32_t kFirstLaunchRounds = 16;
constexpr std::size_t kNarrowStartRoots = 4096;
}  // namespace

GpuDfsMarker::Pause GpuDfsMarker::begin_on_device(DeviceBackend& backend, GraphMirror& mirror,
                                                  const MarkRequest& request) {
  Pause pause;
  pause.sync = mirror.sync(request.graph, request.changes, SyncEnd::BeforeNextLaunch, request.host_pool);

  DfsLaunch& launch = pause.launch;
  launch.flags = (options_.checked_atomics ? GCVM_DFS_CHECKED : 0u) | (options_.vector_loads ? GCVM_DFS_VECTOR : 0u) |
                 (options_.balance ? GCVM_DFS_BALANCE : 0u) | (options_.chunk_edges != 0 ? GCVM_DFS_CHUNKS : 0u);
  launch.local_stack = options_.local_stack;
  launch.wide_threshold = options_.wide_threshold;
  launch.pool_slots = options_.pool_slots;
  launch.chunk_edges = options_.chunk_edges;
  launch.rounds_per_launch = options_.rounds_per_launch;
  launch.steps = options_.steps;
  launch.groups = options_.groups != 0 ? options_.groups : backend.dfs_resident_groups();
  const std::uint32_t threads = launch.groups * GCVM_GROUP_SIZE;

  pause.block_count = request.block_count;
  pause.root_count = static_cast<std::uint32_t>(request.roots.size());
  pause.premarked_objects = MarkBitmap::count_bits(request.premarked);
  const Stopwatch roots_clock;
  backend.begin_mark(request.roots, std::uint64_t{request.block_count} * 2, request.premarked);
  backend.begin_dfs(mirror.vertices(), threads, launch.pool_slots);
  pause.roots_ms = roots_clock.elapsed_ms();
  return pause;
}

MarkStats GpuDfsMarker::finish_on_device(DeviceBackend& backend, const Pause& pause,
                                         const MarkRequest* request, MarkBitmap& out) {
  const Stopwatch clock;
  MarkStats stats;
  DfsLaunch launch = pause.launch;
  const std::uint64_t mark_words = std::uint64_t{pause.block_count} * 2;
  const std::uint32_t fallback_threshold = request != nullptr ? options_.fallback_threshold : 0;

  backend.timer_start();
  backend.launch_dfs_seed(pause.root_count, launch);
  const bool narrow_start = pause.root_count < kNarrowStartRoots;
  std::uint32_t launched = 0;
  std::uint32_t batch = options_.launches_per_check != 0 ? options_.launches_per_check : 1;
  std::vector<std::uint32_t> state;
  std::uint64_t host_checks = 0;
  std::int64_t fallback_launch = -1;
  std::uint64_t fallback_gathers = 0;
  double gather_ms = 0;
  std::vector<ObjectId> pending;
  for (;;) {
    for (std::uint32_t i = 0; i < batch; ++i) {
      // From few roots, launch budgets ramp up (16, 32, ... rounds, up to `rounds`):
      // a narrow mark (a list) is seen by the first host check after a few
      // microseconds, not after a full launch, so the fallback can take it. Many roots
      // (a wide start) get full launches from the first.
      launch.rounds_per_launch =
          narrow_start ? std::min<std::uint32_t>(options_.rounds_per_launch,
                                                 kFirstLaunchRounds << std::min<std::uint32_t>(launched + i, 16))
                       : options_.rounds_per_launch;
      backend.launch_dfs_run(launched + i, launch);
    }
    launched += batch;
    if (host_checks == 0 && request != nullptr && request->on_device_busy)
      request->on_device_busy();
    state = backend.read_dfs_state();
    ++host_checks;
    const std::uint32_t last = launched - 1;
    const std::uint32_t busy_threads = state[GCVM_DFS_STATE_PENDING + last % GCVM_DFS_LAUNCH_RING];
    const bool only_stacks = state[GCVM_DFS_STATE_POOL_COUNT] == 0 && state[GCVM_DFS_STATE_CHUNKS_OPEN] == 0;
    if (busy_threads == 0 && only_stacks) break;
    // Narrow work: all of it is on fewer than `threshold` saved stacks; hand it to the
    // CPU unless the stacks hold more than the gather can take.
    if (fallback_threshold != 0 && std::uint64_t{last} + 1 >= options_.fallback_min_launches &&
        busy_threads < fallback_threshold && only_stacks) {
      const Stopwatch gather_clock;
      auto gathered = backend.gather_dfs_stacks(launch.groups, GCVM_DFS_GATHER_CAPACITY);
      gather_ms += gather_clock.elapsed_ms();
      ++fallback_gathers;
      if (gathered) {
        pending = std::move(*gathered);
        fallback_launch = last;
        break;
      }
    }
    if (options_.launches_per_check == 0) batch = std::min<std::uint32_t>(batch * 2, GCVM_DFS_MAX_LAUNCH_BATCH);
  }
  const double kernel_ms = backend.timer_stop_ms();
  const std::uint64_t gpu_edges = state_word64(state, GCVM_DFS_STATE_EDGES_LO);

  const Stopwatch download_clock;
  out.resize_for_overwrite(pause.block_count);  // every word is downloaded
  backend.read_marks(out.words().data(), pause.block_count);
  const double download_ms = download_clock.elapsed_ms();

  double fallback_ms = 0;
  std::uint64_t cpu_edges = 0;
  const std::size_t fallback_objects = pending.size();
  if (fallback_launch >= 0) {
    const Stopwatch fallback_clock;
    cpu_edges = cpu_finish_.finish(*request, std::move(pending), out);
    fallback_ms = fallback_clock.elapsed_ms();
  }

  stats.marked_objects = out.count() - pause.premarked_objects;
  stats.edges_traversed = gpu_edges + cpu_edges;
  stats.mark_ms = clock.elapsed_ms();
  const std::uint64_t local_bytes = options_.local_stack != 0 ? kLocalStackBytesPerGroup * launch.groups : 0;
  stats.details = pause.sync.details();
  append_details(stats.details, {
      {"root_bytes", static_cast<double>(std::uint64_t{pause.root_count} * sizeof(ObjectId))},
      {"root_upload_ms", pause.roots_ms},
      {"kernel_ms", kernel_ms},
      {"kernel_gteps", kernel_ms > 0 ? gpu_edges / (kernel_ms * 1e6) : 0.0},
      {"iterations", static_cast<double>(state[GCVM_DFS_STATE_LAUNCHES])},
      {"launches", static_cast<double>(launched)},
      {"host_checks", static_cast<double>(host_checks)},
      {"max_rounds", static_cast<double>(state[GCVM_DFS_STATE_ROUNDS])},
      {"gpu_edges", static_cast<double>(gpu_edges)},
      {"donations", static_cast<double>(state[GCVM_DFS_STATE_DONATIONS])},
      {"steals", static_cast<double>(state[GCVM_DFS_STATE_STEALS])},
      {"wide_objects", static_cast<double>(state[GCVM_DFS_STATE_WIDE])},
      {"chunks", static_cast<double>(state[GCVM_DFS_STATE_CHUNKS])},
      {"fallback_launch", static_cast<double>(fallback_launch)},
      {"fallback_objects", static_cast<double>(fallback_objects)},
      {"fallback_gathers", static_cast<double>(fallback_gathers)},
      {"fallback_gather_ms", gather_ms},
      {"fallback_ms", fallback_ms},
      {"fallback_threads", fallback_ms > 0 ? static_cast<double>(cpu_finish_.last_threads()) : 0.0},
      {"mark_download_bytes", static_cast<double>(mark_words * sizeof(std::uint32_t))},
      {"mark_download_ms", download_ms},
      {"groups", static_cast<double>(launch.groups)},
      {"stack_peak_bytes", static_cast<double>(backend.dfs_stack_bytes())},
      {"local_stack_bytes", static_cast<double>(local_bytes)},
      {"device_bytes", static_cast<double>(backend.device_bytes())},
  });
  return stats;
}

}  // namespace gcvm
