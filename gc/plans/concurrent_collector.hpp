// The concurrent plan's collector: a cycle marks a snapshot of the heap's reference
// graph on another thread (or the device) while the mutator runs.
//
// A cycle:
//   initial pause  finish the previous cycle's lazy sweep (if the allocator has not);
//                  (rebuild mode) rebuild the CSR; (verify) check it against the heap;
//                  copy the allocation words (alloc_at_snapshot) and take the marker's
//                  snapshot (Marker::snapshot: a host copy of the CSR for CPU markers, the
//                  device mirror's sync and the roots' upload for GPU markers); start the
//                  marking thread. The mutator resumes.
//   concurrent     the marking thread marks the snapshot (SnapshotMark::mark), then
//                  computes the doomed objects, alloc_at_snapshot & ~marks
//                  (DoomedSlots: both inputs are fixed by then).
//   final pause    at a poll after the mark finished, or at once when the mutator
//                  cannot go on without it (a stall: the heap is full, or a collection
//                  was asked for): (verify) check the marks; hand the doomed objects
//                  to the heap's lazy sweep (gc/heap/lazy_sweep.hpp), in constant
//                  time. The mutator resumes; the allocator sweeps.
//
// Why the snapshot's marks are safe to apply after the mutator ran on (no SATB or
// incremental-update barrier beyond the one that keeps the CSR current):
//   1. Nothing allocated after the snapshot is freed: the lazy sweep frees only slots
//      set in alloc_at_snapshot ("allocated black"), and a slot that was free at the
//      snapshot and allocated since is not set there.
//   2. Nothing reachable later is freed. Let S be the objects the mark reaches (reachable
//      at the snapshot from its roots) and N the objects allocated since. Invariant:
//      every reference in a root or in a field of an object of S or N points into S or
//      N (or is null). At the snapshot it holds: the roots point into S and S is closed
//      under references. The mutator changes roots and fields only by loading a field
//      of an object it holds (the value is in S or N by the invariant), storing a
//      reference it holds (likewise) and allocating (a new object of N, all fields
//      null); each keeps the invariant. So every object reachable at any later moment
//      is in S or N, and the sweep frees neither: what the snapshot found unreachable
//      stays unreachable, however long the mark takes.
//   3. Garbage made after the snapshot (objects that die during the mark) is floating:
//      it survives this cycle and the next cycle's snapshot finds it unreachable.
//
// What the device mirror may and may not do while a mark is in flight (DESIGN.md
// invariant 5): the host graph keeps changing under the barrier, which only records
// change bits (heapgraph/graph_changes.hpp); the device arrays are not touched until
// the mark is done: the snapshot stops the marker's refresher (gc/device/mirror_refresher.hpp)
// and the marking thread resumes it only after the mark (Marker::after_pause). From
// then on the refresher may send changes while the mutator runs; the next initial
// pause stops it again and its sync catches up from the change bits that are left. The
// initial pause waits for every upload it enqueued (the sync copies straight from the
// host arrays) before the mutator resumes.
//
// A device error (gc/plans/device_fallback.hpp; device-error=cpu, this plan's default).
// The device fails in the initial pause (the mirror's sync, the roots' upload) or in
// the concurrent mark (a launch, a state read, the marks' download); the marking
// thread publishes the error as it would a mark. The cycle is abandoned: a device
// mark never yields a partial bitmap, and nothing of this one is used (its
// alloc_at_snapshot is dropped and nothing is handed to the lazy sweep). At the
// pause where the error is seen (the initial pause, or the next poll after the mark
// ended: the final pause's place) the mutator stays stopped and the heap is collected
// stop-the-world by the parallel CPU marker (a Collector: the graph prepared and,
// with verify, checked; the current graph marked from the mutator's roots now;
// with verify, the marks checked against the serial marker; an eager sweep). The
// lazy sweep is idle then: the initial pause finished the previous cycle's, and the
// abandoned cycle deferred nothing. The allocated-black rule does not arise: that
// mark is of the heap as it is, not of a snapshot, so objects allocated since the
// snapshot are marked exactly when they are reachable now. The device marker is
// released (its refresher, stopped since the snapshot, never resumes), and every
// later cycle is an ordinary concurrent cycle of the parallel marker on its host
// copy of the graph (copied in full at its first snapshot). The collection is
// reported as kind Fallback with the device's error; its pauses are the abandoned
// cycle's initial pause and stall, if any, and the stop-the-world collection.
// With device-error=fail the DeviceError propagates from `start` or `finish`.
//
// Threads: the mutator thread runs every pause and the lazy sweep; one marking thread,
// started with the collector and kept for its life (no thread creation in
// a pause), runs only SnapshotMark::mark and DoomedSlots::compute, which read nothing
// the mutator writes (the host copy, the roots and alloc_at_snapshot are private to
// the cycle; the device is the marker's alone). The pause hands it a mark under a mutex; it publishes completion under the
// same mutex and with a release store that polls read with an acquire load, so the
// final pause sees the marks once it has seen the mark done.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "gc/heap/heap.hpp"
#include "gc/markers/marker.hpp"
#include "gc/markers/snapshot_mark.hpp"
#include "gc/device/device_backend.hpp"
#include "gc/plans/collector.hpp"
#include "gc/plans/device_fallback.hpp"

