#include "vm/cli/size_arg.hpp"

#include <cctype>
#include <charconv>
#include <string>

#include "vm/cli/commands.hpp"

namespace gcvm {

std::optional<std::uint64_t> parse_byte_size(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end == text.data()) return std::nullopt;
  std::string_view suffix(end, static_cast<std::size_t>(text.data() + text.size() - end));
  std::string lower;
  for (char c : suffix) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower.ends_with("ib")) lower.resize(lower.size() - 2);
  else if (lower.ends_with("b")) lower.resize(lower.size() - 1);
  int shift = 0;
  if (lower.empty()) shift = 0;
  else if (lower == "k") shift = 10;
  else if (lower == "m") shift = 20;
  else if (lower == "g") shift = 30;
  else if (lower == "t") shift = 40;
  else return std::nullopt;
  if (shift > 0 && value > (~std::uint64_t{0} >> shift)) return std::nullopt;
  return value << shift;
}

}  // namespace gcvm

namespace gcvm::cli {

std::uint64_t heap_limit_flag(const std::string& text) {
  if (text.empty()) return 0;
  const auto bytes = parse_byte_size(text);
  if (!bytes || *bytes == 0) throw UsageError("--heap=" + text + " is not a size (examples: 64M, 2G)");
  return *bytes;
}

}  // namespace gcvm::cli
