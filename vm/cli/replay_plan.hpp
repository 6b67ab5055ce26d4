// How `gcvm replay` collects under each plan (--plan): where a collection's mutation
// round (--mutate) runs relative to it, and what runs at the round's safepoints.
//
// - marksweep (the default): a collection stops the world for its whole length. The
//   round due with it runs before it, on the live set the previous collection marked.
// - concurrent: a collection is a cycle of the concurrent plan's collector
//   (gc/plans/concurrent_collector.hpp, unchanged): the initial pause takes the
//   snapshot; the round due with it runs on the replay's thread while the snapshot is
//   marked, on what it reaches from the roots at its start (SyntheticMutator::
//   mutate_reachable: the previous cycle's marks are a round old); the final pause
//   comes at the first poll of the round (every kPollInterval stores and allocations)
//   after the mark finished, or when the round ends, waiting for the mark if it has not
//   (a stall), or when an allocation of the round does not fit (a stall, then the
//   allocation is retried once, the lazy sweep making room). A collection without a
//   round (the replay's own: a dump's first, a trace's recorded and heap-budget ones,
//   and every one without --mutate) is a whole cycle: the replay waits for its mark,
//   which it reports as a stall, as `gcvm run` reports the `gc` instruction's cycles.
//
// Invariants of the concurrent plan here (the collector's header has the proof):
// - The round stores only references to objects it reached from the roots at its start
//   (its live set, which is what the snapshot marks), references loaded from them, and
//   objects it allocated, so nothing the snapshot found unreachable becomes reachable
//   again; objects the round allocates are allocated black.
// - Between rounds the replay's thread runs nothing, so each cycle's lazy sweep is done
//   by the allocations of the round that runs after its final pause, and what is left
//   is finished before the next snapshot (mutator time, not a pause; the collector
//   reports it with the next cycle) or at the end (`finish`).
// - The final pause gets the roots plus everything the round holds (HeldObjects) as
//   the mutator's roots now: --verify's check that the snapshot's marks doom nothing
//   reachable, and a device error's stop-the-world fallback, mark from them.
// - The GPU markers' mirror follows the collector's rules: its refresher is stopped from
//   the snapshot until the mark has ended, whatever the round does meanwhile.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "gc/heap/heap.hpp"
#include "gc/markers/marker.hpp"
#include "gc/mutator/synthetic_mutator.hpp"
#include "gc/plans/collector.hpp"
#include "gc/plans/device_fallback.hpp"
#include "vm/cli/plan_args.hpp"

namespace gcvm::cli {

/// One collection of a replay, and the mutation round that ran with it.
struct ReplayCollection {
  CollectionStats stats;
  std::optional<MutationStats> mutation;
};

class ReplayPlan {
 public:
  virtual ~ReplayPlan() = default;
  /// "marksweep" or "concurrent".
  virtual std::string_view name() const = 0;
  /// One collection from `roots` (the replay's, fixed); with `mutator`, one round of it
  /// runs with the collection (before it, or while it marks: above).
  virtual ReplayCollection collect(std::span<const ObjectId> roots, std::string reason, SyntheticMutator* mutator) = 0;
  /// The marks of the last collection.
  virtual const MarkBitmap& last_marks() const = 0;
  /// The marker of the next collection (the CPU one after a device error's fallback).
  virtual std::string_view marker_name() const = 0;
  /// The end of the replay: the concurrent plan finishes the last cycle's lazy sweep and
  /// returns it; nullopt under marksweep.
  virtual std::optional<LazySweepTotals> finish() { return std::nullopt; }

  /// Called with the roots and reason where each collection takes its roots (before a
  /// stop-the-world collection; at a cycle's initial pause; again after a fallback
  /// collection that replaced a final pause, with the roots it marked from).
  std::function<void(std::span<const ObjectId> roots, const std::string& reason)> before_collection;
};

/// Throws UsageError for the plans and flags gcvm replay does not have: the generational
/// plan and --concurrent-trigger (a replay's cycles start at its collection points).
void check_replay_plan(const PlanArgs& plan);
/// The plan of `plan` (marksweep or concurrent) over `heap`, marking with `marker`;
/// checks it first (check_replay_plan).
std::unique_ptr<ReplayPlan> make_replay_plan(const PlanArgs& plan, Heap& heap, std::unique_ptr<Marker> marker,
                                             bool verify, DeviceFallback fallback);

}  // namespace gcvm::cli