namespace gcvm {

class ConcurrentCollector {
 public:
  ConcurrentCollector(Heap& heap, std::unique_ptr<Marker> marker, bool verify, DeviceFallback fallback = {});
  /// Waits for a mark in flight (its result is dropped).
  ~ConcurrentCollector();
  ConcurrentCollector(const ConcurrentCollector&) = delete;
  ConcurrentCollector& operator=(const ConcurrentCollector&) = delete;

  /// The initial pause: snapshot of the heap with `roots`, then the mark starts on the
  /// marking thread. Only when no cycle is in flight. Throws VerifyError (verify) or
  /// MarkError. When the device fails in the pause and the plan falls back, returns the
  /// fallback collection instead, and no cycle is in flight.
  std::optional<CollectionStats> start(std::span<const ObjectId> roots, std::string reason);
  bool in_flight() const { return in_flight_; }
  /// The mark in flight has finished (the final pause will not wait).
  bool mark_done() const { return done_.load(std::memory_order_acquire); }
  /// The final pause, after waiting for the mark if it has not finished (a stall).
  /// `roots`: the mutator's roots now; with verify, a serial mark of the live graph from
  /// them must free nothing reachable. Throws VerifyError or the mark's MarkError. After
  /// a device error, the fallback collection from `roots` (above).
  CollectionStats finish(std::span<const ObjectId> roots);

  /// The marker of the next cycle: the one given, or the CPU marker after a fallback.
  const Marker& marker() const { return cpu_ ? cpu_->marker() : *marker_; }
  /// The bitmap of the last cycle, or of the fallback collection that replaced it
  /// (valid until the next one starts).
  const MarkBitmap& last_marks() const { return last_fell_back_ ? cpu_->last_marks() : marks_; }

 private:
  /// The marker of the next cycle (see marker()).
  Marker& active() { return cpu_ ? cpu_->marker() : *marker_; }
  /// Abandons the cycle after the device's `error` and collects stop-the-world from
  /// `roots` with the CPU marker (see above); `where` names the failed part;
  /// `final_thread_cpu`: the mutator's CPU time when it stopped for this.
  CollectionStats fall_back(const DeviceError& error, std::span<const ObjectId> roots, std::string_view where,
                            double final_thread_cpu);
  /// The GC's CPU time over the cycle: every thread but the mutator's since the start,
  /// plus the mutator's in the initial pause and since `final_thread_cpu`.
  double cycle_cpu_ms(double final_thread_cpu) const;

  Heap& heap_;
  std::unique_ptr<Marker> marker_;     // released after a fallback
  std::unique_ptr<Collector> cpu_;     // after a fallback: the CPU marker's collections
  std::unique_ptr<Marker> reference_;  // serial marker for --verify
  bool verify_;
  DeviceFallback fallback_;
  std::unique_ptr<SnapshotMark> snapshot_;
  std::vector<std::uint64_t> alloc_at_snapshot_;
  std::vector<ObjectId> snapshot_roots_;           // verify
  std::unique_ptr<RefGraph> verify_copy_;          // verify of a device snapshot: the graph at the snapshot
  /// The marking thread's loop: wait for a mark, run it, publish it.
  void marking_thread();

  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;      // the marking thread waits for work_ or quit_
  std::condition_variable finished_;  // the final pause waits for done_
  bool work_ = false;                 // under mutex_
  bool quit_ = false;                 // under mutex_
  std::atomic<bool> done_{false};
  bool in_flight_ = false;            // the mutator's view
  std::exception_ptr error_;
  MarkStats mark_stats_;
  MarkBitmap marks_;
  DoomedSlots doomed_;  // written by the marking thread after the mark, like marks_
  MarkBitmap reference_marks_;
  CollectionStats cycle_;  // filled by start, completed by finish
  double cycle_process_cpu_ = 0, cycle_thread_cpu_ = 0, initial_thread_cpu_ = 0;
  std::uint64_t cycles_ = 0;
  bool last_fell_back_ = false;  // the last cycle was replaced by a fallback collection
};

}  // namespace gcvm
