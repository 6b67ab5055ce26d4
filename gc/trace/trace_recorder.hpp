// Records what a mutator does to a Heap as a heap trace (docs/trace-format.md): the
// heap binding's side of `--record-trace`. The binding calls `allocated` after each
// successful allocation, `stored` for each reference store (field or element),
// `collecting` right before each collection, and `finish` at exit:
//
//   ObjectId id = heap.allocate(shape);
//   if (recorder) recorder->allocated(id);
//   heap.store_ref(obj, field, target);
//   if (recorder) recorder->stored(obj, field, target);
//   if (recorder) recorder->collecting(roots, "allocation-failure");
//   collector.collect(roots, "allocation-failure");
//
// Heap itself knows nothing of tracing, so its allocation and barrier fast paths cost
// nothing when no trace is recorded. Object shapes and sizes are read from the heap,
// so the binding passes only ids. A root snapshot is written before a collection point
// only when the root set differs from the last one written. `snapshot_roots` at
// safepoints between collections is optional and only sharpens --heap replays.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "gc/heap/heap.hpp"
#include "heapgraph/trace/trace_writer.hpp"

namespace gcvm {

class TraceRecorder {
 public:
  /// Both must outlive the recorder.
  TraceRecorder(const Heap& heap, trace::TraceWriter& writer) : heap_(heap), writer_(writer) {}

  /// `id` was just allocated (any shape: object, reference array, scalar array).
  void allocated(ObjectId id);
  /// Reference `slot` (field or element index) of `source` was set to `target`.
  void stored(ObjectId source, std::uint64_t slot, ObjectId target) { writer_.store_ref(source, slot, target); }
  /// A collection with these roots follows (kNullRef entries are ignored).
  void collecting(std::span<const ObjectId> roots, std::string_view reason);
  /// The root set now (written only if it changed): optional between collections, it
  /// makes heap-budget replays free more (gc/trace/trace_replay.hpp).
  void snapshot_roots(std::span<const ObjectId> roots);
  /// Ends the trace (end event, flush).
  void finish() { writer_.end(); }

  const trace::TraceWriterTotals& totals() const { return writer_.totals(); }

 private:
  const Heap& heap_;
  trace::TraceWriter& writer_;
  std::vector<ObjectId> last_roots_;
  bool roots_written_ = false;
};

}  // namespace gcvm
