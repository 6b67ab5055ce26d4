// A HeapSink that builds synthetic heaps, traces and imported dumps in libgc's heap
// (BoehmHeap), so `gcvm mark --gc=boehm` marks the same graph the CSR markers mark.
//
// The handle table is plain malloc memory, which libgc does not scan: once built,
// only the roots (BoehmHeap's uncollectable root array) keep objects alive, so libgc
// must find the same reachable set as the serial marker (up to its conservative scan
// of stacks and registers; see boehm_heap.hpp).
#pragma once

#include <vector>

#include "gc/boehm/boehm_heap.hpp"
#include "heapgraph/heap_sink.hpp"

namespace gcvm {

class BoehmSink final : public HeapSink {
 public:
  explicit BoehmSink(BoehmHeap& heap) : heap_(heap) {}

  SinkHandle new_object(std::uint32_t ref_fields, std::uint32_t scalar_fields) override {
    objects_.push_back(heap_.new_object(ref_fields, scalar_fields));
    return objects_.size() - 1;
  }
  SinkHandle new_ref_array(std::uint64_t length) override {
    objects_.push_back(heap_.new_ref_array(length));
    return objects_.size() - 1;
  }
  void store_ref(SinkHandle source, std::uint64_t slot, SinkHandle target) override {
    BoehmHeap::store_ref(objects_[source], slot, target == kNoHandle ? nullptr : objects_[target]);
  }
  void add_root(SinkHandle object) override { heap_.add_root(objects_[object]); }

  std::uint64_t object_count() const { return objects_.size(); }
  void* object(SinkHandle handle) const { return objects_[handle]; }
  /// Drops the handle table (the objects stay, reachable only from the roots).
  void forget_handles() { objects_ = {}; }

 private:
  BoehmHeap& heap_;
  std::vector<void*> objects_;
};

}  // namespace gcvm
