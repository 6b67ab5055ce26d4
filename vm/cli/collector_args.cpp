#include "vm/cli/collector_args.hpp"

#include <string_view>

namespace gcvm::cli {

void CollectorArgs::add_to(CLI::App& cmd) {
  std::string names;
  for (std::string_view n : collector_names()) names += (names.empty() ? "" : "|") + std::string(n);
  cmd.add_option("--gc", gc, "Collector (marker): " + names);
  cmd.add_option("--gc-opt", gc_opts, "Marker option key=value (repeatable)");
  cmd.add_option("--gc-threads", gc_threads, "Marker threads for parallel collectors (0 = all cores)")
      ->check(CLI::Range(0u, 4096u));
  cmd.add_option("--device", device, "GPU device: auto|cuda|opencl, optionally :N; a list (cuda:0,1, cuda:all, opencl:0,0) spreads the heap over several devices (gpu-bfs)");
}

CollectorChoice CollectorArgs::every_option() const {
  CollectorChoice result{gc, {}, gc_threads, device};
  for (const auto& opt : gc_opts) result.options.push_back(parse_gc_option(opt));
  return result;
}

CollectorChoice CollectorArgs::choice() const {
  CollectorChoice result = every_option();
  DeviceFallback::take_from(result);
  DeviceStart::take_from(result);
  DeviceExit::take_from(result);
  return result;
}

DeviceFallback CollectorArgs::device_fallback() const {
  CollectorChoice result = every_option();
  return DeviceFallback::take_from(result);
}

DeviceStart CollectorArgs::device_start() const {
  CollectorChoice result = every_option();
  return DeviceStart::take_from(result);
}

DeviceExit CollectorArgs::device_exit() const {
  CollectorChoice result = every_option();
  return DeviceExit::take_from(result);
}

}  // namespace gcvm::cli
