#include "gc/plans/device_plan_option.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gcvm {

std::optional<std::string> take_device_plan_option(CollectorChoice& choice, std::string_view key,
                                                   std::initializer_list<std::string_view> accepted) {
  std::optional<std::string> taken;
  std::erase_if(choice.options, [&](const GcOption& option) {
    if (option.key != key) return false;
    const std::string flag = fmt::format("--gc-opt {}={}", option.key, option.value);
    if (!choice.name.starts_with("gpu-"))
      throw ConfigError(
          fmt::format("{}: --gc={} uses no device; {} applies to GPU markers", flag, choice.name, option.key));
    if (std::find(accepted.begin(), accepted.end(), option.value) == accepted.end()) {
      std::string values;
      for (std::string_view value : accepted) {
        if (!values.empty()) values += '|';
        values += value;
      }
      throw ConfigError(fmt::format("{}: accepted: {}={}", flag, option.key, values));
    }
    taken = option.value;
    return true;
  });
  return taken;
}

}  // namespace gcvm
