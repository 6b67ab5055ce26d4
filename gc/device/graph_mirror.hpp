// The device-resident copy of the CSR reference graph (DESIGN.md invariant 5).
//
// A GraphMirror owns no device memory itself: it decides what to copy and asks its
// DeviceBackend to copy it. States: empty (nothing uploaded) → synced (device arrays
// equal the host graph on [0, vertices()) and [0, edges())) → stale (the host changed;
// the changes are marked in the graph's GraphChanges) → synced again by `sync`.
//
// What crosses the host link. The graph's writers mark every vertex and edge slot
// whose value changes (heapgraph/graph_changes.hpp), so a sync sends the changed
// entries and little else (gc/device/mirror_plan.hpp):
//   - long runs of changed entries, clusters of short runs that change at least half
//     of a span of 64 KiB or more (the unchanged entries between them go too), and what
//     the graph grew by go by DMA straight from the host arrays, which are page-locked
//     for the device where the backend can pin (heapgraph/host_pinning.hpp): no
//     host-side copy;
//   - the rest is packed into one patch buffer (pinned too): isolated edge changes as
//     (offset, value) pairs, 8 bytes for 4 changed; isolated vertex changes as (vertex,
//     degree, begin) records, 16 bytes for 12; short runs with a 24-byte header and
//     their values. The patch is cut into pieces of about 2 MiB, each opening with a
//     section table that says where each kind lies; a piece is uploaded with one copy
//     and applied with one kernel launch (kernels/common/memory_ops.h) as soon as it is
//     packed, so the link carries it while the host packs the next.
// So the bytes a sync moves are at most twice the bytes of graph entries that changed
// (plus the grown tail, which counts as changed), plus each piece's fixed section table
// (at most 104 bytes below 2^32 edges; mirror_plan.hpp): every encoding above stays
// within that, and when the changes exceed half of the graph the sync uploads the rest
// of the graph too, each entry once, which is then also within it. Allocation into a
// reused slot changes that slot's vertex and edges only: its block neighbours are not
// sent again.
//
// Direct ranges go while the plan is made: the device arrays are reserved first, and
// the slices' direct ranges are enqueued as the slices are planned (plan_mirror_sync
// hands them on in index order), in batches that grow from a piece's bytes to four
// pieces' (the last one whatever is left), so the link carries them while later slices
// are planned; the patch is packed after the plan. The change record is cleared while
// the link still carries the copies.
//
// Who packs. A sync of at least kParallelEntries changed entries (allocation into
// freed slots changes millions of entries, scattered over the heap) plans and packs on
// a pool of threads: the caller's when it gives one (a pause's: the Collector's sweep
// pool, so that the pause's CPU work has one pool of threads), else a pool of every
// hardware thread, which the mirror creates at its first such sync and keeps; smaller
// syncs run on the caller's thread, where waking a pool would cost more than it saves.
// Whether that many changed is counted chunk by chunk, stopping there
// (ChangeBitmap::count_up_to).
//
// A sync uploads everything when the mirror is empty, when it last synced a different
// graph, when the caller has no change record, or when someone else cleared the
// changes since this mirror's last sync (GraphChanges::generation). Device arrays
// that must grow keep what they hold (a device-to-device copy), so growth never forces
// a full upload. After a sync the changes are cleared: the mirror is their consumer.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gc/device/device_backend.hpp"
#include "gc/device/mirror_plan.hpp"
#include "gc/util/stopwatch.hpp"
#include "gc/util/thread_pool.hpp"
#include "heapgraph/ref_graph.hpp"

namespace gcvm {

/// How a sync ends. `Wait`: when it returns, the device holds the graph. `BeforeNextLaunch`
/// (a mark's pause): a sync that only patches returns once the patch is enqueued, or held
/// back by the backend for its pause setup launch, and the device applies it before
/// anything enqueued after it, so the mark's first launch sees the graph; a sync that
/// copies runs straight from the host arrays still waits (its time is the link's).
enum class SyncEnd { Wait, BeforeNextLaunch };

struct MirrorSyncStats {
  bool full = false;
  std::uint64_t changed_bytes = 0;  // graph entries that changed (and the grown tail), in bytes
  std::uint64_t handed_over_bytes = 0;  // of them, in a refresh pass's plan the pause took over
  std::uint64_t bytes = 0;          // what crossed the link: direct + patch
  std::uint64_t direct_bytes = 0;   // DMA'd straight from the host arrays
  std::uint64_t direct_ranges = 0;
  std::uint64_t patch_bytes = 0;    // the packed patch
  std::uint64_t edge_pairs = 0;
  std::uint64_t vertex_records = 0;
  std::uint64_t patch_runs = 0;
  std::uint64_t patch_pieces = 0;   // copied and applied one by one, as they were packed
  std::uint64_t patch_parts = 0;    // buffers of whole pieces the patch was packed into, in turn
  std::uint64_t threads = 1;        // that planned and packed
  std::uint64_t pinned_bytes = 0;   // of the host graph's arrays, after the sync
  double plan_ms = 0;               // counting the changes, planning, and issuing the direct copies as planned
  double patch_buffer_ms = 0;       // waiting for and (re)allocating the host patch buffer (each part's)
  double fill_ms = 0;               // writing the patch and issuing its pieces
  double pack_ms = 0;               // all of the above and issuing the copies
  double first_copy_ms = 0;         // from the sync's start until its first copy was issued (0: none)
  double wait_ms = 0;               // waiting at the end for the device to finish the copies (when it waited)
  double ms = 0;                    // the whole sync (its host part when it did not wait)
  bool waited = true;               // for the device to apply it (SyncEnd)

