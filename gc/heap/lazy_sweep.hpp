// The lazy sweep of the concurrent plan (gc/plans/concurrent_collector.hpp): what a
// cycle's final pause leaves for the allocator to sweep, block by block, when it next
// needs a block.
//
// State: per block, the doomed slots, `doomed[b] = alloc_at_snapshot[b] & ~mark[b]`
// (objects that were allocated when the snapshot was taken and that the mark of the
// snapshot did not reach), and a hierarchical bitmap of the blocks that still have
// doomed slots (pending). Both inputs are fixed once the mark is done (the mutator
// writes neither), so the doomed set is computed off the pause, by the marking
// thread (DoomedSlots::compute), and the final pause hands it over in constant time
// (LazySweep::begin swaps storage); the work of the final pause no longer grows
// with the heap. Sweeping block b is the ordinary block sweep
// (Heap::sweep_block, DESIGN.md invariant 2) with the mark word `alloc[b] & ~doomed[b]`,
// which frees exactly the doomed slots and keeps every slot allocated since the
// snapshot ("allocated black"). That is correct whenever it runs, because nothing else
// frees or reuses a doomed slot: a doomed slot stays allocated, so the allocator never
// hands it out again, until its block is swept; and no collection starts before the
// pending set is empty (every collection finishes the lazy sweep first).
//
// Order: pending blocks are swept in increasing block order, one at a time; the CSR
// edge ranges that emptied blocks and dead arrays release in one allocator call go
// back to the edge space as a stop-the-world sweep returns its own (Heap::settle_sweep).
//
// The allocator's side (Heap): when no active block of a shape has room, the heap sweeps
// pending blocks until one has room for that shape or one empties (then it is a free
// block for any shape); an array that would pass the heap limit first finishes the
// whole sweep. The time spent and the objects freed are counted here; they are the
// mutator's time, not a pause.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "gc/heap/hierarchical_bitmap.hpp"
#include "gc/heap/mark_bitmap.hpp"

namespace gcvm {

struct LazySweepTotals {
  std::uint64_t blocks = 0;  // blocks swept
  std::uint64_t freed_objects = 0;
  double ms = 0;
};

/// The doomed slots of one cycle, before the lazy sweep takes them.
class DoomedSlots {
 public:
  /// doomed[b] = alloc_at_snapshot[b] & ~marks[b] for every block of
  /// `alloc_at_snapshot` (marks beyond the bitmap are clear), reusing this object's
  /// storage.
  void compute(std::span<const std::uint64_t> alloc_at_snapshot, const MarkBitmap& marks);
  /// Objects that the sweep will free.
  std::uint64_t objects() const { return objects_; }
  /// Objects allocated at the snapshot (doomed or not).
  std::uint64_t allocated_objects() const { return allocated_; }

 private:
  friend class LazySweep;
  std::vector<std::uint64_t> words_;
  HierarchicalBitmap blocks_;  // blocks with a doomed slot
  std::uint64_t objects_ = 0;
  std::uint64_t allocated_ = 0;
};

class LazySweep {
 public:
  /// No block is pending.
  bool idle() const { return pending_.empty(); }
  /// Makes the blocks of `doomed` pending, in constant time: `doomed` gets this
  /// sweep's spent storage back (for its next compute). Returns the objects that
  /// will be freed. Only when idle.
  std::uint64_t begin(DoomedSlots& doomed);
  /// The lowest pending block (which stops being pending), or npos when idle.
  std::size_t take_next();
  std::uint64_t doomed(std::size_t block) const { return doomed_[block]; }

  LazySweepTotals& totals() { return totals_; }
  /// The totals since the last call (and zero them).
  LazySweepTotals take_totals() { return std::exchange(totals_, {}); }

 private:
  std::vector<std::uint64_t> doomed_;
  HierarchicalBitmap pending_;
  LazySweepTotals totals_;
};

}  // namespace gcvm
