#include "vm/runtime/run_report.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "gc/stats_report.hpp"

namespace gcvm::vm {

namespace {

std::string mib(std::uint64_t bytes) { return fmt::format("{:.1f}M", bytes / 1048576.0); }

struct Totals {
  double pause_ms = 0, max_pause_ms = 0, mark_ms = 0, sweep_ms = 0, rebuild_ms = 0, verify_ms = 0;
  std::uint64_t marked = 0, freed = 0;
};

Totals totals(const std::vector<CollectionStats>& collections) {
  Totals t;
  for (const CollectionStats& c : collections) {
    t.pause_ms += c.pause_ms;
    t.max_pause_ms = std::max(t.max_pause_ms, c.pause_ms);
    t.mark_ms += c.mark.mark_ms;
    t.sweep_ms += c.sweep.sweep_ms;
    t.rebuild_ms += c.rebuild_ms;
    t.verify_ms += c.verify_ms;
    t.marked += c.mark.marked_objects;
    t.freed += c.sweep.freed_objects;
  }
  return t;
}

}  // namespace

std::string gc_log_line(const CollectionStats& s) {
  std::string parts = fmt::format("mark {:.3f} + sweep {:.3f}", s.mark.mark_ms, s.sweep.sweep_ms);
  if (s.rebuild_ms > 0) parts = fmt::format("rebuild {:.3f} + ", s.rebuild_ms) + parts;
  return fmt::format("[gc {}] {}: {}->{}, marked {}, freed {}, {} edges, pause {:.3f} ms ({}){}\n", s.index, s.reason,
                     mib(s.heap_before_bytes), mib(s.heap_after_bytes), s.mark.marked_objects, s.sweep.freed_objects,
                     s.mark.edges_traversed, s.pause_ms, parts,
                     s.verify_ms > 0 ? fmt::format(", verified in {:.3f} ms", s.verify_ms) : std::string());
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
  if (t.verify_ms > 0)
    text += fmt::format("  verified every collection ({:.3f} ms): graph matches heap, marks match serial\n", t.verify_ms);
  return text;
}

nlohmann::json run_json(const RunFacts& f, const std::vector<CollectionStats>& collections) {
  const Totals t = totals(collections);
  nlohmann::json list = nlohmann::json::array();
  for (const CollectionStats& c : collections) list.push_back(collection_json(c));
  return {
      {"command", "run"},
      {"program", f.program},
      {"collector", f.collector},
      {"refgraph", f.refgraph},
      {"exit_status", f.exit_status},
      {"run_ms", f.run_ms},
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
}

}  // namespace gcvm::vm
