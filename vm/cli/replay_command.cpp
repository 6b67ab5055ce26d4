// `gcvm replay FILE`: replays a heap trace into a fresh heap under any collector,
// collecting at the recorded collection points (and, with --heap, whenever an
// allocation fails), and reports per-collection statistics. A Java HPROF dump or a V8
// heap snapshot (recognized by content, heapgraph/import/heap_format.hpp) is imported
// into a fresh heap and replayed as one full collection from its roots: marked objects
// are the reachable ones, freed objects the rest (the garbage of a `-all` dump).
//
// Warm collections: with --collections=N the replay goes on after its own collections
// (the dump's one, a trace's recorded ones) until N have run, from the same roots (a
// trace's latest snapshot), and with --mutate each one after the first is preceded by
// a round of the synthetic mutator (gc/mutator/synthetic_mutator.hpp), seeded by
// --seed. The mutator runs outside every pause. --plan=concurrent makes every
// collection a cycle of the concurrent plan, each round running while its cycle's
// snapshot is marked (vm/cli/replay_plan.hpp). --record-trace writes what a dump's
// replay did (the import, the mutation rounds, every collection point) as a trace, so
// replaying that trace repeats it exactly (under --plan=concurrent: the same
// collections, which free what the cycles freed).
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <optional>

#include "gc/heap/heap_materializer.hpp"
#include "gc/markers/marker_registry.hpp"
#include "gc/mutator/synthetic_mutator.hpp"
#include "gc/plans/stats_report.hpp"
#include "gc/trace/recording_sink.hpp"
#include "gc/util/stopwatch.hpp"
#include "gc/trace/trace_replay.hpp"
#include "heapgraph/import/heap_import.hpp"
#include "heapgraph/trace/trace_reader.hpp"
#include "vm/cli/collector_args.hpp"
#include "vm/cli/commands.hpp"
#include "vm/cli/mutation_arg.hpp"
#include "vm/cli/plan_args.hpp"
#include "vm/cli/replay_plan.hpp"
#include "vm/cli/size_arg.hpp"
#include "vm/cli/stats_outputs.hpp"
#include "vm/runtime/run_report.hpp"

namespace gcvm::cli {

namespace {

struct ReplayArgs {
  std::string file;
  CollectorArgs collector;
  PlanArgs plan;
  std::string heap;
  std::string stats = "text";
  bool verify = false;
  std::string gc_log;      // --gc-log[=FILE]
  std::string stats_json;  // --stats-json=FILE
  bool wants_json() const { return stats == "json" || !stats_json.empty(); }
  std::string weak_refs = "strong";
  unsigned collections = 1;
  std::string mutate = "none";
  std::uint64_t seed = 1;
  std::string record_trace;
};

nlohmann::json mutation_json(const MutationStats& m) {
  return {{"live_objects", m.live_objects},     {"live_references", m.live_references},
          {"rewired", m.rewired},               {"rewired_null", m.rewired_null},
          {"replaced", m.replaced},             {"garbage_objects", m.garbage_objects},
          {"stores", m.stores},                 {"objects_allocated", m.objects_allocated},
          {"bytes_allocated", m.bytes_allocated}, {"live_set_ms", m.live_set_ms},
          {"mutate_ms", m.mutate_ms}};
}

/// The --gc-log line of a mutation round (no newline), printed before its collection's:
/// the round ran before it (`when` "before") or while it marked ("during").
std::string mutation_log_line(std::string_view when, std::uint64_t collection, const MutationStats& m) {
  return fmt::format("[mutator {} gc {}] {} stores ({} rewired, {} of them to null; {} replaced; {} garbage "
                     "objects), {} objects / {:.2f} MiB allocated in {:.3f} ms{}",
                     when, collection, m.stores, m.rewired, m.rewired_null, m.replaced, m.garbage_objects,
                     m.objects_allocated, m.bytes_allocated / 1048576.0, m.mutate_ms,
                     m.live_set_ms > 0 ? fmt::format(" (finding the live set {:.3f} ms)", m.live_set_ms)
                                       : std::string());
}

/// The collections of one replay: those the replay itself runs (the dump's one, a
/// trace's recorded ones), then the warm ones up to --collections, each with a
/// mutation round when --mutate names one; and what every collection reports.
class ReplayRun {
 public:
  ReplayRun(const ReplayArgs& args, Heap& heap, ReplayPlan& plan, TraceRecorder* recorder)
      : args_(args),
        spec_(parse_mutation_flag(args.mutate)),
        plan_(plan),
        mutator_(heap, spec_, args.seed, recorder),
        log_(args.gc_log, stdout) {
    if (recorder != nullptr)
      plan_.before_collection = [recorder](std::span<const ObjectId> roots, const std::string& reason) {
        recorder->collecting(roots, reason);
      };
  }

