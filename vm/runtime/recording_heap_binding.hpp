// The SOA heap binding that also records a heap trace (`gcvm run --record-trace`,
// docs/trace-format.md): the interpreter is instantiated over this type only when a
// trace is recorded, so the plain SoaHeapBinding, and the interpreter loop over it,
// keep no tracing code at all (zero cost when not recording; measured in
// docs/trace-format.md).
//
// It hides SoaHeapBinding's allocation, reference-store and collection functions (the
// only places where those happen, see soa_heap_binding.hpp) with versions that report
// to a TraceRecorder:
//   - allocate / allocate_array: after a successful allocation (a failed one, kNull, is
//     not an event; the interpreter collects and retries);
//   - store_ref / store_ref_field / store_element: after the write barrier, with the field index or
//     element index as the slot;
//   - collections: SoaHeapBinding::before_collection, right before each collection,
//     with the interpreter's precise roots (stack slots and reference globals); the
//     recorder writes them as a root snapshot when they changed since the last one,
//     then the collection point. Reasons are single words in a trace, so "heap full"
//     is recorded as "heap-full".
// Replaying the trace therefore collects at the same points from the same roots, and
// every collector marks and frees what the recorded run did. Under the generational
// plan the trace has the same collection points, each replayed as a full collection
// (a trace does not record generations), so a replay frees at least what the run did.
// Under the concurrent plan the collection points are the cycles' initial pauses (the
// snapshots; polls that start nothing are not recorded): a replay collects there what
// the cycle's lazy sweep frees later, exactly the objects unreachable at the snapshot.
#pragma once

#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "gc/trace/trace_recorder.hpp"
#include "heapgraph/trace/trace_writer.hpp"
#include "vm/runtime/soa_heap_binding.hpp"

namespace gcvm::vm {

class RecordingSoaHeapBinding : public SoaHeapBinding {
 public:
  /// `writer` must outlive the binding; call finish() once at the end of the run.
  RecordingSoaHeapBinding(HeapConfig config, std::unique_ptr<Marker> marker, bool verify, trace::TraceWriter& writer,
                          std::optional<GenerationalOptions> generational = std::nullopt,
                          std::optional<ConcurrentOptions> concurrent = std::nullopt, DeviceFallback fallback = {})
      : SoaHeapBinding(config, std::move(marker), verify, generational, concurrent, fallback),
        recorder_(heap(), writer) {
    before_collection = [this](std::span<const Ref> roots, const std::string& reason) {
      roots_.clear();
      for (const Ref r : roots) roots_.push_back(static_cast<ObjectId>(r));
      std::string word = reason;
      std::replace(word.begin(), word.end(), ' ', '-');
      recorder_.collecting(roots_, word);
    };
  }

  Ref allocate(ClassHandle cls) {
    const Ref ref = SoaHeapBinding::allocate(cls);
    if (ref != kNull) recorder_.allocated(static_cast<ObjectId>(ref));
    return ref;
  }
  Ref allocate_array(bool is_ref, std::uint64_t length) {
    const Ref ref = SoaHeapBinding::allocate_array(is_ref, length);
    if (ref != kNull) recorder_.allocated(static_cast<ObjectId>(ref));
    return ref;
  }
  void store_ref(Ref obj, FieldHandle f, Ref value) {
    SoaHeapBinding::store_ref(obj, f, value);
    recorder_.stored(static_cast<ObjectId>(obj), f.index, static_cast<ObjectId>(value));
  }
  void store_ref_field(Ref obj, std::uint32_t index, Ref value) {
    SoaHeapBinding::store_ref_field(obj, index, value);
    recorder_.stored(static_cast<ObjectId>(obj), index, static_cast<ObjectId>(value));
  }
  void store_element(Ref array, std::uint64_t index, Ref value) {
    SoaHeapBinding::store_element(array, index, value);
    recorder_.stored(static_cast<ObjectId>(array), index, static_cast<ObjectId>(value));
  }
  /// Ends the trace (its end event); call once, when the interpreter is done.
  void finish() { recorder_.finish(); }
  const trace::TraceWriterTotals& trace_totals() const { return recorder_.totals(); }

 private:
  TraceRecorder recorder_;
  std::vector<ObjectId> roots_;
};

}  // namespace gcvm::vm
