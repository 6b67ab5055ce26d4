#include "vm/runtime/run_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string_view>

#include "gc/plans/pause_metrics.hpp"
#include "gc/plans/stats_report.hpp"

namespace gcvm::vm {

namespace {

std::string mib(std::uint64_t bytes) { return fmt::format("{:.1f}M", bytes / 1048576.0); }

/// Bytes in the unit that shows them best: 512B, 3.5K, 12.0M, 1.2G.
std::string bytes_text(double bytes) {
  if (bytes < 1024) return fmt::format("{:.0f}B", bytes);
  if (bytes < 1048576) return fmt::format("{:.1f}K", bytes / 1024);
  if (bytes < 1073741824) return fmt::format("{:.1f}M", bytes / 1048576);
  return fmt::format("{:.2f}G", bytes / 1073741824);
}

struct Totals {
  double pause_ms = 0, max_pause_ms = 0, mark_ms = 0, sweep_ms = 0, rebuild_ms = 0, verify_ms = 0;
  std::uint64_t marked = 0, freed = 0;
};

Totals totals(const std::vector<CollectionStats>& collections) {
  Totals t;
  for (const CollectionStats& c : collections) {
    t.pause_ms += c.pause_ms;
    if (c.pauses.empty()) t.max_pause_ms = std::max(t.max_pause_ms, c.pause_ms);
    for (const PauseRecord& p : c.pauses) t.max_pause_ms = std::max(t.max_pause_ms, p.ms);
    t.mark_ms += c.mark.mark_ms;
    t.sweep_ms += c.sweep.sweep_ms;
    t.rebuild_ms += c.rebuild_ms;
    t.verify_ms += c.verify_ms;
    t.marked += c.mark.marked_objects;
    t.freed += c.sweep.freed_objects;
  }
  return t;
}

/// The generational plan's figures: young and full pauses, their ratio, promotions.
struct GenerationalFigures {
  PauseHistogram young, full;
  std::uint64_t promoted = 0;
  /// Young collections per full one; nullopt without a full collection.
  std::optional<double> young_per_full() const {
    if (full.count == 0) return std::nullopt;
    return static_cast<double>(young.count) / static_cast<double>(full.count);
  }
};

GenerationalFigures generational_figures(const std::vector<CollectionStats>& collections) {
  GenerationalFigures g{pause_histogram(collections, CollectionKind::Young),
                        pause_histogram(collections, CollectionKind::Full)};
  for (const CollectionStats& c : collections) g.promoted += c.promoted_objects;
  return g;
}

/// The concurrent plan's figures: its pauses by kind, stalls, concurrent mark and lazy
/// sweep (every cycle's, the last one's at exit included).
struct ConcurrentFigures {
  PauseHistogram initial, final_pauses, stall, fallback;
  double concurrent_mark_ms = 0, lazy_sweep_ms = 0;
};

ConcurrentFigures concurrent_figures(const std::vector<CollectionStats>& collections,
                                     const std::optional<LazySweepTotals>& exit_lazy_sweep) {
  ConcurrentFigures c{pause_histogram(collections, PauseKind::Initial), pause_histogram(collections, PauseKind::Final),
                      pause_histogram(collections, PauseKind::Stall), pause_histogram(collections, PauseKind::Fallback)};
  for (const CollectionStats& s : collections) {
    c.concurrent_mark_ms += s.concurrent_mark_ms;
    c.lazy_sweep_ms += s.previous_lazy_sweep.ms;
  }
  if (exit_lazy_sweep) c.lazy_sweep_ms += exit_lazy_sweep->ms;
  return c;
}

/// Collections in which the device failed and the CPU marked instead.
std::uint64_t device_fallbacks(const std::vector<CollectionStats>& collections) {
  return static_cast<std::uint64_t>(
      std::count_if(collections.begin(), collections.end(), [](const CollectionStats& c) { return c.device_fallback(); }));
}

std::string lazy_sweep_text(const LazySweepTotals& sweep) {
  return fmt::format("{:.3f} ms ({} blocks, {} freed)", sweep.ms, sweep.blocks, sweep.freed_objects);
}

/// `what` names what is counted: "collection", or "pause" where a collection has several.
std::string histogram_text(const PauseHistogram& h, std::string_view what = "collection") {
  return fmt::format("{} {}{}, pause total {:.3f} ms, p50 {:.3f}, p90 {:.3f}, max {:.3f} ms", h.count, what,
                     h.count == 1 ? "" : "s", h.total_ms, h.p50_ms, h.p90_ms, h.max_ms);
}

}  // namespace

nlohmann::json PauseHistogram::json() const {
  return {{"count", count},   {"total_ms", total_ms}, {"p50_ms", p50_ms},
          {"p90_ms", p90_ms}, {"p99_ms", p99_ms},     {"max_ms", max_ms}};
}

namespace {

PauseHistogram histogram_of(std::vector<double> pauses) {
  PauseHistogram h;
  for (const double p : pauses) h.total_ms += p;
  if (pauses.empty()) return h;
  std::sort(pauses.begin(), pauses.end());
  h.count = pauses.size();
  h.p50_ms = nearest_rank(pauses, 0.5);
  h.p90_ms = nearest_rank(pauses, 0.9);
  h.p99_ms = nearest_rank(pauses, 0.99);
  h.max_ms = pauses.back();
  return h;
}

}  // namespace

PauseHistogram pause_histogram(const std::vector<CollectionStats>& collections, std::optional<CollectionKind> kind) {
  std::vector<double> pauses;
  for (const CollectionStats& c : collections) {
    if (kind && c.kind != *kind) continue;
    if (c.pauses.empty()) pauses.push_back(c.pause_ms);
    for (const PauseRecord& p : c.pauses) pauses.push_back(p.ms);
  }
  return histogram_of(std::move(pauses));
}

PauseHistogram pause_histogram(const std::vector<CollectionStats>& collections, PauseKind kind) {
  std::vector<double> pauses;
  for (const CollectionStats& c : collections)
    for (const PauseRecord& p : c.pauses)
      if (p.kind == kind) pauses.push_back(p.ms);
  return histogram_of(std::move(pauses));
}

/// The device mirror's sync of a GPU mark: the graph bytes the mutator changed since
/// the last sync, the bytes that crossed the link, and at what speed, or that the
/// device applied them with the mark's first launch when the sync did not wait for them
/// (empty for CPU markers).
std::string sync_log_part(const MarkStats& mark) {
  const auto changed = mark.detail("sync_changed_bytes");
  const auto sent = mark.detail("sync_bytes");
  if (!changed || !sent) return {};
  const std::string speed = mark.detail("sync_waited").value_or(1) != 0
                                ? fmt::format("{:.1f} GB/s", mark.detail("sync_gbps").value_or(0))
                                : std::string("applied before the mark");
  return fmt::format(", sync {} changed -> {} sent{} in {:.3f} ms ({})", bytes_text(*changed), bytes_text(*sent),
                     mark.detail("sync_full").value_or(0) != 0 ? " (full)" : "", mark.detail("sync_ms").value_or(0),
                     speed);
}

namespace {

/// A cycle's pauses: "initial 0.906 + final 0.134".
std::string pauses_text(const CollectionStats& s) {
  std::string pauses;
  for (const PauseRecord& p : s.pauses)
    pauses += fmt::format("{}{} {:.3f}", pauses.empty() ? "" : " + ", pause_kind_name(p.kind), p.ms);
  return pauses;
}

/// The previous cycle's lazy sweep, when it swept anything.
std::string previous_lazy_sweep_part(const CollectionStats& s) {
  return s.previous_lazy_sweep.blocks > 0 ? ", lazy sweep of the last cycle " + lazy_sweep_text(s.previous_lazy_sweep)
                                          : std::string();
}

std::string verify_part(const CollectionStats& s) {
  return s.verify_ms > 0 ? fmt::format(", verified in {:.3f} ms", s.verify_ms) : std::string();
}

std::optional<double> snapshot_detail(const CollectionStats& s, std::string_view key) {
  for (const auto& [name, value] : s.snapshot_details)
    if (name == key) return value;
  return std::nullopt;
}

/// What --gc-opt device-start=overlap adds (gc/plans/device_start.hpp): a mark made on
/// the CPU while the device started, or the first mark on the device (a stop-the-world
/// mark's figures, or a concurrent cycle's snapshot details).
std::string device_start_log_part(const CollectionStats& s) {
  auto figure = [&](std::string_view key) {
    const auto in_mark = s.mark.detail(key);
    return in_mark ? in_mark : snapshot_detail(s, key);
  };
  if (figure("device_starting")) return ", marked on the CPU (parallel): the device is starting";
  if (const auto ready = figure("device_ready_ms"))
    return fmt::format(", first on the device (open at {:.1f} ms, {} marks on the CPU before)", *ready,
                       figure("device_start_cpu_marks").value_or(0));
  return {};
}

std::string concurrent_log_line(const CollectionStats& s) {
  std::string snapshot;
  if (const auto copy = snapshot_detail(s, "copy_ms")) snapshot = fmt::format(", snapshot copy {:.3f} ms", *copy);
  if (const auto refreshed = snapshot_detail(s, "sync_refresh_bytes"); refreshed && *refreshed > 0)
    snapshot += fmt::format(", refresh sent {} in {:.0f} passes since the last mark", bytes_text(*refreshed),
                            snapshot_detail(s, "sync_refresh_passes").value_or(0));
  return fmt::format(
      "[gc {} concurrent] {}: {}->{}, marked {}, doomed {}, {} edges, pauses {:.3f} ms ({}), concurrent mark {:.3f} ms, "
      "cycle {:.3f} ms{}{}{}{}{}\n",
      s.index, s.reason, mib(s.heap_before_bytes), mib(s.heap_after_bytes), s.mark.marked_objects, s.sweep.freed_objects,
      s.mark.edges_traversed, s.pause_ms, pauses_text(s), s.concurrent_mark_ms, s.cycle_ms,
      s.stall_ms > 0 ? fmt::format(", STALL {:.3f} ms (the mutator waited for the mark)", s.stall_ms) : std::string(),
      snapshot, previous_lazy_sweep_part(s), device_start_log_part(s) + sync_log_part(s.mark), verify_part(s));
}

/// A cycle abandoned after a device error and the stop-the-world collection that replaced it.
std::string fallback_log_line(const CollectionStats& s) {
  return fmt::format(
      "[gc {} fallback] {}: DEVICE ERROR in {}; cycle abandoned, collected stop-the-world by {}: {}->{}, marked {}, "
      "freed {}, {} edges, pauses {:.3f} ms ({}), cycle {:.3f} ms{}{}\n",
      s.index, s.reason, s.device_error, s.collector, mib(s.heap_before_bytes), mib(s.heap_after_bytes),
      s.mark.marked_objects, s.sweep.freed_objects, s.mark.edges_traversed, s.pause_ms, pauses_text(s), s.cycle_ms,
      previous_lazy_sweep_part(s), verify_part(s));
}

}  // namespace

std::string exit_lazy_sweep_log_line(const LazySweepTotals& sweep) {
  return "[gc exit] lazy sweep of the last cycle " + lazy_sweep_text(sweep) + "\n";
}

std::string gc_log_line(const CollectionStats& s) {
  if (s.kind == CollectionKind::Concurrent) return concurrent_log_line(s);
  if (s.kind == CollectionKind::Fallback) return fallback_log_line(s);
  std::string parts = fmt::format("mark {:.3f} + sweep {:.3f}", s.mark.mark_ms, s.sweep.sweep_ms);
  if (s.rebuild_ms > 0) parts = fmt::format("rebuild {:.3f} + ", s.rebuild_ms) + parts;
  const std::string generations =
      s.generational ? fmt::format(", survived {}, promoted {}, remembered {} ({} young targets), mature {}", s.survivors,
                                   s.promoted_objects, s.remembered_objects, s.remembered_roots, s.mature_objects)
                     : std::string();
  return fmt::format("[gc {}{}] {}: {}->{}, marked {}, freed {}, {} edges{}, pause {:.3f} ms ({}){}{}{}\n", s.index,
                     s.generational ? std::string(" ") + kind_name(s.kind) : std::string(), s.reason,
                     mib(s.heap_before_bytes), mib(s.heap_after_bytes), s.mark.marked_objects, s.sweep.freed_objects,
                     s.mark.edges_traversed, generations, s.pause_ms, parts,
                     device_start_log_part(s) + sync_log_part(s.mark),
                     s.device_fallback()
                         ? fmt::format(", DEVICE ERROR in {}; marked on the CPU by {}", s.device_error, s.collector)
                         : std::string(),
                     verify_part(s));
}

std::string concurrent_summary(const std::vector<CollectionStats>& collections,
                               const std::optional<LazySweepTotals>& exit_lazy_sweep) {
  const ConcurrentFigures c = concurrent_figures(collections, exit_lazy_sweep);
  return fmt::format("  plan concurrent: initial {}\n                   final   {}\n", histogram_text(c.initial, "pause"),
                     histogram_text(c.final_pauses, "pause")) +
         fmt::format("  stalled cycles: {} ({:.3f} ms waiting for marks), concurrent mark {:.3f} ms, lazy sweep {:.3f} ms{}\n",
                     c.stall.count, c.stall.total_ms, c.concurrent_mark_ms, c.lazy_sweep_ms,
                     exit_lazy_sweep ? " (the last cycle's at exit: " + lazy_sweep_text(*exit_lazy_sweep) + ")"
                                     : std::string());
}

nlohmann::json pause_figures_json(const std::vector<CollectionStats>& collections,
                                  const std::optional<LazySweepTotals>& exit_lazy_sweep) {
  const GenerationalFigures g = generational_figures(collections);
  const ConcurrentFigures c = concurrent_figures(collections, exit_lazy_sweep);
  nlohmann::json exit_sweep;
  if (exit_lazy_sweep)
    exit_sweep = {{"ms", exit_lazy_sweep->ms},
                  {"blocks", exit_lazy_sweep->blocks},
                  {"freed_objects", exit_lazy_sweep->freed_objects}};
  return {
      {"pauses",
       {{"all", pause_histogram(collections).json()},
        {"young", g.young.json()},
        {"full", g.full.json()},
        {"initial", c.initial.json()},
        {"final", c.final_pauses.json()},
        {"stall", c.stall.json()},
        {"fallback", c.fallback.json()}}},
      {"stalled_cycles", c.stall.count},
      {"concurrent_mark_ms", c.concurrent_mark_ms},
      {"lazy_sweep_ms", c.lazy_sweep_ms},
      {"exit_lazy_sweep", exit_sweep},
      {"device_fallbacks", device_fallbacks(collections)},
  };
}

std::string run_summary(const RunFacts& f, const std::vector<CollectionStats>& collections) {
  const Totals t = totals(collections);
  std::string text = fmt::format(
      "gcvm run {}: {:.1f} ms, exit status {}\n"
      "  collector {} (refgraph {}), heap limit {}, {} in use at exit\n"
      "  allocated {} objects and {} arrays, {:.1f} MiB\n"
      "  {} collection{}, pause total {:.3f} ms, max {:.3f} ms = mark {:.3f} ms + sweep {:.3f} ms{}\n",
      f.program, f.run_ms, f.exit_status, f.collector, f.refgraph, mib(f.heap_limit_bytes), mib(f.heap_used_bytes),
      f.allocated.objects, f.allocated.arrays, f.allocated.bytes / 1048576.0, collections.size(),
      collections.size() == 1 ? "" : "s", t.pause_ms, t.max_pause_ms, t.mark_ms, t.sweep_ms,
      t.rebuild_ms > 0 ? fmt::format(" + rebuild {:.3f} ms", t.rebuild_ms) : std::string());
  text += "  pauses: " + histogram_text(pause_histogram(collections), f.plan == "concurrent" ? "pause" : "collection") +
          "\n";
  if (f.plan == "generational") {
    const GenerationalFigures g = generational_figures(collections);
    const auto ratio = g.young_per_full();
    text += fmt::format("  plan generational: young {}\n                    full  {}\n", histogram_text(g.young),
                        histogram_text(g.full));
    text += fmt::format("  young per full collection: {}, objects promoted: {}\n",
                        ratio ? fmt::format("{:.1f}", *ratio) : std::string("no full collection"), g.promoted);
  }
  if (f.plan == "concurrent") text += concurrent_summary(collections, f.exit_lazy_sweep);
  if (const std::uint64_t fallbacks = device_fallbacks(collections); fallbacks > 0) {
    const auto first = std::find_if(collections.begin(), collections.end(),
                                    [](const CollectionStats& c) { return c.device_fallback(); });
    text += fmt::format("  device fallbacks: {} (collection {}: {}; {} marked from then on)\n", fallbacks, first->index,
                        first->device_error, first->collector);
  }
  if (t.verify_ms > 0)
    text += fmt::format("  verified every collection ({:.3f} ms): graph matches heap, marks match serial{}\n", t.verify_ms,
                        f.plan == "generational"   ? ", remembered set complete, young collections free nothing reachable"
                        : f.plan == "concurrent" ? ", snapshot marks free nothing reachable now"
                                                 : "");
  return text;
}

nlohmann::json run_json(const RunFacts& f, const std::vector<CollectionStats>& collections) {
  const Totals t = totals(collections);
  nlohmann::json list = nlohmann::json::array();
  for (const CollectionStats& c : collections) list.push_back(collection_json(c));
  const GenerationalFigures g = generational_figures(collections);
  const auto ratio = g.young_per_full();
  nlohmann::json out = {
      {"command", "run"},
      {"program", f.program},
      {"collector", f.collector},
      {"plan", f.plan},
      {"young_per_full", ratio ? nlohmann::json(*ratio) : nlohmann::json()},
      {"promoted_objects", g.promoted},
      {"refgraph", f.refgraph},
      {"exit_status", f.exit_status},
      {"run_ms", f.run_ms},
      {"startup_ms", f.startup_ms},
      {"elapsed_ms", f.elapsed_ms},
      {"heap_limit_bytes", f.heap_limit_bytes},
      {"heap_used_bytes", f.heap_used_bytes},
      {"allocated_objects", f.allocated.objects},
      {"allocated_arrays", f.allocated.arrays},
      {"allocated_bytes", f.allocated.bytes},
      {"collection_count", collections.size()},
      {"total_pause_ms", t.pause_ms},
      {"max_pause_ms", t.max_pause_ms},
      {"mark_ms", t.mark_ms},
      {"sweep_ms", t.sweep_ms},
      {"rebuild_ms", t.rebuild_ms},
      {"verify_ms", t.verify_ms},
      {"marked_objects", t.marked},
      {"freed_objects", t.freed},
      {"collections", list},
  };
  out.update(pause_figures_json(collections, f.exit_lazy_sweep));
  return out;
}

}  // namespace gcvm::vm
