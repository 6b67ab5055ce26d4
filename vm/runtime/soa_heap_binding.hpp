// The VM's one interface to the garbage collector (DESIGN.md: shapes, allocation,
// barrier, root enumeration), after MMTk's VMBinding. The interpreter is a template
// over a binding type, so every heap access is a direct, inlinable call; this is the
// binding of `gcvm run` (the SOA heap with a Collector and a marker from make_marker);
// with --record-trace the interpreter is instantiated over RecordingSoaHeapBinding.
//
// What a binding provides (vm/runtime/boehm_heap_binding.hpp provides the same names):
//   Ref            a guest reference as a 64-bit value; kNull is the null reference
//   ClassHandle    what register_class returns for a guest class
//   FieldHandle    what field_handle returns for one field of a registered class
//   register_class(ref_fields, scalar_fields), field_handle(cls, is_ref, index)
//   allocate(cls), allocate_array(is_ref, length)   kNull when the heap is full: the
//                  interpreter then collects (it owns the roots) and retries, once
//                  more after a young collection (full_collection_may_help)
//   load_ref/store_ref, load_scalar/store_scalar      object fields, by FieldHandle
//   load_ref_field/store_ref_field, load_scalar_field/store_scalar_field   the same by
//                  field index, for an object whose class is only known up to a
//                  superclass (the layout comes from the object; a subclass keeps its
//                  superclass's fields at the same indices)
//   array_length, load_element/store_element, load_scalar_element/store_scalar_element
//   collect(roots, reason)   a collection from exactly these roots (full, or under the
//                  generational plan young or full as its policy decides; under the
//                  concurrent plan a poll, a cycle's start or end, or a whole cycle)
//   full_collection_may_help()  true if the last collection was partial (young), so
//                  that an allocation that still fails should collect once more (full)
//   used_bytes(), limit_bytes(), totals()                  heap statistics
//   kCollectsInAllocation   true if allocate may collect (then also attach_roots(source))
//
// Invariants of this binding:
// - A Ref is an ObjectId (DESIGN.md 1) zero-extended to 64 bits; kNull is kNullRef.
// - store_ref and store_element are the only ways a reference enters the heap; they
//   are gcvm's single write barrier (Heap::store_ref / Heap::store_element), so in
//   barrier mode the CSR is current at every collection (DESIGN.md 3).
// - The plan is mark-sweep (every collection full), generational
//   (gc/plans/generational_policy.hpp) or concurrent (gc/plans/concurrent_policy.hpp).
//   The last two give allocation a budget (the nursery; the bytes until the next poll)
//   and it returns kNull when the budget is spent, so the interpreter stops at a
//   collection point exactly as for a full heap; collect() then asks the policy what
//   to do. Under the concurrent plan a spent budget is a poll: start a cycle when the
//   heap reached the trigger, apply a cycle whose mark has finished, or nothing. A full
//   heap waits for a cycle in flight (a stall), and once the cycle is applied
//   full_collection_may_help() asks for one more collection, which, with no cycle in
//   flight, is a whole cycle whose mark the mutator waits for; so is the `gc`
//   instruction (after applying a cycle in flight). A cycle whose device failed ends
//   in a stop-the-world fallback collection where its final pause would be, or at
//   once when it failed in its initial pause (gc/plans/concurrent_collector.hpp).
// - Every collection point that collects, under every plan, calls `before_collection`
//   (if set) with the roots and reason first (a concurrent cycle: at its initial pause;
//   polls that collect nothing do not call it; a fallback collection at a cycle's
//   end calls it again, after collecting, with the roots it collected from: nothing
//   ran in between, so a recorded trace replays a collection there).
// - Allocation, reference stores and collections each happen in exactly one function
//   here; RecordingSoaHeapBinding (recording_heap_binding.hpp) wraps exactly these to
//   record a heap trace, so this binding has no tracing code at all.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gc/plans/collector.hpp"
#include "gc/plans/concurrent_collector.hpp"
#include "gc/plans/concurrent_policy.hpp"
#include "gc/plans/generational_policy.hpp"
#include "gc/heap/heap.hpp"
#include "gc/markers/marker.hpp"

