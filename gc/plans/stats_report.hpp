// How collection statistics are shown: a human summary and a JSON object with the
// same figures (machine-readable, one object per run, stable key names).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "gc/plans/collector.hpp"

namespace gcvm {

/// The collection's figures; `start_ms` is on the process clock, `cpu_ms` null where
/// the collector does not measure it.
nlohmann::json collection_json(const CollectionStats& stats);
std::string collection_summary(const CollectionStats& stats);

/// FNV-1a over the mark words up to the last nonzero one, as 16 hex digits: equal
/// digests, equal marks, however many blocks the bitmap covers (how `gcvm compare`
/// checks that every collector marked the same objects).
std::string mark_digest(const MarkBitmap& marks);

}  // namespace gcvm

namespace gcvm {

/// One line per collection for --gc-log (no newline): number, reason, heap before ->
/// after, marked and freed objects, pause and its parts.
std::string collection_log_line(const CollectionStats& stats);

/// Sums over the collections of a run, for the summary at exit.
struct CollectionTotals {
  std::uint64_t collections = 0;
  std::uint64_t concurrent_cycles = 0;  // of them: concurrent mark, its pauses apart
  std::uint64_t marked_objects = 0;
  std::uint64_t freed_objects = 0;
  std::uint64_t edges_traversed = 0;
  double pause_ms = 0;
  double max_pause_ms = 0;  // the longest pause (a concurrent cycle has several)
  double mark_ms = 0;       // a concurrent cycle's mark is not in its pauses
  double sweep_ms = 0;
  double rebuild_ms = 0;
  double verify_ms = 0;

  void add(const CollectionStats& stats);
  nlohmann::json json() const;
  /// One line (no newline): collections, marked, freed, total and max pause (and how
  /// much of the mark ran concurrently).
  std::string summary() const;
};

}  // namespace gcvm
