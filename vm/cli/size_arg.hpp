// Parsing of byte sizes on the command line: "64M", "2G", "512k", "1048576".
// Suffixes are binary (K = 1024), case-insensitive, optionally followed by "B" or "iB".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gcvm {

/// The size in bytes, or nullopt when `text` is not a size (or overflows 64 bits).
std::optional<std::uint64_t> parse_byte_size(std::string_view text);

}  // namespace gcvm

namespace gcvm::cli {

/// The heap limit named by `--heap=TEXT`, 0 (no limit) when `text` is empty; throws
/// UsageError when `text` is not a positive size.
std::uint64_t heap_limit_flag(const std::string& text);

}  // namespace gcvm::cli
