// `gcvm devices`: every device the GPU collectors can use, with its backend index
// (the N of --device=BACKEND:N), platform, type, memory and compute units; whether
// NCCL is built and which CUDA devices reach each other peer to peer (--device lists).
#include <fmt/format.h>

#include "gc/device/communicator.hpp"
#include "gc/device/device_registry.hpp"
#include "vm/cli/commands.hpp"

namespace gcvm::cli {

namespace {

int run_devices() {
  const auto backends = built_backends();
  std::string built;
  for (const auto& b : backends) built += (built.empty() ? "" : ", ") + b;
  fmt::print("backends built in: {}\n", built.empty() ? "none" : built);
  fmt::print("NCCL (multi-GPU exchange): {}\n", nccl_built() ? nccl_version() : nccl_version() + "; batches cross through host memory");
  const auto peers = cuda_peer_pairs();
  std::string pairs;
  for (const auto& [a, b] : peers) pairs += fmt::format("{}cuda:{}<->cuda:{}", pairs.empty() ? "" : ", ", a, b);
  fmt::print("peer to peer: {}\n", pairs.empty() ? "none" : pairs);
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
