// The byte layer of a trace: checks the file header, then hands out the payload bytes
// of consecutive chunks, verifying each chunk's length and CRC-32C before any of its
// bytes are used. Events may span chunks; the reader above sees one byte stream.
//
// Memory: one chunk buffer of at most kMaxChunkPayload bytes. A declared length is
// checked against that limit before anything is allocated, and payload bytes are read
// in place, so a corrupt length can neither allocate much nor hang (every loop
// consumes input). Every error is a TraceError naming the file offset.
#pragma once

#include <cstdint>
#include <fstream>
#include <istream>
#include <memory>
#include <string>
#include <vector>

namespace gcvm::trace {

class ChunkReader {
 public:
  /// Reads from `in` (which must outlive the reader); `name` appears in errors.
  ChunkReader(std::istream& in, std::string name);
  /// Opens `path`; a file that cannot be opened is a TraceError at byte 0.
  explicit ChunkReader(const std::string& path);
  ~ChunkReader();

  /// The next payload byte (0..255), or -1 when the file ends exactly after a chunk.
  int next_byte() {
    if (pos_ < buffer_.size()) return static_cast<unsigned char>(buffer_[pos_++]);
    return load_chunk() ? static_cast<unsigned char>(buffer_[pos_++]) : -1;
  }
  /// File offset of the next payload byte in this chunk, or of the next chunk header.
  std::uint64_t offset() const { return pos_ < buffer_.size() ? payload_offset_ + pos_ : next_chunk_offset_; }
  /// File offset of the byte next_byte() returned last.
  std::uint64_t last_offset() const { return payload_offset_ + pos_ - 1; }
  /// True when the file holds nothing after the bytes returned so far.
  bool at_end();
  const std::string& name() const { return name_; }
  std::uint64_t chunks() const { return chunks_; }
  /// Bytes consumed from the file so far (headers included).
  std::uint64_t bytes_read() const { return next_chunk_offset_; }

 private:
  void read_header();
  bool load_chunk();
  std::size_t read_up_to(char* data, std::size_t size);
  [[noreturn]] void fail(std::uint64_t offset, const std::string& what) const;

  std::unique_ptr<std::ifstream> file_;
  std::istream& in_;
  std::string name_;
  std::vector<char> buffer_;
  std::size_t pos_ = 0;
  std::uint64_t payload_offset_ = 0;     // file offset of buffer_[0]
  std::uint64_t next_chunk_offset_ = 0;  // file offset of the next chunk header
  std::uint64_t chunks_ = 0;
};

}  // namespace gcvm::trace
