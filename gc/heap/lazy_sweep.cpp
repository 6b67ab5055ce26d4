#include "gc/heap/lazy_sweep.hpp"

#include <bit>
#include <stdexcept>
#include <utility>

namespace gcvm {

void DoomedSlots::compute(std::span<const std::uint64_t> alloc_at_snapshot, const MarkBitmap& marks) {
  const std::size_t blocks = alloc_at_snapshot.size();
  words_.assign(blocks, 0);
  if (!blocks_.empty()) blocks_ = HierarchicalBitmap();  // computed and never handed over
  blocks_.resize(blocks);
  const auto mark_words = marks.words();
  objects_ = 0;
  allocated_ = 0;
  for (std::size_t b = 0; b < blocks; ++b) {
    allocated_ += static_cast<std::uint64_t>(std::popcount(alloc_at_snapshot[b]));
    const std::uint64_t mark = b < mark_words.size() ? mark_words[b] : 0;
    const std::uint64_t doomed = alloc_at_snapshot[b] & ~mark;
    if (doomed == 0) continue;
    words_[b] = doomed;
    blocks_.set(b);
    objects_ += static_cast<std::uint64_t>(std::popcount(doomed));
  }
}

std::uint64_t LazySweep::begin(DoomedSlots& doomed) {
  if (!idle()) throw std::logic_error("a lazy sweep began before the last one finished");
  std::swap(doomed_, doomed.words_);
  std::swap(pending_, doomed.blocks_);
  return doomed.objects_;
}

std::size_t LazySweep::take_next() {
  const std::size_t block = pending_.find_first();
  if (block != HierarchicalBitmap::npos) pending_.clear(block);
  return block;
}

}  // namespace gcvm
