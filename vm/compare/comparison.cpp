#include "vm/compare/comparison.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "vm/cli/commands.hpp"

namespace gcvm::compare {

std::optional<Spread> spread_of(const std::vector<RunFigures>& runs, Metric metric) {
  std::vector<double> values;
  for (const RunFigures& r : runs)
    if (r[metric]) values.push_back(*r[metric]);
  if (values.empty()) return std::nullopt;
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  return Spread{median(values), *lo, *hi};
}

void Comparison::summarize() {
  for (ConfigurationResult& r : results) {
    r.summary.assign(kMetricCount, std::nullopt);
    if (!r.ok()) continue;
    for (std::size_t m = 0; m < kMetricCount; ++m) r.summary[m] = spread_of(r.runs, metric_at(m));
  }
  const ConfigurationResult& base = results[baseline];
  for (ConfigurationResult& r : results) {
    if (!r.ok() || !base.ok()) continue;
    auto ratio = [&](Metric m) -> std::optional<double> {
      const auto& mine = r.summary[static_cast<std::size_t>(m)];
      const auto& theirs = base.summary[static_cast<std::size_t>(m)];
      if (!mine || !theirs || mine->median <= 0 || theirs->median <= 0) return std::nullopt;
      return theirs->median / mine->median;
    };
    r.speedup_run = ratio(Metric::Wall);
    r.speedup_pause = ratio(Metric::PauseTotal);
  }
}

bool Comparison::all_ok() const {
  return std::all_of(results.begin(), results.end(), [](const ConfigurationResult& r) { return r.ok(); });
}

namespace {

std::string value_text(double v, int decimals) { return fmt::format("{:.{}f}", v, decimals); }

std::string cell(const std::optional<Spread>& s, int decimals, bool with_spread) {
  if (!s) return "-";
  std::string text = value_text(s->median, decimals);
  if (with_spread && value_text(s->min, decimals) != value_text(s->max, decimals))
    text += fmt::format(" ({}-{})", value_text(s->min, decimals), value_text(s->max, decimals));
  return text;
}

std::string speedup_cell(const std::optional<double>& v) { return v ? fmt::format("{:.2f}x", *v) : "-"; }

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

std::string Comparison::text() const {
  std::vector<std::vector<std::string>> rows;  // first column: labels
  std::vector<std::string> header{""};
  for (const ConfigurationResult& r : results) header.push_back(r.configuration.name);
  rows.push_back(header);
  std::vector<std::string> status{"status"};
  for (const ConfigurationResult& r : results) status.push_back(r.ok() ? fmt::format("ok, {} runs", r.runs.size()) : "FAILED");
  rows.push_back(status);
  for (Metric m : shown) {
    std::vector<std::string> row{std::string(metric_info(m).label)};
    for (const ConfigurationResult& r : results)
      row.push_back(r.ok() ? cell(r.summary[static_cast<std::size_t>(m)], metric_info(m).decimals, true) : "-");
    rows.push_back(row);
  }
  std::vector<std::string> run_row{"speed-up, run time"}, pause_row{"speed-up, GC pause"};
  for (const ConfigurationResult& r : results) {
    run_row.push_back(speedup_cell(r.speedup_run));
    pause_row.push_back(speedup_cell(r.speedup_pause));
  }
  rows.push_back(run_row);
  rows.push_back(pause_row);

  std::vector<std::size_t> width(header.size(), 0);
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  std::string out = fmt::format("gcvm compare: {}; {} configuration{}, {} measured run{} each after {} warm-up{}, "
                                "interleaved; baseline {}\n{}, {}\n",
                                workload.describe(), results.size(), results.size() == 1 ? "" : "s", reps,
                                reps == 1 ? "" : "s", warmups, warmups == 1 ? "" : "s",
                                results[baseline].configuration.name, date, machine);
  out += "medians (min-max) of the measured runs\n\n";
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i)
      line += i == 0 ? fmt::format("{:<{}}", row[i], width[i]) : fmt::format("  {:>{}}", row[i], width[i]);
    out += line + "\n";
  }
  bool any_failed = false;
  for (const ConfigurationResult& r : results)
    if (!r.ok()) {
      if (!any_failed) out += "\nfailed:\n";
      any_failed = true;
      out += fmt::format("  {}: {}\n", r.configuration.name, r.failure);
    }
  return out;
}

