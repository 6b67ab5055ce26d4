// gpu-bfs: the frontier-queue breadth-first mark of Maas et al. (2012) on a GPU, in
// CUDA or OpenCL (kernels/common/bfs_mark.h has the algorithm and its departures
// from the paper).
//
// A collection: sync the device mirror of the CSR from the graph's change record
// (GraphMirror), while the pause's thread walks the narrow first levels on the host
// (levels mode: the head start, gc/markers/head_start.hpp) → upload the roots (or the
// head start's frontier and scanned objects), clear the bitmap and the chunk queue of
// huge objects → seed kernel (claims the roots or the frontier, sets the scanned
// objects' bits) → the mark, in one of two schedules:
//   queue=async: one persistent launch over one global queue, with no level barrier
//     (kernels/common/async_mark.h), for heaps hundreds of levels deep;
//   queue=levels (the paper's): one kernel per BFS level, enqueued in batches with
//     one small state read between batches (the first as many levels as the last
//     levels collection needed, then 1, 2, 4, ... 64), never one per level unless
//     `levels-per-check=1` asks for it; faster than async on wide,
//     shallow heaps (R-MAT: 5.5 against 20.5 ms on rmat:24, H100). Local expansion:
//     a group out of queue goes on with the next level of what it claimed while that
//     fits one batch and no work waits for the next launch, up to `expand` levels, so
//     narrow levels (a tree's first, chains) cost batches, not launches; where the
//     device has a grid-wide barrier (CUDA) and the levels are narrow, every level in
//     one launch instead (level-barrier=), which runs the pause's setup first and
//     times itself on the device clock;
//   queue=auto (the default): levels without expansion for the first collection and
//     every 16th, which then count the heap's BFS levels; async for the others while
//     the last count was above 32 (a deep heap), levels otherwise;
// → (fallback) download what is left (a short level queue, or the async queue's
// untaken slots, and unscanned chunks of huge objects) and finish on the CPU →
// download the mark bitmap (with the last state read, when that read was expected to
// be the last: one wait for the device instead of two).
//
// Options (--gc-opt, Maas's Table 1 columns in brackets):
//   queue=auto|async|levels    the schedule above
//   offsets=histogram|prefix   output offsets by histogram (Alg. 2) or prefix sum [+P]
//   vector=on|off              16-byte edge loads [+V]
//   wide=<threshold>|off       objects with more references go to the whole group [+D]
//   fallback=<threshold>:<min>|off   CPU finishes a narrow tail [+F]: levels mode,
//                              once a level after `min` levels has fewer than
//                              `threshold` objects and no more than the level
//                              before (the queue dropped); async mode, once a group has done
//                              `min` rounds in a row with fewer than `threshold` items
//                              pending (a chain being walked one object a round)
//   deep-fallback=<threshold>:<level>|off
//                              levels mode, with fallback: from level `level` on, the
//                              CPU also takes over once a level has fewer than
//                              `threshold` objects and no more than the level before
//                              (a heap still that narrow that deep, such as many long
//                              lists side by side, costs the device a level's barrier,
//                              about 7 µs on the H200, per object of each list, where
//                              the CPU's threads walk a list each); in contrast to
//                              Maas's fallback, which looks at the width alone. Levels
//                              count as fallback's `min` counts them: a launch's
//                              (several BFS levels when a launch expands locally)
//   sms=all|<n>|split          all compute units share each level's queue, or only n;
//                              split: every work group marks from its own slice of
//                              the roots with its own queue, no balancing (§5.5's
//                              static root split; one kernel, no CPU fallback; it
//                              takes no queue= and walks huge objects in the lane)
//   levels-per-check=auto|<n>  levels enqueued between host checks (levels mode)
//   refresh=on|off             the mirror refreshed between pauses (DeviceSession)
//   refresh-wait=auto|poll|sleep  the refresher's thread between passes: polls
//                              (no wake-up when the pause hands it the mark's device
//                              side) or sleeps; auto polls on 8+ hardware threads
//   claim=checked|direct       async mode: read the mark word before the claim's
//                              atomic, or take the atomic at once
//   expand=<batches>|off       levels mode: local expansion of a narrow launch, at
//                              most this many batches a group (off: the paper's one
//                              level a launch)
//   frontier=auto|queue|bitmap|<objects>
//                              levels mode: where a launch's newly claimed objects go.
//                              queue: staged and appended to the next level's queue
//                              (the paper's); bitmap: left in the mark bitmap, from
//                              which a second kernel builds the next queue in object
//                              order (bfs_mark.h, gcvm_bfs_frontier); <objects>: bitmap
//                              for the launches whose queue or next queue held at
//                              least that many objects in the last levels collection,
//                              queue for the others; auto: that, at one object in 32
//                              of the heap's slots (at least kBitmapFrontierMinObjects)
//   level-barrier=auto|launch|grid
//                              levels mode: a kernel launch a level (the paper's), or
//                              every level in one launch with a grid-wide barrier
//                              between them (bfs_mark.h, gcvm_bfs_levels_together:
//                              no launch, no empty launch past the last level and no
//                              host check a level), where the device has such a
//                              barrier (CUDA's cooperative launch; OpenCL launches);
//                              auto: grid unless levels-per-check asks for checks, a
//                              launch would leave its winners in the bitmap (frontier=,
//                              which the one launch does not do), or the last levels
//                              collection had a level wider than half the one launch's
//                              groups hold (levels_in_one_launch)
//   shares=auto|on|off         levels mode: each group takes an equal part of a level
//                              and expands what it claims locally, level after level,
//                              while its next level fits `share-batches` batches,
//                              whatever waits elsewhere (bfs_mark.h); off: batches from
//                              one cursor (the paper's); auto: in the one launch
//   share-batches=<1..4>       with shares: the batches of a next level a group keeps
//   head-start=<objects>|off   levels mode, stop-the-world marks: the host walks the
//                              first levels while none holds more than <objects>
//                              (gc/markers/head_start.hpp), on the pause's thread while
//                              the refresher's thread syncs the mirror, and the device
//                              begins from the level after them
// Defaults: auto, histogram, vector on, wide 16, fallback 20:64 (async) or 20:5
// (levels), deep-fallback 1024:64, all SMs, refresh on, checked claims, expand 32,
// frontier auto, head-start 128, level-barrier auto, shares auto, share-batches 2. Objects of
// more than GCVM_CHUNK_SPLIT references are always split into chunks that every group takes
// (kernels/common/bfs_mark.h).
//
// With --device=auto and no usable GPU, or on a device error, the marker says so once
// on stderr and marks with the serial CPU marker from then on. With a named device,
// a device error is a MarkError and no mark bitmap is returned.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gc/device/device_session.hpp"
#include "gc/markers/cpu_finish.hpp"
#include "gc/markers/gc_options.hpp"
#include "gc/markers/head_start.hpp"
#include "gc/markers/marker.hpp"
#include "kernels/common/mark_layout.h"

