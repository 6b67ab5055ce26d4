#include <doctest/doctest.h>

#include <string>

#include "heapgraph/random.hpp"
#include "heapgraph/trace/crc32c.hpp"

using gcvm::trace::crc32c;

namespace {

// Bit-at-a-time reference, independent of the sliced tables.
std::uint32_t crc32c_bitwise(const std::string& s) {
  std::uint32_t crc = ~0u;
  for (unsigned char c : s) {
    crc ^= c;
    for (int k = 0; k < 8; ++k) crc = (crc & 1) ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
  }
  return ~crc;
}

}  // namespace

TEST_CASE("crc32c: known answers") {
  CHECK(crc32c(0, "123456789", 9) == 0xE3069283u);
  CHECK(crc32c(0, "", 0) == 0u);
  const std::string zeros(32, '\0');
  CHECK(crc32c(0, zeros.data(), zeros.size()) == 0x8A9136AAu);  // RFC 3720 B.4
}

TEST_CASE("crc32c: matches a bitwise reference, incrementally and at every length") {
  gcvm::SplitMix64 rng(3);
  std::string data;
  for (int i = 0; i < 300; ++i) data.push_back(static_cast<char>(rng.next()));
  for (std::size_t n = 0; n <= data.size(); n += 7) {
    const std::string prefix = data.substr(0, n);
    CHECK(crc32c(0, prefix.data(), n) == crc32c_bitwise(prefix));
    const std::size_t cut = n / 3;
    CHECK(crc32c(crc32c(0, prefix.data(), cut), prefix.data() + cut, n - cut) == crc32c_bitwise(prefix));
  }
}

TEST_CASE("crc32c: every single-bit flip changes the checksum") {
  std::string data = "gcvm trace chunk payload";
  const std::uint32_t good = crc32c(0, data.data(), data.size());
  for (std::size_t bit = 0; bit < data.size() * 8; ++bit) {
    data[bit / 8] ^= static_cast<char>(1 << (bit % 8));
    CHECK(crc32c(0, data.data(), data.size()) != good);
    data[bit / 8] ^= static_cast<char>(1 << (bit % 8));
  }
}
