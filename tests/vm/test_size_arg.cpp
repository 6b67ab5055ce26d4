#include <doctest/doctest.h>

#include "vm/cli/size_arg.hpp"

using gcvm::parse_byte_size;

TEST_CASE("byte sizes") {
  CHECK(parse_byte_size("1024") == 1024u);
  CHECK(parse_byte_size("64M") == 64u << 20);
  CHECK(parse_byte_size("64mb") == 64u << 20);
  CHECK(parse_byte_size("2GiB") == 2ull << 30);
  CHECK(parse_byte_size("512k") == 512u << 10);
  CHECK(parse_byte_size("1T") == 1ull << 40);
  CHECK_FALSE(parse_byte_size(""));
  CHECK_FALSE(parse_byte_size("M"));
  CHECK_FALSE(parse_byte_size("12Q"));
  CHECK_FALSE(parse_byte_size("-5M"));
  CHECK_FALSE(parse_byte_size("99999999999999999999G"));
  CHECK_FALSE(parse_byte_size("17179869184G"));
}
