#include "heapgraph/change_bitmap.hpp"

#include <algorithm>
#include <bit>

namespace gcvm {

ChangeBitmap::ChangeBitmap(std::uint64_t max_indices)
    : bits_((max_indices + 63) / 64), summary_((max_indices + kIndicesPerChunk * 64 - 1) / (kIndicesPerChunk * 64)) {}

bool ChangeBitmap::resize(std::uint64_t count) {
  if (count <= size_) return true;
  if (!bits_.grow_to((count + 63) / 64)) return false;
  if (!summary_.grow_to((count + kIndicesPerChunk * 64 - 1) / (kIndicesPerChunk * 64))) return false;
  size_ = count;
  return true;
}

std::uint64_t ChangeBitmap::count(std::uint64_t limit) const {
  limit = std::min(limit, size_);
  const std::uint64_t last_word = limit / 64;  // the word `limit` falls in, if it is not a word boundary
  const std::uint64_t last_mask = (std::uint64_t{1} << (limit % 64)) - 1;
  std::uint64_t n = 0;
  for_each_marked_word(0, limit, [&](std::uint64_t w) {
    n += static_cast<std::uint64_t>(std::popcount(w == last_word ? bits_[w] & last_mask : bits_[w]));
  });
  return n;
}

std::uint64_t ChangeBitmap::count_up_to(std::uint64_t cap) const {
  const std::uint64_t words = (size_ + 63) / 64;
  std::uint64_t n = 0;
  for (std::uint64_t s = 0; s < summary_words() && n < cap; ++s) {
    for (std::uint64_t chunks = summary_[s]; chunks != 0 && n < cap; chunks &= chunks - 1) {
      const std::uint64_t first = (s * 64 + static_cast<std::uint64_t>(std::countr_zero(chunks))) * kWordsPerChunk;
      const std::uint64_t last = std::min(first + kWordsPerChunk, words);
      for (std::uint64_t w = first; w < last; ++w) n += static_cast<std::uint64_t>(std::popcount(bits_[w]));
    }
  }
  return n;
}

ChangeBitmap::DenseStretch ChangeBitmap::next_dense(std::uint64_t first_chunk, std::uint64_t end_chunk,
                                                    std::uint64_t least_span) const {
  // The open stretch: chunks [open_begin, open_end), none when equal, and its set bits.
  std::uint64_t open_begin = 0, open_end = 0, open_set = 0;
  DenseStretch found;
  // Ends the open stretch before `next`: found when it spans enough from its first set
  // bit to its last.
  auto close = [&](std::uint64_t next) {
    if (open_end == open_begin) return false;
    std::uint64_t first = open_begin * kWordsPerChunk, last = open_end * kWordsPerChunk - 1;
    while (bits_[first] == 0) ++first;
    while (bits_[last] == 0) --last;
    const std::uint64_t begin = first * 64 + static_cast<std::uint64_t>(std::countr_zero(bits_[first]));
    const std::uint64_t end = last * 64 + 64 - static_cast<std::uint64_t>(std::countl_zero(bits_[last]));
    const std::uint64_t set = open_set;
    open_begin = open_end = open_set = 0;
    if (end - begin < least_span) return false;
    found = {begin, end, set, next};
    return true;
  };
  for_each_marked_chunk(first_chunk * kIndicesPerChunk, end_chunk * kIndicesPerChunk, [&](std::uint64_t chunk) {
    std::uint64_t set = 0;
    for (std::uint64_t w = chunk * kWordsPerChunk; w < (chunk + 1) * kWordsPerChunk; ++w)
      set += static_cast<std::uint64_t>(std::popcount(bits_[w]));
    if (open_end != open_begin && chunk == open_end &&
        2 * (open_set + set) >= (chunk + 1 - open_begin) * kIndicesPerChunk) {
      open_end = chunk + 1;
      open_set += set;
      return true;
    }
    if (close(chunk)) return false;
    if (2 * set >= kIndicesPerChunk) {
      open_begin = chunk;
      open_end = chunk + 1;
      open_set = set;
    }
    return true;
  });
  close(end_chunk);  // nothing open once a stretch was found
  return found;
}

bool ChangeBitmap::any() const {
  const std::uint64_t words = summary_words();
  return std::any_of(summary_.data(), summary_.data() + words, [](std::uint64_t w) { return w != 0; });
}

std::uint64_t ChangeBitmap::next_marked(std::uint64_t from, std::uint64_t limit) const {
  const std::uint64_t end_chunk = (limit + kIndicesPerChunk - 1) / kIndicesPerChunk;
  std::uint64_t chunk = from / kIndicesPerChunk;
  while (chunk < end_chunk) {
    const std::atomic_ref<std::uint64_t> summary(const_cast<std::uint64_t&>(summary_[chunk / 64]));  // only loaded
    const std::uint64_t marked = summary.load(std::memory_order_relaxed) & (~std::uint64_t{0} << (chunk % 64));
    if (marked != 0) {
      const std::uint64_t found = chunk / 64 * 64 + static_cast<std::uint64_t>(std::countr_zero(marked));
      return found < end_chunk ? found * kIndicesPerChunk : limit;
    }
    chunk = (chunk / 64 + 1) * 64;
  }
  return limit;
}

std::uint64_t ChangeBitmap::marked_chunks() const {
  std::uint64_t n = 0;
  for (std::uint64_t s = 0; s < summary_words(); ++s) n += static_cast<std::uint64_t>(std::popcount(summary_[s]));
  return n;
}

void ChangeBitmap::clear() {
  ++generation_;
  const std::uint64_t words = summary_words();
  for (std::uint64_t s = 0; s < words; ++s) {
    for (std::uint64_t chunks = summary_[s]; chunks != 0; chunks &= chunks - 1) {
      const std::uint64_t chunk = s * 64 + static_cast<std::uint64_t>(std::countr_zero(chunks));
      const std::uint64_t first = chunk * kWordsPerChunk;
      const std::uint64_t last = std::min(first + kWordsPerChunk, (size_ + 63) / 64);
      if (first < last) std::fill(bits_.data() + first, bits_.data() + last, 0);
    }
    summary_[s] = 0;
  }
}

}  // namespace gcvm
