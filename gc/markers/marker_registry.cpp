#include "gc/markers/marker_registry.hpp"

#include "gc/device/device_list.hpp"
#include "gc/markers/gpu_bfs_marker.hpp"
#include "gc/markers/parallel_marker.hpp"
#include "gc/markers/partitioned_bfs_marker.hpp"
#include "gc/markers/gpu_dfs_marker.hpp"
#include "gc/markers/serial_marker.hpp"

namespace gcvm {

bool collector_is_boehm(const CollectorChoice& choice) {
#if GCVM_HAVE_BOEHM
  return choice.name == "boehm";
#else
  (void)choice;
  return false;
#endif
}

std::vector<std::string_view> marker_names() { return {"serial", "parallel", "gpu-bfs", "gpu-dfs"}; }

std::vector<std::string_view> collector_names() {
  std::vector<std::string_view> names = marker_names();
#if GCVM_HAVE_BOEHM
  names.push_back("boehm");
#endif
  return names;
}

std::unique_ptr<Marker> make_marker(const CollectorChoice& choice) { return prepare_marker(choice)(); }

MarkerFactory prepare_marker(const CollectorChoice& choice) {
  if (choice.name == "serial")
    return [options = SerialMarkerOptions::parse(choice.options)] { return std::make_unique<SerialMarker>(options); };
  if (choice.name == "parallel")
    return [options = ParallelMarkerOptions::parse(choice.options, choice.threads)] {
      return std::make_unique<ParallelMarker>(options);
    };
  if (choice.name == "gpu-bfs" && is_device_list(choice.device))
    return [options = PartitionedBfsMarkerOptions::parse(choice.options, choice.device)] {
      return std::make_unique<PartitionedBfsMarker>(options);
    };
  if (choice.name != "gpu-bfs" && is_device_list(choice.device))
    throw ConfigError("--device=" + choice.device + " spreads one heap over several devices, which only --gc=gpu-bfs does");
  if (choice.name == "gpu-bfs")
    return [options = GpuBfsMarkerOptions::parse(choice.options, choice.device)] {
      return std::make_unique<GpuBfsMarker>(options);
    };
  if (choice.name == "gpu-dfs")
    return [options = GpuDfsMarkerOptions::parse(choice.options, choice.device)] {
      return std::make_unique<GpuDfsMarker>(options);
    };
  if (collector_is_boehm(choice))
    throw ConfigError("--gc=boehm collects its own libgc heap, not a gcvm heap: it is available to `gcvm mark` "
                      "and `gcvm run`, not here");
  std::string names;
  for (std::string_view n : collector_names()) names += (names.empty() ? "" : ", ") + std::string(n);
  throw ConfigError("--gc=" + choice.name + " is not a collector of this build; available: " + names);
}

}  // namespace gcvm
