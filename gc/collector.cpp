#include "gc/collector.hpp"

#include "gc/mark_checker.hpp"
#include "gc/markers/serial_marker.hpp"
#include "gc/stopwatch.hpp"

namespace gcvm {

Collector::Collector(Heap& heap, std::unique_ptr<Marker> marker, bool verify)
    : heap_(heap), marker_(std::move(marker)), verify_(verify) {
  if (verify_) reference_ = std::make_unique<SerialMarker>();
}

Collector::~Collector() = default;

CollectionStats Collector::collect(std::span<const ObjectId> roots, std::string reason) {
  const Stopwatch pause;
  CollectionStats stats;
  stats.index = ++collections_;
  stats.reason = std::move(reason);
  stats.collector = std::string(marker_->name());
  stats.heap_before_bytes = heap_.used_bytes();

  if (heap_.graph_mode() == RefGraphMode::Rebuild) {
    const Stopwatch rebuild;
    heap_.rebuild_graph();
    stats.rebuild_ms = rebuild.elapsed_ms();
  }
  if (verify_) {
    const Stopwatch check;
    if (const std::string report = heap_.verify_graph(); !report.empty())
      throw VerifyError("collection " + std::to_string(stats.index) + ": reference graph differs from the heap:\n" + report);
    stats.verify_ms += check.elapsed_ms();
  }

  const MarkRequest request{heap_.graph(), roots, heap_.blocks().high_water(), &heap_.graph().dirty()};
  stats.mark = marker_->mark(request, marks_);

  if (verify_) {
    const Stopwatch check;
    if (const std::string problem = check_marks(heap_.graph(), heap_.blocks(), roots, marks_); !problem.empty())
      throw VerifyError("collection " + std::to_string(stats.index) + ": " + stats.collector + " marks are wrong: " + problem);
    const MarkStats reference = reference_->mark(request, reference_marks_);
    if (!(reference_marks_ == marks_))
      throw VerifyError("collection " + std::to_string(stats.index) + ": " + stats.collector +
                        " marks differ from the serial marker's");
    if (reference.marked_objects != stats.mark.marked_objects || reference.edges_traversed != stats.mark.edges_traversed)
      throw VerifyError("collection " + std::to_string(stats.index) + ": " + stats.collector + " reports " +
                        std::to_string(stats.mark.marked_objects) + " marked / " +
                        std::to_string(stats.mark.edges_traversed) + " edges, serial " +
                        std::to_string(reference.marked_objects) + " / " + std::to_string(reference.edges_traversed));
    stats.verify_ms += check.elapsed_ms();
  }

  ThreadPool* pool = marker_->thread_pool();
  stats.sweep = pool != nullptr ? sweep(heap_, marks_, *pool) : sweep(heap_, marks_);
  stats.heap_after_bytes = heap_.used_bytes();
  stats.pause_ms = pause.elapsed_ms() - stats.verify_ms;
  return stats;
}

}  // namespace gcvm
