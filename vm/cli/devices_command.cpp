// `gcvm devices`: every device the GPU collectors can use, with its backend index
// (the N of --device=BACKEND:N), platform, type, memory and compute units.
#include <fmt/format.h>

#include "gc/device/device_registry.hpp"
#include "vm/cli/commands.hpp"

namespace gcvm::cli {

namespace {

int run_devices() {
  const auto backends = built_backends();
  std::string built;
  for (const auto& b : backends) built += (built.empty() ? "" : ", ") + b;
  fmt::print("backends built in: {}\n", built.empty() ? "none" : built);
  const auto devices = usable_devices();
  if (devices.empty()) {
    fmt::print("no usable device: GPU collectors with --device=auto mark on the CPU\n");
    return kExitOk;
  }
  fmt::print("{:<10} {:<6} {:>10} {:>6}  {}\n", "device", "type", "memory", "units", "name (platform)");
  for (const DeviceInfo& d : devices)
    fmt::print("{:<10} {:<6} {:>7.1f} GiB {:>6}  {} ({})\n", d.backend + ":" + std::to_string(d.index), d.type,
               d.memory_bytes / 1073741824.0, d.compute_units, d.name, d.platform);
  return kExitOk;
}

}  // namespace

std::function<int()> register_devices_command(CLI::App& app) {
  app.add_subcommand("devices", "List the CUDA and OpenCL devices the GPU collectors can use");
  return [] { return run_devices(); };
}

}  // namespace gcvm::cli