  /// A collection the replay ran (a trace's recorded or budget collection).
  void observed(const CollectionStats& stats) { report(stats, nullptr); }

  /// One collection from `roots`, with a mutation round if one is due.
  void collect(std::span<const ObjectId> roots, const char* reason) {
    const bool round_due = totals_.collections > 0 && !spec_.empty();
    ReplayCollection collection = plan_.collect(roots, reason, round_due ? &mutator_ : nullptr);
    if (collection.mutation) {
      const MutationStats& m = *collection.mutation;
      ++rounds_;
      mutated_.stores += m.stores;
      mutated_.objects_allocated += m.objects_allocated;
      mutated_.bytes_allocated += m.bytes_allocated;
      mutated_.live_set_ms += m.live_set_ms;
      mutated_.mutate_ms += m.mutate_ms;
    }
    report(collection.stats, collection.mutation ? &*collection.mutation : nullptr);
  }

  /// The warm collections: until --collections have run, from `roots`; then the end of
  /// the plan (the concurrent plan's last lazy sweep).
  void finish(std::span<const ObjectId> roots) {
    while (totals_.collections < args_.collections) collect(roots, "repeat");
    exit_lazy_sweep_ = plan_.finish();
    if (log_ && exit_lazy_sweep_) log_.write(vm::exit_lazy_sweep_log_line(*exit_lazy_sweep_));
  }

  const CollectionTotals& totals() const { return totals_; }
  nlohmann::json& runs() { return runs_; }
  /// The keys every replay's JSON adds for its plan, pauses, warm collections and mutation.
  void add_json(nlohmann::json& out) const {
    out["plan"] = plan_.name();
    out.update(vm::pause_figures_json(collections_, exit_lazy_sweep_));
    out["mutate"] = spec_.text();
    out["seed"] = args_.seed;
    out["mutation"] = {{"rounds", rounds_},
                       {"stores", mutated_.stores},
                       {"objects_allocated", mutated_.objects_allocated},
                       {"bytes_allocated", mutated_.bytes_allocated},
                       {"live_set_ms", mutated_.live_set_ms},
                       {"mutate_ms", mutated_.mutate_ms}};
  }
  /// The text summary's lines after the totals (each with newline): the concurrent
  /// plan's pauses (a cycle has several), the mutation.
  std::string summary_lines() const {
    std::string text;
    if (plan_.name() == "concurrent")
      text = "pauses: " + pause_text(vm::pause_histogram(collections_)) + "\n" +
             vm::concurrent_summary(collections_, exit_lazy_sweep_);
    if (rounds_ > 0)
      text += fmt::format(
          "mutator ({}, seed {}): {} rounds, {} stores, {} objects / {:.2f} MiB allocated in {:.1f} ms{}\n",
          spec_.text(), args_.seed, rounds_, mutated_.stores, mutated_.objects_allocated,
          mutated_.bytes_allocated / 1048576.0, mutated_.mutate_ms,
          mutated_.live_set_ms > 0 ? fmt::format(" ({:.1f} ms finding the live sets)", mutated_.live_set_ms)
                                   : std::string());
    return text;
  }

 private:
  static std::string pause_text(const vm::PauseHistogram& h) {
    return fmt::format("{} pauses, total {:.3f} ms, p50 {:.3f}, p90 {:.3f}, p99 {:.3f}, max {:.3f} ms", h.count,
                       h.total_ms, h.p50_ms, h.p90_ms, h.p99_ms, h.max_ms);
  }

  void report(const CollectionStats& stats, const MutationStats* mutation) {
    totals_.add(stats);
    collections_.push_back(stats);
    if (args_.wants_json()) {
      nlohmann::json j = collection_json(stats);
      j["mark_digest"] = mark_digest(plan_.last_marks());
      if (mutation != nullptr) j["mutation"] = mutation_json(*mutation);
      runs_.push_back(std::move(j));
    }
    if (log_) {
      const bool concurrent = plan_.name() == "concurrent";
      if (mutation != nullptr)
        log_.write(mutation_log_line(concurrent ? "during" : "before", stats.index, *mutation) + "\n");
      log_.write(concurrent ? vm::gc_log_line(stats) : collection_log_line(stats) + "\n");
    }
  }

