// gcvm: the research VM's command line.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "gc/collector.hpp"
#include "gc/gc_options.hpp"
#include "gc/heap_materializer.hpp"
#include "heapgraph/graph_spec.hpp"
#include "vm/cli/commands.hpp"

int main(int argc, char** argv) {
  using namespace gcvm;
  CLI::App app{"gcvm: a research virtual machine for GPU-offloaded garbage collection", "gcvm"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "gcvm 0.1");
  auto run_mark = cli::register_mark_command(app);
  auto run_analyze = cli::register_analyze_command(app);

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

  try {
    if (app.got_subcommand("mark")) return run_mark();
    if (app.got_subcommand("analyze")) return run_analyze();
  } catch (const InputError& e) {
    fmt::print(stderr, "gcvm: {}\n", e.what());
    return cli::kExitBadInput;
  } catch (const HeapExhausted& e) {
    fmt::print(stderr, "gcvm: out of memory: {}\n", e.what());
    return cli::kExitOutOfMemory;
  } catch (const VerifyError& e) {
    fmt::print(stderr, "gcvm: verification failed: {}\n", e.what());
    return cli::kExitCheckFailed;
  } catch (const std::exception& e) {
    fmt::print(stderr, "gcvm: internal error: {}\n", e.what());
    return cli::kExitCheckFailed;
  }
  return cli::kExitOk;
}