namespace gcvm {

/// The schedule of a gpu-bfs mark (queue=).
enum class BfsQueue { Auto, Async, Levels };

/// Where a levels-mode launch's newly claimed objects go (frontier=).
enum class BfsFrontier { Auto, Queue, Bitmap, Threshold };

/// What separates levels-mode levels (level-barrier=): a kernel launch each, or a
/// grid-wide barrier in one launch of them all.
enum class BfsLevelBarrier { Auto, Launch, Grid };

/// How a levels-mode launch hands out its level (shares=): batches from one cursor,
/// each group expanding locally only while no work waits; or equal shares, each
/// expanded by its group while its next level fits `share_batches` batches.
enum class BfsShares { Auto, On, Off };

struct GpuBfsMarkerOptions {
  BfsQueue queue = BfsQueue::Auto;
  bool prefix_offsets = false;
  bool vector_loads = true;
  std::uint32_t wide_threshold = 16;  // 0 = off
  std::uint32_t fallback_threshold = 20;  // 0 = off
  std::uint32_t fallback_min_levels = 5;  // levels mode
  std::uint32_t narrow_rounds = 64;       // async mode (fallback=<threshold>:<min> sets both)
  std::uint32_t deep_fallback_threshold = 1024;  // levels mode; 0 = off
  std::uint32_t deep_fallback_level = 64;
  std::uint32_t sms = 0;  // 0 = all
  bool split = false;
  std::uint32_t levels_per_check = 0;  // 0 = auto (the last depth, then doubling)
  /// The mirror refreshed between pauses this often (DeviceSession); zero: not at all.
  std::chrono::microseconds refresh = MirrorRefresher::kDefaultInterval;
  /// How the refresher's thread waits between passes (MirrorRefresher).
  RefreshWait refresh_wait = RefreshWait::Auto;
  bool checked_claims = true;          // async: a plain read of the mark word before the claim's atomic
  std::uint32_t expand_batches = 32;   // levels mode: local expansion of a narrow launch, 0 = off
  BfsFrontier frontier = BfsFrontier::Auto;
  std::uint32_t frontier_min_objects = 0;  // BfsFrontier::Threshold
  /// Levels mode, stop-the-world marks: the widest level the host walks before the
  /// device begins (HeadStartLimits::for_width), 0 = off.
  std::uint32_t head_start = kDefaultHeadStart;
  BfsLevelBarrier level_barrier = BfsLevelBarrier::Auto;
  BfsShares shares = BfsShares::Auto;
  std::uint32_t share_batches = 2;  // shares: a group keeps a next level of at most this many batches
  DeviceSelector device;

