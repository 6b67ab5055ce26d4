#include "gc/plans/stats_report.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gcvm {

nlohmann::json collection_json(const CollectionStats& s) {
  nlohmann::json details = nlohmann::json::object();
  for (const auto& [key, value] : s.mark.details) details[key] = value;
  nlohmann::json json = {
      {"index", s.index},
      {"kind", kind_name(s.kind)},
      {"reason", s.reason},
      {"collector", s.collector},
      {"objects_before", s.sweep.objects_before},
      {"marked_objects", s.mark.marked_objects},
      {"freed_objects", s.sweep.freed_objects},
      {"blocks_freed", s.sweep.blocks_freed},
      {"edges_traversed", s.mark.edges_traversed},
      {"heap_before_bytes", s.heap_before_bytes},
      {"heap_after_bytes", s.heap_after_bytes},
      {"rebuild_ms", s.rebuild_ms},
      {"mark_ms", s.mark.mark_ms},
      {"sweep_ms", s.sweep.sweep_ms},
      {"sweep_settle_ms", s.sweep.settle_ms},
      {"sweep_threads", s.sweep.threads},
      {"sweep_block_work_ms", s.sweep.block_work_ms},
      {"sweep_pool_lead_ms", s.sweep_pool_lead_ms >= 0 ? nlohmann::json(s.sweep_pool_lead_ms) : nlohmann::json()},
      {"pause_ms", s.pause_ms},
      {"start_ms", s.start_ms},
      {"cpu_ms", s.cpu_ms >= 0 ? nlohmann::json(s.cpu_ms) : nlohmann::json()},
      {"verify_ms", s.verify_ms},
      {"mark_details", details},
      {"generational", s.generational},
      {"remembered_objects", s.remembered_objects},
      {"remembered_roots", s.remembered_roots},
      {"survivors", s.survivors},
      {"promoted_objects", s.promoted_objects},
      {"mature_objects", s.mature_objects},
      {"device_fallback", s.device_fallback()},
  };
  if (s.device_fallback()) json["device_error"] = s.device_error;
  if (s.kind == CollectionKind::Concurrent || s.kind == CollectionKind::Fallback) {
    nlohmann::json pauses = nlohmann::json::array();
    for (const PauseRecord& p : s.pauses)
      pauses.push_back({{"kind", pause_kind_name(p.kind)}, {"start_ms", p.start_ms}, {"ms", p.ms}});
    nlohmann::json snapshot = nlohmann::json::object();
    for (const auto& [key, value] : s.snapshot_details) snapshot[key] = value;
    json["pauses"] = pauses;
    json["concurrent_mark_ms"] = s.concurrent_mark_ms;
    json["cycle_ms"] = s.cycle_ms;
    json["stall_ms"] = s.stall_ms;
    json["snapshot_details"] = snapshot;
    json["lazy_sweep_ms"] = s.previous_lazy_sweep.ms;
    json["lazy_swept_blocks"] = s.previous_lazy_sweep.blocks;
    json["lazy_swept_objects"] = s.previous_lazy_sweep.freed_objects;
  }
  return json;
}

std::string mark_digest(const MarkBitmap& marks) {
  std::uint64_t hash = 0xCBF29CE484222325ull;
  const auto& words = marks.words();
  const auto last = std::find_if(words.rbegin(), words.rend(), [](std::uint64_t w) { return w != 0; }).base();
  for (auto word = words.begin(); word != last; ++word)
    for (int byte = 0; byte < 8; ++byte) hash = (hash ^ ((*word >> (8 * byte)) & 0xFF)) * 0x100000001B3ull;
  return fmt::format("{:016x}", hash);
}

