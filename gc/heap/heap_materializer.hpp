// A HeapSink that really allocates in a Heap: synthetic heaps, traces and imported
// dumps become SOA objects, CSR vertices and barrier-recorded edges. Reference stores
// go through the heap's write barrier like a mutator's.
#pragma once

#include <stdexcept>
#include <vector>

#include "gc/heap/heap.hpp"
#include "heapgraph/heap_sink.hpp"

namespace gcvm {

class HeapExhausted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class HeapMaterializer final : public HeapSink {
 public:
  explicit HeapMaterializer(Heap& heap) : heap_(heap) {}

  SinkHandle new_object(std::uint32_t ref_fields, std::uint32_t scalar_fields) override;
  SinkHandle new_ref_array(std::uint64_t length) override;
  void store_ref(SinkHandle source, std::uint64_t slot, SinkHandle target) override;
  void add_root(SinkHandle object) override { roots_.push_back(objects_[object]); }

  const std::vector<ObjectId>& roots() const { return roots_; }
  std::vector<ObjectId>& roots() { return roots_; }
  ObjectId object(SinkHandle handle) const { return objects_[handle]; }
  std::uint64_t object_count() const { return objects_.size(); }

 private:
  SinkHandle remember(ObjectId id, const char* what);
  Heap& heap_;
  std::vector<ObjectId> objects_;
  std::vector<ObjectId> roots_;
};

}  // namespace gcvm
