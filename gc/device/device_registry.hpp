// Which devices this build can use, and `--device=auto|cuda|opencl[:N]`.
//
// `auto` prefers a CUDA GPU, then an OpenCL GPU or accelerator; an OpenCL CPU device
// (PoCL) is used only when asked for by name, so `auto` on a machine without a GPU
// means "no device" and the caller falls back to the CPU marker, saying so once.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gc/device/device_backend.hpp"

namespace gcvm {

struct DeviceSelector {
  std::string backend = "auto";    // auto, cuda or opencl
  std::optional<unsigned> index;  // :N
  bool automatic() const { return backend == "auto"; }
};

/// Parses --device; throws ConfigError (exit 2) for anything else.
DeviceSelector parse_device_selector(const std::string& text);

/// Every usable device of every backend built in, CUDA first.
std::vector<DeviceInfo> usable_devices();

/// Opens the selected device. For `auto` returns null when no GPU is usable; for a
/// named backend throws DeviceError when the device cannot be used.
std::unique_ptr<DeviceBackend> open_device(const DeviceSelector& selector);

/// The backends compiled into this build ("cuda", "opencl").
std::vector<std::string> built_backends();

}  // namespace gcvm
