// `--gc-opt key=value` pairs as given on the command line, and the error every
// marker's options parser raises for a key or value it does not accept.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "heapgraph/input_error.hpp"

namespace gcvm {

class ConfigError : public InputError {
 public:
  using InputError::InputError;
};

struct GcOption {
  std::string key;
  std::string value;
};
using GcOptions = std::vector<GcOption>;

/// Splits "key=value"; throws ConfigError when there is no '=' or the key is empty.
GcOption parse_gc_option(std::string_view text);

/// The whole of `text` as a decimal number in [min, max], or nullopt (empty text,
/// trailing characters, overflow, out of range): every marker's option parser uses it.
std::optional<std::uint32_t> parse_gc_count(std::string_view text, std::uint32_t min = 0,
                                            std::uint32_t max = 0xFFFFFFFFu);

/// Throws ConfigError naming the collector, the key and the keys it accepts.
[[noreturn]] void reject_gc_option(std::string_view collector, const GcOption& option, std::string_view accepted);

}  // namespace gcvm
