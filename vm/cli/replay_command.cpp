// `gcvm replay FILE`: replays a heap trace into a fresh heap under any collector,
// collecting at the recorded collection points (and, with --heap, whenever an
// allocation fails), and reports per-collection statistics. A Java HPROF dump or a V8
// heap snapshot (recognized by content, heapgraph/import/heap_format.hpp) is imported
// into a fresh heap and replayed as one full collection from its roots: marked objects
// are the reachable ones, freed objects the rest (the garbage of a `-all` dump).
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "gc/plans/collector.hpp"
#include "gc/heap/heap_materializer.hpp"
#include "gc/markers/marker_registry.hpp"
#include "gc/plans/stats_report.hpp"
#include "gc/util/stopwatch.hpp"
#include "gc/trace/trace_replay.hpp"
#include "heapgraph/import/heap_import.hpp"
#include "heapgraph/trace/trace_reader.hpp"
#include "vm/cli/collector_args.hpp"
#include "vm/cli/commands.hpp"
#include "vm/cli/size_arg.hpp"

namespace gcvm::cli {

namespace {

struct ReplayArgs {
  std::string file;
  CollectorArgs collector;
  std::string heap;
  std::string stats = "text";
  bool verify = false;
  bool gc_log = false;
  std::string weak_refs = "strong";
};

/// The --stats=json object of a replay (of a trace or a snapshot).
nlohmann::json replay_json(const std::string& file, const CollectionTotals& totals, const Collector& collector,
                           const Heap& heap, const ReplaySummary& summary, double replay_ms, nlohmann::json runs) {
  nlohmann::json out = totals.json();
  out["command"] = "replay";
  out["trace"] = file;
  out["collector"] = std::string(collector.marker().name());
  out["events"] = summary.events;
  out["allocations"] = summary.allocations;
  out["allocated_bytes"] = summary.allocated_bytes;
  out["stores"] = summary.stores;
  out["recorded_collections"] = summary.recorded_collections;
  out["budget_collections"] = summary.budget_collections;
  out["heap_limit_bytes"] = heap.limit_bytes();
  out["heap_bytes"] = heap.used_bytes();
  out["replay_ms"] = replay_ms;
  out["collections"] = std::move(runs);
  return out;
}

/// An HPROF dump or V8 snapshot as one full collection; the JSON has the keys of a
/// trace replay's (allocations = imported objects, stores = references kept).
int replay_snapshot(const ReplayArgs& args, std::unique_ptr<Marker> marker, const HeapConfig& config) {
  Heap heap(config);
  HeapMaterializer materializer(heap);
  ImportOptions options;
  options.weak_refs = args.weak_refs == "weak" ? WeakRefs::Weak : WeakRefs::Strong;
  const Stopwatch import_clock;
  const ImportSummary imported = import_heap_file(args.file, materializer, options);
  const double import_ms = import_clock.elapsed_ms();

  Collector collector(heap, std::move(marker), args.verify);
  const Stopwatch clock;
  const CollectionStats stats = collector.collect(materializer.roots(), "snapshot");
  const double replay_ms = clock.elapsed_ms();
  CollectionTotals totals;
  totals.add(stats);
  if (args.gc_log) fmt::print("{}\n", collection_log_line(stats));

  if (args.stats == "json") {
    const ReplaySummary as_replay{.events = imported.objects + imported.edges_kept + imported.roots,
                                  .allocations = imported.objects,
                                  .allocated_bytes = imported.bytes,
                                  .stores = imported.edges_kept,
                                  .recorded_collections = 1,
                                  .budget_collections = 0};
    nlohmann::json out = replay_json(args.file, totals, collector, heap, as_replay, replay_ms,
                                     nlohmann::json::array({collection_json(stats)}));
    out["format"] = imported.format;
    out["roots"] = imported.roots;
    out["edges_dropped"] = imported.edges_dropped;
    out["edges_weak"] = imported.edges_weak;
    out["import_ms"] = import_ms;
    fmt::print("{}\n", out.dump());
  } else {
    fmt::print("gcvm replay: {} ({}) under {}: {} objects, {} references kept, {} roots imported in {:.1f} ms; "
               "one full collection\n{}\n",
               args.file, imported.format, collector.marker().name(), imported.objects, imported.edges_kept,
               imported.roots, import_ms, totals.summary());
  }
  return kExitOk;
}

int run_replay(const ReplayArgs& args) {
  auto marker = make_marker(args.collector.choice());
  HeapConfig config;
  config.limit_bytes = heap_limit_flag(args.heap);
  const HeapFormat format = detect_heap_format(args.file);
  if (format != HeapFormat::GcvmTrace) return replay_snapshot(args, std::move(marker), config);
  if (args.weak_refs != "strong")
    throw UsageError("--weak-refs applies to HPROF heap dumps; " + args.file + " is a gcvm trace");

  trace::TraceReader reader(args.file);
  Heap heap(config);
  Collector collector(heap, std::move(marker), args.verify);
  TraceReplayer replayer(heap, collector, ReplayOptions{.collect_on_failure = !args.heap.empty()});
  const bool json = args.stats == "json";
  CollectionTotals totals;
  nlohmann::json runs = nlohmann::json::array();
  const Stopwatch clock;
  const ReplaySummary summary = replayer.run(reader, [&](const CollectionStats& stats) {
    totals.add(stats);
    if (json) runs.push_back(collection_json(stats));
    if (args.gc_log) fmt::print("{}\n", collection_log_line(stats));
  });
  const double replay_ms = clock.elapsed_ms();

  if (json) {
    const nlohmann::json out = replay_json(args.file, totals, collector, heap, summary, replay_ms, runs);
    fmt::print("{}\n", out.dump());
  } else {
    fmt::print("gcvm replay: {} under {}: {} events ({} allocations, {} stores) in {:.1f} ms; {} recorded and {} "
               "heap-budget collections\n{}\n",
               args.file, collector.marker().name(), summary.events, summary.allocations, summary.stores, replay_ms,
               summary.recorded_collections, summary.budget_collections, totals.summary());
  }
  return kExitOk;
}

}  // namespace

std::function<int()> register_replay_command(CLI::App& app) {
  auto args = std::make_shared<ReplayArgs>();
  CLI::App* cmd = app.add_subcommand(
      "replay", "Replay a heap trace, HPROF dump or V8 heap snapshot under any collector and report per collection");
  cmd->add_option("file", args->file,
                  "Trace file (docs/trace-format.md), HPROF dump or V8 heap snapshot (docs/heap-import.md), "
                  "recognized by content")
      ->required();
  args->collector.add_to(*cmd);
  cmd->add_option("--heap", args->heap,
                  "Heap limit (e.g. 64M); an allocation that does not fit collects first, then fails with exit 3");
  cmd->add_option("--stats", args->stats, "Output format")->check(CLI::IsMember({"text", "json"}));
  cmd->add_flag("--verify", args->verify, "Check every collection's marks against the serial marker");
  cmd->add_flag("--gc-log", args->gc_log, "One line per collection");
  cmd->add_option("--weak-refs", args->weak_refs, "HPROF: treat java.lang.ref.Reference.referent as weak or strong")
      ->check(CLI::IsMember({"strong", "weak"}));
  return [args] { return run_replay(*args); };
}

}  // namespace gcvm::cli
