// A HeapSink that really allocates in a Heap: synthetic heaps, traces and imported
// dumps become SOA objects, CSR vertices and barrier-recorded edges. Reference stores
// go through the heap's write barrier like a mutator's.
//
// A generated batch (heap_sink.hpp) is allocated on the calling thread, then its
// references are stored on `threads` threads. The stores of one thread write its own
// objects' fields and edge slots and mark them in the graph's change record, whose
// bits are plain (not atomic) words: so the batch is cut into tasks of at least one
// change-record summary word of edge slots (ChangeBitmap::kIndicesPerChunk * 64), and
// the even tasks run before the odd ones, so no two tasks that run at once touch one
// word. That needs the batch's edge ranges to rise with its handles (a heap's fresh
// blocks of one shape, the usual case; checked first); otherwise, and with
// generations (whose remembered set is not shared), the stores run on one thread. The
// heap is the same for any thread count.
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
  /// `threads` store generated batches (0: every hardware thread).
  explicit HeapMaterializer(Heap& heap, unsigned threads = 0) : heap_(heap), threads_(threads) {}

  SinkHandle new_object(std::uint32_t ref_fields, std::uint32_t scalar_fields) override;
  SinkHandle new_ref_array(std::uint64_t length) override;
  void store_ref(SinkHandle source, std::uint64_t slot, SinkHandle target) override;
  void add_root(SinkHandle object) override { roots_.push_back(objects_[object]); }
  SinkHandle new_generated_objects(std::uint64_t count, std::uint32_t ref_fields,
                                   const GeneratedTarget& target) override;

  const std::vector<ObjectId>& roots() const { return roots_; }
  std::vector<ObjectId>& roots() { return roots_; }
  ObjectId object(SinkHandle handle) const { return objects_[handle]; }
  std::uint64_t object_count() const { return objects_.size(); }

 private:
  SinkHandle remember(ObjectId id, const char* what);
  /// True where the edge ranges of objects_[first, first + count) rise with the handles.
  bool edges_rise(SinkHandle first, std::uint64_t count, std::uint32_t ref_fields) const;
  Heap& heap_;
  unsigned threads_;
  std::vector<ObjectId> objects_;
  std::vector<ObjectId> roots_;
};

}  // namespace gcvm
