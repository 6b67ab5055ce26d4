#include "gc/mutator/synthetic_mutator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "gc/heap/heap_materializer.hpp"
#include "gc/markers/serial_marker.hpp"
#include "gc/trace/trace_recorder.hpp"
#include "gc/util/stopwatch.hpp"

namespace gcvm {

std::string MutationSpec::text() const {
  std::string out;
  auto add = [&](const std::string& item) { out += (out.empty() ? "" : ",") + item; };
  if (rewire > 0) add(fmt::format("rewire={}", rewire));
  if (replace > 0) add(fmt::format("replace={}", replace));
  if (garbage_bytes > 0) add(fmt::format("garbage={}", garbage_bytes));
  return out.empty() ? "none" : out;
}

SyntheticMutator::SyntheticMutator(Heap& heap, MutationSpec spec, std::uint64_t seed, TraceRecorder* recorder)
    : heap_(heap), spec_(spec), rng_(seed), recorder_(recorder) {}

std::uint64_t SyntheticMutator::slot_count(ObjectId obj) const {
  const Shape& shape = heap_.shapes().layout(heap_.shape_of(obj)).shape;
  switch (shape.kind) {
    case ShapeKind::Object: return shape.ref_fields;
    case ShapeKind::RefArray: return heap_.array_length(obj);
    case ShapeKind::ScalarArray: return 0;
  }
  return 0;
}

ObjectId SyntheticMutator::load(ObjectId holder, std::uint64_t index) const {
  return heap_.shape_of(holder) == ShapeTable::kRefArray ? heap_.load_element(holder, index)
                                                         : heap_.load_ref(holder, static_cast<std::uint32_t>(index));
}

void SyntheticMutator::store(ObjectId holder, std::uint64_t index, ObjectId target) {
  if (heap_.shape_of(holder) == ShapeTable::kRefArray)
    heap_.store_element(holder, index, target);
  else
    heap_.store_ref(holder, static_cast<std::uint32_t>(index), target);
  if (recorder_ != nullptr) recorder_->stored(holder, index, target);
  ++stats_.stores;
  ++operations_since_poll_;
}

void SyntheticMutator::step_boundary() {
  if (safepoint_ == nullptr || operations_since_poll_ < safepoint_->poll_interval()) return;
  operations_since_poll_ = 0;
  safepoint_->poll(held());
}

ObjectId SyntheticMutator::try_allocate_like(ObjectId model) {
  const ShapeId shape = heap_.shape_of(model);
  switch (heap_.shapes().layout(shape).shape.kind) {
    case ShapeKind::Object: return heap_.allocate(shape);
    case ShapeKind::RefArray: return heap_.allocate_ref_array(heap_.array_length(model));
    case ShapeKind::ScalarArray: return heap_.allocate_scalar_array(heap_.array_length(model));
  }
  return kNullRef;
}

ObjectId SyntheticMutator::allocate_like(ObjectId model, const char* what) {
  ObjectId id = try_allocate_like(model);
  if (id == kNullRef && safepoint_ != nullptr && safepoint_->heap_full(held())) id = try_allocate_like(model);
  if (id == kNullRef)
    throw HeapExhausted(fmt::format("heap exhausted allocating {} for the mutator (--mutate {}; limit {} bytes, {} in "
                                    "use): raise --heap or mutate less",
                                    what, spec_.text(), heap_.limit_bytes(), heap_.used_bytes()));
  if (recorder_ != nullptr) recorder_->allocated(id);
  ++stats_.objects_allocated;
  ++operations_since_poll_;
  stats_.bytes_allocated += heap_.object_bytes(id);
  return id;
}

std::vector<std::uint64_t> SyntheticMutator::draw_sorted(std::uint64_t count, std::uint64_t bound) {
  std::vector<std::uint64_t> draws;
  if (bound == 0) return draws;
  draws.reserve(count);
  for (std::uint64_t i = 0; i < count; ++i) draws.push_back(rng_.below(bound));
  std::sort(draws.begin(), draws.end());
  return draws;
}

void SyntheticMutator::find_slots(const std::vector<std::uint64_t>& among_all,
                                  const std::vector<std::uint64_t>& among_non_null, std::vector<Slot>& all_out,
                                  std::vector<Slot>& non_null_out) const {
  std::uint64_t all_base = 0;
  std::uint64_t non_null_base = 0;
  std::size_t a = 0;
  std::size_t b = 0;
  for (const ObjectId obj : live_) {
    if (a == among_all.size() && b == among_non_null.size()) return;
    const std::uint64_t n = slot_count(obj);
    for (; a < among_all.size() && among_all[a] < all_base + n; ++a) all_out.push_back({obj, among_all[a] - all_base});
    all_base += n;
    if (b == among_non_null.size()) continue;
    for (std::uint64_t i = 0; i < n; ++i) {
      if (load(obj, i) == kNullRef) continue;
      for (; b < among_non_null.size() && among_non_null[b] == non_null_base; ++b) non_null_out.push_back({obj, i});
      ++non_null_base;
    }
  }
}

void SyntheticMutator::rewire(std::uint64_t null_slots, std::uint64_t all_slots, const std::vector<Slot>& slots) {
  for (const Slot& s : slots) {
    step_boundary();
    const bool to_null = rng_.below(all_slots) < null_slots;
    store(s.holder, s.index, to_null ? kNullRef : live_[rng_.below(live_.size())]);
    ++stats_.rewired;
    stats_.rewired_null += to_null;
  }
}

void SyntheticMutator::replace(const std::vector<Slot>& slots) {
  for (const Slot& s : slots) {
    step_boundary();
    const ObjectId old = load(s.holder, s.index);
    if (old == kNullRef) continue;
    const ObjectId copy = allocate_like(old, "a replacement object");
    const std::uint64_t n = slot_count(old);
    for (std::uint64_t i = 0; i < n; ++i)
      if (const ObjectId target = load(old, i); target != kNullRef) store(copy, i, target);
    store(s.holder, s.index, copy);
    ++stats_.replaced;
  }
}

void SyntheticMutator::allocate_garbage() {
  garbage_.clear();
  std::uint64_t progress = 0;  // bytes, at least one per object, so zero-byte shapes still end the loop
  while (progress < spec_.garbage_bytes && !live_.empty()) {
    step_boundary();
    const ObjectId model = live_[rng_.below(live_.size())];
    const ObjectId object = allocate_like(model, "garbage");
    const std::uint64_t n = slot_count(model);
    for (std::uint64_t i = 0; i < n; ++i) {
      ObjectId target = load(model, i);
      if (target == kNullRef) continue;
      if (!garbage_.empty() && (rng_.next() & 1) != 0) target = garbage_[rng_.below(garbage_.size())];
      store(object, i, target);
    }
    garbage_.push_back(object);
    progress += std::max<std::uint64_t>(heap_.object_bytes(object), 1);
  }
  stats_.garbage_objects = garbage_.size();
  garbage_.clear();
}

MutationStats SyntheticMutator::mutate_reachable(std::span<const ObjectId> roots, MutatorSafepoint* safepoint) {
  if (heap_.graph_mode() != RefGraphMode::Barrier)
    throw std::logic_error("the synthetic mutator finds what it reaches in the barrier's reference graph");
  const Stopwatch clock;
  SerialMarker().mark({heap_.graph(), roots, heap_.blocks().high_water()}, reachable_);
  const double live_set_ms = clock.elapsed_ms();
  MutationStats stats = mutate(reachable_, safepoint);
  stats.live_set_ms = live_set_ms;
  stats.mutate_ms += live_set_ms;
  return stats;
}

MutationStats SyntheticMutator::mutate(const MarkBitmap& live, MutatorSafepoint* safepoint) {
  const Stopwatch clock;
  stats_ = {};
  safepoint_ = safepoint;
  operations_since_poll_ = 0;
  live_.clear();
  for (std::uint32_t b = 0; b < live.block_count(); ++b)
    for (std::uint64_t w = live.words()[b]; w != 0; w &= w - 1)
      live_.push_back(make_object_id(b, static_cast<std::uint32_t>(__builtin_ctzll(w))));
  stats_.live_objects = live_.size();

  std::uint64_t all_slots = 0;
  std::uint64_t null_slots = 0;
  for (const ObjectId obj : live_) {
    const std::uint64_t n = slot_count(obj);
    all_slots += n;
    for (std::uint64_t i = 0; i < n; ++i) null_slots += load(obj, i) == kNullRef;
  }
  stats_.live_references = all_slots - null_slots;

  const auto count = [](double fraction, std::uint64_t of) {
    return static_cast<std::uint64_t>(std::llround(fraction * static_cast<double>(of)));
  };
  const std::vector<std::uint64_t> rewire_at = draw_sorted(count(spec_.rewire, stats_.live_references), all_slots);
  const std::vector<std::uint64_t> replace_at =
      draw_sorted(count(spec_.replace, stats_.live_objects), stats_.live_references);
  std::vector<Slot> rewire_slots;
  std::vector<Slot> replace_slots;
  find_slots(rewire_at, replace_at, rewire_slots, replace_slots);

  rewire(null_slots, all_slots, rewire_slots);
  replace(replace_slots);
  allocate_garbage();
  live_.clear();
  live_.shrink_to_fit();
  safepoint_ = nullptr;
  stats_.mutate_ms = clock.elapsed_ms();
  return stats_;
}

}  // namespace gcvm
