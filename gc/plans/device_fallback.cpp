#include "gc/plans/device_fallback.hpp"

#include <fmt/format.h>

#include <cstdio>

#include "gc/markers/parallel_marker.hpp"
#include "gc/plans/device_plan_option.hpp"
#include "gc/util/thread_pool.hpp"

namespace gcvm {

DeviceFallback DeviceFallback::take_from(CollectorChoice& choice) {
  DeviceFallback fallback;
  fallback.threads = choice.threads;
  if (const auto value = take_device_plan_option(choice, "device-error", {"cpu", "fail"}))
    fallback.policy = *value == "cpu" ? Policy::Cpu : Policy::Fail;
  return fallback;
}

bool DeviceFallback::enabled(bool concurrent_plan) const {
  return policy == Policy::PlanDefault ? concurrent_plan : policy == Policy::Cpu;
}

std::unique_ptr<Marker> DeviceFallback::cpu_marker() const {
  return std::make_unique<ParallelMarker>(ParallelMarkerOptions{.threads = threads});
}

void DeviceFallback::warn(std::string_view device_marker, std::string_view where, std::string_view error) const {
  fmt::print(stderr, "gcvm: warning: {}: device error in {}: {}; marking on the CPU (parallel, {} threads) from now on\n",
             device_marker, where, error, ThreadPool::resolve(threads));
}

}  // namespace gcvm
