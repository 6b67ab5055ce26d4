#include "heapgraph/import/byte_reader.hpp"

#include <algorithm>
#include <cstring>

namespace gcvm {

namespace {
constexpr std::size_t kBufferBytes = std::size_t{1} << 20;
}

ByteReader::ByteReader(std::istream& in, std::string name) : in_(in), name_(std::move(name)) {
  in_.clear();
  in_.seekg(0, std::ios::end);
  const auto end = in_.tellg();
  if (!in_ || end < 0) throw ImportError(name_, 0, "cannot read the file (not a seekable regular file)");
  size_ = static_cast<std::uint64_t>(end);
  buffer_.resize(static_cast<std::size_t>(std::clamp<std::uint64_t>(size_, 64, kBufferBytes)));
  rewind();
}

void ByteReader::rewind() {
  in_.clear();
  in_.seekg(0);
  buffer_start_ = 0;
  pos_ = end_ = 0;
  offset_ = 0;
  limit_ = size_;
  limit_what_ = "the file";
}

std::uint64_t ByteReader::set_limit(std::uint64_t end, const char* what) {
  const std::uint64_t previous = limit_;
  limit_ = std::min(end, size_);
  limit_what_ = what;
  return previous;
}

void ByteReader::overrun(std::uint64_t n) const {
  if (limit_ == size_)
    fail(limit_ == offset_ ? std::string("unexpected end of file (truncated?)")
                           : "the file ends inside a " + std::to_string(n) + "-byte field (truncated?)");
  fail("a " + std::to_string(n) + "-byte field runs past the end of " + limit_what_ + " at byte " +
       std::to_string(limit_));
}

void ByteReader::refill(std::uint64_t n) {
  // Keep the unread bytes, then fill the rest of the buffer from the stream.
  const std::size_t keep = end_ - pos_;
  std::memmove(buffer_.data(), buffer_.data() + pos_, keep);
  buffer_start_ += pos_;
  pos_ = 0;
  end_ = keep;
  in_.clear();
  in_.seekg(static_cast<std::streamoff>(buffer_start_ + end_));
  in_.read(buffer_.data() + end_, static_cast<std::streamsize>(buffer_.size() - end_));
  end_ += static_cast<std::size_t>(in_.gcount());
  if (end_ - pos_ < n) fail("the file could not be read here (I/O error or the file shrank)");
}

const char* ByteReader::take(std::uint64_t n) {
  if (n > limit_ - offset_) overrun(n);
  if (end_ - pos_ < n) refill(n);
  const char* p = buffer_.data() + pos_;
  pos_ += n;
  offset_ += n;
  return p;
}

std::uint16_t ByteReader::u2() {
  const auto* p = reinterpret_cast<const unsigned char*>(take(2));
  return static_cast<std::uint16_t>(p[0] << 8 | p[1]);
}

std::uint32_t ByteReader::u4() {
  const auto* p = reinterpret_cast<const unsigned char*>(take(4));
  return std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 | p[3];
}

std::uint64_t ByteReader::u8() {
  const std::uint64_t high = u4();
  return high << 32 | u4();
}

std::uint64_t ByteReader::uint(unsigned width) {
  switch (width) {
    case 1: return u1();
    case 2: return u2();
    case 4: return u4();
    default: return u8();
  }
}

void ByteReader::skip(std::uint64_t n) {
  if (n > limit_ - offset_) overrun(n);
  if (n <= end_ - pos_) {
    pos_ += n;
  } else {
    // Drop the buffer and continue reading at the new offset.
    buffer_start_ = offset_ + n;
    pos_ = end_ = 0;
  }
  offset_ += n;
}

void ByteReader::bytes(std::uint64_t n, std::string& out) {
  if (n > (1 << 16)) fail("internal: a byte string longer than 64 KiB was requested");
  out.assign(take(n), n);
}

}  // namespace gcvm
