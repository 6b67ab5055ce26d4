// The --gc-opt keys that belong to the plan's handling of a GPU marker's device, not to
// the marker (device-error, device-start, device-exit): taken out of a CollectorChoice
// before the marker parses its options, and accepted only with a GPU marker.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "gc/markers/marker_registry.hpp"

namespace gcvm {

/// Removes every `key=value` from choice.options and returns the last value, or nothing
/// if there was none. ConfigError ("... applies to GPU markers") if choice names a
/// collector that uses no device, or if a value is not one of `accepted`.
std::optional<std::string> take_device_plan_option(CollectorChoice& choice, std::string_view key,
                                                   std::initializer_list<std::string_view> accepted);

}  // namespace gcvm
