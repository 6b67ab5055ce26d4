// The interpreter's heap binding for `gcvm run --gc=boehm`: guest objects live in
// libgc's heap (gc/boehm/boehm_heap.hpp) and are collected by libgc's own parallel
// mark-sweep, with the marker count from --gc-threads. It provides the names of the
// binding contract (vm/runtime/soa_heap_binding.hpp), so the same guest program runs
// unchanged under libgc.
//
// Layout: a Ref is the address of a BoehmHeap object (its header word) as 64 bits;
// kNull is 0. Objects of classes with references are GC_MALLOC or typed
// GC_MALLOC_EXPLICITLY_TYPED (only reference words scanned), scalar-only objects and
// scalar arrays GC_MALLOC_ATOMIC, reference arrays GC_MALLOC (BoehmHeap decides).
// A FieldHandle is the word offset of the field from the object's header.
//
// Collections: libgc collects when *it* decides, inside an allocation (its own
// trigger, GC_free_space_divisor), and when the interpreter asks (`gc`, or "heap
// full" after an allocation returned kNull). Hence kCollectsInAllocation: the
// interpreter saves its registers before every allocation and installs a root source
// (attach_roots) that libgc calls at the start of every collection. Roots are thus
// exactly the interpreter's precise roots (stack maps and reference globals), pushed
// as a word list; libgc's conservative scan of the C stacks still runs (it cannot be
// turned off) but correctness never depends on it: it can only retain more.
//
// Limits: --heap is GC_set_max_heap_size. libgc objects carry a header word and are
// rounded to 16-byte granules, so a guest needs more heap under libgc than on the
// SOA heap (4-byte references); an allocation libgc cannot satisfy within the limit
// (after its own collection) returns kNull, and the interpreter reports out of memory.
//
// Statistics: one CollectionStats per libgc collection, automatic ones included
// (BoehmHeap's collection listener; reason "libgc trigger" for those), in the form
// of gc/boehm/boehm_collector.hpp, so --gc-log and --stats print them like any other.
// libgc is one per process: one BoehmHeapBinding at a time, and its marker count is
// the first BoehmHeap's (`markers()`).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "gc/boehm/boehm_heap.hpp"
#include "gc/plans/collector.hpp"
#include "gc/heap/heap_materializer.hpp"
#include "vm/runtime/soa_heap_binding.hpp"

namespace gcvm::vm {

class BoehmHeapBinding {
 public:
  using Ref = std::uint64_t;
  struct ClassHandle {
    std::uint32_t ref_fields;
    std::uint32_t scalar_fields;
  };
  struct FieldHandle {
    std::uint32_t word;  // from the header
  };
  static constexpr Ref kNull = 0;
  static constexpr bool kCollectsInAllocation = true;
  /// What `gcvm run` reports as the reference-graph mode: libgc keeps none.
  static constexpr const char* kRefGraph = "none";
  static_assert(sizeof(void*) == sizeof(Ref), "a Ref holds a libgc address");

  /// `limit_bytes` caps libgc's heap; `markers` = 0 lets libgc use every core.
  BoehmHeapBinding(std::uint64_t limit_bytes, unsigned markers);
  ~BoehmHeapBinding();
  BoehmHeapBinding(const BoehmHeapBinding&) = delete;
  BoehmHeapBinding& operator=(const BoehmHeapBinding&) = delete;

  ClassHandle register_class(std::uint32_t ref_fields, std::uint32_t scalar_fields) {
    return {ref_fields, scalar_fields};
  }
  FieldHandle field_handle(ClassHandle cls, bool is_ref, std::uint32_t index) const {
    return {1 + (is_ref ? index : cls.ref_fields + index)};
  }

