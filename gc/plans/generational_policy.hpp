// The generational plan's policy: when a collection is young and when full.
// The mechanism it drives is gc/heap/generations.hpp (generations, remembered set) and
// gc/plans/collector.hpp (one young or full collection); the VM's heap binding counts the
// nursery and asks this policy at every collection point.
//
// Policy (FastCollect §2.1 with two generations; the paper's host, HotSpot SerialGC,
// sizes its generations the same way):
// - The nursery is a budget of heap bytes allocated since the last collection (each
//   object counted as the slot it takes, kBlockBytes / its shape's capacity, arrays
//   also with their elements). When it is spent, the mutator stops and the heap
//   collects.
// - That collection is young, unless the heap is at least `full_trigger_percent` of
//   its limit used, or has less than one more nursery of room left: then it is full.
// - A collection for any other reason (the heap limit itself was reached, or the
//   guest's `gc` instruction) is full.
// - Young survivors are promoted to mature after `promotion_age` collections.
#pragma once

#include <cstdint>
#include <string>

#include "gc/plans/collector.hpp"

namespace gcvm {

struct GenerationalOptions {
  /// Nursery in bytes; 0 = one eighth of the heap limit.
  std::uint64_t nursery_bytes = 0;
  std::uint32_t promotion_age = 2;
  std::uint32_t full_trigger_percent = 80;
};

class GenerationalPolicy {
 public:
  /// The smallest nursery: a few blocks, so that a collection always has room to retry.
  static constexpr std::uint64_t kMinNurseryBytes = 64 * 1024;

  /// Throws std::invalid_argument for options out of range (a nursery smaller than
  /// kMinNurseryBytes or larger than the heap, a promotion age outside
  /// 1..Generations::kMaxPromotionAge, a trigger outside 1..100).
  GenerationalPolicy(const GenerationalOptions& options, std::uint64_t heap_limit_bytes);

  std::uint64_t nursery_bytes() const { return nursery_bytes_; }
  std::uint32_t promotion_age() const { return promotion_age_; }

  struct Decision {
    CollectionKind kind;
    std::string reason;
  };
  /// The collection to run now. `nursery_spent`: the mutator stopped because the
  /// nursery budget is spent (else `reason` is the caller's: heap full, gc instruction).
  Decision decide(bool nursery_spent, std::uint64_t used_bytes, const std::string& reason) const;

 private:
  std::uint64_t limit_bytes_;
  std::uint64_t nursery_bytes_;
  std::uint32_t promotion_age_;
  std::uint32_t full_trigger_percent_;
};

}  // namespace gcvm
