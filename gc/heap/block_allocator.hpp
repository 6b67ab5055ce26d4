// The SOA block allocator (DynaSOAr, thesis chapter 5), single-threaded mutator side.
//
// The heap is a sequence of kBlockBytes blocks in one address reservation. Each block
// is in one of three states (thesis Fig. 5.3):
//
//   free    -- in the free bitmap; no shape; allocation word 0
//   active  -- has a shape, at least one free slot; in allocated[shape] and active[shape]
//   full    -- has a shape, every slot of its capacity allocated; in allocated[shape] only
//
// Transitions: free -> active (a block is initialized for a shape on the allocation
// slow path), active -> full (last slot allocated), full -> active (sweep freed some
// slots), active/full -> free (sweep freed every slot). A freed block may be reused
// by any shape. All state bitmaps are hierarchical, so finding an active block of a
// shape, or the lowest free block, is O(log64 blocks).
//
// Untouched slots: besides its allocation word, every non-free block keeps the slots
// allocated in no object since the block was last initialized (`initialize_block`
// sets all of its capacity; taking a slot clears its bit; sweep never sets one). The
// Heap initializes an initialized block's fields once, for all slots, so an object in
// an untouched slot needs no per-object initialization (heap.hpp). Slots are only
// taken from a shape's cursor block, whose mask lives next to the cursor (one cache
// line with the cursor and the full mask, and no store-to-load aliasing with the
// allocation words, whose array starts at the same page offset); it is written back
// to the per-block array when the cursor moves.
//
// Invariants (checked by `check()`):
// - alloc_word(b) is a subset of the shape's full_mask; 0 iff the block is free.
// - untouched(b) is a subset of the shape's full_mask and disjoint from alloc_word(b).
// - free[b] iff the block is free; allocated[s][b] iff block b has shape s and is not
//   free; active[s][b] iff additionally alloc_word(b) != full_mask.
// - blocks_in_use() equals the number of non-free blocks below high_water().
//
// In contrast to the thesis (a lock-free, GPU-resident allocator), allocation here is
// single-threaded (the mutator is one interpreter thread); the block bitmaps use plain
// operations on that path. The sweep changes the bitmaps a word (64 blocks) at a time,
// with plain operations on the level-0 words of its run of blocks, and brings their
// summaries up to date when the run ends (HierarchicalBitmap's runs of words): a
// parallel sweep's runs own their words and meet only on the level-1 words, once per
// run and bitmap, not once per word.
//
// The mechanism knows nothing of references or the graph: the Heap reserves edge
// ranges when this allocator reports a freshly initialized block.
#pragma once

#include <atomic>
#include <bit>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gc/heap/hierarchical_bitmap.hpp"
#include "gc/heap/shape.hpp"
#include "heapgraph/object_id.hpp"
#include "heapgraph/virtual_array.hpp"

namespace gcvm {

enum class BlockState : std::uint8_t { Free, Active, Full };

class BlockAllocator {
 public:
  /// `max_blocks` bounds the address space reserved for block storage (<= kMaxBlocks).
  BlockAllocator(const ShapeTable& shapes, std::uint32_t max_blocks);

  /// What the allocation fast path hands out: the object, and whether its slot was
  /// untouched (see above: its fields and edges still hold their initial values).
  struct Slot {
    ObjectId id = kNullRef;
    bool untouched = false;
  };

  /// The fast path: a slot in the cursor block of `shape` (the block it allocated in
  /// last) into `slot`. False when there is no cursor or it is full.
  bool take_from_cursor(ShapeId shape, Slot& slot) {
    if (shape >= shape_count_) [[unlikely]] return false;
    ShapeBlocks& s = per_shape_[shape];
    if (s.cursor == kNoBlock || alloc_words_[s.cursor] == s.full_mask) [[unlikely]] return false;
    slot = take_slot(s.cursor, s);
    return true;
  }
  /// A slot in an existing active block of `shape`, or kNullRef if none has room.
  Slot allocate_in_active_block(ShapeId shape) {
    if (Slot slot; take_from_cursor(shape, slot)) return slot;
    const std::uint32_t block = find_active_block(shape);
    if (block == kNoBlock) return Slot{};
    return take_slot(block, per_shape_[shape]);
  }
  /// Takes the lowest free block (or a new one) for `shape`; nullopt when max_blocks
  /// are all in use. The caller then allocates with `allocate_in_block`.
  std::optional<std::uint32_t> initialize_block(ShapeId shape);
  /// Returns a block that `initialize_block` gave out and that holds no object yet.
  void abandon_block(std::uint32_t block);
  Slot allocate_in_block(std::uint32_t block) { return take_slot(block, per_shape_[block_shapes_[block]]); }
  /// Forgets the allocation cursors; sweep calls it because it may free a cursor block.
  void reset_cursors() {
    for (auto& s : per_shape_) move_cursor(s, kNoBlock);
  }

