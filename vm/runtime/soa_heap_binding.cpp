#include "vm/runtime/soa_heap_binding.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <utility>

namespace gcvm::vm {

namespace {

HeapConfig with_generations(HeapConfig config, const std::optional<GenerationalOptions>& generational) {
  if (generational) config.promotion_age = generational->promotion_age;
  return config;
}

}  // namespace

SoaHeapBinding::SoaHeapBinding(HeapConfig config, std::unique_ptr<Marker> marker, bool verify,
                               std::optional<GenerationalOptions> generational,
                               std::optional<ConcurrentOptions> concurrent, DeviceFallback fallback)
    : heap_(with_generations(config, generational)) {
  if (generational && concurrent) throw std::invalid_argument("the generational and concurrent plans are exclusive");
  if (concurrent) {
    concurrent_policy_.emplace(*concurrent, heap_.limit_bytes());
    concurrent_ = std::make_unique<ConcurrentCollector>(heap_, std::move(marker), verify, fallback);
    set_poll_budget();
    return;
  }
  collector_ = std::make_unique<Collector>(heap_, std::move(marker), verify, fallback);
  if (generational) {
    policy_.emplace(*generational, heap_.limit_bytes());
    budget_limit_ = policy_->nursery_bytes();
  }
}

SoaHeapBinding::~SoaHeapBinding() = default;

SoaHeapBinding::ClassHandle SoaHeapBinding::register_class(std::uint32_t ref_fields, std::uint32_t scalar_fields) {
  const ShapeId shape = heap_.shapes().intern(ref_fields, scalar_fields);
  if (object_bytes_.size() <= shape) object_bytes_.resize(shape + 1, 0);
  object_bytes_[shape] = ShapeTable::object_bytes(ref_fields, scalar_fields);
  if (slot_bytes_.size() <= shape) slot_bytes_.resize(shape + 1, 0);
  slot_bytes_[shape] = kBlockBytes / heap_.shapes().layout(shape).capacity;
  return shape;
}

void SoaHeapBinding::collect(std::span<const Ref> roots, std::string reason) {
  root_ids_.clear();
  for (const Ref r : roots) root_ids_.push_back(id(r));
  roots_ = roots;
  const bool spent = std::exchange(budget_spent_, false);
  collect_again_ = false;
  if (concurrent_) {
    if (spent)
      poll();
    else
      collect_concurrent(std::move(reason));
    return;
  }
  CollectionKind kind = CollectionKind::Full;
  if (before_collection) before_collection(roots, reason);
  if (policy_) {
    auto decision = policy_->decide(spent, heap_.used_bytes(), reason);
    kind = decision.kind;
    reason = std::move(decision.reason);
  }
  budget_used_ = 0;
  record(collector_->collect(root_ids_, std::move(reason), kind));
  collect_again_ = kind == CollectionKind::Young;
}

void SoaHeapBinding::poll() {
  if (concurrent_->in_flight()) {
    if (concurrent_->mark_done()) finish_cycle(true);
  } else if (heap_.used_bytes() >= concurrent_policy_->trigger_bytes()) {
    heap_.finish_lazy_sweep();  // the last cycle's garbage first: it may bring the heap below the trigger
    const std::uint64_t used = heap_.used_bytes();
    if (used >= concurrent_policy_->trigger_bytes())
      start_cycle(fmt::format("heap {}% used", used * 100 / heap_.limit_bytes()));
  }
  set_poll_budget();
  collect_again_ = true;  // the retried allocation may still find the heap full
}

void SoaHeapBinding::collect_concurrent(std::string reason) {
  if (concurrent_->in_flight()) {
    finish_cycle(true);
    if (reason == "heap full") {  // the retry may fit now; else a whole cycle (full_collection_may_help)
      set_poll_budget();
      collect_again_ = true;
      return;
    }
  }
  if (start_cycle(std::move(reason))) finish_cycle(false);
  set_poll_budget();
}

bool SoaHeapBinding::start_cycle(std::string reason) {
  if (before_collection) before_collection(roots_, reason);
  std::optional<CollectionStats> fallback = concurrent_->start(root_ids_, std::move(reason));
  allocated_since_snapshot_ = 0;
  budget_used_ = 0;
  if (fallback) record(std::move(*fallback));
  return concurrent_->in_flight();
}

void SoaHeapBinding::finish_cycle(bool concurrent) {
  CollectionStats stats = concurrent_->finish(root_ids_);
  if (stats.kind == CollectionKind::Fallback) {
    if (before_collection) before_collection(roots_, stats.reason);
  } else if (concurrent) {
    concurrent_policy_->cycle_finished(allocated_since_snapshot_ + budget_used_);
  }
  record(std::move(stats));
}

void SoaHeapBinding::finish_cycles() {
  if (!concurrent_) return;
  if (concurrent_->in_flight()) {
    root_ids_.clear();
    roots_ = {};
    finish_cycle(false);
  }
  heap_.finish_lazy_sweep();
  exit_lazy_sweep_ = heap_.take_lazy_sweep_totals();
}

void SoaHeapBinding::set_poll_budget() {
  allocated_since_snapshot_ += budget_used_;
  budget_used_ = 0;
  budget_limit_ = concurrent_->in_flight() ? concurrent_policy_->poll_bytes()
                                           : concurrent_policy_->bytes_until_trigger(heap_.used_bytes());
}

void SoaHeapBinding::record(CollectionStats stats) {
  collections_.push_back(std::move(stats));
  if (on_collection) on_collection(collections_.back());
}

}  // namespace gcvm::vm
