// The shared part of `gcvm run` (run_command.cpp): its arguments, and running a guest
// on a heap binding and reporting. The interpreter is instantiated once per binding
// type, each in its own translation unit: the plain SoaHeapBinding in
// run_command.cpp, RecordingSoaHeapBinding (--record-trace) in run_recording.cpp,
// BoehmHeapBinding (--gc=boehm) in run_boehm.cpp, so
// the interpreter loop of a run that records nothing is compiled exactly as if
// recording did not exist.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "gc/util/stopwatch.hpp"
#include "vm/bytecode/module.hpp"
#include "vm/cli/collector_args.hpp"
#include "vm/cli/commands.hpp"
#include "vm/cli/plan_args.hpp"
#include "vm/cli/stats_outputs.hpp"
#include "vm/interp/interpreter.hpp"
#include "vm/runtime/recording_heap_binding.hpp"
#include "vm/runtime/run_report.hpp"
#include "vm/runtime/soa_heap_binding.hpp"

namespace gcvm::cli {

struct RunArgs {
  std::string program;
  std::vector<std::string> guest_args;
  CollectorArgs collector;
  std::string heap = "64M";
  std::string refgraph = "barrier";
  std::string stats = "text";
  bool verify = false;
  std::string gc_log;      // --gc-log[=FILE] (vm/cli/stats_outputs.hpp)
  std::string stats_json;  // --stats-json=FILE
  std::string record_trace;
  PlanArgs plan;  // --plan and the plans' flags
};

/// Runs the guest on `binding` and reports; with a RecordingSoaHeapBinding, also ends
/// the trace. The interpreter is instantiated once per binding type, so a run that
/// records nothing runs the interpreter loop with no tracing code in it.
template <class Binding>
int run_on(const RunArgs& args, const vm::Module& module, Binding& binding, const std::vector<std::int64_t>& guest_args) {
  constexpr bool kRecording = std::is_same_v<Binding, vm::RecordingSoaHeapBinding>;
  const GcLog log(args.gc_log, stderr);
  if (log) binding.on_collection = [&log](const CollectionStats& s) { log.write(vm::gc_log_line(s)); };

  vm::RunFacts facts;
  facts.program = args.program;
  facts.collector = std::string(binding.collector_name());
  if constexpr (requires { binding.plan_name(); }) facts.plan = std::string(binding.plan_name());
  if constexpr (requires { Binding::kRefGraph; })
    facts.refgraph = Binding::kRefGraph;  // a binding without gcvm's reference graph says so
  else
    facts.refgraph = args.refgraph;
  facts.heap_limit_bytes = binding.limit_bytes();
  auto report = [&](int status) {
    facts.exit_status = status;
    facts.heap_used_bytes = binding.used_bytes();
    facts.allocated = binding.totals();
    if (args.stats == "text") fmt::print(stderr, "{}", vm::run_summary(facts, binding.collections()));
    if (args.stats == "json" || !args.stats_json.empty()) {
      const nlohmann::json stats = vm::run_json(facts, binding.collections());
      if (args.stats == "json") fmt::print(stderr, "{}\n", stats.dump());
      write_stats_json(args.stats_json, stats);
    }
  };

  facts.startup_ms = process_ms();
  const Stopwatch clock;
  int status = kExitOk;
  {
    vm::Interpreter<Binding> interpreter(module, binding, guest_args);
    try {
      status = interpreter.run();
      if constexpr (requires { binding.finish_cycles(); }) {
        binding.finish_cycles();
        facts.exit_lazy_sweep = binding.exit_lazy_sweep();
        if (log && facts.exit_lazy_sweep) log.write(vm::exit_lazy_sweep_log_line(*facts.exit_lazy_sweep));
      }
    } catch (const vm::GuestError& e) {
      interpreter.flush();
      fmt::print(stderr, "{}: {}\n", e.kind() == vm::GuestFailure::OutOfMemory ? "gcvm" : "error", e.what());
      for (const std::string& line : e.trace()) fmt::print(stderr, "{}\n", line);
      status = e.kind() == vm::GuestFailure::OutOfMemory ? kExitOutOfMemory : kExitGuestError;
    }
  }
  facts.run_ms = clock.elapsed_ms();
  facts.elapsed_ms = process_ms();
  if constexpr (kRecording) {
    binding.finish();
    if (args.stats == "text")
      fmt::print(stderr, "recorded trace {}: {} events in {} chunks, {} bytes\n", args.record_trace,
                 binding.trace_totals().events, binding.trace_totals().chunks, binding.trace_totals().bytes);
  }
  report(status);
  return status;
}

/// `gcvm run` with --record-trace=args.record_trace (run_recording.cpp).
int run_recording(const RunArgs& args, const vm::Module& module, HeapConfig config, std::unique_ptr<Marker> marker,
                  const std::vector<std::int64_t>& guest_args, std::optional<GenerationalOptions> generational,
                  std::optional<ConcurrentOptions> concurrent);

#if GCVM_HAVE_BOEHM
/// `gcvm run --gc=boehm` (run_boehm.cpp): the guest in libgc's heap, capped at
/// `limit_bytes`, collected with `markers` marker threads (0: every core).
int run_boehm(const RunArgs& args, const vm::Module& module, std::uint64_t limit_bytes, unsigned markers,
              const std::vector<std::int64_t>& guest_args);
#endif

}  // namespace gcvm::cli
