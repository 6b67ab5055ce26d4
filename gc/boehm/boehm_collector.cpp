#include "gc/boehm/boehm_collector.hpp"

#include "gc/util/stopwatch.hpp"

namespace gcvm {

CollectionStats boehm_collection_stats(const BoehmCollection& gc, const BoehmCensus& census,
                                       std::uint64_t objects_before, std::uint64_t index, std::string reason) {
  CollectionStats stats;
  stats.index = index;
  stats.reason = std::move(reason);
  stats.collector = "boehm";
  stats.sweep.objects_before = objects_before;
  stats.heap_before_bytes = gc.in_use_before;
  stats.heap_after_bytes = census.bytes;
  stats.pause_ms = gc.pause_ms;
  // Reported after the collection and its census: its start is reckoned back from now.
  stats.start_ms = process_ms() - census.ms - gc.wall_ms;
  stats.mark.marked_objects = census.objects;
  stats.mark.edges_traversed = census.edges;
  stats.mark.mark_ms = gc.mark_ms;
  stats.sweep.freed_objects = objects_before > census.objects ? objects_before - census.objects : 0;
  stats.sweep.sweep_ms = gc.reclaim_ms;
  stats.mark.details = {
      {"markers", BoehmHeap::markers()},
      {"gc_no", static_cast<double>(gc.gc_number)},
      {"gcollect_ms", gc.wall_ms},
      {"stop_world_ms", gc.stop_world_ms},
      {"libgc_heap_bytes", static_cast<double>(gc.heap_bytes)},
      {"libgc_free_bytes", static_cast<double>(gc.free_bytes)},
      {"libgc_reclaimed_bytes", static_cast<double>(gc.reclaimed_bytes)},
      {"foreign_marked_objects", static_cast<double>(census.foreign_objects)},
      {"census_ms", census.ms},
  };
  return stats;
}

CollectionStats BoehmCollector::collect(std::string reason) {
  const std::uint64_t objects_before = census_.objects + heap_.objects_allocated() - allocated_at_last_;
  allocated_at_last_ = heap_.objects_allocated();
  const BoehmCollection gc = heap_.collect();
  census_ = heap_.census();
  return boehm_collection_stats(gc, census_, objects_before, ++collections_, std::move(reason));
}

}  // namespace gcvm
