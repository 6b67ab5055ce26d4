#include "gc/heap/heap_materializer.hpp"

#include <string>

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

}  // namespace gcvm
