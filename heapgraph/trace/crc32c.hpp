// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of every trace
// chunk. Table-driven, four bytes per step (slicing-by-4); no hardware instructions,
// so every build computes the same value. Known answer: crc32c("123456789") = 0xE3069283.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gcvm::trace {

/// Continues a CRC-32C over `size` bytes; start with crc = 0.
std::uint32_t crc32c(std::uint32_t crc, const void* data, std::size_t size);

}  // namespace gcvm::trace
