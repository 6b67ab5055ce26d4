// Test helper: a deterministic random mutator for a Heap (allocations of objects and
// arrays, reference stores through the barrier, root changes), so collections can be
// interleaved with mutation. Two mutators with the same seed on heaps in the same
// state make the same calls.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "gc/heap/heap.hpp"

namespace gcvm::test {

struct MutationMix {
  std::uint64_t alloc_in_10 = 4;           // of 10 steps, how many allocate
  std::uint64_t array_one_in = 10;         // allocations that are reference arrays
  bool scalar_arrays = false;              // a further 1 in array_one_in are scalar arrays
  std::uint64_t max_array_length = 50;
  std::uint64_t root_one_in = 8;           // new objects that replace a random root
  std::uint64_t null_one_in = 6;           // stores that store null
};

class RandomMutator {
 public:
  RandomMutator(Heap& heap, std::uint64_t seed, std::size_t root_count, MutationMix mix = {})
      : heap_(heap), rng_(seed), mix_(mix), roots(root_count, kNullRef) {
    shapes_ = {heap.shapes().intern(1, 1), heap.shapes().intern(4, 0), heap.shapes().intern(0, 3)};
  }

  void run(int steps) {
    for (int i = 0; i < steps; ++i) {
      const auto op = rng_() % 10;
      if (op < mix_.alloc_in_10 || live.empty()) {
        const auto kind = rng_() % mix_.array_one_in;
        const ObjectId o = kind == 0                          ? heap_.allocate_ref_array(rng_() % mix_.max_array_length)
                           : kind == 1 && mix_.scalar_arrays ? heap_.allocate_scalar_array(rng_() % 100)
                                                              : heap_.allocate(shapes_[rng_() % shapes_.size()]);
        allocated.push_back(o);
        live.push_back(o);
        if (rng_() % mix_.root_one_in == 0) roots[rng_() % roots.size()] = o;
      } else {
        const ObjectId src = live[rng_() % live.size()];
        const ObjectId dst = rng_() % mix_.null_one_in == 0 ? kNullRef : live[rng_() % live.size()];
        if (heap_.shape_of(src) == ShapeTable::kRefArray) {
          if (heap_.array_length(src) > 0) heap_.store_element(src, rng_() % heap_.array_length(src), dst);
        } else if (auto refs = heap_.shapes().layout(heap_.shape_of(src)).shape.ref_fields; refs > 0) {
          heap_.store_ref(src, static_cast<std::uint32_t>(rng_() % refs), dst);
        }
      }
    }
  }
  /// Drops the objects the last sweep freed from `live`.
  void forget_dead() {
    std::erase_if(live, [&](ObjectId o) { return !heap_.is_live(o); });
  }

 private:
  Heap& heap_;
  std::mt19937_64 rng_;
  MutationMix mix_;
  std::vector<ShapeId> shapes_;

 public:
  std::vector<ObjectId> roots;
  std::vector<ObjectId> live;
  std::vector<ObjectId> allocated;  // every id handed out, in order
};

}  // namespace gcvm::test
