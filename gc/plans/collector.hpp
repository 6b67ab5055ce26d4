// One mark-sweep collection: the plan that ties a Heap, a Marker and the sweep
// together, with the checks of --verify and the statistics every front end reports.
//
// Order of a collection: (rebuild mode) rebuild the CSR from the heap; (verify) check
// the graph against the heap; mark; (verify) check the marks independently
// (mark_checker.hpp) and against the serial marker; sweep. A failed check throws
// VerifyError before sweep, so a wrong mark never frees a live object. The sweep runs
// in parallel on the marker's thread pool, whose threads are still awake after the
// mark, when the pool has two threads or more (a pool of one is the serial sweep plus
// its task records and clocks) and the heap at least kParallelSweepMinBlocks blocks
// (sweep.hpp); for device markers (whose host threads are otherwise idle in the
// pause) on a pool of every CPU the thread that makes the collector may run on but one
// (the device's host thread keeps it, sweep.hpp) that the collector owns (made with the
// collector: a pause creates no thread; same heap size bound), which is woken shortly
// before the pause, by the allocation that brings the heap near the level the last
// pause began at (sweep_pool_waker.hpp; where the pool is placed, below, so that the
// polling threads, the mutator and the mirror's refresher each have a core), and again
// once the device has the mark's first kernels (MarkRequest::on_device_busy,
// ThreadPool::wake), so that its threads are awake when the device's mark comes back;
// else, and for the serial marker, serially. Where the host has the CPUs for it, the
// pool's workers are pinned one to a CPU and the collector keeps the thread that made
// it (the mutator's, which runs the pauses) and the marker's host threads on the two
// CPUs left, for its lifetime (sweep.hpp, SweepPoolPlacement), so that no thread of the
// pause shares a core with a polling worker. The policy only picks the
// threads: both sweeps leave the same heap. The same pool is the device marker's for
// the rest of the pause's CPU work (MarkRequest::host_pool): a large sync's planning
// and packing, and the CPU end of a fallback, so that no second pool's threads share
// the cores with its polling ones.
//
// On a generational heap (gc/heap/generations.hpp) a collection is young or full. A young
// one marks from the roots plus the remembered set's young targets with every mature
// object pre-marked, so it traces and frees only young objects; --verify then also
// checks the remembered set before marking, and after marking that a full serial mark
// from the roots finds nothing the young marks would free. Every collection of a
// generational heap ends with Generations::after_collection (ageing, promotion,
// remembered set). Which kind, and when, is the plan's policy (generational_policy.hpp).
//
// A device error in the mark (gc/plans/device_fallback.hpp): with device-error=fail,
// the default here, the DeviceError propagates and nothing is swept; with
// device-error=cpu the collection marks the same request again with the parallel CPU
// marker, which marks every later collection too, and reports the error
// (CollectionStats::device_error).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gc/heap/heap.hpp"
#include "gc/heap/lazy_sweep.hpp"
#include "gc/markers/marker.hpp"
#include "gc/heap/sweep.hpp"
#include "gc/plans/device_fallback.hpp"
#include "gc/plans/sweep_pool_waker.hpp"
#include "gc/util/thread_placement.hpp"

