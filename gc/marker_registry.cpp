#include "gc/marker_registry.hpp"

#include "gc/markers/parallel_marker.hpp"
#include "gc/markers/serial_marker.hpp"

namespace gcvm {

std::vector<std::string_view> collector_names() { return {"serial", "parallel"}; }

std::unique_ptr<Marker> make_marker(const CollectorChoice& choice) {
  if (choice.name == "serial") return std::make_unique<SerialMarker>(SerialMarkerOptions::parse(choice.options));
  if (choice.name == "parallel")
    return std::make_unique<ParallelMarker>(ParallelMarkerOptions::parse(choice.options, choice.threads));
  std::string names;
  for (std::string_view n : collector_names()) names += (names.empty() ? "" : ", ") + std::string(n);
  throw ConfigError("--gc=" + choice.name + " is not a collector of this build; available: " + names);
}

}  // namespace gcvm