  const ReplayArgs& args_;
  MutationSpec spec_;
  ReplayPlan& plan_;
  SyntheticMutator mutator_;
  CollectionTotals totals_;
  std::vector<CollectionStats> collections_;
  std::optional<LazySweepTotals> exit_lazy_sweep_;
  nlohmann::json runs_ = nlohmann::json::array();
  std::uint64_t rounds_ = 0;
  MutationStats mutated_;  // sums of the rounds' stores, allocations and times
  GcLog log_;
};

/// The --stats=json object of a replay (of a trace or a snapshot).
nlohmann::json replay_json(const std::string& file, ReplayRun& run, const ReplayPlan& plan, const Heap& heap,
                           const ReplaySummary& summary, double replay_ms) {
  nlohmann::json out = run.totals().json();
  out["command"] = "replay";
  out["trace"] = file;
  out["collector"] = std::string(plan.marker_name());
  out["events"] = summary.events;
  out["allocations"] = summary.allocations;
  out["allocated_bytes"] = summary.allocated_bytes;
  out["stores"] = summary.stores;
  out["recorded_collections"] = summary.recorded_collections;
  out["budget_collections"] = summary.budget_collections;
  out["heap_limit_bytes"] = heap.limit_bytes();
  out["heap_bytes"] = heap.used_bytes();
  out["replay_ms"] = replay_ms;
  out["elapsed_ms"] = process_ms();
  run.add_json(out);
  out["collections"] = std::move(run.runs());
  return out;
}

/// An HPROF dump or V8 snapshot as one full collection (then the warm ones); the JSON
/// has the keys of a trace replay's (allocations = imported objects, stores =
/// references kept). With --record-trace, the import and every collection point are
/// recorded.
int replay_snapshot(const ReplayArgs& args, std::unique_ptr<Marker> marker, const HeapConfig& config) {
  Heap heap(config);
  HeapMaterializer materializer(heap);
  OptionalRecording recording(args.record_trace, heap, materializer);
  TraceRecorder* recorder = recording.recorder();
  ImportOptions options;
  options.weak_refs = args.weak_refs == "weak" ? WeakRefs::Weak : WeakRefs::Strong;
  const Stopwatch import_clock;
  const ImportSummary imported = import_heap_file(args.file, recording.sink(), options);
  const double import_ms = import_clock.elapsed_ms();

  const std::unique_ptr<ReplayPlan> plan =
      make_replay_plan(args.plan, heap, std::move(marker), args.verify, args.collector.device_fallback());
  ReplayRun run(args, heap, *plan, recorder);
  const Stopwatch clock;
  run.collect(materializer.roots(), "snapshot");
  run.finish(materializer.roots());
  const double replay_ms = clock.elapsed_ms();
  if (recorder != nullptr) recorder->finish();

  if (args.wants_json()) {
    const ReplaySummary as_replay{.events = imported.objects + imported.edges_kept + imported.roots,
                                  .allocations = imported.objects,
                                  .allocated_bytes = imported.bytes,
                                  .stores = imported.edges_kept,
                                  .recorded_collections = 1,
                                  .budget_collections = 0};
    nlohmann::json out = replay_json(args.file, run, *plan, heap, as_replay, replay_ms);
    out["format"] = imported.format;
    out["roots"] = imported.roots;
    out["edges_dropped"] = imported.edges_dropped;
    out["edges_weak"] = imported.edges_weak;
    out["import_ms"] = import_ms;
    if (recorder != nullptr) {
      out["record_trace"] = args.record_trace;
      out["trace_events"] = recorder->totals().events;
      out["trace_bytes"] = recorder->totals().bytes;
    }
    if (args.stats == "json") fmt::print("{}\n", out.dump());
    write_stats_json(args.stats_json, out);
  }
  if (args.stats != "json") {
    fmt::print("gcvm replay: {} ({}) under {} ({}): {} objects, {} references kept, {} roots imported in {:.1f} ms; "
               "{} {}{}\n{}\n{}",
               args.file, imported.format, plan->marker_name(), plan->name(), imported.objects, imported.edges_kept,
               imported.roots, import_ms, args.collections == 1 ? "one" : std::to_string(args.collections),
               plan->name() == "concurrent" ? "concurrent cycle" : "full collection", args.collections == 1 ? "" : "s",
               run.totals().summary(), run.summary_lines());
    if (recorder != nullptr)
      fmt::print("recorded trace {}: {} events in {} chunks, {} bytes\n", args.record_trace,
                 recorder->totals().events, recorder->totals().chunks, recorder->totals().bytes);
  }
  return kExitOk;
}

int run_replay(const ReplayArgs& args) {
  const CollectorChoice choice = args.collector.choice();
  args.collector.device_exit().apply();
  check_replay_plan(args.plan);
  args.plan.check_collector(choice);
  auto marker = args.collector.device_start().make_marker(choice);
  HeapConfig config;
  config.limit_bytes = heap_limit_flag(args.heap);
  const MutationSpec spec = parse_mutation_flag(args.mutate);
  if (!spec.empty() && args.collections < 2)
    throw UsageError("--mutate=" + args.mutate +
                     " changes the heap between collections: it needs --collections=2 or more");
  const HeapFormat format = detect_heap_format(args.file);
  if (format != HeapFormat::GcvmTrace) return replay_snapshot(args, std::move(marker), config);
  if (args.weak_refs != "strong")
    throw UsageError("--weak-refs applies to HPROF heap dumps; " + args.file + " is a gcvm trace");
  if (!args.record_trace.empty())
    throw UsageError("--record-trace converts a heap dump into a trace; " + args.file + " is a gcvm trace already");

  trace::TraceReader reader(args.file);
  Heap heap(config);
  const std::unique_ptr<ReplayPlan> plan =
      make_replay_plan(args.plan, heap, std::move(marker), args.verify, args.collector.device_fallback());
  TraceReplayer replayer(
      heap,
      [&plan](std::span<const ObjectId> roots, std::string reason) {
        return plan->collect(roots, std::move(reason), nullptr).stats;
      },
      ReplayOptions{.collect_on_failure = !args.heap.empty()});
  ReplayRun run(args, heap, *plan, nullptr);
  const Stopwatch clock;
  const ReplaySummary summary = replayer.run(reader, [&](const CollectionStats& stats) { run.observed(stats); });
  run.finish(replayer.roots());
  const double replay_ms = clock.elapsed_ms();

  if (args.wants_json()) {
    const nlohmann::json out = replay_json(args.file, run, *plan, heap, summary, replay_ms);
    if (args.stats == "json") fmt::print("{}\n", out.dump());
    write_stats_json(args.stats_json, out);
  }
  if (args.stats != "json") {
    fmt::print("gcvm replay: {} under {} ({}): {} events ({} allocations, {} stores) in {:.1f} ms; {} recorded and {} "
               "heap-budget collections\n{}\n{}",
               args.file, plan->marker_name(), plan->name(), summary.events, summary.allocations, summary.stores,
               replay_ms, summary.recorded_collections, summary.budget_collections, run.totals().summary(),
               run.summary_lines());
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
  args->plan.add_plan_flag(*cmd);
  args->plan.add_concurrent_flags(*cmd);
  cmd->add_option("--heap", args->heap,
                  "Heap limit (e.g. 64M); an allocation that does not fit collects first, then fails with exit 3");
  cmd->add_option("--stats", args->stats, "Output format")->check(CLI::IsMember({"text", "json"}));
  cmd->add_flag("--verify", args->verify, "Check every collection's marks against the serial marker");
  add_gc_log_flag(*cmd, args->gc_log, "stdout (and one per mutation round)");
  add_stats_json_flag(*cmd, args->stats_json);
  cmd->add_option("--weak-refs", args->weak_refs, "HPROF: treat java.lang.ref.Reference.referent as weak or strong")
      ->check(CLI::IsMember({"strong", "weak"}));
  cmd->add_option("--collections", args->collections,
                  "Collections in all: after the replay's own (a dump's one, a trace's recorded ones), warm ones "
                  "from the same roots until this many have run")
      ->check(CLI::Range(1u, 1000000u));
  cmd->add_option("--mutate", args->mutate,
                  "Mutation before each warm collection: rewire=F (fraction of live references), replace=F "
                  "(fraction of live objects), garbage=SIZE, comma-separated, e.g. rewire=0.01,garbage=64M; "
                  "docs/heap-import.md");
  cmd->add_option("--seed", args->seed, "Seed of the mutator's random choices")->check(CLI::NonNegativeNumber);
  cmd->add_option("--record-trace", args->record_trace,
                  "Dumps: write what the replay did (import, mutation, collections) as a gcvm trace");
  return [args] { return run_replay(*args); };
}

}  // namespace gcvm::cli
