// Collections of a BoehmHeap reported in the shape of every gcvm collector
// (CollectionStats, so stats_report.hpp prints and serializes them unchanged).
//
// Mapping: marked_objects and edges_traversed come from BoehmCensus (what libgc
// marked, and the non-null references in it: the same definitions as MarkStats);
// mark_ms is libgc's mark phase (GC_EVENT_MARK_START..END), sweep_ms its eager
// reclaim phase (libgc sweeps the rest lazily during later allocation), pause_ms the
// whole collection (GC_EVENT_START..END). heap_after_bytes is the live bytes libgc
// marked; blocks_freed is 0 (libgc has no SOA blocks). The census runs after the
// collection and is not part of any of these times (details: census_ms).
#pragma once

#include <string>

#include "gc/boehm/boehm_heap.hpp"
#include "gc/plans/collector.hpp"

namespace gcvm {

/// The CollectionStats of one libgc collection: `objects_before` = this heap's objects
/// before it (the previous census plus those allocated since), `index` its number in
/// the run. Used for explicit collections here and for every collection of a guest run.
CollectionStats boehm_collection_stats(const BoehmCollection& gc, const BoehmCensus& census,
                                       std::uint64_t objects_before, std::uint64_t index, std::string reason);

class BoehmCollector {
 public:
  explicit BoehmCollector(BoehmHeap& heap) : heap_(heap) {}

  CollectionStats collect(std::string reason);
  const BoehmCensus& last_census() const { return census_; }

 private:
  BoehmHeap& heap_;
  BoehmCensus census_;
  std::uint64_t collections_ = 0;
  std::uint64_t allocated_at_last_ = 0;
};

}  // namespace gcvm