  /// The CPU walks a level of n objects in about n x 50 ns of memory latency,
  /// overlapped; the device about 5-6 us a level of up to a batch however few objects
  /// it holds (H100, local expansion): a level of 128 costs both alike.
  static constexpr std::uint32_t kDefaultHeadStart = 128;

  static GpuBfsMarkerOptions parse(const GcOptions& options, const std::string& device);
};

class GpuBfsMarker final : public Marker {
 public:
  explicit GpuBfsMarker(GpuBfsMarkerOptions options);
  /// On `backend`, already open (options.device is not used): the seam for tests that
  /// wrap a backend (tests/gc/fault_injection.hpp).
  GpuBfsMarker(GpuBfsMarkerOptions options, std::unique_ptr<DeviceBackend> backend);
  std::string_view name() const override { return "gpu-bfs"; }
  MarkerConstraints constraints() const override { return {.needs_device = true}; }
  MarkStats mark(const MarkRequest& request, MarkBitmap& out) override;
  /// The pause syncs the mirror and uploads the roots; the snapshot mark launches the
  /// kernels and downloads the marks. It runs without the CPU fallback (which would read
  /// the live graph): the device finishes every mark.
  std::unique_ptr<SnapshotMark> snapshot(const MarkRequest& request) override;

  /// The device in use, or null after falling back to the CPU.
  const DeviceInfo* device() const { return session_.device(); }
  void after_pause() override { session_.after_pause(); }
  void watch(const RefGraph& graph, GraphChanges* changes) override { session_.watch(graph, changes); }
  void place_host_threads(const std::vector<unsigned>& cpus) override { session_.place_host_threads(cpus); }

 private:
  /// A collection's schedule (queue=auto: the policy in the header comment).
  enum class Schedule {
    Async,
    Levels,
    DepthProbe,  // levels without local expansion, so that the launches count the heap's BFS levels
  };
  /// What the pause's part of a mark leaves for the rest.
  struct Pause {
    MirrorSyncStats sync;
    BfsLaunch launch;
    bool async = false;
    std::uint32_t block_count = 0;
    std::uint32_t root_count = 0;    // queued by the seed: the roots, or the head start's frontier
    std::uint32_t head_marked = 0;   // the head start's scanned objects, after them in the buffer
    std::uint32_t head_levels = 0;
    std::uint64_t head_references = 0;
    double head_ms = 0;
    std::uint64_t premarked_objects = 0;
    std::uint32_t chunk_edges = GCVM_CHUNK_EDGES;  // references of a chunk (async mode's are smaller)
    std::uint64_t chunk_capacity = 0;
    double roots_ms = 0;
    bool levels_together = false;  // levels mode in one launch (level-barrier=)
  };
  class HeadStartHandoff;
  /// Syncs the mirror, then uploads the roots, or the head start's frontier and scanned
  /// objects when `head` is given (waiting for it).
  Pause begin_on_device(DeviceBackend& backend, GraphMirror& mirror, const MarkRequest& request, bool allow_fallback,
                        Schedule schedule, HeadStartHandoff* head);
  /// Launches and downloads; `request` is the pause's request, null in a snapshot mark
  /// (which allows no CPU fallback): a fallback finishes on its graph, and its
  /// on_device_busy is called once the first kernels are enqueued.
  MarkStats finish_on_device(DeviceBackend& backend, GraphMirror& mirror, const Pause& pause,
                             const MarkRequest* request, MarkBitmap& out);
  /// Levels mode's end, however launched (`next_level`: the level at which the mark was
  /// over): records the collection's levels and queue sizes for the next one's
  /// predictions and, after a fallback, downloads the level's queue and the chunks left.
  void finish_levels(DeviceBackend& backend, const Pause& pause, const std::vector<std::uint32_t>& state,
                     std::uint32_t next_level, bool expanding, bool& fallback, std::vector<ObjectId>& pending,
                     std::vector<std::uint64_t>& pending_chunks, double& download_ms);
  /// This collection's schedule.
  Schedule schedule();
  /// Whether this levels-mode collection runs every level in one launch (level-barrier=,
  /// the policy in the header comment), for a heap of `mark_words` 32-bit mark words.
  /// auto asks, besides, that the last levels collection's widest queue needed at most
  /// half the groups the one launch may have (kTogetherObjectsPerGroup objects a group):
  /// the one launch holds fewer groups at once than a level launch (on the H100, 5 an
  /// SM against 8: the loop around the level costs registers), which narrow levels do
  /// not miss and wide ones do. Measured there (warm collections, levels mode): GCBench's
  /// and binary-trees' kernels, levels of up to 65,536 objects, took 0.105-0.109 ms in
  /// one launch of 256 groups, 0.116-0.130 in one of 660, 0.120-0.136 launched a level at
  /// a time; jshell's and order-service's, levels of 150,000 objects and more, took
  /// 1.20-1.28 and 0.94-1.00 ms in one launch of 612-660 groups against 1.13-1.15 and
  /// 0.88-0.90 launched.
  bool levels_in_one_launch(const DeviceBackend& backend, std::uint64_t mark_words) const;
  /// Groups of the one launch: enough that the last levels collection's widest queue
  /// gives each about kTogetherObjectsPerGroup objects, at least one a compute unit and
  /// at most `launch_groups` (and what the device holds at once); all of them with
  /// nothing to go by. A level's shared words (its queue's cursor, the count of groups
  /// done, the grid-wide barrier) take an atomic from every group, and a group without a
  /// batch adds those and nothing else.
  std::uint32_t levels_together_groups(const DeviceBackend& backend, std::uint32_t launch_groups, bool shares) const;
  /// The largest queue of the last levels collection (0 before any).
  std::uint64_t widest_last_queue() const;
  static constexpr std::uint32_t kTogetherObjectsPerGroup = GCVM_GROUP_SIZE;

