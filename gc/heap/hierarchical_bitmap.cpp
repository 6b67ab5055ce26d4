#include "gc/heap/hierarchical_bitmap.hpp"

#include <algorithm>
#include <atomic>
#include <bit>

namespace gcvm {

namespace {

constexpr std::uint64_t bit_mask(std::size_t i) { return std::uint64_t{1} << (i & 63); }

std::size_t words_for(std::size_t bits) { return (bits + 63) / 64; }

}  // namespace

void HierarchicalBitmap::resize(std::size_t size_bits) {
  if (size_bits <= size_ && !levels_.empty()) return;
  size_ = size_bits;
  std::vector<std::size_t> word_counts;
  std::size_t bits = size_bits == 0 ? 1 : size_bits;
  do {
    bits = words_for(bits);
    word_counts.push_back(bits);
  } while (bits > 1);
  levels_.resize(word_counts.size());
  for (std::size_t l = 0; l < word_counts.size(); ++l) levels_[l].resize(word_counts[l], 0);
  rebuild_summaries();
}

void HierarchicalBitmap::rebuild_summaries() {
  for (std::size_t l = 1; l < levels_.size(); ++l) {
    auto& summary = levels_[l];
    std::fill(summary.begin(), summary.end(), 0);
    const auto& below = levels_[l - 1];
    for (std::size_t w = 0; w < below.size(); ++w)
      if (below[w] != 0) summary[w >> 6] |= bit_mask(w);
  }
}

void HierarchicalBitmap::set(std::size_t i) {
  for (std::size_t l = 0; l < levels_.size(); ++l) {
    std::uint64_t& word = levels_[l][i >> 6];
    const bool was_empty = word == 0;
    word |= bit_mask(i);
    if (!was_empty) return;
    i >>= 6;
  }
}

void HierarchicalBitmap::clear(std::size_t i) {
  for (std::size_t l = 0; l < levels_.size(); ++l) {
    std::uint64_t& word = levels_[l][i >> 6];
    word &= ~bit_mask(i);
    if (word != 0) return;
    i >>= 6;
  }
}

void HierarchicalBitmap::set_atomic(std::size_t i) { set_word_bits_atomic(i >> 6, bit_mask(i)); }

void HierarchicalBitmap::clear_atomic(std::size_t i) { clear_word_bits_atomic(i >> 6, bit_mask(i)); }

void HierarchicalBitmap::set_word_bits_atomic(std::size_t word_index, std::uint64_t bits) {
  if (bits == 0) return;
  std::atomic_ref<std::uint64_t> word(levels_[0][word_index]);
  if (word.fetch_or(bits, std::memory_order_acq_rel) == 0) set_atomic_from(1, word_index);
}

void HierarchicalBitmap::clear_word_bits_atomic(std::size_t word_index, std::uint64_t bits) {
  if (bits == 0) return;
  std::atomic_ref<std::uint64_t> word(levels_[0][word_index]);
  const std::uint64_t before = word.fetch_and(~bits, std::memory_order_acq_rel);
  if (before != 0 && (before & ~bits) == 0) clear_atomic_from(1, word_index);
}

void HierarchicalBitmap::summarize_run(std::size_t first_word, std::size_t last_word) {
  if (levels_.size() < 2) return;
  const Words& words = levels_[0];
  for (std::size_t w = first_word; w < last_word;) {
    const std::size_t summary = w >> 6;
    const std::size_t end = std::min(last_word, (summary + 1) * 64);
    std::uint64_t covered = 0, nonzero = 0;
    for (; w < end; ++w) {
      covered |= bit_mask(w);
      if (words[w] != 0) nonzero |= bit_mask(w);
    }
    std::atomic_ref<std::uint64_t> word(levels_[1][summary]);
    std::uint64_t before = word.load(std::memory_order_relaxed);
    std::uint64_t after = (before & ~covered) | nonzero;
    while (after != before && !word.compare_exchange_weak(before, after, std::memory_order_acq_rel))
      after = (before & ~covered) | nonzero;
    if (before == 0 && after != 0) set_atomic_from(2, summary);
    if (before != 0 && after == 0) clear_atomic_from(2, summary);
  }
}

void HierarchicalBitmap::set_atomic_from(std::size_t level, std::size_t i) {
  for (; level < levels_.size(); ++level, i >>= 6) {
    std::atomic_ref<std::uint64_t> word(levels_[level][i >> 6]);
    if (word.fetch_or(bit_mask(i), std::memory_order_acq_rel) != 0) return;
  }
}

void HierarchicalBitmap::clear_atomic_from(std::size_t level, std::size_t i) {
  for (; level < levels_.size(); ++level, i >>= 6) {
    std::atomic_ref<std::uint64_t> word(levels_[level][i >> 6]);
    const std::uint64_t after = word.fetch_and(~bit_mask(i), std::memory_order_acq_rel) & ~bit_mask(i);
    // A summary bit was just cleared: a concurrent set may have refilled the word it
    // summarises in the meantime, with its own summary update already done. Re-check.
    std::atomic_ref<std::uint64_t> summarised(levels_[level - 1][i]);
    if (summarised.load(std::memory_order_acquire) != 0) {
      set_atomic_from(level, i);
      return;
    }
    if (after != 0) return;
  }
}

std::size_t HierarchicalBitmap::find_next(std::size_t from) const {
  if (from >= size_) return npos;
  std::size_t level = 0;
  std::size_t index = from;  // bit index within `level`
  for (;;) {
    const auto& words = levels_[level];
    const std::size_t word_index = index >> 6;
    if (word_index >= words.size()) return npos;
    const std::uint64_t word = words[word_index] & (~std::uint64_t{0} << (index & 63));
    if (word != 0) {
      std::size_t found = word_index * 64 + static_cast<std::size_t>(std::countr_zero(word));
      while (level > 0) {
        --level;
        found = found * 64 + static_cast<std::size_t>(std::countr_zero(levels_[level][found]));
      }
      return found < size_ ? found : npos;
    }
    if (++level == levels_.size()) return npos;
    index = word_index + 1;
  }
}

std::size_t HierarchicalBitmap::count() const {
  std::size_t total = 0;
  if (levels_.empty()) return 0;
  for (std::uint64_t word : levels_[0]) total += static_cast<std::size_t>(std::popcount(word));
  return total;
}

bool HierarchicalBitmap::check_invariant() const {
  for (std::size_t l = 1; l < levels_.size(); ++l) {
    const auto& below = levels_[l - 1];
    for (std::size_t w = 0; w < below.size(); ++w) {
      const bool summary_bit = (levels_[l][w >> 6] >> (w & 63)) & 1u;
      if (summary_bit != (below[w] != 0)) return false;
    }
  }
  return true;
}

}  // namespace gcvm
