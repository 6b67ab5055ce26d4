#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "heapgraph/random.hpp"
#include "heapgraph/trace/varint.hpp"

using namespace gcvm::trace;

namespace {

VarintStatus decode(const std::string& bytes, std::uint64_t& value, std::size_t& used) {
  used = 0;
  return read_uvarint([&]() -> int { return used < bytes.size() ? static_cast<unsigned char>(bytes[used++]) : -1; },
                      value);
}

}  // namespace

TEST_CASE("varints: known encodings") {
  std::string out;
  put_uvarint(out, 0);
  CHECK(out == std::string(1, '\0'));
  out.clear();
  put_uvarint(out, 127);
  CHECK(out == "\x7f");
  out.clear();
  put_uvarint(out, 300);
  CHECK(out == "\xac\x02");
  out.clear();
  put_uvarint(out, UINT64_MAX);
  CHECK(out.size() == 10);
  CHECK(static_cast<unsigned char>(out.back()) == 1);
}

TEST_CASE("varints: round trip of edge and random values") {
  gcvm::SplitMix64 rng(7);
  std::vector<std::uint64_t> values = {0, 1, 127, 128, 16383, 16384, UINT32_MAX, UINT64_MAX, UINT64_MAX - 1};
  for (int i = 0; i < 2000; ++i) values.push_back(rng.next() >> rng.below(64));
  for (std::uint64_t v : values) {
    std::string bytes;
    put_uvarint(bytes, v);
    std::uint64_t back = 0;
    std::size_t used = 0;
    REQUIRE(decode(bytes, back, used) == VarintStatus::Ok);
    CHECK(back == v);
    CHECK(used == bytes.size());
    const auto s = static_cast<std::int64_t>(v);
    CHECK(zigzag_decode(zigzag_encode(s)) == s);
  }
}

TEST_CASE("varints: truncated and overlong encodings are rejected") {
  std::uint64_t value = 0;
  std::size_t used = 0;
  CHECK(decode("", value, used) == VarintStatus::Truncated);
  CHECK(decode("\x80\x80", value, used) == VarintStatus::Truncated);
  // 10th byte with bits beyond bit 63.
  CHECK(decode(std::string(9, '\xff') + "\x02", value, used) == VarintStatus::Overlong);
  // 11 bytes: never reads past the 10th.
  CHECK(decode(std::string(10, '\x80') + "\x01", value, used) == VarintStatus::Overlong);
  CHECK(used == 10);
}
