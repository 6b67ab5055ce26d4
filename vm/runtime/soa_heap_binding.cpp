#include "vm/runtime/soa_heap_binding.hpp"

namespace gcvm::vm {

namespace {

HeapConfig with_generations(HeapConfig config, const std::optional<GenerationalOptions>& generational) {
  if (generational) config.promotion_age = generational->promotion_age;
  return config;
}

}  // namespace

SoaHeapBinding::SoaHeapBinding(HeapConfig config, std::unique_ptr<Marker> marker, bool verify,
                               std::optional<GenerationalOptions> generational)
    : heap_(with_generations(config, generational)), collector_(heap_, std::move(marker), verify) {
  if (generational) {
    policy_.emplace(*generational, heap_.limit_bytes());
    nursery_limit_ = policy_->nursery_bytes();
  }
}

SoaHeapBinding::ClassHandle SoaHeapBinding::register_class(std::uint32_t ref_fields, std::uint32_t scalar_fields) {
  const ShapeId shape = heap_.shapes().intern(ref_fields, scalar_fields);
  if (object_bytes_.size() <= shape) object_bytes_.resize(shape + 1, 0);
  object_bytes_[shape] = std::uint64_t{ref_fields} * 4 + std::uint64_t{scalar_fields} * 8;
  if (slot_bytes_.size() <= shape) slot_bytes_.resize(shape + 1, 0);
  slot_bytes_[shape] = kBlockBytes / heap_.shapes().layout(shape).capacity;
  return shape;
}

const CollectionStats& SoaHeapBinding::collect(std::span<const Ref> roots, std::string reason) {
  root_ids_.clear();
  for (const Ref r : roots) root_ids_.push_back(id(r));
  CollectionKind kind = CollectionKind::Full;
  if (policy_) {
    auto decision = policy_->decide(nursery_spent_, heap_.used_bytes(), reason);
    kind = decision.kind;
    reason = std::move(decision.reason);
  }
  nursery_spent_ = false;
  nursery_used_ = 0;
  collections_.push_back(collector_.collect(root_ids_, std::move(reason), kind));
  if (on_collection) on_collection(collections_.back());
  return collections_.back();
}

}  // namespace gcvm::vm