namespace gcvm::vm {

/// Allocation volume since the start of the run.
struct AllocationTotals {
  std::uint64_t objects = 0;
  std::uint64_t arrays = 0;
  std::uint64_t bytes = 0;  // object payload (4 B per ref field, 8 B per scalar) + array headers and elements
};

class SoaHeapBinding {
 public:
  using Ref = std::uint64_t;
  using ClassHandle = ShapeId;
  /// A field's index (its CSR edge slot, for the barrier) and its byte offset in the
  /// block of its class's shape.
  struct FieldHandle {
    std::uint32_t index;
    std::uint32_t offset;
  };
  static constexpr Ref kNull = kNullRef;
  static constexpr std::uint64_t kArrayHeaderBytes = 16;
  /// Collections happen only in collect(), never inside an allocation.
  static constexpr bool kCollectsInAllocation = false;

  /// With `generational`, the generational plan (config.promotion_age is set from it);
  /// with `concurrent`, the concurrent plan; else mark-sweep. `fallback`: what a device
  /// error does (gc/plans/device_fallback.hpp). Throws std::invalid_argument for options
  /// out of range or both plans at once.
  SoaHeapBinding(HeapConfig config, std::unique_ptr<Marker> marker, bool verify,
                 std::optional<GenerationalOptions> generational = std::nullopt,
                 std::optional<ConcurrentOptions> concurrent = std::nullopt, DeviceFallback fallback = {});
  ~SoaHeapBinding();

  ClassHandle register_class(std::uint32_t ref_fields, std::uint32_t scalar_fields);
  FieldHandle field_handle(ClassHandle cls, bool is_ref, std::uint32_t index) const {
    const ShapeLayout& layout = heap_.shapes().layout(cls);
    return {index, is_ref ? layout.ref_offset(index) : layout.scalar_field_offset(index)};
  }

  Ref allocate(ClassHandle cls) {
    if (budget_used_ >= budget_limit_) [[unlikely]]
      return budget_spent();
    const ObjectId id = heap_.allocate(cls);
    if (id == kNullRef) return kNull;
    ++totals_.objects;
    totals_.bytes += object_bytes_[cls];
    budget_used_ += slot_bytes_[cls];
    return id;
  }
  Ref allocate_array(bool is_ref, std::uint64_t length) {
    if (length > Heap::kMaxArrayLength) return kNull;
    if (budget_used_ >= budget_limit_) [[unlikely]]
      return budget_spent();
    const ObjectId id = is_ref ? heap_.allocate_ref_array(length) : heap_.allocate_scalar_array(length);
    if (id == kNullRef) return kNull;
    ++totals_.arrays;
    const std::uint64_t element_bytes = length * (is_ref ? sizeof(ObjectId) : 8);
    totals_.bytes += kArrayHeaderBytes + element_bytes;
    budget_used_ += kArraySlotBytes + element_bytes;
    return id;
  }

  Ref load_ref(Ref obj, FieldHandle f) const { return heap_.load_ref_at(id(obj), f.offset); }
  /// The write barrier for fields.
  void store_ref(Ref obj, FieldHandle f, Ref value) { heap_.store_ref_at(id(obj), f.index, f.offset, id(value)); }
  std::uint64_t load_scalar(Ref obj, FieldHandle f) const { return heap_.load_scalar_at(id(obj), f.offset); }
  void store_scalar(Ref obj, FieldHandle f, std::uint64_t value) { heap_.store_scalar_at(id(obj), f.offset, value); }

  Ref load_ref_field(Ref obj, std::uint32_t index) const { return heap_.load_ref(id(obj), index); }
  /// The write barrier for fields, by index.
  void store_ref_field(Ref obj, std::uint32_t index, Ref value) { heap_.store_ref(id(obj), index, id(value)); }
  std::uint64_t load_scalar_field(Ref obj, std::uint32_t index) const { return heap_.load_scalar(id(obj), index); }
  void store_scalar_field(Ref obj, std::uint32_t index, std::uint64_t value) {
    heap_.store_scalar(id(obj), index, value);
  }

  std::uint64_t array_length(Ref array) const { return heap_.array_length(id(array)); }
  Ref load_element(Ref array, std::uint64_t index) const { return heap_.load_element(id(array), index); }
  /// The write barrier for reference arrays.
  void store_element(Ref array, std::uint64_t index, Ref value) { heap_.store_element(id(array), index, id(value)); }
  std::uint64_t load_scalar_element(Ref array, std::uint64_t index) const {
    return heap_.load_scalar_element(id(array), index);
  }
  void store_scalar_element(Ref array, std::uint64_t index, std::uint64_t value) {
    heap_.store_scalar_element(id(array), index, value);
  }

