// `gcvm compare WORKLOAD --config "gc=... " ...`: one workload under several collector
// configurations, side by side (docs/comparing-collectors.md). Each run is this same
// binary started as a child process (vm/compare/child_run.hpp) with --stats-json into
// a file; the configurations are interleaved, warm-ups first, so that drifts in the
// machine's load hit them alike. Every run must do the same work as the first one
// that succeeded (the same guest output, or the same marks); a configuration whose run
// fails is reported as failed and the others go on. Exit status: 0 when every
// configuration succeeded, 1 when one failed, 2 for bad input.
#include <fmt/format.h>
#include <unistd.h>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "heapgraph/import/heap_format.hpp"
#include "vm/cli/commands.hpp"
#include "vm/cli/gnuplot.hpp"
#include "vm/compare/child_run.hpp"
#include "vm/compare/comparison.hpp"
#include "vm/compare/comparison_plots.hpp"
#include "vm/compare/configuration.hpp"

namespace gcvm::cli {

namespace {

using namespace gcvm::compare;

struct CompareArgs {
  std::string workload;
  std::vector<std::string> guest_args;
  std::string graph;
  std::vector<std::string> configs;
  std::string configs_file;
  unsigned reps = 3;
  unsigned warmups = 1;
  std::string baseline;
  std::string heap;
  unsigned collections = 0;
  std::string mutate;
  std::string seed;
  std::string format = "text";
  std::string metrics;
  std::string out;
  std::string plots = "png";
  std::string progress = "auto";
  double timeout_s = 0;
};

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

Workload workload_of(const CompareArgs& args) {
  Workload w;
  if (args.workload.empty() == args.graph.empty())
    throw UsageError("gcvm compare takes one workload: a guest program (.gasm), a heap trace or dump, or --graph=SPEC");
  if (!args.graph.empty()) {
    w.kind = WorkloadKind::Graph;
    w.target = args.graph;
  } else {
    w.target = args.workload;
    if (!std::filesystem::is_regular_file(args.workload))
      throw UsageError(fmt::format("{}: no such file (a workload is a .gasm program, a heap trace or a dump)", args.workload));
    const bool program = std::filesystem::path(args.workload).extension() == ".gasm";
    w.kind = program ? WorkloadKind::Program : WorkloadKind::HeapFile;
    if (!program) detect_heap_format(args.workload);  // an unknown format is an InputError here, not in every run
  }
  if (!args.guest_args.empty() && w.kind != WorkloadKind::Program)
    throw UsageError("arguments after -- are a guest program's; this workload is not a program");
  for (const std::string& a : args.guest_args) {
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(a.data(), a.data() + a.size(), value);
    if (a.empty() || ec != std::errc{} || end != a.data() + a.size())
      throw UsageError(fmt::format("program argument '{}' is not an integer (a configuration is one --config "
                                   "\"key=value ...\" in quotes)",
                                   a));
  }
  w.args = args.guest_args;
  if (!args.heap.empty()) w.flags.push_back("--heap=" + args.heap);
  if (args.collections != 0) {
    if (w.kind == WorkloadKind::Program) throw UsageError("--collections applies to heap files and --graph workloads");
    w.flags.push_back("--collections=" + std::to_string(args.collections));
  }
  if (!args.mutate.empty()) {
    if (w.kind != WorkloadKind::HeapFile) throw UsageError("--mutate applies to heap files (gcvm replay)");
    w.flags.push_back("--mutate=" + args.mutate);
  }
  if (!args.seed.empty()) {
    if (w.kind == WorkloadKind::Program) throw UsageError("--seed applies to heap files and --graph workloads");
    w.flags.push_back("--seed=" + args.seed);
  }
  return w;
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M UTC", &utc);
  return text;
}

std::string machine_line() {
  std::string load = read_text("/proc/loadavg");
  std::istringstream in(load);
  std::string a, b, c;
  in >> a >> b >> c;
  return fmt::format("{} cores, load {} {} {}", std::thread::hardware_concurrency(), a, b, c);
}

/// The progress bar on stderr: "[=====     ] 7/24 name (rep 2 of 3)".
class Progress {
 public:
  Progress(bool on, std::size_t total) : on_(on), total_(total) {}
  void show(std::size_t done, const std::string& what) const {
    if (!on_) return;
    constexpr std::size_t kWidth = 30;
    const std::size_t filled = total_ == 0 ? kWidth : done * kWidth / total_;
    fmt::print(stderr, "\r\033[K[{}{}] {}/{} {}", std::string(filled, '='), std::string(kWidth - filled, ' '), done,
               total_, what);
    std::fflush(stderr);
  }
  void finish() const {
    if (on_) fmt::print(stderr, "\r\033[K");
  }