std::string Comparison::csv() const {
  std::string out = "configuration,status,metric,median,min,max,runs,failure\n";
  for (const ConfigurationResult& r : results) {
    const std::string name = csv_field(r.configuration.name);
    if (!r.ok()) {
      out += fmt::format("{},failed,,,,,0,{}\n", name, csv_field(r.failure));
      continue;
    }
    for (Metric m : shown) {
      const auto& s = r.summary[static_cast<std::size_t>(m)];
      if (!s) continue;
      out += fmt::format("{},ok,{},{},{},{},{},\n", name, metric_info(m).key, s->median, s->min, s->max, r.runs.size());
    }
    if (r.speedup_run) out += fmt::format("{},ok,speedup_run,{},,,{},\n", name, *r.speedup_run, r.runs.size());
    if (r.speedup_pause) out += fmt::format("{},ok,speedup_pause,{},,,{},\n", name, *r.speedup_pause, r.runs.size());
  }
  return out;
}

std::string Comparison::markdown() const {
  std::string out = "| configuration |";
  std::string rule = "|---|";
  for (Metric m : shown) {
    out += fmt::format(" {} |", metric_info(m).label);
    rule += "---|";
  }
  out += " speed-up (run) | speed-up (pause) |\n" + rule + "---|---|\n";
  for (const ConfigurationResult& r : results) {
    out += fmt::format("| {} |", r.configuration.name);
    if (!r.ok()) {
      out += fmt::format(" failed: {} |\n", r.failure);
      continue;
    }
    for (Metric m : shown) out += " " + cell(r.summary[static_cast<std::size_t>(m)], metric_info(m).decimals, false) + " |";
    out += fmt::format(" {} | {} |\n", speedup_cell(r.speedup_run), speedup_cell(r.speedup_pause));
  }
  return out;
}

nlohmann::json Comparison::json() const {
  nlohmann::json configurations = nlohmann::json::array();
  for (const ConfigurationResult& r : results) {
    nlohmann::json c = {{"name", r.configuration.name},
                        {"configuration", r.configuration.text},
                        {"flags", r.configuration.flags},
                        {"status", r.ok() ? "ok" : "failed"}};
    if (!r.ok()) c["failure"] = r.failure;
    nlohmann::json runs = nlohmann::json::array();
    for (const RunFigures& f : r.runs) {
      nlohmann::json run = nlohmann::json::object();
      for (std::size_t m = 0; m < kMetricCount; ++m)
        run[std::string(metric_info(metric_at(m)).key)] = f.values[m] ? nlohmann::json(*f.values[m]) : nlohmann::json();
      runs.push_back(run);
    }
    c["runs"] = runs;
    nlohmann::json summary = nlohmann::json::object();
    for (std::size_t m = 0; m < kMetricCount && r.ok(); ++m) {
      const auto& s = r.summary[m];
      summary[std::string(metric_info(metric_at(m)).key)] =
          s ? nlohmann::json{{"median", s->median}, {"min", s->min}, {"max", s->max}} : nlohmann::json();
    }
    c["summary"] = summary;
    c["speedup_run"] = r.speedup_run ? nlohmann::json(*r.speedup_run) : nlohmann::json();
    c["speedup_pause"] = r.speedup_pause ? nlohmann::json(*r.speedup_pause) : nlohmann::json();
    configurations.push_back(c);
  }
  return {{"command", "compare"},
          {"workload", workload.describe()},
          {"reps", reps},
          {"warmups", warmups},
          {"date", date},
          {"machine", machine},
          {"baseline", results[baseline].configuration.name},
          {"configurations", configurations}};
}

std::vector<Metric> parse_metric_list(const std::string& keys) {
  std::vector<Metric> out;
  if (keys.empty()) {
    for (std::size_t m = 0; m < kMetricCount; ++m) out.push_back(metric_at(m));
    return out;
  }
  std::stringstream in(keys);
  for (std::string key; std::getline(in, key, ',');) {
    bool found = false;
    for (std::size_t m = 0; m < kMetricCount && !found; ++m)
      if (metric_info(metric_at(m)).key == key) {
        out.push_back(metric_at(m));
        found = true;
      }
    if (!found) {
      std::string known;
      for (std::size_t m = 0; m < kMetricCount; ++m) known += (m ? "," : "") + std::string(metric_info(metric_at(m)).key);
      throw cli::UsageError(fmt::format("--metrics: unknown metric '{}' (metrics: {})", key, known));
    }
  }
  return out;
}

}  // namespace gcvm::compare
