#include "gc/plans/device_exit.hpp"

#include "gc/device/driver_teardown.hpp"
#include "gc/plans/device_plan_option.hpp"

namespace gcvm {

DeviceExit DeviceExit::take_from(CollectorChoice& choice) {
  DeviceExit exit;
  if (const auto value = take_device_plan_option(choice, "device-exit", {"detach", "wait"}))
    exit.policy = *value == "detach" ? Policy::Detach : Policy::Wait;
  return exit;
}

void DeviceExit::apply() const { set_detach_driver_teardown(policy == Policy::Detach); }

}  // namespace gcvm