  Ref allocate(ClassHandle cls) {
    void* object = nullptr;
    try {
      object = heap_.new_object(cls.ref_fields, cls.scalar_fields);
    } catch (const HeapExhausted&) {
      return kNull;
    }
    ++totals_.objects;
    totals_.bytes += (1 + std::uint64_t{cls.ref_fields} + cls.scalar_fields) * sizeof(std::uint64_t);
    return ref(object);
  }
  Ref allocate_array(bool is_ref, std::uint64_t length) {
    if (length > BoehmHeap::kLengthMask) return kNull;
    void* array = nullptr;
    try {
      array = is_ref ? heap_.new_ref_array(length) : heap_.new_scalar_array(length);
    } catch (const HeapExhausted&) {
      return kNull;
    }
    ++totals_.arrays;
    totals_.bytes += (1 + length) * sizeof(std::uint64_t);
    return ref(array);
  }

  Ref load_ref(Ref obj, FieldHandle f) const { return words(obj)[f.word]; }
  /// No barrier: libgc here is neither incremental nor generational.
  void store_ref(Ref obj, FieldHandle f, Ref value) { words(obj)[f.word] = value; }
  std::uint64_t load_scalar(Ref obj, FieldHandle f) const { return words(obj)[f.word]; }
  void store_scalar(Ref obj, FieldHandle f, std::uint64_t value) { words(obj)[f.word] = value; }

  Ref load_ref_field(Ref obj, std::uint32_t index) const { return words(obj)[1 + index]; }
  void store_ref_field(Ref obj, std::uint32_t index, Ref value) { words(obj)[1 + index] = value; }
  std::uint64_t load_scalar_field(Ref obj, std::uint32_t index) const {
    return BoehmHeap::scalars(reinterpret_cast<void*>(obj))[index];
  }
  void store_scalar_field(Ref obj, std::uint32_t index, std::uint64_t value) {
    BoehmHeap::scalars(reinterpret_cast<void*>(obj))[index] = value;
  }

  std::uint64_t array_length(Ref array) const { return words(array)[0] & BoehmHeap::kLengthMask; }
  Ref load_element(Ref array, std::uint64_t index) const { return words(array)[1 + index]; }
  void store_element(Ref array, std::uint64_t index, Ref value) { words(array)[1 + index] = value; }
  std::uint64_t load_scalar_element(Ref array, std::uint64_t index) const { return words(array)[1 + index]; }
  void store_scalar_element(Ref array, std::uint64_t index, std::uint64_t value) { words(array)[1 + index] = value; }

  /// The interpreter's root source: appends its current roots. Called by libgc at the
  /// start of every collection until detached (an empty function).
  void attach_roots(std::function<void(std::vector<Ref>&)> source);

  /// A full libgc collection (GC_gcollect). `roots` are what the attached source
  /// reports at this point; libgc takes them from there.
  const CollectionStats& collect(std::span<const Ref> roots, std::string reason);
  /// libgc's collections are always full.
  bool full_collection_may_help() const { return false; }
  std::function<void(const CollectionStats&)> on_collection;

  std::uint64_t used_bytes() const { return BoehmHeap::in_use_bytes(); }
  std::uint64_t limit_bytes() const { return limit_bytes_; }
  const AllocationTotals& totals() const { return totals_; }
  const std::vector<CollectionStats>& collections() const { return collections_; }
  std::string_view collector_name() const { return "boehm"; }
  static unsigned markers() { return BoehmHeap::markers(); }

 private:
  static std::uint64_t* words(Ref ref) { return reinterpret_cast<std::uint64_t*>(ref); }
  static Ref ref(void* object) { return reinterpret_cast<Ref>(object); }
  void record(const BoehmCollection& gc, const BoehmCensus& census);

  BoehmHeap heap_;
  std::uint64_t limit_bytes_;
  std::string next_reason_;
  std::uint64_t objects_at_last_ = 0;  // census objects of the last collection
  std::uint64_t allocated_at_last_ = 0;
  std::vector<CollectionStats> collections_;
  AllocationTotals totals_;
};

}  // namespace gcvm::vm
