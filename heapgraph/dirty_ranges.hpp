// Which parts of the reference graph changed since the last device sync.
//
// The graph is cut into fixed chunks: kVertexChunk vertices of the begin/degree
// arrays and kEdgeChunk slots of the edge array. A chunk is dirty iff something in
// it was written since the consumer (a device mirror, issue 4) last called
// `clear()`. Marking is one OR into a word, cheap enough for every barrier. Ranges
// come back coalesced: adjacent dirty chunks form one range, so a sync issues as
// few copies as possible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gcvm {

struct IndexRange {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;  // exclusive
  friend bool operator==(const IndexRange&, const IndexRange&) = default;
};

class DirtyRanges {
 public:
  static constexpr std::uint64_t kVertexChunk = 1024;
  static constexpr std::uint64_t kEdgeChunk = 4096;

  void mark_vertex(std::uint64_t v) { mark(vertex_chunks_, v / kVertexChunk); }
  void mark_vertices(std::uint64_t begin, std::uint64_t end) { mark_span(vertex_chunks_, begin, end, kVertexChunk); }
  void mark_edge(std::uint64_t e) { mark(edge_chunks_, e / kEdgeChunk); }
  void mark_edges(std::uint64_t begin, std::uint64_t end) { mark_span(edge_chunks_, begin, end, kEdgeChunk); }

  /// Dirty vertex ranges, clipped to [0, vertex_count).
  std::vector<IndexRange> vertex_ranges(std::uint64_t vertex_count) const {
    return ranges(vertex_chunks_, kVertexChunk, vertex_count);
  }
  /// Dirty edge ranges, clipped to [0, edge_count).
  std::vector<IndexRange> edge_ranges(std::uint64_t edge_count) const {
    return ranges(edge_chunks_, kEdgeChunk, edge_count);
  }
  bool any() const;
  void clear();

 private:
  static void mark(std::vector<std::uint64_t>& bits, std::uint64_t chunk) {
    const std::uint64_t word = chunk >> 6;
    if (word >= bits.size()) [[unlikely]] grow(bits, word);
    bits[word] |= std::uint64_t{1} << (chunk & 63);
  }
  /// Out of line so that `mark` stays small enough to inline into every barrier.
  [[gnu::noinline]] static void grow(std::vector<std::uint64_t>& bits, std::uint64_t word) {
    bits.resize(word + 1 + bits.size() / 2, 0);
  }
  static void mark_span(std::vector<std::uint64_t>& bits, std::uint64_t begin, std::uint64_t end,
                        std::uint64_t chunk_size) {
    if (begin >= end) return;
    for (std::uint64_t chunk = begin / chunk_size; chunk <= (end - 1) / chunk_size; ++chunk) mark(bits, chunk);
  }
  static std::vector<IndexRange> ranges(const std::vector<std::uint64_t>& bits, std::uint64_t chunk_size,
                                        std::uint64_t limit);

  std::vector<std::uint64_t> vertex_chunks_;
  std::vector<std::uint64_t> edge_chunks_;
};

}  // namespace gcvm