namespace gcvm {

class VerifyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Full and young collections stop the world for their whole length; a concurrent
/// cycle (gc/plans/concurrent_collector.hpp) marks a snapshot while the mutator runs;
/// a fallback is a concurrent cycle whose device failed, abandoned and replaced by a
/// stop-the-world collection on the CPU (gc/plans/device_fallback.hpp).
enum class CollectionKind { Full, Young, Concurrent, Fallback };

/// "full", "young", "concurrent" or "fallback".
const char* kind_name(CollectionKind kind);

/// The pauses of a concurrent cycle: the initial pause (the snapshot), a stall (the
/// mutator waited for the mark: the heap was full, or a collection was asked for) and
/// the final pause (the result applied); a fallback's last pause is the stop-the-world
/// collection that replaced the final pause.
enum class PauseKind { Initial, Stall, Final, Fallback };
/// "initial", "stall", "final" or "fallback".
const char* pause_kind_name(PauseKind kind);

struct PauseRecord {
  PauseKind kind = PauseKind::Initial;
  double start_ms = 0;  // on the process clock
  double ms = 0;
};

struct CollectionStats {
  std::uint64_t index = 0;
  CollectionKind kind = CollectionKind::Full;
  bool generational = false;  // the heap keeps generations; the figures below apply
  std::string reason;
  std::string collector;
  std::uint64_t heap_before_bytes = 0;
  std::uint64_t heap_after_bytes = 0;
  double rebuild_ms = 0;
  double verify_ms = 0;
  double pause_ms = 0;  // whole collection, verification excluded
  double start_ms = 0;  // when it began, on the process clock (gc/util/stopwatch.hpp)
  double cpu_ms = -1;   // process CPU time (all threads) during the pause, verification included; -1: not measured
  /// How long before the pause the device marker's sweep pool was woken
  /// (gc/plans/sweep_pool_waker.hpp); -1: it was not woken ahead.
  double sweep_pool_lead_ms = -1;
  MarkStats mark;
  SweepStats sweep;
  std::uint64_t remembered_objects = 0;  // remembered set at the start (young collections)
  std::uint64_t remembered_roots = 0;    // young targets of the remembered set, marked as roots
  std::uint64_t survivors = 0;           // young objects that survived
  std::uint64_t promoted_objects = 0;    // of them, promoted to mature
  std::uint64_t mature_objects = 0;      // after the collection
  /// A concurrent cycle: its pauses in order (pause_ms is their sum, start_ms the first
  /// one's start), the mark's wall time while the mutator ran (mark.mark_ms, measured on
  /// the marking thread, is the same mark), the whole cycle from the first pause's start
  /// to the last one's end, the previous cycle's lazy sweep (finished before this
  /// cycle's snapshot; mutator time, not a pause) and the objects this cycle's own lazy
  /// sweep will free (sweep.freed_objects, counted in the final pause).
  std::vector<PauseRecord> pauses;
  double concurrent_mark_ms = 0;
  double cycle_ms = 0;
  double stall_ms = 0;
  LazySweepTotals previous_lazy_sweep;
  std::vector<std::pair<std::string, double>> snapshot_details;  // the initial pause's copy or sync
  /// Not empty: the device failed in this collection (the error's text), and the CPU
  /// marker marked instead (gc/plans/device_fallback.hpp).
  std::string device_error;
  bool device_fallback() const { return !device_error.empty(); }
};

/// The graph step every collection starts with: (rebuild mode) rebuilds the CSR, timed
/// into stats.rebuild_ms; with `verify`, checks it against the heap (a VerifyError
/// naming `what`), timed into stats.verify_ms.
void prepare_graph(Heap& heap, bool verify, const std::string& what, CollectionStats& stats);
/// --verify of a mark of `request`: `marks` must be exactly its reachable set
/// (mark_checker.hpp) and the `serial` marker's marks (computed into `scratch`), and
/// stats.mark must report the serial marker's counts. Throws VerifyError naming `what`.
void check_mark(const MarkRequest& request, const BlockAllocator& blocks, const MarkBitmap& marks,
                const CollectionStats& stats, Marker& serial, MarkBitmap& scratch, const std::string& what);

class Collector {
 public:
  Collector(Heap& heap, std::unique_ptr<Marker> marker, bool verify, DeviceFallback fallback = {});
  ~Collector();

  /// One collection from exactly `roots`. A young collection needs a generational heap.
  CollectionStats collect(std::span<const ObjectId> roots, std::string reason,
                          CollectionKind kind = CollectionKind::Full);
  const Marker& marker() const { return *marker_; }
  Marker& marker() { return *marker_; }
  /// The bitmap of the last collection (valid until the next one).
  const MarkBitmap& last_marks() const { return marks_; }

 private:
  Heap& heap_;
  std::unique_ptr<Marker> marker_;
  std::unique_ptr<Marker> reference_;  // serial marker for --verify
  bool verify_;
  DeviceFallback fallback_;
  MarkBitmap marks_;
  MarkBitmap reference_marks_;
  MarkBitmap full_marks_;  // --verify of a young collection: everything reachable
  std::vector<ObjectId> young_roots_;
  std::uint64_t collections_ = 0;
  /// The device marker's sweep pool when this collection sweeps on it, else null.
  ThreadPool* device_sweep_pool(std::uint32_t blocks);
  std::unique_ptr<ThreadPool> sweep_pool_;  // device markers' parallel sweep, made with the collector
  std::unique_ptr<SweepPoolWaker> waker_;   // wakes sweep_pool_ ahead of a pause (when it is placed)
  // The constructing (mutator's) thread kept on the pause's CPUs while sweep_pool_ is placed.
  std::unique_ptr<ScopedThreadPlacement> pause_placement_;
  double last_mark_ms_ = -1;                // the last mark's time; -1 before the first
};

}  // namespace gcvm
