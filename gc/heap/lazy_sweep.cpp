#include "gc/heap/lazy_sweep.hpp"

#include <bit>
#include <stdexcept>
#include <utility>

namespace gcvm {

std::uint64_t LazySweep::begin(std::span<const std::uint64_t> alloc_at_snapshot, const MarkBitmap& marks) {
  if (!idle()) throw std::logic_error("a lazy sweep began before the last one finished");
  const std::size_t blocks = alloc_at_snapshot.size();
  doomed_.assign(blocks, 0);
  pending_.resize(blocks);
  const auto mark_words = marks.words();
  std::uint64_t doomed_objects = 0;
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::uint64_t mark = b < mark_words.size() ? mark_words[b] : 0;
    const std::uint64_t doomed = alloc_at_snapshot[b] & ~mark;
    if (doomed == 0) continue;
    doomed_[b] = doomed;
    pending_.set(b);
    doomed_objects += static_cast<std::uint64_t>(std::popcount(doomed));
  }
  return doomed_objects;
}

std::size_t LazySweep::take_next() {
  const std::size_t block = pending_.find_first();
  if (block != HierarchicalBitmap::npos) pending_.clear(block);
  return block;
}

}  // namespace gcvm
