// The result of `gcvm compare`: per configuration, the figures of its measured runs
// (warm-ups excluded), their median with the spread (min and max), the speed-ups
// against the baseline configuration, and the table in the formats it is printed in
// (text, CSV, JSON, Markdown). A configuration with a failed run (a crash, a nonzero
// exit, other output than the others, a missing device) is shown as failed with the
// reason; its figures are left out.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "vm/compare/configuration.hpp"
#include "vm/compare/run_metrics.hpp"

namespace gcvm::compare {

struct Spread {
  double median = 0, min = 0, max = 0;
};

/// The median, min and max of `metric` over the runs that have it; nullopt if none has.
std::optional<Spread> spread_of(const std::vector<RunFigures>& runs, Metric metric);

struct ConfigurationResult {
  Configuration configuration;
  std::vector<RunFigures> runs;  // the measured runs
  std::string failure;           // the first failure; empty when every run succeeded
  std::vector<std::optional<Spread>> summary;  // per metric, after summarize()
  std::optional<double> speedup_run, speedup_pause;  // baseline median / this median
  bool ok() const { return failure.empty(); }
};

struct Comparison {
  Workload workload;
  std::vector<ConfigurationResult> results;
  std::size_t baseline = 0;
  unsigned reps = 0, warmups = 0;
  std::string date;      // UTC, when it started
  std::string machine;   // "N cores, load ..."
  std::vector<Metric> shown;  // the rows of the table, in order

  /// Fills every result's summary and speed-ups.
  void summarize();
  bool all_ok() const;

  std::string text() const;
  std::string csv() const;
  std::string markdown() const;
  nlohmann::json json() const;
};

/// The metrics named in `keys` (comma-separated metric keys), or all of them when empty;
/// a UsageError for an unknown key.
std::vector<Metric> parse_metric_list(const std::string& keys);

}  // namespace gcvm::compare
