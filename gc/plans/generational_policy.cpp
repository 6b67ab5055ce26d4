#include "gc/plans/generational_policy.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "gc/heap/generations.hpp"

namespace gcvm {

GenerationalPolicy::GenerationalPolicy(const GenerationalOptions& options, std::uint64_t heap_limit_bytes)
    : limit_bytes_(heap_limit_bytes),
      nursery_bytes_(options.nursery_bytes != 0 ? options.nursery_bytes
                                                : std::max(kMinNurseryBytes, heap_limit_bytes / 8)),
      promotion_age_(options.promotion_age),
      full_trigger_percent_(options.full_trigger_percent) {
  if (nursery_bytes_ < kMinNurseryBytes || nursery_bytes_ > limit_bytes_)
    throw std::invalid_argument(fmt::format("the nursery ({} bytes) must be at least {} bytes and at most the heap limit ({} bytes)",
                                            nursery_bytes_, kMinNurseryBytes, limit_bytes_));
  if (promotion_age_ < 1 || promotion_age_ > Generations::kMaxPromotionAge)
    throw std::invalid_argument(fmt::format("the promotion age {} is outside 1..{}", promotion_age_,
                                            Generations::kMaxPromotionAge));
  if (full_trigger_percent_ < 1 || full_trigger_percent_ > 100)
    throw std::invalid_argument(fmt::format("the full-collection trigger {}% is outside 1..100", full_trigger_percent_));
}

GenerationalPolicy::Decision GenerationalPolicy::decide(bool nursery_spent, std::uint64_t used_bytes,
                                                        const std::string& reason) const {
  if (!nursery_spent) return {CollectionKind::Full, reason};
  if (used_bytes * 100 >= limit_bytes_ * full_trigger_percent_)
    return {CollectionKind::Full, fmt::format("heap {}% full", used_bytes * 100 / limit_bytes_)};
  if (limit_bytes_ - used_bytes < nursery_bytes_) return {CollectionKind::Full, "no room for a nursery"};
  return {CollectionKind::Young, "nursery full"};
}

}  // namespace gcvm
