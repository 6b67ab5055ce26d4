#include "gc/plans/sweep_pool_waker.hpp"

#include <algorithm>
#include <utility>

#include "gc/heap/sweep.hpp"

namespace gcvm {

SweepPoolWaker::SweepPoolWaker(Heap& heap, ThreadPool& pool, std::function<double()> clock)
    : heap_(heap), pool_(pool), clock_(std::move(clock)), last_end_ms_(clock_()), last_end_bytes_(heap.used_bytes()) {}

SweepPoolWaker::~SweepPoolWaker() {
  if (armed_bytes_ != 0) heap_.disarm_used_bytes_watch();
}

double SweepPoolWaker::pause_started(double now_ms, std::uint64_t used_bytes) {
  heap_.disarm_used_bytes_watch();
  const bool armed = armed_bytes_ != 0;
  const double lead_ms = woken_ms_ >= 0 ? now_ms - woken_ms_ : -1;
  armed_bytes_ = 0;
  woken_ms_ = -1;
  if (used_bytes <= last_end_bytes_) return lead_ms;
  const std::uint64_t growth = used_bytes - last_end_bytes_;
  if (lead_bytes_ == 0) {
    const double rate = static_cast<double>(growth) / std::max(now_ms - last_end_ms_, 1e-3);
    lead_bytes_ = static_cast<std::uint64_t>(rate * kTargetLeadMs);
  } else if (armed) {
    const double scale = lead_ms > 0 ? std::clamp(kTargetLeadMs / lead_ms, 0.5, 2.0) : 2.0;
    lead_bytes_ = static_cast<std::uint64_t>(static_cast<double>(lead_bytes_) * scale);
  }
  lead_bytes_ = std::clamp<std::uint64_t>(lead_bytes_, kBlockBytes, std::max<std::uint64_t>(growth / 2, kBlockBytes));
  return lead_ms;
}

void SweepPoolWaker::pause_ended(double now_ms, std::uint64_t started_bytes, std::uint64_t used_bytes,
                                 double mark_ms, bool sweeps) {
  last_end_ms_ = now_ms;
  last_end_bytes_ = used_bytes;
  if (!sweeps || lead_bytes_ == 0) return;
  armed_bytes_ = std::max(started_bytes > lead_bytes_ ? started_bytes - lead_bytes_ : 0, used_bytes + 1);
  const double poll_ms = std::min(3 * kTargetLeadMs + sweep_pool_wake_microseconds(mark_ms) / 1000.0, kMaxPollMs);
  poll_microseconds_ = static_cast<unsigned>(poll_ms * 1000);
  heap_.watch_used_bytes(armed_bytes_, [this] { woken(); });
}

void SweepPoolWaker::woken() {
  woken_ms_ = clock_();
  pool_.wake(poll_microseconds_);
}

}  // namespace gcvm
