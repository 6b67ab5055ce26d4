// Replays a heap trace into a fresh Heap under any collector: the replay driver of
// `gcvm replay`. Each recorded allocation allocates an object of the same shape (its
// recorded id is mapped to the new heap's id), each store goes through the heap's
// write barrier, each root snapshot becomes the root set, and each recorded
// collection point runs a collection from that root set: the Collector's, or whatever
// the replay's plan runs there (a CollectFunction; `gcvm replay --plan=concurrent` runs
// a whole concurrent cycle).
//
// Id mapping: `recorded id -> heap id`, replaced when the trace allocates the id again
// (after a collection, the recorder's allocator reused the slot: a new object). A
// mapping is valid only while the heap object is live and still the one allocated for
// that recorded id (an owner table, heap id -> recorded id, tells slot reuse apart).
// A store, target or root that names an object whose mapping is no longer valid means
// the replaying collector freed something the mutator still used: the recorder's
// roots were incomplete, and the replay stops with a TraceError at that event.
//
// Budget collections (`collect_on_failure`, for `--heap`): when an allocation fails,
// collect and retry once; still failing is HeapExhausted. Between root snapshots the
// exact roots are unknown, so a budget collection uses a snapshot-at-the-beginning root
// set (the invariant of Yuasa's SATB barrier): the latest snapshot's roots, every
// object allocated since it, and every reference overwritten since it. Everything the
// mutator could still reach was reachable at the snapshot or allocated after it, and a
// path that a store broke since continues from the overwritten reference, so a
// consistent trace never hits a freed object. In contrast to the recording, a budget
// collection therefore keeps garbage made since the latest snapshot: recorders that
// want precise budget replays write snapshots often (TraceRecorder::snapshot_roots).
// Recorded collection points use exactly the recorded roots, so every collector marks
// the same objects there.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "gc/plans/collector.hpp"
#include "gc/heap/heap.hpp"
#include "heapgraph/trace/trace_reader.hpp"

namespace gcvm {

struct ReplayOptions {
  /// Collect and retry when an allocation fails (with --heap).
  bool collect_on_failure = false;
};

struct ReplaySummary {
  std::uint64_t events = 0;
  std::uint64_t allocations = 0;
  std::uint64_t allocated_bytes = 0;  // as recorded
  std::uint64_t stores = 0;
  std::uint64_t recorded_collections = 0;
  std::uint64_t budget_collections = 0;
};

class TraceReplayer {
 public:
  using CollectionHook = std::function<void(const CollectionStats&)>;
  /// One complete collection of the heap from exactly `roots`.
  using CollectFunction = std::function<CollectionStats(std::span<const ObjectId> roots, std::string reason)>;

  /// `heap` should be fresh; `collector` must collect `heap`. Both outlive the replayer.
  TraceReplayer(Heap& heap, Collector& collector, ReplayOptions options = {});
  /// `collect` must collect `heap`, which should be fresh and outlive the replayer.
  TraceReplayer(Heap& heap, CollectFunction collect, ReplayOptions options = {});

  /// Replays every event; calls `on_collection` after each collection. Throws
  /// TraceError (bad or inconsistent trace), HeapExhausted, VerifyError.
  ReplaySummary run(trace::TraceReader& reader, const CollectionHook& on_collection);
  /// The root set of the latest root snapshot replayed, as heap ids.
  const std::vector<ObjectId>& roots() const { return roots_; }

 private:
  ObjectId allocate(const trace::TraceEvent& e);
  ObjectId try_allocate(const trace::TraceEvent& e, ShapeId shape);
  /// The heap object for recorded `id`; throws when the replay freed it.
  ObjectId resolve(ObjectId recorded, const char* role) const;
  void store(const trace::TraceEvent& e);
  void collect(const std::vector<ObjectId>& roots, const char* reason);

  Heap& heap_;
  CollectFunction collect_;
  ReplayOptions options_;
  const trace::TraceReader* reader_ = nullptr;
  const CollectionHook* hook_ = nullptr;
  std::uint64_t offset_ = 0;  // of the event being replayed, for errors
  std::unordered_map<ObjectId, ObjectId> heap_id_;  // recorded -> heap
  std::vector<ObjectId> owner_;                     // heap id -> recorded (kNullRef: none)
  std::vector<ObjectId> roots_;                     // latest snapshot, as heap ids
  std::vector<ObjectId> since_snapshot_;            // SATB roots for budget collections
  ReplaySummary summary_;
};

}  // namespace gcvm
