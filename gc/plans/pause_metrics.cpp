#include "gc/plans/pause_metrics.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace gcvm {

double nearest_rank(std::span<const double> sorted, double p) {
  const auto n = static_cast<double>(sorted.size());
  return sorted[static_cast<std::size_t>(std::max(1.0, std::ceil(p * n))) - 1];
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

namespace {

/// The pauses clipped to [0, span), sorted and cut so that none overlaps the one
/// before, with the prefix sums of their lengths.
struct PauseTimeline {
  std::vector<double> starts, ends, prefix;  // prefix[k]: total of the first k pauses

  PauseTimeline(std::span<const PauseInterval> pauses, double span) {
    std::vector<PauseInterval> sorted(pauses.begin(), pauses.end());
    std::sort(sorted.begin(), sorted.end(),
              [](const PauseInterval& a, const PauseInterval& b) { return a.start_ms < b.start_ms; });
    prefix.push_back(0);
    for (const PauseInterval& p : sorted) {
      const double start = std::max({p.start_ms, 0.0, ends.empty() ? 0.0 : ends.back()});
      const double end = std::min(p.start_ms + p.pause_ms, span);
      if (end <= start) continue;
      starts.push_back(start);
      ends.push_back(end);
      prefix.push_back(prefix.back() + (end - start));
    }
  }

  /// Pause time before `x`.
  double paused_before(double x) const {
    const auto k = static_cast<std::size_t>(std::upper_bound(starts.begin(), starts.end(), x) - starts.begin());
    if (k == 0) return 0;
    return prefix[k] - std::max(0.0, ends[k - 1] - x);
  }
};

}  // namespace

std::optional<double> minimum_mutator_utilization(std::span<const PauseInterval> pauses, double span_ms,
                                                  double window_ms) {
  if (window_ms <= 0 || window_ms > span_ms) return std::nullopt;
  const PauseTimeline timeline(pauses, span_ms);
  // The paused share of [t, t + w] is piecewise linear in t, with its corners where
  // either end of the window meets either end of a pause: its maximum is at one of
  // them or at an end of the run.
  double worst = 0;
  auto consider = [&](double t) {
    t = std::clamp(t, 0.0, span_ms - window_ms);
    worst = std::max(worst, timeline.paused_before(t + window_ms) - timeline.paused_before(t));
  };
  consider(0);
  consider(span_ms - window_ms);
  for (std::size_t i = 0; i < timeline.starts.size(); ++i)
    for (double edge : {timeline.starts[i], timeline.ends[i]}) {
      consider(edge);
      consider(edge - window_ms);
    }
  return std::max(0.0, 1.0 - worst / window_ms);
}

std::vector<double> mmu_windows(int per_decade) {
  std::vector<double> windows;
  for (int i = 0; i <= 3 * per_decade; ++i)
    windows.push_back(std::round(std::pow(10.0, static_cast<double>(i) / per_decade) * 1000.0) / 1000.0);
  return windows;
}

}  // namespace gcvm
