// `gcvm analyze FILE|--graph=SPEC`: heap-shape analysis (Maas et al. 2012, §3) of an
// imported heap (HPROF dump, V8 snapshot), the final heap of a gcvm trace (every object
// the trace allocated, freed ones included as garbage; roots = its last root snapshot)
// or a synthetic one: objects per BFS step
// from the roots, uncapped and with width caps, the out-degree distribution, object
// and edge counts, the share of objects without references. With --out=DIR it writes
// levels.csv, degrees.csv, shape.json and plots.gp there and runs gnuplot on the
// script to draw levels.png and degrees.png (or .svg).
#include <fmt/format.h>

#include <filesystem>
#include <memory>

#include "gc/util/stopwatch.hpp"
#include "heapgraph/csr_graph.hpp"
#include "heapgraph/graph_spec.hpp"
#include "heapgraph/heap_shape.hpp"
#include "heapgraph/heap_shape_report.hpp"
#include "heapgraph/import/heap_import.hpp"
#include "heapgraph/synthetic_heaps.hpp"
#include "heapgraph/trace/trace_heap_loader.hpp"
#include "vm/cli/commands.hpp"
#include "vm/cli/gnuplot.hpp"

namespace gcvm::cli {

namespace {

struct AnalyzeArgs {
  std::string file;
  std::string graph;
  std::uint64_t seed = kDefaultGraphSeed;
  std::vector<std::uint64_t> width_caps{128, 256, 1024, 32768};
  std::string out;
  std::string plots = "png";
  std::string weak_refs = "strong";
  std::string stats = "text";
};

int run_analyze(const AnalyzeArgs& args) {
  if (args.file.empty() == args.graph.empty()) throw UsageError("gcvm analyze takes a heap FILE or --graph=SPEC (one of them)");
  for (std::uint64_t cap : args.width_caps)
    if (cap == 0) throw UsageError("--width-cap=0: a width cap is a positive number of objects per step");

  const Stopwatch load_clock;
  CsrGraph graph;
  nlohmann::json source;
  std::string title;
  std::string import_line;
  if (!args.file.empty() && detect_heap_format(args.file) == HeapFormat::GcvmTrace) {
    if (args.weak_refs != "strong")
      throw UsageError("--weak-refs applies to HPROF heap dumps; " + args.file + " is a gcvm trace");
    const trace::TraceLoadSummary s = trace::load_trace_heap(args.file, graph);
    title = std::filesystem::path(args.file).filename().string();
    source = {{"file", args.file},     {"format", "trace"},     {"events", s.events},
              {"objects", s.objects},  {"stores", s.stores},    {"roots", s.roots},
              {"collections", s.collections}};
    import_line = fmt::format("{} (gcvm trace): {} events, {} objects allocated, {} stores, {} recorded collections; "
                              "{} roots in the last snapshot\n",
                              args.file, s.events, s.objects, s.stores, s.collections, s.roots);
  } else if (!args.file.empty()) {
    ImportOptions options;
    options.weak_refs = args.weak_refs == "weak" ? WeakRefs::Weak : WeakRefs::Strong;
    const ImportSummary s = import_heap_file(args.file, graph, options);
    title = std::filesystem::path(args.file).filename().string();
    source = {{"file", args.file},           {"format", s.format},
              {"objects", s.objects},        {"edges_kept", s.edges_kept},
              {"edges_dropped", s.edges_dropped}, {"edges_weak", s.edges_weak},
              {"roots", s.roots},            {"root_records", s.root_records},
              {"roots_dropped", s.roots_dropped}, {"bytes", s.bytes},
              {"bytes_per_object", s.bytes_per_object()}, {"file_bytes", s.file_bytes}};
    import_line = fmt::format("{} ({}): {} objects, {} references kept, {} dropped, {} weak; {} roots; {:.1f} bytes/object\n",
                              args.file, s.format, s.objects, s.edges_kept, s.edges_dropped, s.edges_weak, s.roots,
                              s.bytes_per_object());
  } else {
    const GraphSpec spec = parse_graph_spec(args.graph);
    const auto size = spec.estimate();
    if (size.objects >= kCsrNull - 1)
      throw UsageError(fmt::format("graph spec '{}' needs {} objects; analyze handles at most 2^32-2", spec.text, size.objects));
    build_synthetic_heap(spec, graph, args.seed);
    title = spec.text;
    source = {{"graph", spec.text}, {"seed", args.seed}};
    import_line = fmt::format("graph {} (seed {}): {} objects\n", spec.text, args.seed, graph.object_count());
  }

  const double load_ms = load_clock.elapsed_ms();
  const Stopwatch analyze_clock;
  const HeapShape shape = analyze_heap_shape(graph, args.width_caps);
  const double analyze_ms = analyze_clock.elapsed_ms();
  nlohmann::json report = heap_shape_json(shape);
  report["command"] = "analyze";
  report["source"] = source;
  report["load_ms"] = load_ms;
  report["analyze_ms"] = analyze_ms;

  std::string plot_note;
  if (!args.out.empty()) {
    const std::filesystem::path dir(args.out);
    create_output_directory(dir, "--out");
    write_text_file(dir / "levels.csv", levels_csv(shape));
    write_text_file(dir / "degrees.csv", degrees_csv(shape));
    write_text_file(dir / "shape.json", report.dump(2) + "\n");
    if (args.plots != "none") {
      const PlotFormat format = args.plots == "svg" ? PlotFormat::Svg : PlotFormat::Png;
      write_text_file(dir / "plots.gp", gnuplot_script(shape, dir.string(), title, format));
      const std::string failed = run_gnuplot((dir / "plots.gp").string());
      if (!failed.empty())
        fmt::print(stderr, "gcvm analyze: no plots drawn: {}; the CSV and JSON files are written\n", failed);
      else
        plot_note = fmt::format(", levels.{0} and degrees.{0}", args.plots);
    }
  }

  if (args.stats == "json") {
    fmt::print("{}\n", report.dump());
    return kExitOk;
  }
  fmt::print("gcvm analyze: {}", import_line);
  fmt::print("  reachable {} of {} objects, {} of {} references; {} roots\n", shape.reachable, shape.objects,
             shape.reachable_references, shape.references, shape.roots);
  fmt::print("  out-degree: {:.1f}% of reachable objects have no references, {:.1f}% at most 4, {:.1f}% at most 12; max {}\n",
             100.0 * shape.no_reference_share(), 100.0 * shape.share_with_at_most(4),
             100.0 * shape.share_with_at_most(12), shape.max_degree);
  std::uint64_t widest = 0;
  for (auto l : shape.levels) widest = std::max(widest, l);
  fmt::print("  BFS steps: uncapped {} (widest {})", shape.levels.size(), widest);
  for (const auto& [cap, levels] : shape.capped_levels) fmt::print(", cap {}: {}", cap, levels.size());
  fmt::print("\n");
  fmt::print("  loaded in {:.2f} s, analyzed in {:.2f} s\n", load_ms / 1000, analyze_ms / 1000);
  if (!args.out.empty())
    fmt::print("  wrote {}/: levels.csv, degrees.csv, shape.json{}\n", args.out, plot_note);
  return kExitOk;
}

}  // namespace

std::function<int()> register_analyze_command(CLI::App& app) {
  auto args = std::make_shared<AnalyzeArgs>();
  CLI::App* cmd = app.add_subcommand("analyze", "Heap-shape analysis (Maas 2012 §3) of a heap dump or synthetic heap");
  cmd->add_option("file", args->file, "HPROF dump, V8 heap snapshot or gcvm trace (recognized by content)");
  cmd->add_option("--graph", args->graph, std::string("Synthetic heap instead of a file: ") + std::string(graph_spec_forms()));
  cmd->add_option("--seed", args->seed, "Seed for random graphs");
  cmd->add_option("--width-cap", args->width_caps, "Maximum objects per BFS step (repeat for several; default 128 256 1024 32768)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--out", args->out, "Directory for levels.csv, degrees.csv, shape.json and the plots");
  cmd->add_option("--plots", args->plots, "Plot format (drawn by gnuplot)")->check(CLI::IsMember({"png", "svg", "none"}));
  cmd->add_option("--weak-refs", args->weak_refs, "HPROF: treat java.lang.ref.Reference.referent as weak or strong")
      ->check(CLI::IsMember({"strong", "weak"}));
  cmd->add_option("--stats", args->stats, "Output format")->check(CLI::IsMember({"text", "json"}));
  return [args] { return run_analyze(*args); };
}

}  // namespace gcvm::cli
