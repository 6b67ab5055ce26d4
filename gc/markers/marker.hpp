// The Marker interface: every collector's mark phase has this shape.
//
// In:  the CSR reference graph, the roots (kNullRef entries are skipped), the
//      number of blocks the bitmap must cover, and the graph's change record.
// Out: the mark bitmap (DESIGN.md invariant 2) and MarkStats.
//
// Contract (invariant 4): for the same input, every marker with every option sets
// exactly the bits the serial marker sets, and reports the same `marked_objects` and
// `edges_traversed` (non-null references read from the objects it marked).
//
// Pre-marked objects (a young collection's mature objects, gc/heap/generations.hpp): the
// bits of `premarked` are set in `out` from the start, so a marker never marks nor
// scans those objects, and a root or reference to one ends there. `marked_objects`
// counts only the objects the marker marked; `out` holds both. A marker that
// fails (device error) throws MarkError and leaves no partial result in `out`.
//
// Every marker is written the same way (copy SerialMarker to start a new one):
//   - an options struct `XMarkerOptions` parsed from --gc-opt key=value pairs;
//   - `constraints()`: what the marker needs (a device, threads);
//   - `mark(request, out)`: the entry point;
//   - statistics: MarkStats with marker-specific `details` entries.
//
// Snapshot marks (the concurrent plan, gc/plans/concurrent_collector.hpp) have the
// same shape for every marker: `snapshot(request)` runs in the pause and takes what the
// mark needs; the SnapshotMark it returns marks that snapshot later, on another thread,
// while the mutator changes the graph (gc/markers/snapshot_mark.hpp). CPU markers get
// it from Marker's default, which copies the graph; device markers sync their mirror
// and upload the roots in the pause and run the kernels in the SnapshotMark.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gc/heap/mark_bitmap.hpp"
#include "heapgraph/ref_graph.hpp"

namespace gcvm {

class ThreadPool;

struct MarkRequest {
  const RefGraph& graph;
  std::span<const ObjectId> roots;
  std::uint32_t block_count = 0;
  /// What changed in `graph` since a device mirror last synced (DESIGN.md invariant
  /// 5), or null when unknown. A device marker consumes and clears it; CPU markers
  /// ignore it in `mark`, and their snapshots' host copy consumes it (snapshot_mark.hpp).
  GraphChanges* changes = nullptr;
  /// Objects to treat as marked and not to scan, one word per block as in MarkBitmap
  /// (at most block_count words; missing words are 0). Empty for a full mark.
  std::span<const std::uint64_t> premarked = {};
  /// Called at most once by a device marker, once the device has the mark's first
  /// kernels and before the marker waits for them (the plan wakes its sweep threads
  /// there, in time the pause's thread would spend waiting anyway); CPU markers and
  /// snapshot marks do not call it. May be empty.
  std::function<void()> on_device_busy = {};
  /// Threads the caller keeps for the pause's CPU work, which `on_device_busy` wakes
  /// (the Collector's sweep pool): a device marker runs its CPU end on them
  /// (cpu_finish.hpp) instead of a pool of its own, whose threads would share the
  /// cores with these polling ones. Null: the marker's own. CPU markers ignore it.
  ThreadPool* host_pool = nullptr;
  /// Whether the marker may leave figures it would name in the caller's pause to
  /// MarkStats::later_details, which the caller runs once its pause clock has stopped
  /// (the Collector does; anyone else gets every figure in `details`).
  bool details_after_pause = false;
};

/// Named figures of a mark, in report order.
using MarkDetails = std::vector<std::pair<std::string, double>>;

struct MarkStats {
  std::uint64_t marked_objects = 0;
  std::uint64_t edges_traversed = 0;
  double mark_ms = 0;  // wall time of the whole mark entry point
  /// Marker-specific figures (sync bytes, kernel ms, steals, ...), in report order.
  MarkDetails details;
  /// Figures left to name after the pause (MarkRequest::details_after_pause), which
  /// `finish_details` appends to `details`.
  std::function<void(MarkDetails&)> later_details;

