// `gcvm mark --graph=SPEC`: build a synthetic heap, collect it, report.
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <optional>

#include "gc/collector.hpp"
#include "gc/heap_materializer.hpp"
#include "gc/marker_registry.hpp"
#include "gc/recording_sink.hpp"
#include "gc/stats_report.hpp"
#include "gc/stopwatch.hpp"
#include "heapgraph/graph_spec.hpp"
#include "heapgraph/synthetic_heaps.hpp"
#include "vm/cli/collector_args.hpp"
#include "vm/cli/commands.hpp"
#include "vm/cli/size_arg.hpp"

namespace gcvm::cli {

namespace {

struct MarkArgs {
  std::string graph;
  CollectorArgs collector;
  std::string heap;
  std::string stats = "text";
  std::uint64_t seed = kDefaultGraphSeed;
  unsigned collections = 1;
  bool verify = false;
  std::string record_trace;
};

int run_mark(const MarkArgs& args) {
  const GraphSpec spec = parse_graph_spec(args.graph);
  auto marker = make_marker(args.collector.choice());

  HeapConfig config;
  config.limit_bytes = heap_limit_flag(args.heap);
  const auto size = spec.estimate();
  const std::uint64_t max_objects = std::uint64_t{kMaxBlocks} * kSlotsPerBlock;
  if (size.objects > max_objects)
    throw UsageError(fmt::format("graph spec '{}' needs {} objects; object ids address at most {}", spec.text,
                                 size.objects, max_objects));
  if (size.references > config.max_edges)
    throw UsageError(fmt::format("graph spec '{}' needs {} references; the reference graph holds at most {}",
                                 spec.text, size.references, config.max_edges));

  Heap heap(config);
  HeapMaterializer builder(heap);
  std::optional<trace::TraceWriter> writer;
  std::optional<TraceRecorder> recorder;
  std::optional<RecordingSink> recording;
  if (!args.record_trace.empty()) {
    writer.emplace(args.record_trace);
    recorder.emplace(heap, *writer);
    recording.emplace(builder, *recorder);
  }
  const Stopwatch build_clock;
  try {
    build_synthetic_heap(spec, recording ? static_cast<HeapSink&>(*recording) : builder, args.seed);
  } catch (const HeapExhausted& e) {
    throw UsageError(fmt::format("graph spec '{}' does not fit the heap: {}", spec.text, e.what()));
  }
  const double build_ms = build_clock.elapsed_ms();

  Collector collector(heap, std::move(marker), args.verify);
  nlohmann::json runs = nlohmann::json::array();
  const bool json = args.stats == "json";
  if (!json)
    fmt::print("gcvm mark: graph {} (seed {}), {} objects in {} blocks, {} references; built in {:.1f} ms\n",
               spec.text, args.seed, builder.object_count(), heap.blocks().blocks_in_use(),
               heap.graph().edges_reserved(), build_ms);
  for (unsigned i = 0; i < args.collections; ++i) {
    const char* reason = i == 0 ? "explicit" : "repeat";
    if (recorder) recorder->collecting(builder.roots(), reason);
    const CollectionStats stats = collector.collect(builder.roots(), reason);
    if (json)
      runs.push_back(collection_json(stats));
    else
      fmt::print("{}", collection_summary(stats));
  }
  if (recorder) {
    recorder->finish();
    if (!json)
      fmt::print("recorded trace {}: {} events in {} chunks, {} bytes\n", args.record_trace, recorder->totals().events,
                 recorder->totals().chunks, recorder->totals().bytes);
  }
  if (json) {
    nlohmann::json out = runs.front();
    if (recorder) {
      out["trace"] = args.record_trace;
      out["trace_events"] = recorder->totals().events;
      out["trace_bytes"] = recorder->totals().bytes;
    }
    out["command"] = "mark";
    out["graph"] = spec.text;
    out["seed"] = args.seed;
    out["build_ms"] = build_ms;
    out["roots"] = builder.roots().size();
    out["graph_bytes"] = heap.graph().committed_bytes();
    out["collections"] = runs;
    fmt::print("{}\n", out.dump());
  }
  return kExitOk;
}

}  // namespace

std::function<int()> register_mark_command(CLI::App& app) {
  auto args = std::make_shared<MarkArgs>();
  CLI::App* cmd = app.add_subcommand("mark", "Build a synthetic heap, mark and sweep it, and report");
  cmd->add_option("--graph", args->graph, std::string("Synthetic heap: ") + std::string(graph_spec_forms()))
      ->required();
  args->collector.add_to(*cmd);
  cmd->add_option("--heap", args->heap, "Heap limit (e.g. 64M, 2G); default: the whole id space");
  cmd->add_option("--stats", args->stats, "Output format")->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("--seed", args->seed, "Seed for random graphs");
  cmd->add_option("--collections", args->collections, "Collections to run (later ones re-mark the survivors)")
      ->check(CLI::Range(1u, 1000u));
  cmd->add_flag("--verify", args->verify, "Check the graph against the heap and the marks independently");
  cmd->add_option("--record-trace", args->record_trace,
                  "Record the heap's construction and collections as a trace (docs/trace-format.md)");
  return [args] { return run_mark(*args); };
}

}  // namespace gcvm::cli
