// The collector flags a CLI test runs under: every marker of this build, GPU markers
// on an explicit device. Shared by the workload and replay tests.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

#include "gc/device/device_registry.hpp"
#include "gc/markers/marker_registry.hpp"

namespace gcvm::test {

/// The --gc (and, for a GPU marker, --device) flags of every marker to test: GPU
/// markers run on a CUDA device where there is one, else on an OpenCL device (PoCL
/// in CI), never through --device=auto's CPU fallback.
inline std::vector<std::string> collector_flags() {
  std::string device;
  for (const auto& d : gcvm::usable_devices())
    if (device.empty() || (d.backend == "cuda" && device.rfind("cuda", 0) != 0))
      device = d.backend + ":" + std::to_string(d.index);
  std::vector<std::string> flags;
  for (std::string_view name : gcvm::marker_names()) {
    if (name.rfind("gpu-", 0) != 0)
      flags.push_back(" --gc=" + std::string(name));
    else if (!device.empty())
      flags.push_back(" --gc=" + std::string(name) + " --device=" + device);
    else
      MESSAGE("no GPU or OpenCL device: not run under ", std::string(name));
  }
  return flags;
}

}  // namespace gcvm::test
