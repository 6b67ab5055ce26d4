#include "gc/markers/gc_options.hpp"

#include <charconv>

namespace gcvm {

GcOption parse_gc_option(std::string_view text) {
  const auto eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0)
    throw ConfigError("--gc-opt '" + std::string(text) + "' is not of the form key=value");
  return {std::string(text.substr(0, eq)), std::string(text.substr(eq + 1))};
}

std::optional<std::uint32_t> parse_gc_count(std::string_view text, std::uint32_t min, std::uint32_t max) {
  std::uint32_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < min || value > max)
    return std::nullopt;
  return value;
}

void reject_gc_option(std::string_view collector, const GcOption& option, std::string_view accepted) {
  throw ConfigError("--gc=" + std::string(collector) + " does not accept --gc-opt " + option.key + "=" +
                    option.value + (accepted.empty() ? " (it takes no options)" : "; it accepts: " + std::string(accepted)));
}

}  // namespace gcvm
