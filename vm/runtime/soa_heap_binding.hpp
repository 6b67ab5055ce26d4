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
//                  generational plan young or full as its policy decides)
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
// - The plan is mark-sweep (every collection full) or generational
//   (gc/plans/generational_policy.hpp): allocation then also spends a nursery budget, and
//   returns kNull when it is spent, so the interpreter stops at a collection point
//   exactly as for a full heap; collect() asks the policy which collection to run.
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
  /// else mark-sweep. Throws std::invalid_argument for generational options out of range.
  SoaHeapBinding(HeapConfig config, std::unique_ptr<Marker> marker, bool verify,
                 std::optional<GenerationalOptions> generational = std::nullopt);

  ClassHandle register_class(std::uint32_t ref_fields, std::uint32_t scalar_fields);
  FieldHandle field_handle(ClassHandle cls, bool is_ref, std::uint32_t index) const {
    const ShapeLayout& layout = heap_.shapes().layout(cls);
    return {index, is_ref ? layout.ref_offset(index) : layout.scalar_field_offset(index)};
  }

  Ref allocate(ClassHandle cls) {
    if (nursery_used_ >= nursery_limit_) [[unlikely]]
      return nursery_spent();
    const ObjectId id = heap_.allocate(cls);
    if (id == kNullRef) return kNull;
    ++totals_.objects;
    totals_.bytes += object_bytes_[cls];
    nursery_used_ += slot_bytes_[cls];
    return id;
  }
  Ref allocate_array(bool is_ref, std::uint64_t length) {
    if (length > Heap::kMaxArrayLength) return kNull;
    if (nursery_used_ >= nursery_limit_) [[unlikely]]
      return nursery_spent();
    const ObjectId id = is_ref ? heap_.allocate_ref_array(length) : heap_.allocate_scalar_array(length);
    if (id == kNullRef) return kNull;
    ++totals_.arrays;
    const std::uint64_t element_bytes = length * (is_ref ? sizeof(ObjectId) : 8);
    totals_.bytes += kArrayHeaderBytes + element_bytes;
    nursery_used_ += kArraySlotBytes + element_bytes;
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

  /// A collection (full, or what the generational policy decides); `on_collection` (if
  /// set) sees its statistics.
  const CollectionStats& collect(std::span<const Ref> roots, std::string reason);
  bool full_collection_may_help() const {
    return !collections_.empty() && collections_.back().kind == CollectionKind::Young;
  }
  /// "marksweep" or "generational".
  std::string_view plan_name() const { return policy_ ? "generational" : "marksweep"; }
  const GenerationalPolicy* policy() const { return policy_ ? &*policy_ : nullptr; }
  std::function<void(const CollectionStats&)> on_collection;

  std::uint64_t used_bytes() const { return heap_.used_bytes(); }
  std::uint64_t limit_bytes() const { return heap_.limit_bytes(); }
  const AllocationTotals& totals() const { return totals_; }
  const std::vector<CollectionStats>& collections() const { return collections_; }
  std::string_view collector_name() const { return collector_.marker().name(); }
  Heap& heap() { return heap_; }

 private:
  static ObjectId id(Ref ref) { return static_cast<ObjectId>(ref); }
  /// An array header's slot in the heap (array shapes fill 64 slots per block).
  static constexpr std::uint64_t kArraySlotBytes = kBlockBytes / 64;
  Ref nursery_spent() {
    nursery_spent_ = true;
    return kNull;
  }

  Heap heap_;
  Collector collector_;
  std::optional<GenerationalPolicy> policy_;
  std::vector<std::uint64_t> object_bytes_;  // by ShapeId
  std::vector<std::uint64_t> slot_bytes_;    // by ShapeId: heap bytes of one slot
  std::uint64_t nursery_used_ = 0;            // heap bytes allocated since the last collection
  std::uint64_t nursery_limit_ = UINT64_MAX;  // the nursery (generational plan)
  bool nursery_spent_ = false;                // the mutator stopped on the nursery budget
  std::vector<ObjectId> root_ids_;
  std::vector<CollectionStats> collections_;
  AllocationTotals totals_;
};

}  // namespace gcvm::vm
