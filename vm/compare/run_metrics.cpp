#include "vm/compare/run_metrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <sstream>

#include "vm/cli/commands.hpp"

namespace gcvm::compare {

namespace {

constexpr MetricInfo kMetrics[kMetricCount] = {
    {"collections", "collections", 0},
    {"young", "young collections", 0},
    {"full", "full collections", 0},
    {"pause_total_ms", "GC pause total ms", 2},
    {"pause_max_ms", "max pause ms", 3},
    {"pause_p50_ms", "pause p50 ms", 3},
    {"pause_p90_ms", "pause p90 ms", 3},
    {"pause_p99_ms", "pause p99 ms", 3},
    {"warm_pause_p50_ms", "warm pause p50 ms", 3},
    {"stalls", "stalled cycles", 0},
    {"initial_p99_ms", "initial pause p99 ms", 3},
    {"initial_max_ms", "initial pause max ms", 3},
    {"final_p99_ms", "final pause p99 ms", 3},
    {"final_max_ms", "final pause max ms", 3},
    {"mark_ms", "mark ms", 2},
    {"sweep_ms", "sweep ms", 2},
    {"sync_ms", "device sync ms", 2},
    {"gc_cpu_ms", "GC CPU ms", 2},
    {"device_ms", "device kernel ms", 2},
    {"wall_ms", "run time ms", 1},
    {"mutator_ms", "run time - GC pause ms", 1},
    {"program_ms", "program run time ms", 1},
    {"outside_ms", "run time outside the program ms", 1},
    {"cpu_ms", "run CPU ms", 1},
    {"peak_rss_mib", "peak RSS MiB", 1},
    {"device_mib", "device memory MiB", 1},
    {"mmu_1ms", "MMU 1 ms", 3},
    {"mmu_10ms", "MMU 10 ms", 3},
    {"mmu_100ms", "MMU 100 ms", 3},
    {"mmu_1s", "MMU 1 s", 3},
};

/// The sum of `key` over the collections' mark_details, or nullopt when none has it.
std::optional<double> detail_sum(const nlohmann::json& collections, const char* key, bool take_max = false) {
  std::optional<double> total;
  for (const nlohmann::json& c : collections) {
    const auto details = c.find("mark_details");
    if (details == c.end() || !details->contains(key)) continue;
    const double v = (*details)[key].get<double>();
    total = take_max ? std::max(total.value_or(0), v) : total.value_or(0) + v;
  }
  return total;
}

std::optional<double> number(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

}  // namespace

const MetricInfo& metric_info(Metric metric) { return kMetrics[static_cast<std::size_t>(metric)]; }

RunFigures run_figures(const nlohmann::json& stats, const ChildRun& child) {
  RunFigures f;
  const nlohmann::json empty = nlohmann::json::array();
  const nlohmann::json& collections = stats.contains("collections") ? stats["collections"] : empty;
  std::vector<double> pauses;
  std::vector<double> warm;  // the pauses of every collection (cycle) after the first
  std::map<std::string, std::vector<double>> by_kind;  // a concurrent cycle's pauses: initial, stall, final
  double mark = 0, sweep = 0, gc_cpu = 0, young = 0;
  bool cpu_measured = !collections.empty();
  for (const nlohmann::json& c : collections) {
    const bool first = &c == &collections.front();
    if (const auto cycle = c.find("pauses"); cycle != c.end() && cycle->is_array()) {
      for (const nlohmann::json& p : *cycle) {
        const double pause = number(p, "ms").value_or(0);
        pauses.push_back(pause);
        if (!first) warm.push_back(pause);
        by_kind[p.value("kind", std::string())].push_back(pause);
        f.pauses.push_back({number(p, "start_ms").value_or(0), pause});
      }
    } else {
      const double pause = number(c, "pause_ms").value_or(0);
      pauses.push_back(pause);
      if (!first) warm.push_back(pause);
      f.pauses.push_back({number(c, "start_ms").value_or(0), pause});
    }
    young += c.value("kind", std::string()) == "young" ? 1 : 0;
    mark += number(c, "mark_ms").value_or(0);
    sweep += number(c, "sweep_ms").value_or(0);
    const auto cpu = number(c, "cpu_ms");
    cpu_measured = cpu_measured && cpu.has_value();
    gc_cpu += cpu.value_or(0);
  }
  std::sort(pauses.begin(), pauses.end());
  f[Metric::Collections] = static_cast<double>(collections.size());
  f[Metric::Young] = young;
  f[Metric::Full] = static_cast<double>(collections.size()) - young;
  double total = 0;
  for (double p : pauses) total += p;
  f[Metric::PauseTotal] = total;
  if (!pauses.empty()) {
    f[Metric::PauseMax] = pauses.back();
    f[Metric::PauseP50] = nearest_rank(pauses, 0.5);
    f[Metric::PauseP90] = nearest_rank(pauses, 0.9);
    f[Metric::PauseP99] = nearest_rank(pauses, 0.99);
  }
  if (!warm.empty()) {
    std::sort(warm.begin(), warm.end());
    f[Metric::WarmPauseP50] = nearest_rank(warm, 0.5);
  }
  if (!by_kind.empty()) {
    f[Metric::Stalls] = static_cast<double>(by_kind["stall"].size());
    const std::pair<const char*, std::pair<Metric, Metric>> kinds[] = {
        {"initial", {Metric::InitialP99, Metric::InitialMax}}, {"final", {Metric::FinalP99, Metric::FinalMax}}};
    for (const auto& [kind, rows] : kinds) {
      std::vector<double>& list = by_kind[kind];
      if (list.empty()) continue;
      std::sort(list.begin(), list.end());
      f[rows.first] = nearest_rank(list, 0.99);
      f[rows.second] = list.back();
    }
  }
  f[Metric::Mark] = mark;
  f[Metric::Sweep] = sweep;
  f[Metric::Sync] = detail_sum(collections, "sync_ms");
  if (cpu_measured) f[Metric::GcCpu] = gc_cpu;
  f[Metric::DeviceTime] = detail_sum(collections, "kernel_ms");
  f[Metric::Wall] = child.wall_ms;
  f[Metric::Mutator] = child.wall_ms - total;
  if (const auto program = number(stats, "run_ms")) {
    f[Metric::Program] = *program;
    f[Metric::Outside] = child.wall_ms - *program;
  }
  f[Metric::Cpu] = child.cpu_ms;
  f[Metric::PeakRss] = child.max_rss_mib;
  if (const auto bytes = detail_sum(collections, "device_bytes", true)) f[Metric::DeviceMemory] = *bytes / 1048576.0;
  f.span_ms = number(stats, "elapsed_ms").value_or(0);
  for (const PauseInterval& p : f.pauses) f.span_ms = std::max(f.span_ms, p.start_ms + p.pause_ms);
  const Metric mmu_rows[] = {Metric::Mmu1ms, Metric::Mmu10ms, Metric::Mmu100ms, Metric::Mmu1s};
  for (std::size_t i = 0; i < std::size(mmu_rows); ++i)
    f[mmu_rows[i]] = minimum_mutator_utilization(f.pauses, f.span_ms, kTableMmuWindowsMs[i]);
  return f;
}

WorkDone work_done(const nlohmann::json& stats, bool program, std::string output) {
  WorkDone w;
  if (program) {
    w.output = std::move(output);
    return w;
  }
  if (!stats.contains("collections")) return w;
  for (const nlohmann::json& c : stats["collections"]) {
    if (c.contains("mark_digest")) w.digests.push_back(c["mark_digest"].get<std::string>());
    w.marked.push_back(c.value("marked_objects", std::uint64_t{0}));
  }
  return w;
}

std::string WorkDone::differs_from(const WorkDone& other) const {
  if (output != other.output) {
    std::size_t at = 0;
    while (at < output.size() && at < other.output.size() && output[at] == other.output[at]) ++at;
    const std::size_t line = static_cast<std::size_t>(std::count(output.begin(), output.begin() + at, '\n')) + 1;
    return fmt::format("printed other output (first difference in line {})", line);
  }
  if (marked.size() != other.marked.size())
    return fmt::format("ran {} collections, not {}", marked.size(), other.marked.size());
  // libgc has no gcvm mark bitmap and, scanning conservatively, may keep garbage: a
  // run without digests is checked for its number of collections only.
  if (digests.size() != marked.size() || other.digests.size() != other.marked.size()) return "";
  for (std::size_t i = 0; i < marked.size(); ++i) {
    if (digests[i] != other.digests[i])
      return fmt::format("marked other objects in collection {} (mark digest {} vs {})", i + 1, digests[i],
                         other.digests[i]);
  }
  return "";
}

std::string failure_of(const ChildRun& child, const std::string& stderr_text, double timeout_s) {
  if (!child.started) return "could not start: " + child.start_error;
  if (child.timed_out) return fmt::format("timed out after {:g} s", timeout_s);
  if (child.signal != 0) return fmt::format("crashed ({})", strsignal(child.signal));
  if (child.exit_code == 0) return "";
  // The error line: the first that gcvm starts with "gcvm:" or "error:", else the last one.
  std::string line, first_error, last;
  std::istringstream lines(stderr_text);
  while (std::getline(lines, line)) {
    const auto begin = line.find_first_not_of(" \t");
    if (begin == std::string::npos) continue;
    line = line.substr(begin);
    if (first_error.empty() && (line.rfind("gcvm:", 0) == 0 || line.rfind("error:", 0) == 0)) first_error = line;
    last = line;
  }
  if (!first_error.empty()) last = first_error;
  const char* what = child.exit_code == cli::kExitDeviceError   ? "device error"
                     : child.exit_code == cli::kExitBadInput     ? "bad input"
                     : child.exit_code == cli::kExitOutOfMemory  ? "out of memory"
                     : child.exit_code == cli::kExitGuestError   ? "guest error"
                     : child.exit_code == cli::kExitCheckFailed  ? "check failed"
                                                                 : "failed";
  return fmt::format("{} (exit {}){}{}", what, child.exit_code, last.empty() ? "" : ": ", last);
}

}  // namespace gcvm::compare
