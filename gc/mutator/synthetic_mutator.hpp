// A synthetic mutator for heaps that have no program: between two collections of a
// replayed heap dump or trace (`gcvm replay --collections=N --mutate=...`), it changes
// the heap the way a running program would, so that warm collections and the device
// mirror's incremental sync can be measured on real heap shapes in steady state.
//
// One round works on a live set L (in id order): the objects the previous collection
// marked (`mutate`), or what the mutator reaches from the roots itself, found by a
// serial mark of the heap's reference graph at the start of the round
// (`mutate_reachable`: under the concurrent plan a round runs while a snapshot is
// marked, and the previous cycle's marks are a round old: objects the last round cut
// off are in them, and storing one of those would bring back an object the snapshot
// found unreachable, which its final pause frees). A round does, in this order:
//
//   1. rewire: round(rewire x R) stores, R being the non-null references of L. Each
//      picks a reference slot uniformly among all reference slots of L (field or array
//      element, null or not) and stores null into it with probability q (the share of
//      null slots in L, so the heap's null density stays put), else a uniformly random
//      object of L.
//   2. replace (churn): round(replace x |L|) times, a non-null reference of L is picked
//      uniformly, its target X gets a fresh copy X' (same shape and size, the same
//      references, copied store by store) and the slot is set to X'. X dies unless
//      something else still holds it. A slot that step 1 or an earlier replacement set
//      to null is skipped (`replaced` counts what happened).
//   3. garbage: fresh objects until `garbage_bytes` are allocated, each a copy of the
//      shape and size of a uniformly random object T of L (plain object, reference
//      array or scalar array). Where T has a non-null reference the copy has one too:
//      to the same live target, or with probability 1/2 to a random earlier garbage
//      object of the round. Nothing outside points to them: the next collection frees
//      them all.
//
// Invariants:
// - Every reference write goes through Heap::store_ref / Heap::store_element, the
//   mutator's write barrier, and every object comes from Heap::allocate*, so the
//   reference graph and its change bits see the round exactly as they see a guest
//   program's stores. The mutator never writes the reference graph.
// - Deterministic: the same heap state, spec and seed make the same calls. A trace
//   converted from a dump replays into the same object ids, so the mutated collections
//   of the two are the same.
// - Roots never change. Rewire targets are drawn from L as it was at the start of the
//   round, so a target may be an object that an earlier rewire of the same round cut
//   off; a stop-the-world collector cannot tell the difference.
// - A round reads every reference slot of L twice (to count, then to find the picked
//   slots): O(|L| + slots) time and O(|L| + picks) memory; it runs outside any pause.
//   `mutate_reachable` adds a mark of the live graph (needs barrier mode, where the
//   graph is current).
// - Safepoints (mutator_safepoint.hpp): with a MutatorSafepoint, the round polls it
//   between steps (a rewire, a replacement, a garbage object) once poll_interval()
//   stores and allocations have happened since the last poll, and asks it before
//   giving up on an allocation. Every object a step makes is stored into a holder or
//   listed as garbage before the step ends, so at a poll the round holds nothing but L
//   and its garbage (HeldObjects).
//
// An allocation that does not fit the heap limit throws HeapExhausted.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gc/heap/heap.hpp"
#include "gc/heap/mark_bitmap.hpp"
#include "gc/mutator/mutator_safepoint.hpp"
#include "heapgraph/random.hpp"

namespace gcvm {

class TraceRecorder;

struct MutationSpec {
  double rewire = 0;               // fraction of L's non-null references rewired per round
  double replace = 0;              // fraction of |L| replaced by fresh copies per round
  std::uint64_t garbage_bytes = 0; // garbage allocated per round (object bytes, Heap::object_bytes)

  bool empty() const { return rewire == 0 && replace == 0 && garbage_bytes == 0; }
  /// `rewire=F,replace=F,garbage=BYTES` with the keys that are set; "none" when empty.
  std::string text() const;
};

/// What one round did. Every store went through the write barrier.
struct MutationStats {
  std::uint64_t live_objects = 0;     // |L|
  std::uint64_t live_references = 0;  // R: non-null reference slots of L
  std::uint64_t rewired = 0;          // rewire stores
  std::uint64_t rewired_null = 0;     // of them, stores of null
  std::uint64_t replaced = 0;         // objects replaced by a fresh copy
  std::uint64_t garbage_objects = 0;
  std::uint64_t stores = 0;           // all reference stores of the round
  std::uint64_t objects_allocated = 0;
  std::uint64_t bytes_allocated = 0;  // Heap::object_bytes of every allocation
  double live_set_ms = 0;             // of mutate_ms: finding L (mutate_reachable's mark)
  double mutate_ms = 0;               // wall time of the round
};

class SyntheticMutator {
 public:
  /// `heap` outlives the mutator. With a `recorder`, every allocation and store of a
  /// round is recorded too (`gcvm replay DUMP --record-trace`).
  SyntheticMutator(Heap& heap, MutationSpec spec, std::uint64_t seed, TraceRecorder* recorder = nullptr);

  /// One round on the objects set in `live` (the previous collection's marks); with a
  /// `safepoint`, polling it as the header says.
  MutationStats mutate(const MarkBitmap& live, MutatorSafepoint* safepoint = nullptr);
  /// One round on the objects reachable from `roots` now (a mark of the heap's graph).
  MutationStats mutate_reachable(std::span<const ObjectId> roots, MutatorSafepoint* safepoint = nullptr);

 private:
  /// One reference slot: its holder and its field or element index.
  struct Slot {
    ObjectId holder;
    std::uint64_t index;
  };
  /// Reference slot count of an object (0 for scalar arrays).
  std::uint64_t slot_count(ObjectId obj) const;
  ObjectId load(ObjectId holder, std::uint64_t index) const;
  void store(ObjectId holder, std::uint64_t index, ObjectId target);
  /// A fresh object of `model`'s shape and size (references null); after a failure the
  /// safepoint may make room once.
  ObjectId allocate_like(ObjectId model, const char* what);
  ObjectId try_allocate_like(ObjectId model);
  /// Between two steps of a round: polls the safepoint when it is due.
  void step_boundary();
  HeldObjects held() const { return {live_, garbage_}; }
  /// Sorted uniform draws in [0, bound).
  std::vector<std::uint64_t> draw_sorted(std::uint64_t count, std::uint64_t bound);
  /// One pass over L: the slots at sorted positions `among_all` (counting every slot)
  /// and `among_non_null` (counting non-null slots only).
  void find_slots(const std::vector<std::uint64_t>& among_all, const std::vector<std::uint64_t>& among_non_null,
                  std::vector<Slot>& all_out, std::vector<Slot>& non_null_out) const;
  void rewire(std::uint64_t null_slots, std::uint64_t all_slots, const std::vector<Slot>& slots);
  void replace(const std::vector<Slot>& slots);
  void allocate_garbage();

  Heap& heap_;
  MutationSpec spec_;
  SplitMix64 rng_;
  TraceRecorder* recorder_;
  std::vector<ObjectId> live_;
  std::vector<ObjectId> garbage_;
  MutationStats stats_;
  MutatorSafepoint* safepoint_ = nullptr;  // of the round in progress
  std::uint64_t operations_since_poll_ = 0;
  MarkBitmap reachable_;  // mutate_reachable's L
};

}  // namespace gcvm
