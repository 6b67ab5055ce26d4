// The figures of one run of a configuration, read from its --stats-json object and
// from what the parent measured of the child process (child_run.hpp), and the check
// that it did the same work as the others: the same guest output (programs) or the
// same marks, collection by collection (heap files and synthetic heaps).
//
// Every figure is optional: a collector that does not measure one (libgc: GC CPU time;
// the CPU markers: device time and memory), or a run without collections (pause
// percentiles), leaves it empty, and the table shows "-".
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "gc/plans/pause_metrics.hpp"
#include "vm/compare/child_run.hpp"

namespace gcvm::compare {

/// The figures in table order. Times are milliseconds, memory MiB, MMU a share.
enum class Metric : std::size_t {
  Collections,
  Young,
  Full,
  PauseTotal,
  PauseMax,
  PauseP50,
  PauseP90,
  PauseP99,
  WarmPauseP50,
  Stalls,
  InitialP99,
  InitialMax,
  FinalP99,
  FinalMax,
  Mark,
  Sweep,
  Sync,
  GcCpu,
  DeviceTime,
  Wall,
  Mutator,
  Program,
  Outside,
  Cpu,
  PeakRss,
  DeviceMemory,
  Mmu1ms,
  Mmu10ms,
  Mmu100ms,
  Mmu1s,
  Count
};
inline constexpr std::size_t kMetricCount = static_cast<std::size_t>(Metric::Count);

struct MetricInfo {
  std::string_view key;    // JSON and CSV name
  std::string_view label;  // table row
  int decimals;
};
const MetricInfo& metric_info(Metric metric);
inline Metric metric_at(std::size_t i) { return static_cast<Metric>(i); }

/// The MMU windows of the table rows.
inline constexpr double kTableMmuWindowsMs[] = {1, 10, 100, 1000};

struct RunFigures {
  std::vector<std::optional<double>> values = std::vector<std::optional<double>>(kMetricCount);
  std::vector<PauseInterval> pauses;  // start on the child's process clock
  double span_ms = 0;                 // the child's process clock at the end of its work
  std::optional<double>& operator[](Metric m) { return values[static_cast<std::size_t>(m)]; }
  const std::optional<double>& operator[](Metric m) const { return values[static_cast<std::size_t>(m)]; }
};

/// What must be equal between the runs of one comparison.
struct WorkDone {
  std::string output;                 // guest output (programs)
  std::vector<std::string> digests;   // mark digest per collection (heap files, graphs)
  std::vector<std::uint64_t> marked;  // marked objects per collection (how many collections ran)
  /// Empty when `other` did the same work, else what differs.
  std::string differs_from(const WorkDone& other) const;
};

/// The figures of a run from its statistics object and its process measurements.
RunFigures run_figures(const nlohmann::json& stats, const ChildRun& child);

/// What the run did, from its statistics and (programs) its stdout.
WorkDone work_done(const nlohmann::json& stats, bool program, std::string output);

/// Why a finished run failed (crash, signal, exit status with its last error line,
/// time-out), or an empty string for a run that exited 0.
std::string failure_of(const ChildRun& child, const std::string& stderr_text, double timeout_s);

}  // namespace gcvm::compare
