// What a trace reader remembers about recorded objects, to reject events that no
// recording could have produced: per id, its reference slot count and the collection
// epoch of its latest allocation. Grows with the allocations actually read (each costs
// at least four file bytes), never with a number the file merely declares.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "heapgraph/object_id.hpp"

namespace gcvm::trace {

class TraceObjectTable {
 public:
  struct Entry {
    std::uint64_t reference_slots = 0;
    std::uint64_t epoch = 0;         // collection points before its allocation
    std::uint64_t allocated_at = 0;  // file offset of that allocation
  };

  /// The entry of `id`, or nullptr when `id` was never allocated.
  const Entry* find(ObjectId id) const {
    const auto it = objects_.find(id);
    return it == objects_.end() ? nullptr : &it->second;
  }
  /// Records an allocation; false (and no change) when `id` was already allocated
  /// since the last collection point.
  bool allocate(ObjectId id, std::uint64_t reference_slots, std::uint64_t offset) {
    auto [it, fresh] = objects_.try_emplace(id);
    if (!fresh && it->second.epoch == epoch_) return false;
    it->second = Entry{reference_slots, epoch_, offset};
    return true;
  }
  void collection() { ++epoch_; }
  std::uint64_t epoch() const { return epoch_; }
  std::uint64_t size() const { return objects_.size(); }

 private:
  std::unordered_map<ObjectId, Entry> objects_;
  std::uint64_t epoch_ = 0;
};

}  // namespace gcvm::trace
