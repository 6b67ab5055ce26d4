// Hierarchical bitmap (DynaSOAr, thesis §5.3.1).
//
// Level 0 holds one bit per element. Level k+1 holds one bit per 64-bit word of
// level k, set iff that word is nonzero. The top level is a single word, so
// finding a set bit costs one word inspection per level: O(log64 n).
//
// Invariant (quiescent): for every level k > 0, bit i of level k is set iff word i
// of level k-1 is nonzero. Plain operations keep it at every step. The `_atomic`
// operations may be called concurrently (a parallel sweep); while they run a summary
// bit can be stale for a moment, but each one re-checks the word it summarised, so
// the invariant holds again once all of them have returned (as in the thesis §5.4:
// eventually consistent at the end of the parallel phase, not at every instant).
//
// Runs of words (the sweep's): a thread that owns a run of level-0 words (no other
// thread writes them meanwhile) changes them with the `_in_run` operations, plain
// stores that leave the summaries stale, and then `summarize_run` brings the run's
// level-1 bits up to date with one atomic operation per level-1 word (a level-1 word
// summarises 64 words, 4,096 elements) and the levels above as the word operations do.
// Between the two only the run's thread may rely on the summaries of its words. Atomic
// word operations per changed word would put every run's threads on the few level-1
// words (one cache line of them covers 32,768 elements): on a 16-core host the sweep's
// runs took three times as long side by side as alone.
//
// Each level's words start on a cache line, so the words of aligned runs of 512
// elements share no line with other runs: the parallel sweep's runs of blocks
// (gc/heap/sweep.hpp) then write lines of their own (from a 16-byte-aligned
// std::vector, half of a run's words shared lines with its neighbours').
//
// In contrast to the thesis, the bitmap grows: the heap's block count is only known
// as it is used, and a fixed-size bitmap per shape would cost 8 MiB for each shape.
// Growing is not thread-safe and happens only on the (single-threaded) allocation
// slow path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

namespace gcvm {

/// An allocator of storage that starts on a cache line.
template <typename T>
struct CacheLineAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlignment{64};
  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlignment)); }
  void deallocate(T* p, std::size_t) { ::operator delete(p, kAlignment); }
  friend bool operator==(const CacheLineAllocator&, const CacheLineAllocator&) { return true; }
};

class HierarchicalBitmap {
 public:
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  HierarchicalBitmap() = default;
  explicit HierarchicalBitmap(std::size_t size_bits) { resize(size_bits); }

  /// Number of addressable bits.
  std::size_t size() const { return size_; }
  /// Grows (never shrinks) to at least `size_bits`; new bits are clear.
  void resize(std::size_t size_bits);

  bool test(std::size_t i) const { return (levels_[0][i >> 6] >> (i & 63)) & 1u; }
  void set(std::size_t i);
  void clear(std::size_t i);
  void set_atomic(std::size_t i);
  void clear_atomic(std::size_t i);
  /// Sets (clears) the bits of `bits` in level-0 word `word_index` (elements
  /// 64 * word_index + 0..63) with one atomic operation on that word; the summaries
  /// change only if the word became nonzero (zero). A sweep that changes many elements
  /// of one word pays one atomic operation instead of one per element.
  void set_word_bits_atomic(std::size_t word_index, std::uint64_t bits);
  void clear_word_bits_atomic(std::size_t word_index, std::uint64_t bits);
  /// Sets (clears) the bits of `bits` in level-0 word `word_index` of the caller's run
  /// with a plain operation; the summaries wait for `summarize_run`.
  void set_word_bits_in_run(std::size_t word_index, std::uint64_t bits) {
    if (bits != 0) levels_[0][word_index] |= bits;
  }
  void clear_word_bits_in_run(std::size_t word_index, std::uint64_t bits) {
    if (bits != 0) levels_[0][word_index] &= ~bits;
  }
  /// Brings the summaries of level-0 words [first_word, last_word), the caller's run, up
  /// to date: one atomic operation per level-1 word, and above it only where a level-1
  /// word became zero or nonzero. Safe beside other runs' calls.
  void summarize_run(std::size_t first_word, std::size_t last_word);

  /// Lowest set bit, or npos.
  std::size_t find_first() const { return empty() ? npos : find_next(0); }
  /// Lowest set bit at index >= from, or npos.
  std::size_t find_next(std::size_t from) const;
  /// Number of set bits (scans level 0).
  std::size_t count() const;
  bool empty() const { return levels_.empty() || levels_.back()[0] == 0; }

  /// Checks the summary invariant; returns false if any summary bit is wrong.
  bool check_invariant() const;

  template <typename F>
  void for_each_set(F&& visit) const {
    for (std::size_t i = find_first(); i != npos; i = find_next(i + 1)) visit(i);
  }

 private:
  void rebuild_summaries();
  /// The summary levels' side of the word operations: bit i of `level` (>= 1) and up.
  void set_atomic_from(std::size_t level, std::size_t i);
  void clear_atomic_from(std::size_t level, std::size_t i);
  std::size_t find_in_level(std::size_t level, std::size_t word_index, std::size_t bit_from) const;

  std::size_t size_ = 0;
  using Words = std::vector<std::uint64_t, CacheLineAllocator<std::uint64_t>>;
  std::vector<Words> levels_;  // levels_[0] = bits, back() has one word
};

}  // namespace gcvm
