// LEB128 variable-length integers and zigzag signed mapping, as the trace format
// (docs/trace-format.md) stores every number.
//
// An unsigned value is written 7 bits at a time, low bits first; the high bit of each
// byte says another byte follows. A 64-bit value takes 1..10 bytes. Decoding rejects
// encodings longer than 10 bytes and a 10th byte carrying bits beyond bit 63, so every
// accepted byte sequence names exactly one 64-bit value. Zigzag maps signed deltas to
// unsigned ones so that small negative deltas stay short (0,-1,1,-2 -> 0,1,2,3).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gcvm::trace {

inline constexpr int kMaxVarintBytes = 10;

/// Appends the LEB128 encoding of `value` to `out`.
inline void put_uvarint(std::string& out, std::uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

constexpr std::uint64_t zigzag_encode(std::int64_t value) {
  return (static_cast<std::uint64_t>(value) << 1) ^ static_cast<std::uint64_t>(value >> 63);
}
constexpr std::int64_t zigzag_decode(std::uint64_t value) {
  return static_cast<std::int64_t>(value >> 1) ^ -static_cast<std::int64_t>(value & 1);
}

enum class VarintStatus { Ok, Truncated, Overlong };

/// Decodes one varint, pulling bytes from `next_byte()` (returns -1 at the end of the
/// input). Never reads more than kMaxVarintBytes bytes.
template <typename NextByte>
VarintStatus read_uvarint(NextByte&& next_byte, std::uint64_t& value) {
  value = 0;
  for (int i = 0; i < kMaxVarintBytes; ++i) {
    const int byte = next_byte();
    if (byte < 0) return VarintStatus::Truncated;
    const auto bits = static_cast<std::uint64_t>(byte & 0x7F);
    if (i == kMaxVarintBytes - 1 && byte > 1) return VarintStatus::Overlong;
    value |= bits << (7 * i);
    if ((byte & 0x80) == 0) return VarintStatus::Ok;
  }
  return VarintStatus::Overlong;
}

static_assert(zigzag_encode(0) == 0 && zigzag_encode(-1) == 1 && zigzag_encode(1) == 2 && zigzag_encode(-2) == 3);
static_assert(zigzag_decode(zigzag_encode(INT64_MIN)) == INT64_MIN);
static_assert(zigzag_decode(zigzag_encode(INT64_MAX)) == INT64_MAX);

}  // namespace gcvm::trace