  /// A collection (full, or what the plan's policy decides); `on_collection` (if set)
  /// sees the statistics of every collection or cycle it completes.
  void collect(std::span<const Ref> roots, std::string reason);
  bool full_collection_may_help() const { return collect_again_; }
  /// The concurrent plan: applies a cycle still in flight (waiting for its mark), so
  /// that every cycle started is reported, then finishes the last cycle's lazy sweep,
  /// so that the heap in use at exit and the lazy-sweep figures count every cycle. For
  /// the end of a run.
  void finish_cycles();
  /// The concurrent plan, after finish_cycles: the last cycle's lazy sweep (what
  /// allocations swept of it after its final pause and what finish_cycles swept),
  /// which no cycle's figures report; nullopt under the other plans.
  std::optional<LazySweepTotals> exit_lazy_sweep() const { return exit_lazy_sweep_; }
  /// "marksweep", "generational" or "concurrent".
  std::string_view plan_name() const {
    return policy_ ? "generational" : concurrent_ ? "concurrent" : "marksweep";
  }
  const GenerationalPolicy* policy() const { return policy_ ? &*policy_ : nullptr; }
  const ConcurrentPolicy* concurrent_policy() const { return concurrent_policy_ ? &*concurrent_policy_ : nullptr; }
  std::function<void(const CollectionStats&)> on_collection;
  std::function<void(std::span<const Ref> roots, const std::string& reason)> before_collection;

  std::uint64_t used_bytes() const { return heap_.used_bytes(); }
  std::uint64_t limit_bytes() const { return heap_.limit_bytes(); }
  const AllocationTotals& totals() const { return totals_; }
  const std::vector<CollectionStats>& collections() const { return collections_; }
  std::string_view collector_name() const {
    return concurrent_ ? concurrent_->marker().name() : collector_->marker().name();
  }
  Heap& heap() { return heap_; }

 private:
  static ObjectId id(Ref ref) { return static_cast<ObjectId>(ref); }
  /// An array header's slot in the heap (array shapes fill 64 slots per block).
  static constexpr std::uint64_t kArraySlotBytes = kBlockBytes / 64;
  Ref budget_spent() {
    budget_spent_ = true;
    return kNull;
  }
  /// The concurrent plan: a spent poll budget, and a collection asked for.
  void poll();
  void collect_concurrent(std::string reason);
  /// The concurrent plan's final pause of the cycle in flight (waiting for its mark);
  /// records it. `concurrent`: the mutator ran during the mark (the policy learns from it).
  void finish_cycle(bool concurrent);
  /// The concurrent plan's initial pause; false when no cycle is in flight after it
  /// (the device failed and a fallback collection was recorded instead).
  bool start_cycle(std::string reason);
  /// The budget until the next poll (concurrent plan).
  void set_poll_budget();
  void record(CollectionStats stats);

  Heap heap_;
  std::unique_ptr<Collector> collector_;             // marksweep and generational
  std::unique_ptr<ConcurrentCollector> concurrent_;  // concurrent
  std::optional<GenerationalPolicy> policy_;
  std::optional<ConcurrentPolicy> concurrent_policy_;
  std::vector<std::uint64_t> object_bytes_;  // by ShapeId
  std::vector<std::uint64_t> slot_bytes_;    // by ShapeId: heap bytes of one slot
  std::uint64_t budget_used_ = 0;            // heap bytes allocated since the budget was set
  std::uint64_t budget_limit_ = UINT64_MAX;  // the nursery (generational) or the poll distance (concurrent)
  bool budget_spent_ = false;                // the mutator stopped on the budget
  bool collect_again_ = false;               // full_collection_may_help()
  std::uint64_t allocated_since_snapshot_ = 0;  // concurrent: budget bytes since the cycle in flight started
  std::vector<ObjectId> root_ids_;
  std::span<const Ref> roots_;  // the roots of the collect() call in progress
  std::vector<CollectionStats> collections_;
  AllocationTotals totals_;
  std::optional<LazySweepTotals> exit_lazy_sweep_;
};

}  // namespace gcvm::vm