  /// queue=auto: a depth probe every this many collections, and async in between when
  /// it counted more than kAutoDeepLevels levels (on the H200, GCBench's 17 levels mark
  /// faster in levels mode, a real heap of 64 counted levels faster async).
  static constexpr std::uint64_t kAutoProbeEvery = 16;
  static constexpr std::uint32_t kAutoDeepLevels = 32;
  /// Launches enqueued beyond the last collection's count before the first check when
  /// launches expand: their number moves with the heap's narrow levels (GCBench: 9 to 12
  /// from one collection to the next), an empty launch costs about 3.5 µs of device
  /// time and a second check 30-50 µs (H200: GCBench's kernels 0.19-0.21 ms with two
  /// checks, 0.14 with one).
  static constexpr std::uint32_t kExpandedLaunchMargin = 2;
  /// Launches before the first check when nothing predicts the depth (the first
  /// collection, a depth probe before any was counted), and the batches double after
  /// each check: an empty launch costs a few µs of device time, a check a wait of
  /// 20-40 µs and a device idle while the host launches the next batch (H200: GCBench's
  /// first probe, 17 levels, checked after 1, 2, 4, 8, 16 and 32 launches, took 0.6-0.7 ms).
  static constexpr std::uint32_t kUnpredictedFirstBatch = 8;
  /// frontier=auto: a launch leaves its winners in the bitmap when its queue or the
  /// next held, in the last levels collection, at least one object in
  /// kBitmapFrontierShare of the heap's slots and at least this many: building a queue
  /// from the bitmap costs a snapshot, a launch and a read of the whole bitmap, which a
  /// narrow level does not repay.
  static constexpr std::uint32_t kBitmapFrontierMinObjects = 1u << 19;
  static constexpr std::uint32_t kBitmapFrontierShare = 32;
  /// Whether launch `level` leaves its winners in the bitmap (frontier=), for a heap of
  /// `mark_words` 32-bit mark words.
  bool bitmap_frontier(std::uint32_t level, std::uint64_t mark_words) const;

  GpuBfsMarkerOptions options_;
  std::uint64_t collections_ = 0;
  std::uint32_t depth_last_counted_ = 0;  // BFS levels of the last levels collection without expansion
  /// Level launches that finished the last levels collection whose launches expanded
  /// ([1]) or did not ([0]: levels mode with expand=off, queue=auto's depth probes).
  std::array<std::uint32_t, 2> levels_last_needed_{};
  std::vector<std::uint32_t> last_queue_counts_;  // queue sizes of the last levels collection, by launch
  HeadStart head_start_;                          // the last one's storage
  std::vector<ObjectId> seed_;                    // the head start's frontier, then its scanned objects
  DeviceSession session_;
  CpuFinish cpu_finish_;  // a fallback's CPU end
};

}  // namespace gcvm
