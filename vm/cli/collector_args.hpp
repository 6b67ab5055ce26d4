// The collector flags every gcvm subcommand that collects shares: --gc, --gc-opt,
// --gc-threads, --device. Registered once here so mark, run and replay accept the
// same spellings and report the same errors.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "gc/markers/marker_registry.hpp"
#include "gc/plans/device_exit.hpp"
#include "gc/plans/device_fallback.hpp"
#include "gc/plans/device_start.hpp"

namespace gcvm::cli {

struct CollectorArgs {
  std::string gc = "serial";
  std::vector<std::string> gc_opts;
  unsigned gc_threads = 0;
  std::string device = "auto";

  /// Adds the four options to `cmd`.
  void add_to(CLI::App& cmd);
  /// The parsed choice, without the plan's device-error, device-start and device-exit
  /// options;
  /// throws ConfigError for a malformed --gc-opt.
  CollectorChoice choice() const;
  /// What a device error does (--gc-opt device-error, --gc-threads); throws ConfigError
  /// as choice() does.
  DeviceFallback device_fallback() const;
  /// When the device opens (--gc-opt device-start, --gc-threads); throws ConfigError as
  /// choice() does.
  DeviceStart device_start() const;
  /// How the process leaves once it has opened a device (--gc-opt device-exit); throws
  /// ConfigError as choice() does.
  DeviceExit device_exit() const;

 private:
  /// Every --gc-opt, device-error, device-start and device-exit included.
  CollectorChoice every_option() const;
};

}  // namespace gcvm::cli
