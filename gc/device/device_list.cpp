#include "gc/device/device_list.hpp"

#include "gc/markers/gc_options.hpp"

namespace gcvm {

namespace {

[[noreturn]] void reject(const std::string& text) {
  throw ConfigError("--device=" + text +
                    " is not a device list; use cuda or opencl with :I,J,... (an index may repeat) or :all");
}

}  // namespace

bool is_device_list(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) return false;
  const std::string rest = text.substr(colon + 1);
  return rest == "all" || rest.find(',') != std::string::npos;
}

std::vector<DeviceSelector> parse_device_list(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) reject(text);
  const std::string backend = text.substr(0, colon);
  if (backend != "cuda" && backend != "opencl") reject(text);
  const std::string rest = text.substr(colon + 1);
  std::vector<DeviceSelector> list;
  if (rest == "all") {
    for (const DeviceInfo& d : usable_devices())
      if (d.backend == backend) list.push_back({.backend = backend, .index = d.index});
    if (list.empty()) throw DeviceError("--device=" + text + ": no " + backend + " device is usable on this machine");
    return list;
  }
  std::size_t at = 0;
  for (;;) {
    const std::size_t comma = rest.find(',', at);
    const auto index = parse_gc_count(std::string_view(rest).substr(at, comma == std::string::npos ? comma : comma - at));
    if (!index) reject(text);
    list.push_back({.backend = backend, .index = *index});
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return list;
}

}  // namespace gcvm
