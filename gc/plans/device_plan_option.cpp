#include "gc/plans/device_plan_option.hpp"

#include <algorithm>

namespace gcvm {

std::optional<std::string> take_device_plan_option(CollectorChoice& choice, std::string_view key,
                                                   std::initializer_list<std::string_view> accepted) {
  std::optional<std::string> taken;
  std::erase_if(choice.options, [&](const GcOption& option) {
    if (option.key != key) return false;
    const std::string flag = "--gc-opt " + option.key + "=" + option.value;
    if (!choice.name.starts_with("gpu-"))
      throw ConfigError(flag + ": --gc=" + choice.name + " uses no device; " + option.key + " applies to GPU markers");
    if (std::find(accepted.begin(), accepted.end(), option.value) == accepted.end()) {
      std::string values;
      for (std::string_view value : accepted) values += (values.empty() ? "" : "|") + std::string(value);
      throw ConfigError(flag + ": accepted: " + option.key + "=" + values);
    }
    taken = option.value;
    return true;
  });
  return taken;
}

}  // namespace gcvm
