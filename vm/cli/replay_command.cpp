// `gcvm replay FILE`: replays a heap trace into a fresh heap under any collector,
// collecting at the recorded collection points (and, with --heap, whenever an
// allocation fails), and reports per-collection statistics.
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <memory>

#include "gc/collector.hpp"
#include "gc/marker_registry.hpp"
#include "gc/stats_report.hpp"
#include "gc/stopwatch.hpp"
#include "gc/trace_replay.hpp"
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
};

int run_replay(const ReplayArgs& args) {
  auto marker = make_marker(args.collector.choice());
  HeapConfig config;
  config.limit_bytes = heap_limit_flag(args.heap);
  if (!std::ifstream(args.file, std::ios::binary)) throw UsageError(args.file + ": cannot open the file");
  // TODO(#7): dispatch HPROF and V8 heap snapshots to their importers here.
  if (!trace::has_trace_magic(args.file))
    throw UsageError(args.file + ": byte 0: not a gcvm trace (it does not start with the magic bytes GCVMTRAC)");

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
    nlohmann::json out = totals.json();
    out["command"] = "replay";
    out["trace"] = args.file;
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
    out["collections"] = runs;
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
  CLI::App* cmd = app.add_subcommand("replay", "Replay a heap trace under any collector and report per collection");
  cmd->add_option("file", args->file, "Trace file (docs/trace-format.md)")->required();
  args->collector.add_to(*cmd);
  cmd->add_option("--heap", args->heap,
                  "Heap limit (e.g. 64M); an allocation that does not fit collects first, then fails with exit 3");
  cmd->add_option("--stats", args->stats, "Output format")->check(CLI::IsMember({"text", "json"}));
  cmd->add_flag("--verify", args->verify, "Check every collection's marks against the serial marker");
  cmd->add_flag("--gc-log", args->gc_log, "One line per collection");
  return [args] { return run_replay(*args); };
}

}  // namespace gcvm::cli
