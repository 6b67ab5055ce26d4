// Test helper: the --device values GPU-marker tests run on. Every OpenCL device
// (PoCL's CPU device in CI) and every CUDA device; where a backend has no device the
// tests say so once and skip it, so CI without a GPU still runs the OpenCL path.
// GCVM_TEST_BACKEND=cuda|opencl restricts the list (compute-sanitizer runs use cuda).
// every_marker() pairs them with every marker of the build.
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "gc/device/device_registry.hpp"
#include "gc/markers/marker_registry.hpp"

namespace gcvm::test {

inline std::vector<std::string> test_devices() {
  std::vector<std::string> devices;
  bool cuda = false;
  const char* only = std::getenv("GCVM_TEST_BACKEND");
  for (const DeviceInfo& d : usable_devices()) {
    if (only != nullptr && d.backend != only) continue;
    devices.push_back(d.backend + ":" + std::to_string(d.index));
    cuda = cuda || d.backend == "cuda";
  }
  static bool told = false;
  if (!cuda && !told) {
    MESSAGE("no CUDA device on this machine: CUDA marker tests skipped (OpenCL devices: ", devices.size(), ")");
    told = true;
  }
  return devices;
}

/// Every marker of this build (CPU markers with 3 threads), GPU markers on every test device.
inline std::vector<CollectorChoice> every_marker() {
  std::vector<CollectorChoice> out;
  for (std::string_view name : marker_names()) {
    if (name.rfind("gpu-", 0) != 0) {
      out.push_back({.name = std::string(name), .options = {}, .threads = 3});
      continue;
    }
    for (const std::string& device : test_devices())
      out.push_back({.name = std::string(name), .options = {}, .threads = 0, .device = device});
  }
  return out;
}

}  // namespace gcvm::test
