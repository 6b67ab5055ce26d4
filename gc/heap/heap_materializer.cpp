#include "gc/heap/heap_materializer.hpp"

#include <algorithm>
#include <string>

#include "gc/util/thread_pool.hpp"
#include "heapgraph/change_bitmap.hpp"

namespace gcvm {

SinkHandle HeapMaterializer::remember(ObjectId id, const char* what) {
  if (id == kNullRef)
    throw HeapExhausted(std::string("heap exhausted allocating ") + what + " number " + std::to_string(objects_.size() + 1) +
                        " (limit " + std::to_string(heap_.limit_bytes()) + " bytes, " +
                        std::to_string(heap_.used_bytes()) + " in use)");
  objects_.push_back(id);
  return objects_.size() - 1;
}

SinkHandle HeapMaterializer::new_object(std::uint32_t ref_fields, std::uint32_t scalar_fields) {
  return remember(heap_.allocate(heap_.shapes().intern(ref_fields, scalar_fields)), "object");
}

SinkHandle HeapMaterializer::new_ref_array(std::uint64_t length) {
  return remember(heap_.allocate_ref_array(length), "array");
}

void HeapMaterializer::store_ref(SinkHandle source, std::uint64_t slot, SinkHandle target) {
  const ObjectId from = objects_[source];
  const ObjectId to = target == kNoHandle ? kNullRef : objects_[target];
  if (heap_.shape_of(from) == ShapeTable::kRefArray)
    heap_.store_element(from, slot, to);
  else
    heap_.store_ref(from, static_cast<std::uint32_t>(slot), to);
}

bool HeapMaterializer::edges_rise(SinkHandle first, std::uint64_t count, std::uint32_t ref_fields) const {
  const RefGraph& graph = heap_.graph();
  for (std::uint64_t i = 1; i < count; ++i)
    if (graph.begin(objects_[first + i]) < graph.begin(objects_[first + i - 1]) + ref_fields) return false;
  return true;
}

SinkHandle HeapMaterializer::new_generated_objects(std::uint64_t count, std::uint32_t ref_fields,
                                                   const GeneratedTarget& target) {
  if (count == 0) return kNoHandle;
  const ShapeId shape = heap_.shapes().intern(ref_fields, 0);
  const SinkHandle first = objects_.size();
  objects_.reserve(first + count);
  for (std::uint64_t i = 0; i < count; ++i) remember(heap_.allocate(shape), "object");
  if (ref_fields == 0) return first;

  const ObjectId* ids = objects_.data() + first;
  // A fresh heap gives the batch consecutive ids: then a target's id is computed, not
  // looked up (one cache miss less per reference of a heap of 10^9 objects).
  bool consecutive = true;
  for (std::uint64_t i = 1; i < count && consecutive; ++i) consecutive = ids[i] == ids[0] + i;
  auto store_range = [&](std::uint64_t from, std::uint64_t to) {
    for (std::uint64_t i = from; i < to; ++i)
      for (std::uint32_t slot = 0; slot < ref_fields; ++slot) {
        const SinkHandle t = target(i, slot);
        const ObjectId to_id = t == kNoHandle ? kNullRef : consecutive ? ids[0] + static_cast<ObjectId>(t) : ids[t];
        heap_.store_ref(ids[i], slot, to_id);
      }
  };
  ThreadPool pool(threads_);
  if (pool.size() == 1 || heap_.generations() != nullptr || !edges_rise(first, count, ref_fields)) {
    store_range(0, count);
    return first;
  }
  constexpr std::uint64_t kWordEdges = ChangeBitmap::kIndicesPerChunk * 64;  // one summary word
  const std::uint64_t per_task = std::max<std::uint64_t>((kWordEdges + ref_fields - 1) / ref_fields, 4096);
  const std::uint64_t tasks = (count + per_task - 1) / per_task;
  for (std::uint64_t parity = 0; parity < 2; ++parity)
    pool.for_each_task((tasks + 1 - parity) / 2, [&](std::uint64_t t) {
      const std::uint64_t task = 2 * t + parity;
      store_range(task * per_task, std::min(count, (task + 1) * per_task));
    });
  return first;
}

}  // namespace gcvm
