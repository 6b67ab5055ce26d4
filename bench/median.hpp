// The statistic every benchmark here reports: the median of its repetitions.
#pragma once

#include <algorithm>
#include <vector>

namespace gcvm::bench {

/// The upper median of `v` (the middle element of an odd count); 0 for no values.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace gcvm::bench
