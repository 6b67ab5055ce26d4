#include "gc/markers/gpu_bfs_marker.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <exception>
#include <thread>
#include <tuple>

#include "gc/markers/cpu_finish.hpp"
#include "gc/markers/snapshot_mark.hpp"
#include "gc/util/spin.hpp"
#include "gc/util/stopwatch.hpp"
#include "kernels/common/mark_layout.h"

namespace gcvm {

namespace {

constexpr const char* kAccepted =
    "queue=auto|async|levels, offsets=histogram|prefix, vector=on|off, wide=<threshold>|off, "
    "fallback=<threshold>:<min-levels-or-rounds>|off, deep-fallback=<threshold>:<level>|off, "
    "sms=all|<n>|split, levels-per-check=auto|<n>, "
    "refresh=on|off|<10..10000000 microseconds>, refresh-wait=auto|poll|sleep, claim=checked|direct, "
    "expand=<batches>|off, frontier=auto|queue|bitmap|<objects>, head-start=<objects>|off, "
    "level-barrier=auto|launch|grid, shares=auto|on|off, share-batches=<1..4>";

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

/// `<first>:<second>`, first >= 1 and second >= `min_second` (fallback=, deep-fallback=).
std::pair<std::uint32_t, std::uint32_t> parse_pair(const GcOption& option, std::uint32_t min_second) {
  const auto colon = option.value.find(':');
  if (colon == std::string::npos) reject_gc_option("gpu-bfs", option, kAccepted);
  return {parse_count(option, std::string_view(option.value).substr(0, colon), 1),
          parse_count(option, std::string_view(option.value).substr(colon + 1), min_second)};
}

}  // namespace

GpuBfsMarkerOptions GpuBfsMarkerOptions::parse(const GcOptions& options, const std::string& device) {
  GpuBfsMarkerOptions o;
  o.device = parse_device_selector(device);
  for (const GcOption& option : options) {
    if (option.key == "queue" && (option.value == "auto" || option.value == "async" || option.value == "levels")) {
      o.queue = option.value == "auto" ? BfsQueue::Auto : option.value == "async" ? BfsQueue::Async : BfsQueue::Levels;
    } else if (option.key == "offsets" && (option.value == "histogram" || option.value == "prefix")) {
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
      std::tie(o.fallback_threshold, o.fallback_min_levels) = parse_pair(option, 0);
      o.narrow_rounds = o.fallback_min_levels;
    } else if (option.key == "deep-fallback") {
      if (option.value == "off") {
        o.deep_fallback_threshold = 0;
        continue;
      }
      std::tie(o.deep_fallback_threshold, o.deep_fallback_level) = parse_pair(option, 1);
    } else if (option.key == "sms") {
      o.split = option.value == "split";
      o.sms = option.value == "all" || o.split ? 0 : parse_count(option, option.value, 1);
    } else if (option.key == "claim" && (option.value == "direct" || option.value == "checked")) {
      o.checked_claims = option.value == "checked";
    } else if (option.key == "expand") {
      o.expand_batches = option.value == "off" ? 0 : parse_count(option, option.value, 1);
    } else if (option.key == "level-barrier" &&
               (option.value == "auto" || option.value == "launch" || option.value == "grid")) {
      o.level_barrier = option.value == "auto"     ? BfsLevelBarrier::Auto
                        : option.value == "launch" ? BfsLevelBarrier::Launch
                                                   : BfsLevelBarrier::Grid;
    } else if (option.key == "shares" && (option.value == "auto" || option.value == "on" || option.value == "off")) {
      o.shares = option.value == "auto" ? BfsShares::Auto : option.value == "on" ? BfsShares::On : BfsShares::Off;
    } else if (option.key == "share-batches") {
      o.share_batches = parse_count(option, option.value, 1);
      if (o.share_batches > GCVM_LOCAL_LEVEL_CAPACITY / GCVM_GROUP_SIZE) reject_gc_option("gpu-bfs", option, kAccepted);
    } else if (option.key == "frontier") {
      if (option.value == "auto" || option.value == "queue" || option.value == "bitmap") {
        o.frontier = option.value == "auto"    ? BfsFrontier::Auto
                     : option.value == "queue" ? BfsFrontier::Queue
                                               : BfsFrontier::Bitmap;
      } else {
        o.frontier = BfsFrontier::Threshold;
        o.frontier_min_objects = parse_count(option, option.value, 1);
      }
    } else if (option.key == "head-start") {
      o.head_start = option.value == "off" ? 0 : parse_count(option, option.value, 1);
    } else if (option.key == "refresh") {
      const auto interval = MirrorRefresher::parse_interval(option.value);
      if (!interval) reject_gc_option("gpu-bfs", option, kAccepted);
      o.refresh = *interval;
    } else if (option.key == "refresh-wait") {
      const auto wait = MirrorRefresher::parse_wait(option.value);
      if (!wait) reject_gc_option("gpu-bfs", option, kAccepted);
      o.refresh_wait = *wait;
    } else if (option.key == "levels-per-check") {
      o.levels_per_check = option.value == "auto" ? 0 : parse_count(option, option.value, 1);
      if (o.levels_per_check > GCVM_MAX_LEVEL_BATCH) reject_gc_option("gpu-bfs", option, kAccepted);
    } else {
      reject_gc_option("gpu-bfs", option, kAccepted);
    }
  }
  if (o.split) o.fallback_threshold = 0;  // lanes finish on the device; there is no tail to hand over
  if (o.split) o.queue = BfsQueue::Levels;  // the paper's static split is its own schedule
  return o;
}

GpuBfsMarker::GpuBfsMarker(GpuBfsMarkerOptions options)
    : options_(std::move(options)), session_("gpu-bfs", options_.device, options_.refresh, options_.refresh_wait) {}

GpuBfsMarker::GpuBfsMarker(GpuBfsMarkerOptions options, std::unique_ptr<DeviceBackend> backend)
    : options_(std::move(options)), session_("gpu-bfs", std::move(backend), options_.refresh, options_.refresh_wait) {}

GpuBfsMarker::Schedule GpuBfsMarker::schedule() {
  const std::uint64_t collection = collections_++;
  switch (options_.queue) {
    case BfsQueue::Async: return Schedule::Async;
    case BfsQueue::Levels: return Schedule::Levels;
    case BfsQueue::Auto: break;
  }
  if (collection % kAutoProbeEvery == 0) return Schedule::DepthProbe;
  return depth_last_counted_ > kAutoDeepLevels ? Schedule::Async : Schedule::Levels;
}

namespace {

/// The chunk items [from, to) of huge objects offered and not yet taken, as the level
/// state says (what a CPU fallback finishes).
std::pair<std::uint32_t, std::uint32_t> chunk_backlog(const std::vector<std::uint32_t>& state, std::uint64_t capacity) {
  const std::uint32_t tail = std::min<std::uint64_t>(state[GCVM_STATE_CHUNK_TAIL], capacity);
  return {std::min(state[GCVM_STATE_CHUNK_HEAD], tail), tail};
}

}  // namespace

bool GpuBfsMarker::bitmap_frontier(std::uint32_t level, std::uint64_t mark_words) const {
  std::uint64_t min_objects = options_.frontier_min_objects;
  switch (options_.frontier) {
    case BfsFrontier::Queue: return false;
    case BfsFrontier::Bitmap: return true;
    case BfsFrontier::Threshold: break;
    case BfsFrontier::Auto:
      min_objects = std::max<std::uint64_t>(kBitmapFrontierMinObjects, mark_words * 32 / kBitmapFrontierShare);
      break;
  }
  // A launch that scanned or found that many objects last time: the snapshot and the
  // frontier kernel cost microseconds beside it, and its steps then pass no barriers.
  const auto held = [&](std::uint32_t l) {
    return l < last_queue_counts_.size() && last_queue_counts_[l] >= min_objects;
  };
  return held(level) || held(level + 1);
}

bool GpuBfsMarker::levels_in_one_launch(const DeviceBackend& backend, std::uint64_t mark_words) const {
  if (options_.level_barrier == BfsLevelBarrier::Launch || backend.bfs_levels_together_groups() == 0) return false;
  if (options_.level_barrier == BfsLevelBarrier::Grid) return true;
  if (options_.levels_per_check != 0 || options_.frontier == BfsFrontier::Bitmap) return false;
  for (std::uint32_t level = 1; level < last_queue_counts_.size(); ++level)
    if (bitmap_frontier(level, mark_words)) return false;
  return widest_last_queue() <= std::uint64_t{kTogetherObjectsPerGroup} * backend.bfs_levels_together_groups() / 2;
}

std::uint64_t GpuBfsMarker::widest_last_queue() const {
  return last_queue_counts_.empty() ? 0 : std::ranges::max(last_queue_counts_);
}

std::uint32_t GpuBfsMarker::levels_together_groups(const DeviceBackend& backend, std::uint32_t launch_groups,
                                                   bool shares) const {
  const std::uint32_t most = std::min(launch_groups, backend.bfs_levels_together_groups());
  if (shares || last_queue_counts_.empty()) return most;
  const std::uint64_t wanted = (widest_last_queue() + kTogetherObjectsPerGroup - 1) / kTogetherObjectsPerGroup;
  return static_cast<std::uint32_t>(
      std::clamp<std::uint64_t>(wanted, std::min<std::uint32_t>(most, std::max(1u, backend.info().compute_units)), most));
}

/// The head start, walked on the pause's thread (DeviceSession::mark's `alongside`)
/// while the refresher's thread syncs the mirror; that thread takes it before it
/// uploads the roots. With refresh=off both run on one thread, the walk first.
class GpuBfsMarker::HeadStartHandoff {
 public:
  explicit HeadStartHandoff(HeadStart& storage) : head_(storage) {}
  void walk(const RefGraph& graph, std::span<const ObjectId> roots, const HeadStartLimits& limits) noexcept {
    try {
      walk_head_start(graph, roots, limits, head_);
    } catch (...) {
      error_ = std::current_exception();
    }
    ready_.store(true, std::memory_order_release);
  }
  /// Whether the walk is done (take would not wait).
  bool ready() const { return ready_.load(std::memory_order_acquire); }
  /// Waits for the walk (microseconds, at most the walk's own time past the sync's),
  /// rethrowing what it threw.
  const HeadStart& take() {
    const auto done = [&] { return ready(); };
    while (!spin_until(done, std::chrono::microseconds(200))) std::this_thread::yield();
    if (error_) std::rethrow_exception(error_);
    return head_;
  }

