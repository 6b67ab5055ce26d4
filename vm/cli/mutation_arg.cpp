#include "vm/cli/mutation_arg.hpp"

#include <charconv>
#include <cmath>
#include <set>
#include <string_view>

#include "vm/cli/commands.hpp"
#include "vm/cli/size_arg.hpp"

namespace gcvm::cli {

namespace {

constexpr const char* kForm = "expected rewire=F, replace=F and garbage=SIZE items separated by commas";

[[noreturn]] void reject(const std::string& text, std::string_view item, const std::string& why) {
  throw UsageError("--mutate=" + text + ": '" + std::string(item) + "': " + why);
}

double fraction(const std::string& text, std::string_view item, std::string_view value) {
  double f = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), f);
  if (ec != std::errc{} || end != value.data() + value.size() || !std::isfinite(f) || f < 0 || f > 1)
    reject(text, item, "the value must be a fraction from 0 to 1 (e.g. 0.01)");
  return f;
}

}  // namespace

MutationSpec parse_mutation_flag(const std::string& text) {
  MutationSpec spec;
  if (text == "none") return spec;
  if (text.empty()) throw UsageError(std::string("--mutate is empty: ") + kForm + " (or none)");
  std::set<std::string, std::less<>> seen;
  std::string_view rest = text;
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) reject(text, item, kForm);
    const std::string_view key = item.substr(0, eq);
    const std::string_view value = item.substr(eq + 1);
    if (!seen.insert(std::string(key)).second) reject(text, item, "key given twice");
    if (key == "rewire") {
      spec.rewire = fraction(text, item, value);
    } else if (key == "replace") {
      spec.replace = fraction(text, item, value);
    } else if (key == "garbage") {
      const auto bytes = parse_byte_size(value);
      if (!bytes) reject(text, item, "the value must be a size (e.g. 64M, 512K, 1048576)");
      spec.garbage_bytes = *bytes;
    } else {
      reject(text, item, std::string("unknown key; ") + kForm);
    }
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return spec;
}

}  // namespace gcvm::cli
