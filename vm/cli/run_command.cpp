// `gcvm run PROG.gasm [flags] [-- args]`: assemble a guest program and run it on the
// SOA heap under the chosen collector, or (--gc=boehm) in libgc's heap under libgc's
// collector (run_boehm.cpp); the choice of heap binding is made here and nowhere else.
// Guest output goes to stdout; the --gc-log lines,
// the end-of-run summary (--stats=text|json|none) and errors go to stderr. With
// --record-trace=FILE the run's allocations, reference stores and collections (with
// their roots) are written as a heap trace (docs/trace-format.md) for `gcvm replay`.
#include <fmt/format.h>

#include <charconv>
#include <cstdio>
#include <memory>

#include "vm/cli/load_program.hpp"
#include "vm/cli/commands.hpp"
#include "vm/cli/run_guest.hpp"
#include "vm/cli/size_arg.hpp"
#include "vm/cli/stats_outputs.hpp"
#include "gc/markers/gc_options.hpp"

namespace gcvm::cli {

namespace {

std::vector<std::int64_t> parse_guest_args(const std::vector<std::string>& args) {
  std::vector<std::int64_t> out;
  for (const std::string& a : args) {
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(a.data(), a.data() + a.size(), v);
    if (ec != std::errc{} || end != a.data() + a.size() || a.empty())
      throw UsageError("program argument '" + a + "' is not a 64-bit integer (guest arguments are integers)");
    out.push_back(v);
  }
  return out;
}

int run_program(const RunArgs& args) {
  const auto limit = parse_byte_size(args.heap);
  if (!limit || *limit == 0) throw UsageError("--heap=" + args.heap + " is not a size (examples: 64M, 2G)");
  const std::vector<std::int64_t> guest_args = parse_guest_args(args.guest_args);
  const std::optional<GenerationalOptions> generational = args.plan.generational();
  const std::optional<ConcurrentOptions> concurrent = args.plan.concurrent();
  const CollectorChoice choice = args.collector.choice();
  args.collector.device_exit().apply();
  args.plan.check_collector(choice);
#if GCVM_HAVE_BOEHM
  if (collector_is_boehm(choice)) {
    if (!choice.options.empty()) reject_gc_option("boehm", choice.options.front(), "");
    if (args.verify)
      throw UsageError("--verify-heap checks a gcvm heap; --gc=boehm runs in libgc's heap (compare with --gc=serial)");
    if (args.refgraph != "barrier")
      throw UsageError("--refgraph=rebuild applies to gcvm heaps; --gc=boehm keeps no reference graph");
    if (!args.record_trace.empty())
      throw UsageError("--record-trace records a gcvm heap; it does not apply to --gc=boehm");
    return run_boehm(args, load_program(args.program), *limit, choice.threads, guest_args);
  }
#endif
  auto marker = args.collector.device_start().make_marker(choice);
  const vm::Module module = load_program(args.program);

  HeapConfig config;
  config.limit_bytes = *limit;
  config.graph_mode = args.refgraph == "rebuild" ? RefGraphMode::Rebuild : RefGraphMode::Barrier;
  try {
    if (args.record_trace.empty()) {
      vm::SoaHeapBinding binding(config, std::move(marker), args.verify, generational, concurrent,
                                 args.collector.device_fallback());
      return run_on(args, module, binding, guest_args);
    }
    return run_recording(args, module, config, std::move(marker), guest_args, generational, concurrent);
  } catch (const std::invalid_argument& e) {
    throw UsageError("--plan=" + args.plan.name + ": " + e.what());
  }
}

}  // namespace

std::function<int()> register_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand("run", "Compile (.tern) or assemble (.gasm) a guest program and run it; arguments after --");
  cmd->add_option("program", args->program, "Guest program (.tern or .gasm)")->required();
  cmd->add_option("args", args->guest_args, "Integer arguments for the guest (after --)");
  args->collector.add_to(*cmd);
  cmd->add_option("--heap", args->heap, "Heap limit (e.g. 64M, 2G); a full heap triggers a collection")
      ->capture_default_str();
  cmd->add_option("--refgraph", args->refgraph, "Keep the reference graph by write barrier, or rebuild it at each collection")
      ->check(CLI::IsMember({"barrier", "rebuild"}))
      ->capture_default_str();
  cmd->add_flag("--verify-heap", args->verify,
                "At every collection check the graph against a rebuild and the marks against the serial marker");
  add_gc_log_flag(*cmd, args->gc_log, "stderr");
  add_stats_json_flag(*cmd, args->stats_json);
  cmd->add_option("--record-trace", args->record_trace,
                  "Record the run's allocations, stores and collections as a heap trace (docs/trace-format.md)");
  args->plan.add_plan_flag(*cmd);
  args->plan.add_generational_flags(*cmd);
  args->plan.add_concurrent_flags(*cmd);
  cmd->add_option("--stats", args->stats, "End-of-run summary on stderr")
      ->check(CLI::IsMember({"text", "json", "none"}))
      ->capture_default_str();
  return [args] { return run_program(*args); };
}

}  // namespace gcvm::cli
