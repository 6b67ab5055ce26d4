// The arithmetic behind the pause figures GC papers publish: nearest-rank percentiles
// of pause times, the median of repeated measurements, and minimum mutator
// utilization (MMU; Cheng and Blelloch 2001): for a window length w, the smallest
// share of any window of length w inside the run that no pause occupies. A run's
// pauses are intervals [start, start + pause) on one clock, inside [0, span); pauses
// that overlap (a clock read after the fact, as libgc's) are cut where the previous
// one ends, so every millisecond of a pause counts once.
#pragma once

#include <optional>
#include <span>
#include <vector>

namespace gcvm {

/// The nearest-rank percentile of `sorted` (ascending, not empty): the smallest value
/// with at least the share `p` (0 < p <= 1) of the values at or below it.
double nearest_rank(std::span<const double> sorted, double p);

/// The median of `values` (not empty): the middle value, or the mean of the two
/// middle values of an even count.
double median(std::vector<double> values);

struct PauseInterval {
  double start_ms = 0;
  double pause_ms = 0;
};

/// MMU for windows of `window_ms` over a run of `span_ms`; nullopt when the window is
/// longer than the run (or not positive).
std::optional<double> minimum_mutator_utilization(std::span<const PauseInterval> pauses, double span_ms,
                                                  double window_ms);

/// Window lengths from 1 ms to 1 s, `per_decade` of them per factor of ten (1, 10, 100
/// and 1000 ms among them), in increasing order.
std::vector<double> mmu_windows(int per_decade);

}  // namespace gcvm
