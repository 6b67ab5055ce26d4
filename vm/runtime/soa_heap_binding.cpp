#include "vm/runtime/soa_heap_binding.hpp"

namespace gcvm::vm {

SoaHeapBinding::SoaHeapBinding(HeapConfig config, std::unique_ptr<Marker> marker, bool verify)
    : heap_(config), collector_(heap_, std::move(marker), verify) {}

SoaHeapBinding::ClassHandle SoaHeapBinding::register_class(std::uint32_t ref_fields, std::uint32_t scalar_fields) {
  const ShapeId shape = heap_.shapes().intern(ref_fields, scalar_fields);
  if (object_bytes_.size() <= shape) object_bytes_.resize(shape + 1, 0);
  object_bytes_[shape] = std::uint64_t{ref_fields} * 4 + std::uint64_t{scalar_fields} * 8;
  return shape;
}

const CollectionStats& SoaHeapBinding::collect(std::span<const Ref> roots, std::string reason) {
  root_ids_.clear();
  for (const Ref r : roots) root_ids_.push_back(id(r));
  collections_.push_back(collector_.collect(root_ids_, std::move(reason)));
  if (on_collection) on_collection(collections_.back());
  return collections_.back();
}

}  // namespace gcvm::vm
