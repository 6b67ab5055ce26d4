// `--device=BACKEND:I,J,...` and `--device=BACKEND:all`: the devices one heap is spread
// over (gc/markers/partitioned_bfs_marker.hpp), one partition per entry, in order.
// An entry may repeat: several partitions then share one device, each with its own
// backend instance (its own queue and buffers), which is how a machine with one
// device, or CI's PoCL, runs the partitioned mark (`--device=opencl:0,0,0`).
// `all` is every device of the backend this build can use.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gc/device/device_registry.hpp"

namespace gcvm {

/// True for a list (`a,b`) or `all`, which spread one heap over several partitions.
bool is_device_list(const std::string& text);

/// The entries of a device list (see above); throws ConfigError for a malformed list
/// or an unknown backend, DeviceError for `all` where the backend has no device.
std::vector<DeviceSelector> parse_device_list(const std::string& text);

}  // namespace gcvm
