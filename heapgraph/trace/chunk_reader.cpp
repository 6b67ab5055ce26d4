#include "heapgraph/trace/chunk_reader.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "heapgraph/trace/crc32c.hpp"
#include "heapgraph/trace/trace_error.hpp"
#include "heapgraph/trace/trace_event.hpp"

namespace gcvm::trace {

static_assert(kChunkHeaderBytes == 8 && kFileHeaderBytes == kMagic.size() + 4);

namespace {

std::uint32_t get_u32le(const char* p) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= std::uint32_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return v;
}

std::unique_ptr<std::ifstream> open_file(const std::string& path) {
  auto file = std::make_unique<std::ifstream>(path, std::ios::binary);
  if (!*file) throw TraceError(path, 0, "cannot open the file");
  return file;
}

}  // namespace

ChunkReader::ChunkReader(std::istream& in, std::string name) : in_(in), name_(std::move(name)) { read_header(); }

ChunkReader::ChunkReader(const std::string& path) : file_(open_file(path)), in_(*file_), name_(path) { read_header(); }

void ChunkReader::read_header() {
  char header[kFileHeaderBytes];
  const std::size_t got = read_up_to(header, sizeof header);
  if (got < kMagic.size() || !std::equal(kMagic.begin(), kMagic.end(), header))
    fail(0, "not a gcvm trace (it does not start with the magic bytes GCVMTRAC)");
  if (got < sizeof header) fail(got, "truncated: the file header ends before the version");
  const std::uint32_t version = get_u32le(header + kMagic.size());
  if (version != kVersion)
    fail(kMagic.size(), fmt::format("unsupported trace version {} (this gcvm reads version {})", version, kVersion));
  next_chunk_offset_ = kFileHeaderBytes;
  payload_offset_ = kFileHeaderBytes;
}


ChunkReader::~ChunkReader() = default;

void ChunkReader::fail(std::uint64_t offset, const std::string& what) const { throw TraceError(name_, offset, what); }

std::size_t ChunkReader::read_up_to(char* data, std::size_t size) {
  in_.read(data, static_cast<std::streamsize>(size));
  const auto got = static_cast<std::size_t>(in_.gcount());
  if (got < size && in_.bad()) fail(next_chunk_offset_ + got, "read error");
  return got;
}

bool ChunkReader::load_chunk() {
  const std::uint64_t at = next_chunk_offset_;
  char header[kChunkHeaderBytes];
  const std::size_t got = read_up_to(header, sizeof header);
  if (got == 0) return false;
  if (got < sizeof header)
    fail(at, fmt::format("truncated: chunk {} header has {} of {} bytes", chunks_ + 1, got, kChunkHeaderBytes));
  const std::uint32_t length = get_u32le(header);
  const std::uint32_t stored_crc = get_u32le(header + 4);
  if (length == 0 || length > kMaxChunkPayload)
    fail(at, fmt::format("chunk {} declares an impossible payload length {} (1..{})", chunks_ + 1, length,
                         kMaxChunkPayload));
  buffer_.resize(length);
  const std::size_t payload = read_up_to(buffer_.data(), length);
  if (payload < length)
    fail(at, fmt::format("truncated: chunk {} declares {} payload bytes, the file holds {}", chunks_ + 1, length,
                         payload));
  const std::uint32_t crc = crc32c(crc32c(0, header, 4), buffer_.data(), length);
  if (crc != stored_crc)
    fail(at, fmt::format("chunk {} is damaged: checksum {:08x}, expected {:08x}", chunks_ + 1, crc, stored_crc));
  ++chunks_;
  pos_ = 0;
  payload_offset_ = at + kChunkHeaderBytes;
  next_chunk_offset_ = payload_offset_ + length;
  return true;
}

bool ChunkReader::at_end() {
  return pos_ >= buffer_.size() && in_.peek() == std::char_traits<char>::eof();
}

}  // namespace gcvm::trace