  /// Appends what `add` appends to details: now, or after the pause when `later`; after
  /// the figures left for later, if any, either way (the report keeps their order).
  void add_details(std::function<void(MarkDetails&)> add, bool later) {
    if (!later && !later_details) {
      add(details);
    } else if (!later_details) {
      later_details = std::move(add);
    } else {
      later_details = [first = std::move(later_details), then = std::move(add)](MarkDetails& to) {
        first(to);
        then(to);
      };
    }
  }
  /// Names the figures left for after the pause.
  void finish_details() {
    if (later_details) std::exchange(later_details, {})(details);
  }

  /// The figure named `key`, if this marker reported one.
  std::optional<double> detail(std::string_view key) const {
    for (const auto& [name, value] : details)
      if (name == key) return value;
    return std::nullopt;
  }
};

/// Appends `figures` to `details` (MarkStats::details), building each name once: an
/// initializer list of std::pair<std::string, double> builds every name and then
/// copies it again, which cost a warm gpu-bfs pause, whose marker reports some 50
/// figures, about 10 µs on the H100 host.
inline void append_details(MarkDetails& details, std::initializer_list<std::pair<std::string_view, double>> figures) {
  details.reserve(details.size() + figures.size());
  for (const auto& [name, value] : figures) details.emplace_back(name, value);
}
/// Appends `more` to `details`, moving its names.
inline void append_details(MarkDetails& details, MarkDetails&& more) {
  details.insert(details.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
}

struct MarkerConstraints {
  bool needs_device = false;
  bool uses_threads = false;
};

class MarkError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class SnapshotMark;
class HostGraphCopy;

class Marker {
 public:
  Marker();
  virtual ~Marker();
  virtual std::string_view name() const = 0;
  virtual MarkerConstraints constraints() const = 0;
  /// Marks everything reachable from request.roots into `out` (reset by the marker).
  virtual MarkStats mark(const MarkRequest& request, MarkBitmap& out) = 0;
  /// The worker threads of a CPU-parallel marker, which the collector's sweep borrows
  /// (gc/heap/sweep.hpp); null for markers that run on one thread or a device.
  virtual ThreadPool* thread_pool() { return nullptr; }
  /// Called by the plan once a collection's pause is over (a concurrent cycle: once its
  /// mark is done, on the marking thread): work the marker keeps out of pauses, such as
  /// a device marker's growing its page-locked buffers. Default: nothing.
  virtual void after_pause() {}
  /// Called once by a plan bound to a heap, on the mutator's thread, before the first
  /// pause: `graph` is the graph every later request names and `changes` its change
  /// record. A device marker starts copying the graph to its device in the background
  /// (the mirror's refresher), so that the first pause finds it mostly there. Default:
  /// nothing.
  virtual void watch(const RefGraph& /*graph*/, GraphChanges* /*changes*/) {}
  /// Called at most once, by a plan that keeps its pauses' threads on `cpus` (the
  /// Collector, with a device marker's sweep pool placed: gc/heap/sweep.hpp): the
  /// marker's own threads that serve a pause (a device marker's mirror refresher, which
  /// runs the device's side of it) move there. Default: nothing.
  virtual void place_host_threads(const std::vector<unsigned>& /*cpus*/) {}
  /// In the pause: a snapshot of request.graph and request.roots (request.premarked
  /// must be empty), to be marked by the returned SnapshotMark after the pause. At most
  /// one snapshot mark of a marker exists at a time, and `mark` is not called while it
  /// does. The default brings a host copy of the graph that this marker keeps between
  /// cycles up to date (consuming request.changes, as a device mirror does) and marks it
  /// with `mark`.
  virtual std::unique_ptr<SnapshotMark> snapshot(const MarkRequest& request);

 private:
  std::unique_ptr<HostGraphCopy> host_copy_;  // the default snapshot's graph, made on first use
};

}  // namespace gcvm
