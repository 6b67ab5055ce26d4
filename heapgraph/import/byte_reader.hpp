// A bounded-memory, big-endian reader over a seekable stream, for binary dump formats.
// It keeps one fixed buffer (1 MiB), knows the absolute offset of every byte it
// returns, and never reads past a limit: the end of the stream or a narrower limit
// set by the caller (the end of the record being parsed). Every read that would cross
// the limit throws ImportError naming the file and the offset of the read, so no
// length or count taken from the file can make it allocate or loop.
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "heapgraph/import/import_error.hpp"

namespace gcvm {

class ByteReader {
 public:
  /// `name` is used in error messages. The stream must be seekable.
  ByteReader(std::istream& in, std::string name);

  const std::string& name() const { return name_; }
  std::uint64_t offset() const { return offset_; }
  std::uint64_t size() const { return size_; }
  /// Bytes between the current offset and the limit.
  std::uint64_t remaining() const { return limit_ - offset_; }
  bool at_limit() const { return offset_ == limit_; }

  /// Restricts reads to end before `end` (clamped to the stream size); `what` names
  /// the enclosing structure in messages. Returns the previous limit.
  std::uint64_t set_limit(std::uint64_t end, const char* what);
  void restore_limit(std::uint64_t end, const char* what) { set_limit(end, what); }

  /// Moves to absolute offset 0 with the limit at the stream end.
  void rewind();

  std::uint8_t u1() { return static_cast<std::uint8_t>(*take(1)); }
  std::uint16_t u2();
  std::uint32_t u4();
  std::uint64_t u8();
  /// An unsigned big-endian number of `width` bytes (1, 2, 4 or 8).
  std::uint64_t uint(unsigned width);
  void skip(std::uint64_t n);
  /// Reads `n` bytes (n <= 64 KiB) into `out`.
  void bytes(std::uint64_t n, std::string& out);

  /// Throws ImportError at `at` (default: the current offset).
  [[noreturn]] void fail(const std::string& what) const { fail_at(offset_, what); }
  [[noreturn]] void fail_at(std::uint64_t at, const std::string& what) const { throw ImportError(name_, at, what); }

 private:
  const char* take(std::uint64_t n);
  [[noreturn]] void overrun(std::uint64_t n) const;
  void refill(std::uint64_t n);

  std::istream& in_;
  std::string name_;
  std::vector<char> buffer_;
  std::uint64_t buffer_start_ = 0;  // file offset of buffer_[0]
  std::size_t pos_ = 0;             // next byte in buffer_
  std::size_t end_ = 0;             // valid bytes in buffer_
  std::uint64_t offset_ = 0;        // == buffer_start_ + pos_
  std::uint64_t size_ = 0;
  std::uint64_t limit_ = 0;
  const char* limit_what_ = "the file";
};

}  // namespace gcvm