 private:
  HeadStart& head_;
  std::atomic<bool> ready_{false};
  std::exception_ptr error_;  // written before ready_'s release
};

MarkStats GpuBfsMarker::mark(const MarkRequest& request, MarkBitmap& out) {
  const Schedule schedule = this->schedule();
  // Levels mode from the roots, and not the lanes (each marks from its slice of the
  // roots alone) nor a mark with premarked objects (which it must not scan).
  const bool head_start =
      options_.head_start != 0 && schedule != Schedule::Async && !options_.split && request.premarked.empty();
  HeadStartHandoff handoff(head_start_);
  const auto walk = [&] {
    handoff.walk(request.graph, request.roots, HeadStartLimits::for_width(options_.head_start));
  };
  return session_.mark(
      request, out,
      [&](DeviceBackend& backend, GraphMirror& mirror) {
        const Stopwatch clock;
        const Pause pause = begin_on_device(backend, mirror, request, true, schedule, head_start ? &handoff : nullptr);
        MarkStats stats = finish_on_device(backend, mirror, pause, &request, out);
        stats.mark_ms = clock.elapsed_ms();
        return stats;
      },
      head_start ? std::function<void()>(walk) : std::function<void()>());
}

std::unique_ptr<SnapshotMark> GpuBfsMarker::snapshot(const MarkRequest& request) {
  return session_.snapshot(*this, request, [&](DeviceBackend& backend, GraphMirror& mirror) {
    const Pause pause = begin_on_device(backend, mirror, request, false, schedule(), nullptr);
    auto mark = std::make_unique<DeferredMark>([this, &backend, &mirror, pause](MarkBitmap& out) {
      backend.make_current();
      return finish_on_device(backend, mirror, pause, nullptr, out);
    });
    mark->pause_details = pause.sync.details();
    mark->pause_details.emplace_back("root_upload_ms", pause.roots_ms);
    return mark;
  });
}

GpuBfsMarker::Pause GpuBfsMarker::begin_on_device(DeviceBackend& backend, GraphMirror& mirror,
                                                  const MarkRequest& request, bool allow_fallback, Schedule schedule,
                                                  HeadStartHandoff* head) {
  Pause pause;
  const DeviceInfo& info = backend.info();
  pause.sync = mirror.sync(request.graph, request.changes, SyncEnd::BeforeNextLaunch, request.host_pool);

  BfsLaunch& launch = pause.launch;
  const bool fallback = allow_fallback && options_.fallback_threshold != 0;
  launch.flags = (options_.prefix_offsets ? GCVM_BFS_PREFIX : 0u) | (options_.vector_loads ? GCVM_BFS_VECTOR : 0u) |
                 (options_.wide_threshold != 0 ? GCVM_BFS_WIDE : 0u) | (fallback ? GCVM_BFS_FALLBACK : 0u) |
                 (options_.checked_claims ? GCVM_BFS_CHECKED_CLAIM : 0u);
  launch.wide_threshold = options_.wide_threshold;
  launch.fallback_threshold = options_.fallback_threshold;
  launch.fallback_min_level = options_.fallback_min_levels;
  launch.deep_fallback_threshold = options_.deep_fallback_threshold;
  launch.deep_fallback_level = options_.deep_fallback_level;
  launch.narrow_rounds = options_.narrow_rounds;
  pause.async = schedule == Schedule::Async;
  pause.levels_together = !pause.async && !options_.split &&
                          levels_in_one_launch(backend, std::uint64_t{request.block_count} * 2);
  launch.expand_batches = schedule == Schedule::DepthProbe ? 0 : options_.expand_batches;
  if (launch.expand_batches != 0 && (options_.shares == BfsShares::On ||
                                     (options_.shares == BfsShares::Auto && pause.levels_together)))
    launch.flags |= GCVM_BFS_SHARES | options_.share_batches << GCVM_BFS_SHARE_BATCHES_SHIFT;
  const unsigned resident = pause.async ? backend.async_resident_groups() : info.resident_groups;
  const unsigned per_unit = std::max(1u, resident / std::max(1u, info.compute_units));
  launch.groups = options_.sms == 0 ? std::max(1u, resident)
                                    : std::min(options_.sms, std::max(1u, info.compute_units)) * per_unit;

  pause.block_count = request.block_count;
  std::span<const ObjectId> roots = request.roots;
  if (head != nullptr) {
    // While the host still walks, the device applies the patch the sync held back.
    if (!head->ready()) backend.launch_held_back();
    const HeadStart& walked = head->take();
    pause.head_levels = walked.levels;
    pause.head_references = walked.references;
    pause.head_ms = walked.ms;
    if (walked.levels != 0) {
      seed_.assign(walked.frontier.begin(), walked.frontier.end());
      seed_.insert(seed_.end(), walked.scanned.begin(), walked.scanned.end());
      roots = seed_;
      pause.head_marked = static_cast<std::uint32_t>(walked.scanned.size());
    }
  }
  pause.root_count = static_cast<std::uint32_t>(roots.size()) - pause.head_marked;
  pause.premarked_objects = MarkBitmap::count_bits(request.premarked);
  const Stopwatch roots_clock;
  backend.begin_mark(roots, std::uint64_t{request.block_count} * 2, request.premarked);
  pause.chunk_edges = pause.async ? GCVM_ASYNC_CHUNK_EDGES : GCVM_CHUNK_EDGES;
  pause.chunk_capacity = chunk_queue_capacity(mirror.edges(), pause.chunk_edges);
  backend.begin_chunks(pause.chunk_capacity);
  pause.roots_ms = roots_clock.elapsed_ms();
  return pause;
}

void GpuBfsMarker::finish_levels(DeviceBackend& backend, const Pause& pause, const std::vector<std::uint32_t>& state,
                                 std::uint32_t next_level, bool expanding, bool& fallback, std::vector<ObjectId>& pending,
                                 std::vector<std::uint64_t>& pending_chunks, double& download_ms) {
  const std::uint32_t launches_run = state[GCVM_STATE_LEVELS_RUN];
  if (!expanding) depth_last_counted_ = pause.head_levels + launches_run;  // one launch a BFS level
  // Queue L's size is count[L] of the ring, intact while no level went round it (level
  // L clears slot L + 2).
  last_queue_counts_.assign(1, 0);
  if (next_level + 1 < GCVM_LEVEL_RING)
    for (std::uint32_t l = 1; l <= launches_run + 1; ++l) last_queue_counts_.push_back(state[GCVM_STATE_COUNT + l]);
  const std::uint32_t fallback_level = state[GCVM_STATE_FALLBACK_LEVEL];
  // A fallback is decided by the level after the last that ran, which must be launched.
  levels_last_needed_[expanding] = fallback_level != GCVM_NO_LEVEL ? fallback_level : launches_run;
  if (fallback_level == GCVM_NO_LEVEL || state[GCVM_STATE_OVERFLOW] != 0) return;
  fallback = true;
  const Stopwatch queue_clock;
  pending = backend.read_level_queue(fallback_level, state[GCVM_STATE_COUNT + fallback_level % GCVM_LEVEL_RING]);
  const auto [chunk_from, chunk_to] = chunk_backlog(state, pause.chunk_capacity);
  pending_chunks = backend.read_chunk_items(chunk_from, chunk_to);
  download_ms += queue_clock.elapsed_ms();
}

MarkStats GpuBfsMarker::finish_on_device(DeviceBackend& backend, GraphMirror& mirror, const Pause& pause,
                                         const MarkRequest* request, MarkBitmap& out) {
  const Stopwatch clock;
  MarkStats stats;
  const BfsLaunch& launch = pause.launch;
  const bool async = pause.async;
  const std::uint64_t chunk_capacity = pause.chunk_capacity;
  const std::uint64_t mark_words = std::uint64_t{pause.block_count} * 2;
  // The levels' one launch times itself on the device's clock (it takes the pause's
  // setup, which an event recorded before it would launch on its own first).
  const bool timed_by_events = !pause.levels_together;
  if (timed_by_events) backend.timer_start();
  const std::uint32_t root_count = pause.root_count;
  const std::uint32_t seeded = root_count + pause.head_marked;
  const std::uint32_t seed_groups =
      std::max(1u, std::min<std::uint32_t>(launch.groups, (seeded + GCVM_GROUP_SIZE - 1) / GCVM_GROUP_SIZE));
  std::vector<std::uint32_t> state;
  std::uint32_t groups = launch.groups;  // of the launches that marked
  std::uint64_t host_checks = 1;
  std::uint32_t bitmap_launches = 0;  // levels mode: launches that left their winners in the bitmap
  // What the device left for the CPU (a fallback): objects marked, not scanned, and
  // chunks of huge objects not scanned.
  bool fallback = false;
  std::vector<ObjectId> pending;
  std::vector<std::uint64_t> pending_chunks;
  double download_ms = 0;
  // A check that should be the last (one launch, or levels mode's first batch when it
  // is as deep as the last collection) reads the marks with the state, in one wait;
  // marks read at a check that was not the last are read again at the end. Every word
  // of `out` is downloaded, so it is not cleared first.
  out.resize_for_overwrite(pause.block_count);
  bool marks_read = false;
  bool busy_told = false;
  auto check = [&](bool last_expected) {
    if (timed_by_events) backend.timer_end();
    if (!busy_told && request != nullptr && request->on_device_busy)
      request->on_device_busy();
    busy_told = true;
    marks_read = last_expected;
    if (!last_expected) return backend.read_state();
    return backend.read_state_and_marks(out.words().data(), pause.block_count);
  };
  if (options_.split) {
    backend.launch_bfs_lanes(root_count, launch);
    state = check(true);
  } else if (async) {
    backend.launch_bfs_async_seed(root_count, seed_groups);
    backend.launch_bfs_async(launch);
    state = check(true);
    if (state[GCVM_STATE_OVERFLOW] == 0 && state[GCVM_STATE_STOP] != 0) {
      fallback = true;
      const Stopwatch gather_clock;
      const std::uint32_t tail = std::min<std::uint64_t>(state[GCVM_STATE_ASYNC_TAIL], mirror.vertices());
      pending = backend.gather_async_queue(tail, state[GCVM_STATE_PENDING]);
      // Async mode hands chunks out by tickets: every item not marked taken is left.
      pending_chunks = backend.read_chunk_items(0, chunk_backlog(state, chunk_capacity).second);
      std::erase(pending_chunks, GCVM_CHUNK_TAKEN);
      if (std::ranges::find(pending_chunks, GCVM_CHUNK_NONE) != pending_chunks.end())
        throw DeviceError("gpu-bfs async: a reserved chunk item was never written (an internal error)");
      download_ms += gather_clock.elapsed_ms();
    }
  } else if (pause.levels_together) {
    // Every level in one launch: it runs until the mark is over, so the one read after
    // it is the last.
    BfsLaunch together = launch;
    together.groups = levels_together_groups(backend, launch.groups, (launch.flags & GCVM_BFS_SHARES) != 0);
    groups = together.groups;
    backend.launch_bfs_levels_together(root_count, pause.head_marked, mark_words, together);
    state = check(true);
    finish_levels(backend, pause, state, state[GCVM_STATE_OVER_AT], launch.expand_batches != 0, fallback, pending,
                  pending_chunks, download_ms);
  } else {
    backend.launch_bfs_seed(root_count, pause.head_marked, seed_groups);
    std::uint32_t level = 1;
    // auto: the first check after as many levels as the last levels collection of the
    // same kind (launches that expand need fewer than those that do not: queue=auto's
    // depth probes) needed to finish, or the other kind when none ran yet (a heap's
    // depth changes little from one collection to the next, and every level enqueued
    // past the last one is an empty launch), with a margin when launches expand (their
    // number moves with the heap's narrow levels), then batches of 1, 2, 4, ...; the
    // first check should then be the last. With nothing to go by (or more levels than a
    // batch), batches from kUnpredictedFirstBatch (or the most a batch holds) that
    // double after each check.
    const bool auto_batch = options_.levels_per_check == 0;
    const bool expanding = launch.expand_batches != 0;
    const std::uint32_t last_needed =
        levels_last_needed_[expanding] != 0 ? levels_last_needed_[expanding] : levels_last_needed_[!expanding];
    const std::uint32_t margin = expanding ? kExpandedLaunchMargin : 0;
    const bool predicted = auto_batch && last_needed != 0 && last_needed <= GCVM_MAX_LEVEL_BATCH;
    std::uint32_t batch = !auto_batch ? options_.levels_per_check
                          : last_needed == 0 ? kUnpredictedFirstBatch
                                             : std::min<std::uint32_t>(last_needed + margin, GCVM_MAX_LEVEL_BATCH);
    host_checks = 0;
    // A launch that leaves its winners in the bitmap starts from a snapshot of it,
    // which the frontier kernel after such a launch brings up to date.
    bool snapshot_current = false;
    auto launch_level = [&](std::uint32_t l) {
      const bool bitmap = bitmap_frontier(l, mark_words);
      BfsLaunch each = launch;
      if (bitmap) {
        if (!snapshot_current) backend.snapshot_marks(mark_words);
        each.flags |= GCVM_BFS_BITMAP_OUT;
        ++bitmap_launches;
      }
      backend.launch_bfs_level(l, each);
      if (bitmap) backend.launch_bfs_frontier(l + 1, mark_words);
      snapshot_current = bitmap;
    };
    for (;;) {
      for (std::uint32_t i = 0; i < batch; ++i) launch_level(level + i);
      level += batch;
      state = check(predicted && host_checks == 0);
      ++host_checks;
      if (state[GCVM_STATE_FALLBACK_LEVEL] != GCVM_NO_LEVEL || state[GCVM_STATE_OVERFLOW] != 0) break;
      const auto [chunk_from, chunk_to] = chunk_backlog(state, chunk_capacity);
      if (state[GCVM_STATE_COUNT + level % GCVM_LEVEL_RING] == 0 && chunk_from == chunk_to) break;
      if (auto_batch)
        batch = predicted && host_checks == 1 ? 1 : std::min<std::uint32_t>(batch * 2, GCVM_MAX_LEVEL_BATCH);
    }
    finish_levels(backend, pause, state, level, expanding, fallback, pending, pending_chunks, download_ms);
  }
  const double kernel_ms = timed_by_events ? backend.timer_stop_ms() : one_launch_ms(state);
  if (state[GCVM_STATE_OVERFLOW] != 0)
    throw DeviceError("gpu-bfs: a device queue overflowed (an internal sizing error); the mark is discarded");
  const std::uint64_t gpu_edges = state_word64(state, GCVM_STATE_EDGES_LO);

  if (!marks_read) {
    const Stopwatch download_clock;
    backend.read_marks(out.words().data(), pause.block_count);
    download_ms += download_clock.elapsed_ms();
  }

  double fallback_ms = 0;
  std::uint64_t cpu_edges = 0;
  const std::size_t fallback_objects = pending.size();
  const std::size_t fallback_chunks = pending_chunks.size();
  if (fallback) {
    if (request == nullptr)
      throw MarkError("gpu-bfs: the device stopped for a CPU fallback in a snapshot mark");
    const Stopwatch fallback_clock;
    cpu_edges = cpu_finish_.finish(*request, std::move(pending), out, pending_chunks, pause.chunk_edges);
    fallback_ms = fallback_clock.elapsed_ms();
  }

  // The marks read with the state were counted on the device; a download after a later
  // check, or marks the CPU added, are counted here.
  const std::uint64_t marked_bits = marks_read && !fallback ? state[GCVM_STATE_MARKED] : out.count();
  stats.marked_objects = marked_bits - pause.premarked_objects;
  stats.edges_traversed = pause.head_references + gpu_edges + cpu_edges;
  stats.mark_ms = clock.elapsed_ms();
  const std::uint32_t fallback_level = state[GCVM_STATE_FALLBACK_LEVEL];
  // The names become strings after the pause when the caller asks (some 50 of them, most
  // too long to stay out of the allocator: 8-9 µs of a warm pause on the H200 host).
  const auto figures = std::to_array<std::pair<const char*, double>>({
      {"async", async ? 1.0 : 0.0},
      {"root_bytes", static_cast<double>(std::uint64_t{seeded} * sizeof(ObjectId))},
      {"head_start_levels", static_cast<double>(pause.head_levels)},
      {"head_start_objects", static_cast<double>(pause.head_marked)},
      {"head_start_ms", pause.head_ms},
      {"root_upload_ms", pause.roots_ms},
      {"kernel_ms", kernel_ms},
      {"kernel_gteps", kernel_ms > 0 ? gpu_edges / (kernel_ms * 1e6) : 0.0},
      {"iterations", static_cast<double>(async ? state[GCVM_STATE_ROUNDS] : state[GCVM_STATE_LEVELS_RUN])},
      {"host_checks", static_cast<double>(host_checks)},
      {"gpu_edges", static_cast<double>(gpu_edges)},
      {"chunks", static_cast<double>(state[GCVM_STATE_CHUNKS_SCANNED])},
      {"kept_objects", static_cast<double>(state[GCVM_STATE_KEPT])},
      {"bitmap_frontiers", static_cast<double>(bitmap_launches)},
      {"levels_in_one_launch", pause.levels_together ? 1.0 : 0.0},
      {"fallback_level", !fallback ? -1.0 : async ? 0.0 : static_cast<double>(fallback_level)},
      {"fallback_objects", static_cast<double>(fallback_objects)},
      {"fallback_chunks", static_cast<double>(fallback_chunks)},
      {"fallback_ms", fallback_ms},
      {"fallback_threads", fallback_ms > 0 ? static_cast<double>(cpu_finish_.last_threads()) : 0.0},
      {"mark_download_bytes", static_cast<double>(mark_words * sizeof(std::uint32_t))},
      {"mark_download_ms", download_ms},
      {"marks_with_state", marks_read ? 1.0 : 0.0},
      {"groups", static_cast<double>(groups)},
      {"device_bytes", static_cast<double>(backend.device_bytes())},
  });
  const auto name_figures = [sync = pause.sync, figures](MarkDetails& details) {
    append_details(details, sync.details());
    details.reserve(details.size() + figures.size());
    for (const auto& [name, value] : figures) details.emplace_back(name, value);
  };
  stats.add_details(name_figures, request != nullptr && request->details_after_pause);
  return stats;
}

}  // namespace gcvm
