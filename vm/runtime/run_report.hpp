// What `gcvm run` reports about the collector: one -Xlog:gc-style line per collection
// (--gc-log) and the end-of-run summary, as text or JSON (--stats). Per-collection
// JSON objects are gc/plans/stats_report.hpp's collection_json.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gc/plans/collector.hpp"
#include "vm/runtime/soa_heap_binding.hpp"

namespace gcvm::vm {

struct RunFacts {
  std::string program;
  std::string collector;
  std::string plan = "marksweep";  // marksweep | generational | concurrent
  std::string refgraph;  // barrier | rebuild
  std::uint64_t heap_limit_bytes = 0;
  std::uint64_t heap_used_bytes = 0;  // at exit
  AllocationTotals allocated;
  double run_ms = 0;
  double startup_ms = 0;  // process clock at the guest's first instruction: reading and compiling the program, the heap's setup
  double elapsed_ms = 0;  // process clock at the end of the run: the span of the pause timeline
  int exit_status = 0;
  /// The concurrent plan: the last cycle's lazy sweep, finished at exit
  /// (SoaHeapBinding::exit_lazy_sweep); nullopt under the other plans.
  std::optional<LazySweepTotals> exit_lazy_sweep;
};

/// Pause times of a set of collections: count, total and nearest-rank percentiles.
struct PauseHistogram {
  std::uint64_t count = 0;
  double total_ms = 0, p50_ms = 0, p90_ms = 0, p99_ms = 0, max_ms = 0;
  nlohmann::json json() const;
};
/// The histogram of the pauses of the collections of `kind`, or of all of them: one
/// pause per stop-the-world collection, and each pause of a concurrent cycle.
PauseHistogram pause_histogram(const std::vector<CollectionStats>& collections,
                               std::optional<CollectionKind> kind = std::nullopt);
/// The histogram of the concurrent cycles' pauses of one kind.
PauseHistogram pause_histogram(const std::vector<CollectionStats>& collections, PauseKind kind);

/// "[gc N] reason: 12.0M->3.1M (64.0M), marked M, freed F, pause P ms (mark .. + sweep ..)";
/// "[gc N young] ..." with promotion and remembered-set figures on a generational heap;
/// "[gc N concurrent] ..." with the cycle's pauses, concurrent mark, stall and lazy sweep;
/// "[gc N fallback] ..." for a cycle abandoned after a device error, with the error.
std::string gc_log_line(const CollectionStats& stats);
/// "[gc exit] lazy sweep of the last cycle ..." (the concurrent plan, at the end of a run).
std::string exit_lazy_sweep_log_line(const LazySweepTotals& sweep);

/// The pause figures of a run under any plan, beside its collections: `pauses` (the
/// histograms all, young, full, initial, final, stall, fallback), `stalled_cycles`,
/// `concurrent_mark_ms`, `lazy_sweep_ms` (every cycle's lazy sweep, `exit_lazy_sweep`'s
/// included), `exit_lazy_sweep` (the concurrent plan's last cycle's, finished at the
/// end; null under the other plans) and `device_fallbacks`. `gcvm replay` reports them
/// too.
nlohmann::json pause_figures_json(const std::vector<CollectionStats>& collections,
                                  const std::optional<LazySweepTotals>& exit_lazy_sweep);
/// The concurrent plan's summary lines: initial and final pause histograms, stalled
/// cycles, concurrent mark and lazy sweep time.
std::string concurrent_summary(const std::vector<CollectionStats>& collections,
                               const std::optional<LazySweepTotals>& exit_lazy_sweep);

/// Several lines: collections, total/max pause, mark/sweep split, allocation volume.
std::string run_summary(const RunFacts& facts, const std::vector<CollectionStats>& collections);

/// The same figures as JSON with a `collections` array of collection_json objects.
nlohmann::json run_json(const RunFacts& facts, const std::vector<CollectionStats>& collections);

}  // namespace gcvm::vm
