// The concurrent plan's policy: when a cycle starts, and how often the mutator looks
// at a cycle in flight. The mechanism it drives is gc/plans/concurrent_collector.hpp;
// the VM's heap binding counts allocation and asks this policy at its polls.
//
// Trigger. A cycle starts when the heap's use reaches `trigger_bytes()`, so that what
// the mutator allocates while the mark runs still fits below the limit:
//   trigger = limit - headroom,  headroom = 1.5 * (bytes allocated during a cycle) + one poll,
// where the bytes allocated during a cycle (allocation rate times cycle length, both
// as the last cycles showed them) are a moving average over the cycles so far (each
// new cycle weighs one half). Before the first cycle the headroom is half the heap. The
// trigger stays between kMinTriggerPercent and kMaxTriggerPercent of the limit. A fixed
// `trigger_percent` replaces all of this. When the heap fills anyway while a mark runs,
// the mutator waits for it (a stall, which the cycle reports), and that cycle's
// allocation raises the average, so the next cycle starts earlier.
//
// Polls. The mutator stops at a collection point (no collection unless one is due)
// after every `poll_bytes()` of allocation while a cycle runs, and when the heap may
// have reached the trigger otherwise; a finished mark is applied at the next poll.
#pragma once

#include <cstdint>

namespace gcvm {

struct ConcurrentOptions {
  /// Start a cycle at this percent of the heap limit; 0 = adaptive (above).
  std::uint32_t trigger_percent = 0;
};

class ConcurrentPolicy {
 public:
  static constexpr std::uint32_t kMinTriggerPercent = 20;
  static constexpr std::uint32_t kMaxTriggerPercent = 90;
  /// The shortest allocation between polls.
  static constexpr std::uint64_t kMinPollBytes = 64 * 1024;

  /// Throws std::invalid_argument for a trigger outside 1..100.
  ConcurrentPolicy(const ConcurrentOptions& options, std::uint64_t heap_limit_bytes);

  std::uint64_t trigger_bytes() const;
  /// Allocation between two polls while a cycle runs: 1/64 of the heap, at least kMinPollBytes.
  std::uint64_t poll_bytes() const;
  /// Allocation until the next poll when no cycle runs and `used_bytes` are in use.
  std::uint64_t bytes_until_trigger(std::uint64_t used_bytes) const;
  /// A cycle's mark finished; the mutator allocated `allocated_bytes` since its snapshot.
  void cycle_finished(std::uint64_t allocated_bytes);
  std::uint64_t average_cycle_allocation() const { return cycle_allocation_; }

 private:
  std::uint64_t limit_bytes_;
  std::uint32_t trigger_percent_;
  std::uint64_t cycle_allocation_;  // moving average of the bytes allocated during a cycle
};

}  // namespace gcvm
