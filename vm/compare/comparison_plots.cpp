#include "vm/compare/comparison_plots.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "gc/plans/pause_metrics.hpp"
#include "vm/cli/gnuplot.hpp"

namespace gcvm::compare {

namespace {

constexpr int kHistogramBins = 24;
constexpr int kMmuWindowsPerDecade = 8;

/// The run whose run time is closest to the median of the configuration's.
const RunFigures* median_run(const ConfigurationResult& r) {
  const auto& s = r.summary[static_cast<std::size_t>(Metric::Wall)];
  const RunFigures* best = nullptr;
  for (const RunFigures& f : r.runs)
    if (best == nullptr || (s && std::abs(*f[Metric::Wall] - s->median) < std::abs(*(*best)[Metric::Wall] - s->median)))
      best = &f;
  return best;
}

std::string block_header(const ConfigurationResult& r) { return fmt::format("# {}\n", r.configuration.name); }

}  // namespace

std::string draw_plots(const Comparison& comparison, const std::filesystem::path& dir, const std::string& extension) {
  std::vector<const ConfigurationResult*> shown;
  for (const ConfigurationResult& r : comparison.results)
    if (r.ok() && !r.runs.empty()) shown.push_back(&r);
  if (shown.empty()) return "no configuration has a successful run";

  // Timeline: seconds since the child started, pause in ms.
  std::string timeline;
  double span_s = 0;
  for (const ConfigurationResult* r : shown) {
    timeline += block_header(*r);
    const RunFigures* run = median_run(*r);
    span_s = std::max(span_s, run->span_ms / 1000);
    for (const PauseInterval& p : run->pauses) timeline += fmt::format("{:.6f} {:.6f}\n", p.start_ms / 1000, p.pause_ms);
    timeline += "\n\n";
  }

  // Histogram: log-spaced bins from the shortest to the longest pause of all runs.
  double lo = std::numeric_limits<double>::max(), hi = 0;
  for (const ConfigurationResult* r : shown)
    for (const RunFigures& f : r->runs)
      for (const PauseInterval& p : f.pauses)
        if (p.pause_ms > 0) {
          lo = std::min(lo, p.pause_ms);
          hi = std::max(hi, p.pause_ms);
        }
  const bool any_pause = hi > 0;
  if (!any_pause) lo = hi = 1;
  const double log_lo = std::log10(lo) - 0.01, log_hi = std::log10(hi) + 0.01;
  const double step = (log_hi - log_lo) / kHistogramBins;
  std::string histogram;
  for (const ConfigurationResult* r : shown) {
    std::vector<double> counts(kHistogramBins, 0);
    for (const RunFigures& f : r->runs)
      for (const PauseInterval& p : f.pauses) {
        if (p.pause_ms <= 0) continue;
        const int bin = std::clamp(static_cast<int>((std::log10(p.pause_ms) - log_lo) / step), 0, kHistogramBins - 1);
        counts[static_cast<std::size_t>(bin)] += 1.0 / static_cast<double>(r->runs.size());
      }
    histogram += block_header(*r) + "# center_ms collections_per_run low_ms high_ms\n";
    for (int b = 0; b < kHistogramBins; ++b) {
      const double low = std::pow(10.0, log_lo + b * step), high = std::pow(10.0, log_lo + (b + 1) * step);
      histogram += fmt::format("{:.6g} {:.6g} {:.6g} {:.6g}\n", std::sqrt(low * high), counts[static_cast<std::size_t>(b)],
                               low, high);
    }
    histogram += "\n\n";
  }

  // MMU: the median over the runs at each window inside every run.
  std::string mmu;
  for (const ConfigurationResult* r : shown) {
    mmu += block_header(*r) + "# window_ms mmu\n";
    for (double w : mmu_windows(kMmuWindowsPerDecade)) {
      std::vector<double> values;
      for (const RunFigures& f : r->runs)
        if (const auto u = minimum_mutator_utilization(f.pauses, f.span_ms, w)) values.push_back(*u);
      if (values.size() == r->runs.size()) mmu += fmt::format("{:g} {:.6f}\n", w, median(values));
    }
    mmu += "\n\n";
  }

  cli::write_text_file(dir / "timeline.dat", timeline);
  cli::write_text_file(dir / "pauses.dat", histogram);
  cli::write_text_file(dir / "mmu.dat", mmu);

  const std::string d = dir.string();
  const int n = static_cast<int>(shown.size());
  auto terminal = [&](int width, int height) {
    return extension == "png" ? fmt::format("set terminal pngcairo size {},{} font ',10' noenhanced\n", width, height)
                              : fmt::format("set terminal svg size {},{} dynamic noenhanced\n", width, height);
  };
  const std::string title = comparison.workload.describe();
  std::string gp = "# gcvm compare plots: gnuplot plots.gp (run in any directory)\nset grid\n";
  // One panel per configuration, stacked, the x axis labelled under the last.
  auto panels = [&](const std::string& name, const std::string& heading, const std::string& settings,
                    const std::string& xlabel, const std::string& style, const std::string& unset) {
    gp += terminal(1000, 140 + 150 * n);
    gp += fmt::format("set output {}\n", cli::gnuplot_quoted(d + "/" + name + "." + extension));
    gp += fmt::format("set multiplot layout {},1 title {}\n{}", n, cli::gnuplot_quoted(heading + ": " + title), settings);
    for (int i = 0; i < n; ++i) {
      if (i == n - 1) gp += fmt::format("set xlabel '{}'\n", xlabel);
      gp += fmt::format("plot {} index {} {} lc {} title {}\n", cli::gnuplot_quoted(d + "/" + name + ".dat"), i, style,
                        i + 1, cli::gnuplot_quoted(shown[static_cast<std::size_t>(i)]->configuration.name));
    }
    gp += "unset multiplot\nunset xlabel\n" + unset;
  };
  panels("timeline", "GC pauses over the run",
         fmt::format("set xrange [0:{:.6f}]\nset yrange [0:*]\nset ylabel 'pause ms'\nset key top left opaque\n",
                     std::max(span_s, 1e-3)),
         "seconds since the run started", "using 1:2 with impulses lw 2", "unset xrange\n");
  panels("pauses", "Pause histogram",
         "set logscale x\nset style fill solid 0.6\nset ylabel 'collections per run'\nset key top right opaque\n",
         "pause ms (log-spaced bins)", "using 1:2:3:4:(0):2 with boxxyerror", "unset logscale x\n");

  gp += terminal(1000, 600);
  gp += fmt::format("set output {}\n", cli::gnuplot_quoted(d + "/mmu." + extension));
  gp += fmt::format("set title {}\n", cli::gnuplot_quoted("Minimum mutator utilization: " + title));
  gp += "set logscale x\nset xrange [1:1000]\nset yrange [0:1.02]\nset xlabel 'window ms'\n"
        "set ylabel 'minimum mutator utilization'\nset key bottom right\n";
  gp += "plot ";
  for (int i = 0; i < n; ++i)
    gp += fmt::format("{}{} index {} using 1:2 with linespoints lw 2 lc {} title {}", i == 0 ? "" : ", \\\n     ",
                      cli::gnuplot_quoted(d + "/mmu.dat"), i, i + 1,
                      cli::gnuplot_quoted(shown[static_cast<std::size_t>(i)]->configuration.name));
  gp += "\nunset output\n";
  cli::write_text_file(dir / "plots.gp", gp);
  return cli::run_gnuplot((dir / "plots.gp").string());
}

}  // namespace gcvm::compare