  /// Sweep step for one block: keeps only the slots set in `mark_word`. Returns the
  /// slots freed. The block becomes free if none remain (see `BlockSweep`).
  struct BlockSweep {
    std::uint64_t freed_slots = 0;  // bitmap of slots just freed
    bool emptied = false;           // the block went back to the free state
  };
  BlockSweep sweep_block(std::uint32_t block, std::uint64_t mark_word);
  /// What `sweep_blocks` did to a run of blocks.
  struct RunSweep {
    std::uint64_t objects_before = 0;  // allocated slots of the run before it
    std::uint64_t freed_objects = 0;
    std::uint32_t emptied_blocks = 0;  // not yet subtracted from blocks_in_use()
  };
  /// Sweeps blocks [first, last): block b keeps only the slots set in mark_of(b).
  /// Before a block loses slots, on_dying(block, shape, dying_slots, emptied) is called
  /// (the Heap releases what the slots own). The emptied blocks stay counted in
  /// blocks_in_use() until the caller passes their number to `count_emptied_blocks`: a
  /// parallel sweep counts them per run instead of contending for one shared counter.
  ///
  /// The state bitmaps change a level-0 word (64 blocks) at a time: the transitions a
  /// run finds in one word are gathered per shape and applied with one plain operation
  /// per word and bitmap, not three per emptied block, and the summaries of the run's
  /// words in the free bitmap and in the bitmaps of the shapes it changed follow when
  /// the run ends (HierarchicalBitmap::summarize_run). Safe to call concurrently for
  /// runs that share no level-0 word (the parallel sweep's, which also share no written
  /// cache line).
  template <typename MarkOf, typename OnDying>
  RunSweep sweep_blocks(std::uint32_t first, std::uint32_t last, MarkOf&& mark_of, OnDying&& on_dying);
  void count_emptied_blocks(std::uint32_t blocks) { blocks_in_use_ -= blocks; }

  // --- queries ---
  std::uint32_t high_water() const { return high_water_; }
  std::uint32_t max_blocks() const { return max_blocks_; }
  std::uint32_t blocks_in_use() const { return blocks_in_use_; }
  std::uint64_t alloc_word(std::uint32_t block) const { return alloc_words_[block]; }
  /// The untouched slots of a non-free block.
  std::uint64_t untouched(std::uint32_t block) const {
    const ShapeBlocks& s = per_shape_[block_shapes_[block]];
    return s.cursor == block ? s.cursor_untouched : untouched_[block];
  }
  const std::uint64_t* alloc_words() const { return alloc_words_.data(); }
  ShapeId shape_of_block(std::uint32_t block) const { return block_shapes_[block]; }
  BlockState state(std::uint32_t block) const;
  bool is_allocated(ObjectId id) const {
    return block_of(id) < high_water_ && ((alloc_words_[block_of(id)] >> slot_of(id)) & 1u);
  }
  std::byte* block_data(std::uint32_t block) { return storage_.data() + std::uint64_t{block} * kBlockBytes; }
  const std::byte* block_data(std::uint32_t block) const {
    return storage_.data() + std::uint64_t{block} * kBlockBytes;
  }
  const HierarchicalBitmap& allocated_blocks(ShapeId shape) const { return per_shape_[shape].allocated; }
  const HierarchicalBitmap& active_blocks(ShapeId shape) const { return per_shape_[shape].active; }
  const HierarchicalBitmap& free_blocks() const { return free_; }
  std::uint64_t live_objects() const;

  /// Checks every invariant above; returns an empty string or a description of the first violation.
  std::string check() const;

 private:
  static constexpr std::uint32_t kNoBlock = 0xFFFFFFFFu;
  struct ShapeBlocks {
    std::uint32_t cursor = kNoBlock;    // a non-free block of this shape to allocate from, if known
    std::uint64_t full_mask = 0;
    std::uint64_t cursor_untouched = 0;  // the cursor block's untouched slots (untouched_ is stale there)
    HierarchicalBitmap allocated;
    HierarchicalBitmap active;
  };

