// Which entries of one reference-graph array changed since its consumer (a device
// mirror) last looked: one bit per entry, and a summary bit per chunk of
// kIndicesPerChunk entries so that finding the changes costs time in proportion to
// the chunks that hold any, not to the array.
//
// Invariants:
// - Bit i is set iff entry i was written with a value different from the one it held
//   since the last `clear()` (the writer compares first; a store of the value already
//   there changes nothing). A set bit may name an entry whose value has since returned
//   to what the consumer holds; that costs bytes, never correctness.
// - Summary bit c is set whenever any bit of entries [c * kIndicesPerChunk,
//   (c + 1) * kIndicesPerChunk) is set; it may stay set after those bits are cleared
//   only until the next `clear()`.
// - Indices below `size()` can be marked; the owner calls `resize` before it writes
//   entries past it. Storage never moves (VirtualArray), so growing costs no copy.
// - `generation()` counts `clear()` calls. A consumer that remembers the generation it
//   cleared knows, when it comes back, whether anyone else cleared changes meant for it
//   (then it must assume everything changed).
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>

#include "heapgraph/virtual_array.hpp"

namespace gcvm {

class ChangeBitmap {
 public:
  static constexpr std::uint64_t kIndicesPerChunk = 4096;  // 64 words of entry bits
  static constexpr std::uint64_t kWordsPerChunk = kIndicesPerChunk / 64;

  /// Reserves address space for `max_indices` entries; nothing is committed yet.
  explicit ChangeBitmap(std::uint64_t max_indices);

  /// Makes indices [0, count) markable (never shrinks).
  bool resize(std::uint64_t count);
  std::uint64_t size() const { return size_; }

  void mark(std::uint64_t i) {
    bits_[i >> 6] |= std::uint64_t{1} << (i & 63);
    summary_[i / kIndicesPerChunk / 64] |= std::uint64_t{1} << ((i / kIndicesPerChunk) & 63);
  }

  /// Calls `visit(begin, end)` for every maximal run of set bits in [from, limit), in
  /// increasing order (runs are cut at `from` and `limit`). Disjoint ranges may be
  /// visited from different threads at once.
  template <typename F>
  void for_each_run(std::uint64_t from, std::uint64_t limit, F&& visit) const;
  /// Set bits below `limit` (a popcount over the words of marked chunks).
  std::uint64_t count(std::uint64_t limit) const;
  bool any() const;
  /// Chunks that may hold set bits (a popcount of the summary): an upper bound on the
  /// set bits / kIndicesPerChunk, and a lower bound on the words a walk visits.
  std::uint64_t marked_chunks() const;
  /// Clears every bit (in time proportional to the chunks that hold any).
  void clear();
  std::uint64_t generation() const { return generation_; }

 private:
  std::uint64_t summary_words() const { return (size_ + kIndicesPerChunk * 64 - 1) / (kIndicesPerChunk * 64); }
  /// Calls `visit(word_index)` for every nonzero word of the chunks marked in the summary
  /// that holds bits of [from, limit), in order.
  template <typename F>
  void for_each_marked_word(std::uint64_t from, std::uint64_t limit, F&& visit) const;

  VirtualArray<std::uint64_t> bits_;     // one bit per entry
  VirtualArray<std::uint64_t> summary_;  // one bit per chunk
  std::uint64_t size_ = 0;
  std::uint64_t generation_ = 0;
};

template <typename F>
void ChangeBitmap::for_each_marked_word(std::uint64_t from, std::uint64_t limit, F&& visit) const {
  limit = std::min(limit, size_);
  if (from >= limit) return;
  const std::uint64_t first_word = from / 64;
  const std::uint64_t limit_words = (limit + 63) / 64;
  const std::uint64_t first_chunk = first_word / kWordsPerChunk;
  const std::uint64_t summaries = summary_words();
  for (std::uint64_t s = first_chunk / 64; s < summaries; ++s) {
    std::uint64_t chunks = summary_[s];
    if (s == first_chunk / 64) chunks &= ~std::uint64_t{0} << (first_chunk % 64);
    for (; chunks != 0; chunks &= chunks - 1) {
      const std::uint64_t chunk = s * 64 + static_cast<std::uint64_t>(std::countr_zero(chunks));
      const std::uint64_t first = std::max(chunk * kWordsPerChunk, first_word);
      if (first >= limit_words) return;
      const std::uint64_t last = std::min(chunk * kWordsPerChunk + kWordsPerChunk, limit_words);
      for (std::uint64_t w = first; w < last; ++w)
        if (bits_[w] != 0) visit(w);
    }
  }
}

template <typename F>
void ChangeBitmap::for_each_run(std::uint64_t from, std::uint64_t limit, F&& visit) const {
  limit = std::min(limit, size_);
  std::uint64_t run_begin = 0, run_end = 0;  // the open run, empty when equal
  for_each_marked_word(from, limit, [&](std::uint64_t w) {
    std::uint64_t word = bits_[w];
    if (w == from / 64) word &= ~std::uint64_t{0} << (from % 64);
    while (word != 0) {
      const unsigned start = static_cast<unsigned>(std::countr_zero(word));
      const std::uint64_t shifted = word >> start;
      const unsigned length = shifted == ~std::uint64_t{0} ? 64u - start : static_cast<unsigned>(std::countr_one(shifted));
      const std::uint64_t begin = w * 64 + start;
      const std::uint64_t end = std::min(begin + length, limit);
      if (begin >= limit) break;
      if (begin == run_end && run_end != run_begin) {
        run_end = end;
      } else {
        if (run_end != run_begin) visit(run_begin, run_end);
        run_begin = begin;
        run_end = end;
      }
      word = start + length >= 64 ? 0 : word & ~((~std::uint64_t{0} >> (64 - start - length)));
    }
  });
  if (run_end != run_begin) visit(run_begin, run_end);
}

}  // namespace gcvm
