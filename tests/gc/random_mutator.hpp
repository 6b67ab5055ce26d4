// Test helper: a mutator that allocates objects and arrays, stores random references
// (null included) and changes roots, between collections, so markers and device
// mirrors are tested on heaps whose blocks, edge ranges and slots are reused.
#pragma once

#include <random>
#include <vector>

#include "gc/heap.hpp"

namespace gcvm::test {

class RandomMutator {
 public:
  RandomMutator(Heap& heap, std::uint64_t seed, std::size_t root_slots = 32)
      : heap_(heap), rng_(seed), roots_(root_slots, kNullRef) {
    shapes_ = {heap.shapes().intern(1, 1), heap.shapes().intern(4, 0), heap.shapes().intern(0, 3)};
  }

  /// Performs `operations` random allocations and stores.
  void run(int operations) {
    for (int i = 0; i < operations; ++i) {
      if (rng_() % 10 < 4 || live_.empty()) {
        const ObjectId o = rng_() % 10 == 0 ? heap_.allocate_ref_array(rng_() % 50) : heap_.allocate(shapes_[rng_() % shapes_.size()]);
        if (o == kNullRef) continue;
        live_.push_back(o);
        if (rng_() % 8 == 0) roots_[rng_() % roots_.size()] = o;
      } else {
        const ObjectId src = live_[rng_() % live_.size()];
        const ObjectId dst = rng_() % 6 == 0 ? kNullRef : live_[rng_() % live_.size()];
        if (heap_.shape_of(src) == ShapeTable::kRefArray) {
          if (heap_.array_length(src) > 0) heap_.store_element(src, rng_() % heap_.array_length(src), dst);
        } else if (auto refs = heap_.shapes().layout(heap_.shape_of(src)).shape.ref_fields; refs > 0) {
          heap_.store_ref(src, static_cast<std::uint32_t>(rng_() % refs), dst);
        }
      }
    }
  }

  /// Forgets objects a collection freed; returns how many are still live.
  std::size_t forget_dead() {
    std::erase_if(live_, [&](ObjectId o) { return !heap_.is_live(o); });
    return live_.size();
  }

  const std::vector<ObjectId>& roots() const { return roots_; }

 private:
  Heap& heap_;
  std::mt19937_64 rng_;
  std::vector<ShapeId> shapes_;
  std::vector<ObjectId> roots_;
  std::vector<ObjectId> live_;
};

}  // namespace gcvm::test
