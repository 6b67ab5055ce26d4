#include "gc/plans/concurrent_policy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace gcvm {

ConcurrentPolicy::ConcurrentPolicy(const ConcurrentOptions& options, std::uint64_t heap_limit_bytes)
    : limit_bytes_(heap_limit_bytes),
      trigger_percent_(options.trigger_percent),
      cycle_allocation_(heap_limit_bytes / 3) {
  if (trigger_percent_ > 100)
    throw std::invalid_argument(fmt::format("the concurrent trigger {}% is outside 1..100", trigger_percent_));
}

std::uint64_t ConcurrentPolicy::trigger_bytes() const {
  if (trigger_percent_ != 0) return limit_bytes_ / 100 * trigger_percent_;
  const std::uint64_t headroom = cycle_allocation_ + cycle_allocation_ / 2 + poll_bytes();
  const std::uint64_t low = limit_bytes_ / 100 * kMinTriggerPercent;
  const std::uint64_t high = limit_bytes_ / 100 * kMaxTriggerPercent;
  return std::clamp(limit_bytes_ > headroom ? limit_bytes_ - headroom : 0, low, high);
}

std::uint64_t ConcurrentPolicy::poll_bytes() const { return std::max(kMinPollBytes, limit_bytes_ / 64); }

std::uint64_t ConcurrentPolicy::bytes_until_trigger(std::uint64_t used_bytes) const {
  const std::uint64_t trigger = trigger_bytes();
  return std::max(kMinPollBytes, trigger > used_bytes ? trigger - used_bytes : 0);
}

void ConcurrentPolicy::cycle_finished(std::uint64_t allocated_bytes) {
  cycle_allocation_ = cycle_allocation_ / 2 + allocated_bytes / 2;
}

}  // namespace gcvm
