#include "gc/heap/block_allocator.hpp"

#include <algorithm>
#include <atomic>
#include <bit>

namespace gcvm {

BlockAllocator::BlockAllocator(const ShapeTable& shapes, std::uint32_t max_blocks)
    : shapes_(shapes),
      max_blocks_(std::min(max_blocks, kMaxBlocks)),
      storage_(std::uint64_t{max_blocks_} * kBlockBytes),
      alloc_words_(max_blocks_),
      untouched_(max_blocks_),
      block_shapes_(max_blocks_) {}

BlockAllocator::ShapeBlocks& BlockAllocator::blocks_for(ShapeId shape) {
  if (shape >= per_shape_.size()) {
    const std::size_t before = per_shape_.size();
    per_shape_.resize(shape + 1);
    for (std::size_t i = before; i < per_shape_.size(); ++i) per_shape_[i].full_mask = shapes_.layout(static_cast<ShapeId>(i)).full_mask;
    for (auto& s : per_shape_) {
      s.allocated.resize(free_.size());
      s.active.resize(free_.size());
    }
    shape_count_ = static_cast<std::uint32_t>(per_shape_.size());
  }
  return per_shape_[shape];
}

void BlockAllocator::grow_bitmaps(std::uint32_t blocks) {
  if (blocks <= free_.size() && free_.size() != 0) return;
  const std::size_t target = std::min<std::size_t>(max_blocks_, std::max<std::size_t>({blocks, free_.size() * 2, 1024}));
  free_.resize(target);
  for (auto& s : per_shape_) {
    s.allocated.resize(target);
    s.active.resize(target);
  }
}

std::uint32_t BlockAllocator::find_active_block(ShapeId shape) {
  if (shape >= per_shape_.size()) return kNoBlock;
  ShapeBlocks& s = per_shape_[shape];
  const std::size_t found = s.active.find_first();
  move_cursor(s, found == HierarchicalBitmap::npos ? kNoBlock : static_cast<std::uint32_t>(found));
  return s.cursor;
}

std::optional<std::uint32_t> BlockAllocator::initialize_block(ShapeId shape) {
  std::size_t block = free_.find_first();
  if (block == HierarchicalBitmap::npos) {
    if (high_water_ == max_blocks_) return std::nullopt;
    block = high_water_;
    if (!storage_.commit((block + 1) * std::uint64_t{kBlockBytes}) || !alloc_words_.grow_to(block + 1) ||
        !untouched_.grow_to(block + 1) || !block_shapes_.grow_to(block + 1))
      return std::nullopt;
    ++high_water_;
    grow_bitmaps(high_water_);
  } else {
    free_.clear(block);
  }
  const auto b = static_cast<std::uint32_t>(block);
  ShapeBlocks& s = blocks_for(shape);
  block_shapes_[b] = shape;
  alloc_words_[b] = 0;
  untouched_[b] = s.full_mask;
  s.allocated.set(b);
  s.active.set(b);
  move_cursor(s, b);
  ++blocks_in_use_;
  return b;
}

void BlockAllocator::abandon_block(std::uint32_t block) {
  ShapeBlocks& s = per_shape_[block_shapes_[block]];
  s.allocated.clear(block);
  s.active.clear(block);
  if (s.cursor == block) s.cursor = kNoBlock;  // a free block: its untouched slots no longer matter
  free_.set(block);
  --blocks_in_use_;
}

BlockAllocator::BlockSweep BlockAllocator::sweep_block(std::uint32_t block, std::uint64_t mark_word) {
  BlockSweep result;
  const RunSweep run = sweep_blocks(
      block, block + 1, [mark_word](std::uint32_t) { return mark_word; },
      [&result](std::uint32_t, ShapeId, std::uint64_t dying, bool emptied) {
        result.freed_slots = dying;
        result.emptied = emptied;
      });
  count_emptied_blocks(run.emptied_blocks);
  return result;
}

void BlockAllocator::note_transition(WordTransitions& t, std::uint32_t block, ShapeId shape, bool emptied,
                                     RunShapes& changed) {
  int i = 0;
  while (i < t.shapes && t.shape[i] != shape) ++i;
  if (i == WordTransitions::kShapes) {  // a fifth shape in this word: apply the four gathered
    apply_transitions(t, changed);
    i = 0;
  }
  if (i == t.shapes) {
    t.shape[i] = shape;
    t.shape_emptied[i] = t.shape_activated[i] = 0;
    ++t.shapes;
  }
  const std::uint64_t bit = std::uint64_t{1} << (block & 63);
  if (emptied) {
    t.emptied |= bit;
    t.shape_emptied[i] |= bit;
  } else {
    t.shape_activated[i] |= bit;
  }
}

void BlockAllocator::apply_transitions(WordTransitions& t, RunShapes& changed) {
  for (int i = 0; i < t.shapes; ++i) {
    ShapeBlocks& s = per_shape_[t.shape[i]];
    s.allocated.clear_word_bits_in_run(t.word, t.shape_emptied[i]);
    s.active.clear_word_bits_in_run(t.word, t.shape_emptied[i]);
    s.active.set_word_bits_in_run(t.word, t.shape_activated[i]);
    changed.add(t.shape[i]);
  }
  free_.set_word_bits_in_run(t.word, t.emptied);
  t.emptied = 0;
  t.shapes = 0;
}

void BlockAllocator::summarize_run(std::uint32_t first, std::uint32_t last, const RunShapes& changed) {
  if (first >= last) return;
  const std::size_t first_word = first >> 6, last_word = ((last - 1) >> 6) + 1;
  free_.summarize_run(first_word, last_word);
  const auto summarize_shape = [&](ShapeId shape) {
    ShapeBlocks& s = per_shape_[shape];
    s.allocated.summarize_run(first_word, last_word);
    s.active.summarize_run(first_word, last_word);
  };
  if (!changed.overflowed) {
    for (int i = 0; i < changed.count; ++i) summarize_shape(changed.shape[i]);
    return;
  }
  // Every shape a block of the run has, or had before it was freed, once per change of
  // shape along the run (summarizing a shape twice changes nothing).
  for (std::uint32_t block = first; block < last; ++block)
    if (block == first || block_shapes_[block] != block_shapes_[block - 1]) summarize_shape(block_shapes_[block]);
}

BlockState BlockAllocator::state(std::uint32_t block) const {
  if (block >= high_water_ || free_.test(block)) return BlockState::Free;
  return alloc_words_[block] == shapes_.layout(block_shapes_[block]).full_mask ? BlockState::Full
                                                                               : BlockState::Active;
}

std::uint64_t BlockAllocator::live_objects() const {
  std::uint64_t total = 0;
  for (std::uint32_t b = 0; b < high_water_; ++b) total += static_cast<std::uint64_t>(std::popcount(alloc_words_[b]));
  return total;
}

std::string BlockAllocator::check() const {
  if (!free_.check_invariant()) return "free bitmap summaries are inconsistent";
  std::uint32_t in_use = 0;
  for (std::uint32_t b = 0; b < high_water_; ++b) {
    const std::uint64_t word = alloc_words_[b];
    const bool is_free = free_.test(b);
    const std::string where = "block " + std::to_string(b) + ": ";
    if (is_free) {
      if (word != 0) return where + "free but has allocated slots";
      for (ShapeId s = 0; s < per_shape_.size(); ++s)
        if (per_shape_[s].allocated.test(b) || per_shape_[s].active.test(b))
          return where + "free but in a shape bitmap";
      continue;
    }
    ++in_use;
    const ShapeId shape = block_shapes_[b];
    const ShapeLayout& layout = shapes_.layout(shape);
    if (word == 0) return where + "empty but not free";
    if ((word & ~layout.full_mask) != 0) return where + "slots allocated beyond capacity";
    if ((untouched(b) & ~layout.full_mask) != 0) return where + "untouched slots beyond capacity";
    if ((untouched(b) & word) != 0) return where + "an allocated slot is marked untouched";
    for (ShapeId s = 0; s < per_shape_.size(); ++s) {
      if (per_shape_[s].allocated.test(b) != (s == shape)) return where + "allocated bitmap of shape " + std::to_string(s) + " is wrong";
      const bool active = s == shape && word != layout.full_mask;
      if (per_shape_[s].active.test(b) != active) return where + "active bitmap of shape " + std::to_string(s) + " is wrong";
    }
  }
  for (const auto& s : per_shape_)
    if (!s.allocated.check_invariant() || !s.active.check_invariant()) return "shape bitmap summaries are inconsistent";
  if (in_use != blocks_in_use_) return "blocks_in_use is " + std::to_string(blocks_in_use_) + ", counted " + std::to_string(in_use);
  return {};
}

}  // namespace gcvm