 private:
  bool on_;
  std::size_t total_;
};

int run_compare(const CompareArgs& args) {
  if (args.reps == 0) throw UsageError("--reps=0: at least one measured run per configuration");
  const Workload workload = workload_of(args);
  std::vector<Configuration> configurations;
  for (const std::string& text : args.configs)
    configurations.push_back(parse_configuration(text, workload.kind, fmt::format("--config '{}'", text)));
  if (!args.configs_file.empty())
    for (Configuration& c : read_configuration_file(args.configs_file, workload.kind)) configurations.push_back(std::move(c));

  Comparison comparison;
  comparison.workload = workload;
  comparison.baseline = check_configurations(configurations, args.baseline);
  comparison.shown = parse_metric_list(args.metrics);
  comparison.reps = args.reps;
  comparison.warmups = args.warmups;
  comparison.date = utc_now();
  comparison.machine = machine_line();
  for (Configuration& c : configurations) comparison.results.push_back({std::move(c), {}, {}, {}, {}, {}});

  // Run files: under --out/runs/ to keep, else in a temporary directory removed at the end.
  std::filesystem::path run_dir;
  std::error_code error;
  if (!args.out.empty()) {
    run_dir = std::filesystem::path(args.out) / "runs";
    create_output_directory(run_dir, "--out");
  } else {
    std::string pattern = (std::filesystem::temp_directory_path(error) / "gcvm-compare-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw UsageError("cannot create a temporary directory for the runs");
    run_dir = pattern;
  }
  const std::string self = own_executable();
  const bool program = workload.kind == WorkloadKind::Program;
  const Progress progress(args.progress == "on" || (args.progress == "auto" && isatty(STDERR_FILENO)),
                          (args.warmups + args.reps) * comparison.results.size());

  std::optional<WorkDone> reference;
  std::string reference_name;
  std::size_t done = 0;
  for (unsigned rep = 0; rep < args.warmups + args.reps; ++rep) {
    const bool warmup = rep < args.warmups;
    for (std::size_t i = 0; i < comparison.results.size(); ++i) {
      ConfigurationResult& result = comparison.results[i];
      const std::string label = warmup ? fmt::format("warm-up {}", rep + 1) : fmt::format("rep {}", rep - args.warmups + 1);
      progress.show(done++, fmt::format("{} ({})", result.configuration.name, label));
      if (!result.ok()) continue;  // a failed configuration is not run again
      const std::string stem = (run_dir / fmt::format("c{}-{}", i + 1, warmup ? "w" + std::to_string(rep + 1)
                                                                          : "r" + std::to_string(rep - args.warmups + 1)))
                                   .string();
      std::filesystem::remove(stem + ".json", error);
      const ChildRun child = run_child(run_command(self, workload, result.configuration, stem + ".json"), stem + ".out",
                                       stem + ".err", args.timeout_s);
      result.failure = failure_of(child, read_text(stem + ".err"), args.timeout_s);
      if (!result.ok()) continue;
      nlohmann::json stats;
      try {
        stats = nlohmann::json::parse(read_text(stem + ".json"));
      } catch (const nlohmann::json::exception&) {
        result.failure = "wrote no statistics (" + stem + ".json)";
        continue;
      }
      WorkDone work = work_done(stats, program, program ? read_text(stem + ".out") : std::string());
      if (!reference) {
        reference = std::move(work);
        reference_name = result.configuration.name;
      } else if (const std::string differs = work.differs_from(*reference); !differs.empty()) {
        result.failure = fmt::format("{}, compared with {}", differs, reference_name);
        continue;
      }
      if (!warmup) result.runs.push_back(run_figures(stats, child));
    }
  }
  progress.finish();
  comparison.summarize();

  std::string plot_note;
  if (!args.out.empty()) {
    const std::filesystem::path dir(args.out);
    write_text_file(dir / "summary.json", comparison.json().dump(2) + "\n");
    write_text_file(dir / "summary.csv", comparison.csv());
    if (args.plots != "none") {
      const std::string failed = draw_plots(comparison, dir, args.plots);
      plot_note = failed.empty() ? fmt::format("; plots timeline.{0}, pauses.{0}, mmu.{0}", args.plots)
                                 : "; no plots drawn: " + failed;
    }
  } else {
    std::filesystem::remove_all(run_dir, error);
  }

  if (args.format == "json")
    fmt::print("{}\n", comparison.json().dump(2));
  else if (args.format == "csv")
    fmt::print("{}", comparison.csv());
  else if (args.format == "markdown")
    fmt::print("{}", comparison.markdown());
  else
    fmt::print("{}", comparison.text());
  std::fflush(stdout);
  if (!args.out.empty())
    fmt::print(stderr, "gcvm compare: wrote {}/: summary.json, summary.csv, runs/{}\n", args.out, plot_note);
  return comparison.all_ok() ? kExitOk : kExitCheckFailed;
}

}  // namespace

std::function<int()> register_compare_command(CLI::App& app) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = app.add_subcommand(
      "compare", "Run one workload under several collector configurations and compare them side by side");
  cmd->add_option("workload", args->workload, "Guest program (.gasm), heap trace, HPROF dump or V8 snapshot");
  cmd->add_option("args", args->guest_args, "Integer arguments for a guest program (after --)");
  cmd->add_option("--graph", args->graph, "A synthetic heap instead of a file (as gcvm mark --graph)");
  cmd->add_option("--config", args->configs,
                  std::string("A configuration, e.g. \"gc=parallel threads=2\" (repeatable); keys: ") +
                      std::string(configuration_keys()))
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--configs", args->configs_file, "A JSON file of configurations (strings or objects of the same keys)");
  cmd->add_option("--reps", args->reps, "Measured runs per configuration")->capture_default_str();
  cmd->add_option("--warmup", args->warmups, "Runs per configuration before the measured ones, not counted")
      ->capture_default_str();
  cmd->add_option("--baseline", args->baseline, "The configuration speed-ups are measured against (default: the first)");
  cmd->add_option("--heap", args->heap, "Heap limit of every run (a configuration's heap=... wins)");
  cmd->add_option("--collections", args->collections, "Heap files and graphs: collections per run")
      ->check(CLI::Range(1u, 1000000u));
  cmd->add_option("--mutate", args->mutate, "Heap files: mutation before each warm collection (as gcvm replay)");
  cmd->add_option("--seed", args->seed, "Heap files and graphs: seed (as gcvm replay and mark)");
  cmd->add_option("--format", args->format, "Table format")
      ->check(CLI::IsMember({"text", "csv", "json", "markdown"}))
      ->capture_default_str();
  cmd->add_option("--metrics", args->metrics, "Rows of the table: comma-separated metric keys (default: all)");
  cmd->add_option("--out", args->out, "Directory for summary.json, summary.csv, every run's files and the plots");
  cmd->add_option("--plots", args->plots, "Plot format (drawn by gnuplot)")->check(CLI::IsMember({"png", "svg", "none"}));
  cmd->add_option("--progress", args->progress, "Progress bar on stderr (auto: when it is a terminal)")
      ->check(CLI::IsMember({"auto", "on", "off"}));
  cmd->add_option("--timeout", args->timeout_s, "Seconds a run may take before it is killed and failed (0: no limit)")
      ->check(CLI::NonNegativeNumber);
  return [args] { return run_compare(*args); };
}

}  // namespace gcvm::cli
