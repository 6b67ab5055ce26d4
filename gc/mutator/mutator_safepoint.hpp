// Where a synthetic mutator (synthetic_mutator.hpp) lets a collector in: the mechanism
// of its safepoints, apart from what a plan does there (policy: the replay's concurrent
// plan applies a finished mark at a poll, and waits for it when the heap is full).
//
// Contract, from the mutator's side:
// - `poll` is called between two steps of a round (never inside one: no object the
//   mutator made is then held only by a local), once at least `poll_interval()`
//   reference stores and allocations have happened since the last poll.
// - `heap_full` is called when an allocation does not fit; the mutator retries it once
//   if it returns true, and gives up (HeapExhausted) otherwise.
// - At both, `held` is every object the mutator holds besides the roots: what a
//   collection that marks from the roots now must also mark from, because the mutator
//   may still store a reference to it or read one of its fields. A collector that marks
//   a snapshot taken before the round does not need it (the round only stores
//   references it found in objects reachable at the round's start, or objects it
//   allocated: docs/concurrent.md, "Why it is safe"), but a stop-the-world collection
//   in the middle of a round (a device error's fallback) and the final pause's check of
//   --verify do.
#pragma once

#include <cstdint>
#include <span>

#include "heapgraph/object_id.hpp"

namespace gcvm {

/// The objects a synthetic mutator holds at a safepoint besides the roots: the live set
/// its round works on, and the garbage it has allocated so far (reachable only from
/// each other and from the mutator).
struct HeldObjects {
  std::span<const ObjectId> live;
  std::span<const ObjectId> garbage;
};

class MutatorSafepoint {
 public:
  virtual ~MutatorSafepoint() = default;
  /// Reference stores and allocations between two polls (at least 1).
  virtual std::uint64_t poll_interval() const = 0;
  virtual void poll(HeldObjects held) = 0;
  /// An allocation did not fit the heap; true: retry it once.
  virtual bool heap_full(HeldObjects held) = 0;
};

}  // namespace gcvm
