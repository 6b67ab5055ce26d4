// gcvm: the research VM's command line.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "gc/plans/collector.hpp"
#include "gc/device/device_backend.hpp"
#include "gc/device/driver_teardown.hpp"
#include "gc/markers/gc_options.hpp"
#include "gc/heap/heap_materializer.hpp"
#include "heapgraph/graph_spec.hpp"
#include "vm/asm/diagnostics.hpp"
#include "vm/cli/commands.hpp"

namespace {

using namespace gcvm;

/// The subcommand's exit status; every error it throws becomes one message on stderr.
int run_subcommand(CLI::App& app, const std::vector<std::pair<std::string, std::function<int()>>>& commands) {
  try {
    for (const auto& [name, run] : commands)
      if (app.got_subcommand(name)) return run();
  } catch (const vm::AssemblyError& e) {
    for (const std::string& line : e.lines()) fmt::print(stderr, "{}\n", line);
    return cli::kExitBadInput;
  } catch (const InputError& e) {
    fmt::print(stderr, "gcvm: {}\n", e.what());
    return cli::kExitBadInput;
  } catch (const HeapExhausted& e) {
    fmt::print(stderr, "gcvm: out of memory: {}\n", e.what());
    return cli::kExitOutOfMemory;
  } catch (const DeviceError& e) {
    fmt::print(stderr, "gcvm: device error: {}\n", e.what());
    return cli::kExitDeviceError;
  } catch (const VerifyError& e) {
    fmt::print(stderr, "gcvm: verification failed: {}\n", e.what());
    return cli::kExitCheckFailed;
  } catch (const std::exception& e) {
    fmt::print(stderr, "gcvm: internal error: {}\n", e.what());
    return cli::kExitCheckFailed;
  }
  return cli::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gcvm: a research virtual machine for GPU-offloaded garbage collection", "gcvm"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "gcvm 0.1");
  auto run_mark = cli::register_mark_command(app);
  auto run_devices = cli::register_devices_command(app);
  auto run_replay = cli::register_replay_command(app);
  auto run_trace = cli::register_trace_command(app);
  auto run_run = cli::register_run_command(app);
  auto run_disasm = cli::register_disasm_command(app);
  auto run_analyze = cli::register_analyze_command(app);
  auto run_compare = cli::register_compare_command(app);

  if (argc > 1 && argv[1][0] != '-') {
    std::string known;
    bool found = false;
    for (const CLI::App* sub : app.get_subcommands({})) {
      found = found || sub->get_name() == argv[1];
      known += (known.empty() ? "" : ", ") + sub->get_name();
    }
    if (!found) {
      fmt::print(stderr, "gcvm: unknown command '{}'; commands: {}\n", argv[1], known);
      return cli::kExitBadInput;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "gcvm: {}\n", e.what());
    return cli::kExitBadInput;
  }

  // A run that opened a device leaves without waiting for the driver's teardown
  // (gc/device/driver_teardown.hpp), once the subcommand has written and closed its outputs.
  return leave_process(run_subcommand(app, {{"mark", run_mark},
                                            {"devices", run_devices},
                                            {"replay", run_replay},
                                            {"trace", run_trace},
                                            {"run", run_run},
                                            {"disasm", run_disasm},
                                            {"analyze", run_analyze},
                                            {"compare", run_compare}}));
}
