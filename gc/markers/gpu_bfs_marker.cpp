#include "gc/markers/gpu_bfs_marker.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "gc/markers/cpu_finish.hpp"
#include "gc/util/stopwatch.hpp"
#include "kernels/common/mark_layout.h"

namespace gcvm {

namespace {

constexpr const char* kAccepted =
    "offsets=histogram|prefix, vector=on|off, wide=<threshold>|off, fallback=<threshold>:<min-levels>|off, "
    "sms=all|<n>|split, levels-per-check=auto|<n>";

bool parse_switch(const GcOption& option) {
  if (option.value == "on") return true;
  if (option.value == "off") return false;
  reject_gc_option("gpu-bfs", option, kAccepted);
}

std::uint32_t parse_count(const GcOption& option, std::string_view text, std::uint32_t min) {
  const auto value = parse_gc_count(text, min);
  if (!value) reject_gc_option("gpu-bfs", option, kAccepted);
  return *value;
}

}  // namespace

GpuBfsMarkerOptions GpuBfsMarkerOptions::parse(const GcOptions& options, const std::string& device) {
  GpuBfsMarkerOptions o;
  o.device = parse_device_selector(device);
  for (const GcOption& option : options) {
    if (option.key == "offsets" && (option.value == "histogram" || option.value == "prefix")) {
      o.prefix_offsets = option.value == "prefix";
    } else if (option.key == "vector") {
      o.vector_loads = parse_switch(option);
    } else if (option.key == "wide") {
      o.wide_threshold = option.value == "off" ? 0 : parse_count(option, option.value, 1);
    } else if (option.key == "fallback") {
      if (option.value == "off") {
        o.fallback_threshold = 0;
        continue;
      }
      const auto colon = option.value.find(':');
      if (colon == std::string::npos) reject_gc_option("gpu-bfs", option, kAccepted);
      o.fallback_threshold = parse_count(option, std::string_view(option.value).substr(0, colon), 1);
      o.fallback_min_levels = parse_count(option, std::string_view(option.value).substr(colon + 1), 0);
    } else if (option.key == "sms") {
      o.split = option.value == "split";
      o.sms = option.value == "all" || o.split ? 0 : parse_count(option, option.value, 1);
    } else if (option.key == "levels-per-check") {
      o.levels_per_check = option.value == "auto" ? 0 : parse_count(option, option.value, 1);
      if (o.levels_per_check > GCVM_MAX_LEVEL_BATCH) reject_gc_option("gpu-bfs", option, kAccepted);
    } else {
      reject_gc_option("gpu-bfs", option, kAccepted);
    }
  }
  if (o.split) o.fallback_threshold = 0;  // lanes finish on the device; there is no tail to hand over
  return o;
}

GpuBfsMarker::GpuBfsMarker(GpuBfsMarkerOptions options)
    : options_(std::move(options)), session_("gpu-bfs", options_.device) {}

MarkStats GpuBfsMarker::mark(const MarkRequest& request, MarkBitmap& out) {
  return session_.mark(request, out, [&](DeviceBackend& backend, GraphMirror& mirror) {
    return mark_on_device(backend, mirror, request, out);
  });
}

MarkStats GpuBfsMarker::mark_on_device(DeviceBackend& backend, GraphMirror& mirror, const MarkRequest& request,
                                       MarkBitmap& out) {
  const Stopwatch clock;
  MarkStats stats;
  const DeviceInfo& info = backend.info();
  const MirrorSyncStats sync = mirror.sync(request.graph, request.changes);

  BfsLaunch launch;
  launch.flags = (options_.prefix_offsets ? GCVM_BFS_PREFIX : 0u) | (options_.vector_loads ? GCVM_BFS_VECTOR : 0u) |
                 (options_.wide_threshold != 0 ? GCVM_BFS_WIDE : 0u) |
                 (options_.fallback_threshold != 0 ? GCVM_BFS_FALLBACK : 0u);
  launch.wide_threshold = options_.wide_threshold;
  launch.fallback_threshold = options_.fallback_threshold;
  launch.fallback_min_level = options_.fallback_min_levels;
  const unsigned per_unit = std::max(1u, info.resident_groups / std::max(1u, info.compute_units));
  launch.groups = options_.sms == 0 ? std::max(1u, info.resident_groups)
                                    : std::min(options_.sms, std::max(1u, info.compute_units)) * per_unit;

  const std::uint64_t mark_words = std::uint64_t{request.block_count} * 2;
  const Stopwatch roots_clock;
  backend.begin_mark(request.roots, mark_words, request.premarked);
  const double roots_ms = roots_clock.elapsed_ms();

  backend.timer_start();
  const auto root_count = static_cast<std::uint32_t>(request.roots.size());
  std::vector<std::uint32_t> state;
  std::uint64_t host_checks = 1;
  if (options_.split) {
    backend.launch_bfs_lanes(root_count, launch);
    state = backend.read_state();
    if (state[GCVM_STATE_OVERFLOW] != 0)
      throw DeviceError("gpu-bfs sms=split: the lanes' queue pool overflowed (an internal sizing error)");
  } else {
    const std::uint32_t seed_groups =
        std::max(1u, std::min<std::uint32_t>(launch.groups, (root_count + GCVM_GROUP_SIZE - 1) / GCVM_GROUP_SIZE));
    backend.launch_bfs_seed(root_count, seed_groups);
    std::uint32_t level = 1;
    std::uint32_t batch = options_.levels_per_check != 0 ? options_.levels_per_check : 1;
    host_checks = 0;
    for (;;) {
      for (std::uint32_t i = 0; i < batch; ++i) backend.launch_bfs_level(level + i, launch);
      level += batch;
      state = backend.read_state();
      ++host_checks;
      if (state[GCVM_STATE_FALLBACK_LEVEL] != GCVM_NO_LEVEL) break;
      if (state[GCVM_STATE_COUNT + level % GCVM_LEVEL_RING] == 0) break;
      if (options_.levels_per_check == 0) batch = std::min<std::uint32_t>(batch * 2, GCVM_MAX_LEVEL_BATCH);
    }
  }
  const double kernel_ms = backend.timer_stop_ms();
  const std::uint64_t gpu_edges =
      std::uint64_t{state[GCVM_STATE_EDGES_LO]} | (std::uint64_t{state[GCVM_STATE_EDGES_LO + 1]} << 32);
  const std::uint32_t fallback_level = state[GCVM_STATE_FALLBACK_LEVEL];

  const Stopwatch download_clock;
  out.reset(request.block_count);
  backend.read_marks(out.words().data(), request.block_count);
  double download_ms = download_clock.elapsed_ms();

  double fallback_ms = 0;
  std::uint64_t cpu_edges = 0;
  if (fallback_level != GCVM_NO_LEVEL) {
    const Stopwatch fallback_clock;
    const std::uint32_t pending = state[GCVM_STATE_COUNT + fallback_level % GCVM_LEVEL_RING];
    const Stopwatch queue_clock;
    std::vector<ObjectId> queue = backend.read_level_queue(fallback_level, pending);
    download_ms += queue_clock.elapsed_ms();
    cpu_edges = finish_mark_on_cpu(request, std::move(queue), out);
    fallback_ms = fallback_clock.elapsed_ms();
  }

  stats.marked_objects = out.count() - MarkBitmap::count_bits(request.premarked);
  stats.edges_traversed = gpu_edges + cpu_edges;
  stats.mark_ms = clock.elapsed_ms();
  const std::uint32_t levels = state[GCVM_STATE_LEVELS_RUN];
  stats.details = sync.details();
  stats.details.insert(stats.details.end(), {
      {"root_bytes", static_cast<double>(request.roots.size_bytes())},
      {"root_upload_ms", roots_ms},
      {"kernel_ms", kernel_ms},
      {"kernel_gteps", kernel_ms > 0 ? gpu_edges / (kernel_ms * 1e6) : 0.0},
      {"iterations", static_cast<double>(levels)},
      {"host_checks", static_cast<double>(host_checks)},
      {"gpu_edges", static_cast<double>(gpu_edges)},
      {"fallback_level", fallback_level == GCVM_NO_LEVEL ? -1.0 : static_cast<double>(fallback_level)},
      {"fallback_ms", fallback_ms},
      {"mark_download_bytes", static_cast<double>(mark_words * sizeof(std::uint32_t))},
      {"mark_download_ms", download_ms},
      {"groups", static_cast<double>(launch.groups)},
      {"device_bytes", static_cast<double>(backend.device_bytes())},
  });
  return stats;
}

}  // namespace gcvm
