#include "gc/marker_registry.hpp"

#include "gc/markers/gpu_bfs_marker.hpp"
#include "gc/markers/gpu_dfs_marker.hpp"
#include "gc/markers/serial_marker.hpp"

namespace gcvm {

std::vector<std::string_view> collector_names() { return {"serial", "gpu-bfs", "gpu-dfs"}; }

std::unique_ptr<Marker> make_marker(const CollectorChoice& choice) {
  if (choice.name == "serial") return std::make_unique<SerialMarker>(SerialMarkerOptions::parse(choice.options));
  if (choice.name == "gpu-bfs")
    return std::make_unique<GpuBfsMarker>(GpuBfsMarkerOptions::parse(choice.options, choice.device));
  if (choice.name == "gpu-dfs")
    return std::make_unique<GpuDfsMarker>(GpuDfsMarkerOptions::parse(choice.options, choice.device));
  std::string names;
  for (std::string_view n : collector_names()) names += (names.empty() ? "" : ", ") + std::string(n);
  throw ConfigError("--gc=" + choice.name + " is not a collector of this build; available: " + names);
}

}  // namespace gcvm
