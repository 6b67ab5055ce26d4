// `gcvm mark --graph=SPEC`: build a synthetic heap, collect it, report.
#include <fmt/format.h>

#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <utility>

#if GCVM_HAVE_BOEHM
#include "gc/boehm/boehm_collector.hpp"
#include "gc/boehm/boehm_sink.hpp"
#endif
#include "gc/plans/collector.hpp"
#include "gc/heap/heap_materializer.hpp"
#include "gc/markers/marker_registry.hpp"
#include "gc/trace/recording_sink.hpp"
#include "gc/plans/stats_report.hpp"
#include "gc/util/stopwatch.hpp"
#include "heapgraph/graph_spec.hpp"
#include "heapgraph/synthetic_heaps.hpp"
#include "vm/cli/collector_args.hpp"
#include "vm/cli/commands.hpp"
#include "vm/cli/size_arg.hpp"
#include "vm/cli/stats_outputs.hpp"

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
  std::string gc_log;      // --gc-log[=FILE]
  std::string stats_json;  // --stats-json=FILE
};

/// Prints the build line (text) and every collection, or one JSON object; `finish`
/// runs after the collections and may add to the JSON object (or print, in text).
/// `collect` returns a collection's statistics and the digest of its marks (empty
/// where the collector's marks are not a gcvm mark bitmap).
template <typename Collect>
void report(const MarkArgs& args, const GraphSpec& spec, std::uint64_t objects, std::string_view heap_line,
            double build_ms, std::uint64_t roots, std::uint64_t graph_bytes, Collect&& collect,
            const std::function<void(nlohmann::json*)>& finish = {}) {
  nlohmann::json runs = nlohmann::json::array();
  const bool print_json = args.stats == "json";
  const bool json = print_json || !args.stats_json.empty();
  const GcLog log(args.gc_log, stdout);
  if (!print_json)
    fmt::print("gcvm mark: graph {} (seed {}), {} objects {}; built in {:.1f} ms\n", spec.text, args.seed, objects,
               heap_line, build_ms);
  for (unsigned i = 0; i < args.collections; ++i) {
    const auto [stats, digest] = collect(i == 0 ? "explicit" : "repeat");
    if (json) {
      runs.push_back(collection_json(stats));
      if (!digest.empty()) runs.back()["mark_digest"] = digest;
    }
    if (!print_json) fmt::print("{}", collection_summary(stats));
    log.write(collection_log_line(stats) + "\n");
  }
  nlohmann::json out = json ? runs.front() : nlohmann::json();
  if (json) out.erase("mark_digest");  // the first collection's figures at the top; digests per collection only
  if (finish) finish(json ? &out : nullptr);
  if (json) {
    out["command"] = "mark";
    out["graph"] = spec.text;
    out["seed"] = args.seed;
    out["build_ms"] = build_ms;
    out["elapsed_ms"] = process_ms();
    out["roots"] = roots;
    out["graph_bytes"] = graph_bytes;
    out["collections"] = runs;
    if (print_json) fmt::print("{}\n", out.dump());
    write_stats_json(args.stats_json, out);
  }
}

#if GCVM_HAVE_BOEHM
/// `--gc=boehm`: the same graph built in libgc's heap, collected by GC_gcollect.
int run_boehm_mark(const MarkArgs& args, const GraphSpec& spec, const CollectorChoice& choice) {
  if (!choice.options.empty()) reject_gc_option("boehm", choice.options.front(), "");
  if (args.verify)
    throw UsageError("--verify checks a gcvm heap; --gc=boehm marks libgc's heap (compare its counts with --gc=serial)");
  BoehmHeap heap(choice.threads);
  BoehmHeap::set_max_heap_bytes(heap_limit_flag(args.heap));
  BoehmHeap::set_automatic(false);  // build without collections; the timed ones are explicit
  BoehmSink builder(heap);
  const Stopwatch build_clock;
  try {
    heap.build_on_scratch_thread([&] { build_synthetic_heap(spec, builder, args.seed); });
  } catch (const HeapExhausted& e) {
    throw UsageError(fmt::format("graph spec '{}' does not fit the heap: {}", spec.text, e.what()));
  }
  const double build_ms = build_clock.elapsed_ms();
  const std::uint64_t objects = builder.object_count();
  builder.forget_handles();
  BoehmHeap::set_automatic(true);
  BoehmCollector collector(heap);
  report(args, spec, objects, fmt::format("in libgc's heap ({} markers)", BoehmHeap::markers()), build_ms,
         heap.root_count(), 0, [&](const char* reason) { return std::pair{collector.collect(reason), std::string()}; });
  return kExitOk;
}
#endif

int run_mark(const MarkArgs& args) {
  const GraphSpec spec = parse_graph_spec(args.graph);
  const CollectorChoice choice = args.collector.choice();
  args.collector.device_exit().apply();
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
#if GCVM_HAVE_BOEHM
  if (collector_is_boehm(choice)) {
    if (!args.record_trace.empty()) throw UsageError("--record-trace records a gcvm heap; it does not apply to --gc=boehm");
    return run_boehm_mark(args, spec, choice);
  }
#endif
  if (args.collector.device_start().policy == DeviceStart::Policy::Overlap)
    throw UsageError("--gc-opt device-start=overlap opens the device while a program runs; gcvm mark marks a heap "
                     "it has built, on the device from the first mark (device-start=open)");
  auto marker = make_marker(choice);

  Heap heap(config);
  HeapMaterializer builder(heap);
  OptionalRecording recording(args.record_trace, heap, builder);
  TraceRecorder* recorder = recording.recorder();
  const Stopwatch build_clock;
  try {
    build_synthetic_heap(spec, recording.sink(), args.seed);
  } catch (const HeapExhausted& e) {
    throw UsageError(fmt::format("graph spec '{}' does not fit the heap: {}", spec.text, e.what()));
  }
  const double build_ms = build_clock.elapsed_ms();

  Collector collector(heap, std::move(marker), args.verify, args.collector.device_fallback());
  auto collect = [&](const char* reason) {
    if (recorder) recorder->collecting(builder.roots(), reason);
    CollectionStats stats = collector.collect(builder.roots(), reason);
    const bool digest = args.stats == "json" || !args.stats_json.empty();
    return std::pair{std::move(stats), digest ? mark_digest(collector.last_marks()) : std::string()};
  };
  auto finish_trace = [&](nlohmann::json* out) {
    if (!recorder) return;
    recorder->finish();
    if (out == nullptr) {
      fmt::print("recorded trace {}: {} events in {} chunks, {} bytes\n", args.record_trace, recorder->totals().events,
                 recorder->totals().chunks, recorder->totals().bytes);
      return;
    }
    (*out)["trace"] = args.record_trace;
    (*out)["trace_events"] = recorder->totals().events;
    (*out)["trace_bytes"] = recorder->totals().bytes;
  };
  report(args, spec, builder.object_count(),
         fmt::format("in {} blocks, {} references", heap.blocks().blocks_in_use(), heap.graph().edges_reserved()),
         build_ms, builder.roots().size(), heap.graph().committed_bytes(), collect, finish_trace);
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
  add_gc_log_flag(*cmd, args->gc_log, "stdout");
  add_stats_json_flag(*cmd, args->stats_json);
  return [args] { return run_mark(*args); };
}

}  // namespace gcvm::cli