  /// Adds another device's sync of the same collection (a partitioned mirror): counts
  /// and times summed, `full` if either was, the most threads of either.
  MirrorSyncStats& operator+=(const MirrorSyncStats& other);
  /// The figures as MarkStats::details entries (sync_*), in report order.
  std::vector<std::pair<std::string, double>> details() const;
};

/// What background refreshes sent between two collections (mirror_refresher.hpp).
struct MirrorRefreshStats {
  std::uint64_t passes = 0;     // that sent something
  std::uint64_t bytes = 0;      // direct + patch
  std::uint64_t changed_bytes = 0;
  std::uint64_t handed_over = 0;  // passes stopped by a pause before they sent: the pause's sync sent their plans
  double busy_ms = 0;           // of the refreshing thread

  MirrorRefreshStats& operator+=(const MirrorRefreshStats& other);
  /// The figures as MarkStats::details entries (sync_refresh_*).
  std::vector<std::pair<std::string, double>> details() const;
};

class GraphMirror {
 public:
  /// Changed entries from which a sync plans and packs on the mirror's thread pool.
  /// Planning costs about 8 ns a changed entry on one thread, and waking a pool of 16
  /// sleeping threads about 1 ms (H200 host, 2026-11-26: a sync of 270 scattered
  /// stores took 0.9 ms on the pool, chosen then by the 200-odd chunks they touched).
  static constexpr std::uint64_t kParallelEntries = 131072;

  explicit GraphMirror(DeviceBackend& backend);
  ~GraphMirror();

  /// Brings the device copy up to date with `graph`. `changes` is the graph's change
  /// record (cleared here), or null when unknown. A sync of kParallelEntries changed
  /// entries or more plans and packs on `threads` when given (a pool the pause keeps,
  /// MarkRequest::host_pool), else on the mirror's own. It also sends the plan of a
  /// refresh pass the pause stopped (`refresh`). On a device error the mirror forgets
  /// what it holds (the next sync uploads everything) and the error propagates.
  MirrorSyncStats sync(const RefGraph& graph, GraphChanges* changes, SyncEnd end = SyncEnd::Wait,
                       ThreadPool* threads = nullptr);

  /// Outside the pause, on the refreshing thread (mirror_refresher.hpp), while the
  /// mutator goes on storing into `graph`: sends the changes of the entries the device
  /// already holds, taking them from `changes` (ChangeBitmap::take_runs), so that the
  /// next `sync` in a pause finds little left. Does nothing unless the mirror is synced
  /// with `graph` and its record. A pass takes slices until it holds kParallelEntries
  /// changed entries or more, leaving the rest to the next. When `stop` is raised before
  /// anything was sent, the pass hands its plan, however far it got, to the next `sync`
  /// (the pause's), which packs it on the pause's threads and plans only what the pass
  /// did not take: the pause neither marks its bits again nor plans them a second time.
  /// (A pass that meets a plan handed over that no sync took marks its bits again
  /// first.) On a device error the mirror forgets what it holds (the next sync uploads
  /// everything) and the error propagates. Never concurrently with `sync`.
  MirrorRefreshStats refresh(const RefGraph& graph, GraphChanges& changes, const std::atomic<bool>& stop);

  std::uint64_t vertices() const { return vertices_; }
  std::uint64_t edges() const { return edges_; }

 private:
  /// Enqueues what `plan` sends (the direct runs unless `send_direct` is false: sent while
  /// planning; the patch filled and applied), without waiting for it; records the
  /// patch's figures and timings in `stats`.
  void send(const RefGraph& graph, const MirrorPlan& plan, ThreadPool* pool, GraphAccess access,
            MirrorSyncStats& stats, bool send_direct, const Stopwatch& clock);
  MirrorSyncStats sync_changes(const RefGraph& graph, GraphChanges* changes, SyncEnd end, ThreadPool* threads);
  /// After a device error: the device copy is unknown, so the next sync uploads all.
  void forget();

  DeviceBackend& backend_;
  std::unique_ptr<ThreadPool> pool_;  // created by the first sync that needs it
  MirrorPlan plan_;                   // of the last sync, kept for its vectors' capacity
  MirrorPlan refresh_plan_;           // likewise, of the last refresh
  /// A sync's direct ranges of vertices and of edges, gathered as planned until sent.
  std::pair<std::vector<ElementRange>, std::vector<ElementRange>> direct_batch_;
  bool refresh_handed_over_ = false;  // refresh_plan_ was taken but not sent: the next sync sends it
  const RefGraph* graph_ = nullptr;   // the graph the device copy belongs to
  std::uint64_t generation_ = 0;      // of the graph's changes, after this mirror cleared them
  std::uint64_t vertices_ = 0;
  std::uint64_t edges_ = 0;
};

}  // namespace gcvm