  /// The block-state transitions a sweep found in one level-0 word of the state
  /// bitmaps, applied together by `apply_transitions` (which empties them and keeps
  /// the word).
  struct WordTransitions {
    static constexpr int kShapes = 4;  // shapes gathered before an early apply
    std::size_t word = 0;
    std::uint64_t emptied = 0;  // of every shape
    int shapes = 0;
    ShapeId shape[kShapes] = {};
    std::uint64_t shape_emptied[kShapes] = {};
    std::uint64_t shape_activated[kShapes] = {};  // full -> active
  };
  /// The shapes whose bitmaps a run of the sweep changed, whose summaries it brings up
  /// to date when it ends; past kShapes distinct shapes, those of every block of the run.
  struct RunShapes {
    static constexpr int kShapes = 16;
    int count = 0;
    bool overflowed = false;
    ShapeId shape[kShapes] = {};
    void add(ShapeId s) {
      for (int i = 0; i < count; ++i)
        if (shape[i] == s) return;
      if (count == kShapes) {
        overflowed = true;
        return;
      }
      shape[count++] = s;
    }
  };
  void note_transition(WordTransitions& t, std::uint32_t block, ShapeId shape, bool emptied, RunShapes& changed);
  void apply_transitions(WordTransitions& t, RunShapes& changed);
  void summarize_run(std::uint32_t first, std::uint32_t last, const RunShapes& changed);

  std::uint32_t find_active_block(ShapeId shape);
  /// Takes the lowest free slot of `block`, the active cursor block of the shape whose
  /// ShapeBlocks is `s`.
  Slot take_slot(std::uint32_t block, ShapeBlocks& s) {
    // word | (word + 1) sets the lowest clear bit: two operations between loading the
    // word and storing it back, the chain one allocation waits on the last; the slot
    // number (a bit scan) is off that chain.
    const std::uint64_t word = alloc_words_[block];
    const std::uint64_t updated = word | (word + 1);
    alloc_words_[block] = updated;
    if (updated == s.full_mask) [[unlikely]] s.active.clear(block);
    const std::uint64_t bit = updated ^ word;
    const std::uint64_t untouched = s.cursor_untouched;
    s.cursor_untouched = untouched & ~bit;
    return Slot{make_object_id(block, static_cast<std::uint32_t>(std::countr_zero(bit))), (untouched & bit) != 0};
  }
  /// Points the cursor of `s` at `block` (or kNoBlock), writing back the untouched
  /// slots of the block it leaves. A cursor that sweep reset (its block emptied) has
  /// nothing to write back.
  void move_cursor(ShapeBlocks& s, std::uint32_t block) {
    if (s.cursor != kNoBlock) untouched_[s.cursor] = s.cursor_untouched;
    s.cursor = block;
    if (block != kNoBlock) s.cursor_untouched = untouched_[block];
  }
  ShapeBlocks& blocks_for(ShapeId shape);
  void grow_bitmaps(std::uint32_t blocks);

  const ShapeTable& shapes_;
  std::uint32_t max_blocks_;
  std::uint32_t high_water_ = 0;
  std::uint32_t blocks_in_use_ = 0;
  std::uint32_t shape_count_ = 0;  // per_shape_.size(), one load on the fast path
  AddressReservation storage_;
  VirtualArray<std::uint64_t> alloc_words_;
  VirtualArray<std::uint64_t> untouched_;  // per block: slots not allocated since initialize_block
  VirtualArray<ShapeId> block_shapes_;
  HierarchicalBitmap free_;
  std::vector<ShapeBlocks> per_shape_;
};

template <typename MarkOf, typename OnDying>
BlockAllocator::RunSweep BlockAllocator::sweep_blocks(std::uint32_t first, std::uint32_t last, MarkOf&& mark_of,
                                                      OnDying&& on_dying) {
  RunSweep run;
  WordTransitions transitions;
  RunShapes changed;
  transitions.word = first >> 6;
  for (std::uint32_t block = first; block < last; ++block) {
    const std::uint64_t before = alloc_words_[block];
    if (before == 0) continue;
    run.objects_before += static_cast<std::uint64_t>(std::popcount(before));
    const std::uint64_t after = before & mark_of(block);
    if (after == before) continue;
    const ShapeId shape = block_shapes_[block];
    const bool emptied = after == 0;
    on_dying(block, shape, before & ~after, emptied);
    alloc_words_[block] = after;
    run.freed_objects += static_cast<std::uint64_t>(std::popcount(before & ~after));
    ShapeBlocks& s = per_shape_[shape];
    if (emptied) {
      ++run.emptied_blocks;
      // A parallel sweep reads cursors of shapes that other runs may be resetting.
      std::atomic_ref<std::uint32_t> cursor(s.cursor);
      if (cursor.load(std::memory_order_relaxed) == block) cursor.store(kNoBlock, std::memory_order_relaxed);
    } else if (before != s.full_mask) {
      continue;  // an active block stays active
    }
    if ((block >> 6) != transitions.word) {
      apply_transitions(transitions, changed);
      transitions.word = block >> 6;
    }
    note_transition(transitions, block, shape, emptied, changed);
  }
  apply_transitions(transitions, changed);
  summarize_run(first, last, changed);
  return run;
}

}  // namespace gcvm
