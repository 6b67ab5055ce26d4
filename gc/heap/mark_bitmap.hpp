// The result of every marker (DESIGN.md invariant 2): one 64-bit word per block, bit
// `slot` set iff object block*64+slot is reachable. Same layout as the allocation
// words, so sweep is `alloc &= mark` per block.
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <span>
#include <vector>

#include "gc/heap/mark_word_allocator.hpp"
#include "heapgraph/object_id.hpp"

namespace gcvm {

/// A bitmap's words: page-locked for device reads where a device backend asked for it
/// (mark_word_allocator.hpp).
using MarkWords = std::vector<std::uint64_t, MarkWordAllocator<std::uint64_t>>;

class MarkBitmap {
 public:
  /// Clears the bitmap and sizes it for `blocks` blocks.
  void reset(std::uint32_t blocks) { words_.assign(blocks, 0); }
  /// Sizes the bitmap for `blocks` blocks and leaves its words as they are, for a caller
  /// that writes every word (a device marker's download): no pass over the words.
  void resize_for_overwrite(std::uint32_t blocks) { words_.resize(blocks); }
  /// Sizes the bitmap for `blocks` blocks with the bits of `initial` set (words beyond
  /// `initial` clear; `initial` no longer than `blocks`).
  void reset(std::uint32_t blocks, std::span<const std::uint64_t> initial) {
    words_.assign(blocks, 0);
    std::copy(initial.begin(), initial.begin() + std::min<std::size_t>(initial.size(), blocks), words_.begin());
  }
  std::uint32_t block_count() const { return static_cast<std::uint32_t>(words_.size()); }

  bool test(ObjectId id) const { return (words_[block_of(id)] >> slot_of(id)) & 1u; }
  /// Sets the bit; true if it was clear (the caller marked the object first).
  bool test_and_set(ObjectId id) {
    std::uint64_t& word = words_[block_of(id)];
    const std::uint64_t bit = std::uint64_t{1} << slot_of(id);
    if (word & bit) return false;
    word |= bit;
    return true;
  }
  /// Thread-safe test_and_set for parallel markers: a plain read first (most targets
  /// are already marked), then one fetch_or.
  bool test_and_set_atomic(ObjectId id) {
    std::atomic_ref<std::uint64_t> word(words_[block_of(id)]);
    const std::uint64_t bit = std::uint64_t{1} << slot_of(id);
    if (word.load(std::memory_order_relaxed) & bit) return false;
    return (word.fetch_or(bit, std::memory_order_relaxed) & bit) == 0;
  }

  std::uint64_t count() const { return count_bits(words_); }
  static std::uint64_t count_bits(std::span<const std::uint64_t> words) {
    std::uint64_t total = 0;
    for (std::uint64_t w : words) total += static_cast<std::uint64_t>(std::popcount(w));
    return total;
  }
  MarkWords& words() { return words_; }
  const MarkWords& words() const { return words_; }
  friend bool operator==(const MarkBitmap&, const MarkBitmap&) = default;

 private:
  MarkWords words_;
};

}  // namespace gcvm