std::string collection_summary(const CollectionStats& s) {
  const double mark_s = s.mark.mark_ms / 1000.0;
  std::string text = fmt::format(
      "collection {} ({}, {}): {} objects, {} reachable, {} freed; {} edges traversed\n"
      "  pause {:.3f} ms = mark {:.3f} ms ({:.1f} M edges/s) + sweep {:.3f} ms{}\n"
      "  heap {:.1f} MiB -> {:.1f} MiB\n",
      s.index, s.reason, s.collector, s.sweep.objects_before, s.mark.marked_objects, s.sweep.freed_objects,
      s.mark.edges_traversed, s.pause_ms, s.mark.mark_ms, mark_s > 0 ? s.mark.edges_traversed / mark_s / 1e6 : 0.0,
      s.sweep.sweep_ms, s.rebuild_ms > 0 ? fmt::format(" + rebuild {:.3f} ms", s.rebuild_ms) : std::string(),
      s.heap_before_bytes / 1048576.0, s.heap_after_bytes / 1048576.0);
  for (const auto& [key, value] : s.mark.details) text += fmt::format("  {}: {}\n", key, value);
  if (s.verify_ms > 0) text += fmt::format("  verified in {:.3f} ms: graph matches heap, marks match serial\n", s.verify_ms);
  return text;
}

}  // namespace gcvm

namespace gcvm {

std::string collection_log_line(const CollectionStats& s) {
  return fmt::format(
      "[gc {}] {} ({}): heap {:.2f} MiB -> {:.2f} MiB, {} marked, {} freed, pause {:.3f} ms (mark {:.3f} + sweep {:.3f}"
      "{})",
      s.index, s.reason, s.collector, s.heap_before_bytes / 1048576.0, s.heap_after_bytes / 1048576.0,
      s.mark.marked_objects, s.sweep.freed_objects, s.pause_ms, s.mark.mark_ms, s.sweep.sweep_ms,
      s.rebuild_ms > 0 ? fmt::format(" + rebuild {:.3f}", s.rebuild_ms) : std::string());
}

void CollectionTotals::add(const CollectionStats& s) {
  ++collections;
  concurrent_cycles += s.kind == CollectionKind::Concurrent;
  marked_objects += s.mark.marked_objects;
  freed_objects += s.sweep.freed_objects;
  edges_traversed += s.mark.edges_traversed;
  pause_ms += s.pause_ms;
  if (s.pauses.empty()) max_pause_ms = std::max(max_pause_ms, s.pause_ms);
  for (const PauseRecord& p : s.pauses) max_pause_ms = std::max(max_pause_ms, p.ms);
  mark_ms += s.mark.mark_ms;
  sweep_ms += s.sweep.sweep_ms;
  rebuild_ms += s.rebuild_ms;
  verify_ms += s.verify_ms;
}

nlohmann::json CollectionTotals::json() const {
  return {{"collections", collections}, {"marked_objects", marked_objects}, {"freed_objects", freed_objects},
          {"edges_traversed", edges_traversed}, {"pause_ms", pause_ms}, {"max_pause_ms", max_pause_ms},
          {"mark_ms", mark_ms}, {"sweep_ms", sweep_ms}, {"rebuild_ms", rebuild_ms}, {"verify_ms", verify_ms}};
}

std::string CollectionTotals::summary() const {
  if (concurrent_cycles > 0)
    return fmt::format("{} collections ({} concurrent cycles): {} marked, {} freed, {} edges traversed; pauses {:.3f} ms "
                       "total, max {:.3f} ms; mark {:.3f} ms (concurrent in the cycles), sweep {:.3f} ms",
                       collections, concurrent_cycles, marked_objects, freed_objects, edges_traversed, pause_ms,
                       max_pause_ms, mark_ms, sweep_ms);
  return fmt::format("{} collections: {} marked, {} freed, {} edges traversed; pause {:.3f} ms total (mark {:.3f} + "
                     "sweep {:.3f}), max {:.3f} ms",
                     collections, marked_objects, freed_objects, edges_traversed, pause_ms, mark_ms, sweep_ms,
                     max_pause_ms);
}

}  // namespace gcvm
