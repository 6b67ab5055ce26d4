#include "vm/runtime/boehm_heap_binding.hpp"

#include <stdexcept>

#include "gc/boehm/boehm_collector.hpp"

namespace gcvm::vm {

namespace {
constexpr const char* kLibgcTrigger = "libgc trigger";
}

BoehmHeapBinding::BoehmHeapBinding(std::uint64_t limit_bytes, unsigned markers)
    : heap_(markers), limit_bytes_(limit_bytes), next_reason_(kLibgcTrigger) {
  BoehmHeap::set_max_heap_bytes(limit_bytes);
  BoehmHeap::silence_warnings();
  heap_.set_collection_listener([this](const BoehmCollection& gc, const BoehmCensus& census) { record(gc, census); });
}

BoehmHeapBinding::~BoehmHeapBinding() {
  heap_.set_collection_listener(nullptr);
  heap_.set_root_source(nullptr);
}

void BoehmHeapBinding::attach_roots(std::function<void(std::vector<Ref>&)> source) {
  static_assert(std::is_same_v<Ref, std::uint64_t>, "the root source reports 64-bit words");
  heap_.set_root_source(std::move(source));
}

void BoehmHeapBinding::record(const BoehmCollection& gc, const BoehmCensus& census) {
  const std::uint64_t objects_before = objects_at_last_ + heap_.objects_allocated() - allocated_at_last_;
  objects_at_last_ = census.objects;
  allocated_at_last_ = heap_.objects_allocated();
  collections_.push_back(
      boehm_collection_stats(gc, census, objects_before, collections_.size() + 1, next_reason_));
  if (on_collection) on_collection(collections_.back());
}

const CollectionStats& BoehmHeapBinding::collect(std::span<const Ref> roots, std::string reason) {
  (void)roots;
  next_reason_ = std::move(reason);
  const std::size_t before = collections_.size();
  heap_.collect();
  next_reason_ = kLibgcTrigger;
  if (collections_.size() == before)
    throw std::logic_error("libgc did not collect (GC_gcollect returned without a collection event)");
  return collections_.back();
}

}  // namespace gcvm::vm
