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
// Invariants (checked by `check()`):
// - alloc_word(b) is a subset of the shape's full_mask; 0 iff the block is free.
// - free[b] iff the block is free; allocated[s][b] iff block b has shape s and is not
//   free; active[s][b] iff additionally alloc_word(b) != full_mask.
// - blocks_in_use() equals the number of non-free blocks below high_water().
//
// In contrast to the thesis (a lock-free, GPU-resident allocator), allocation here is
// single-threaded (the mutator is one interpreter thread); the block bitmaps use plain
// operations on that path. Sweep-side transitions use HierarchicalBitmap's atomic
// operations so a parallel sweep can drive them.
//
// The mechanism knows nothing of references or the graph: the Heap reserves edge
// ranges when this allocator reports a freshly initialized block.
#pragma once

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

  /// A slot in an existing active block of `shape`, or kNullRef if none has room.
  ObjectId allocate_in_active_block(ShapeId shape) {
    if (shape < per_shape_.size()) {
      const ShapeBlocks& s = per_shape_[shape];
      if (s.cursor != kNoBlock && alloc_words_[s.cursor] != s.full_mask) return take_slot(s.cursor);
    }
    const std::uint32_t block = find_active_block(shape);
    if (block == kNoBlock) return kNullRef;
    return take_slot(block);
  }
  /// Takes the lowest free block (or a new one) for `shape`; nullopt when max_blocks
  /// are all in use. The caller then allocates with `allocate_in_block`.
  std::optional<std::uint32_t> initialize_block(ShapeId shape);
  /// Returns a block that `initialize_block` gave out and that holds no object yet.
  void abandon_block(std::uint32_t block);
  ObjectId allocate_in_block(std::uint32_t block) { return take_slot(block); }
  /// Forgets the allocation cursors; sweep calls it because it may free a cursor block.
  void reset_cursors() {
    for (auto& s : per_shape_) s.cursor = kNoBlock;
  }

  /// Sweep step for one block: keeps only the slots set in `mark_word`. Returns the
  /// slots freed. The block becomes free if none remain (see `BlockSweep`).
  struct BlockSweep {
    std::uint64_t freed_slots = 0;  // bitmap of slots just freed
    bool emptied = false;           // the block went back to the free state
  };
  BlockSweep sweep_block(std::uint32_t block, std::uint64_t mark_word);
  /// The same, but an emptied block stays counted in blocks_in_use() until the caller
  /// passes the number of blocks it emptied to `count_emptied_blocks`: a parallel sweep
  /// counts them per thread instead of contending for one shared counter per block.
  /// Safe to call concurrently for distinct blocks.
  BlockSweep sweep_block_uncounted(std::uint32_t block, std::uint64_t mark_word);
  void count_emptied_blocks(std::uint32_t blocks) { blocks_in_use_ -= blocks; }

  // --- queries ---
  std::uint32_t high_water() const { return high_water_; }
  std::uint32_t max_blocks() const { return max_blocks_; }
  std::uint32_t blocks_in_use() const { return blocks_in_use_; }
  std::uint64_t alloc_word(std::uint32_t block) const { return alloc_words_[block]; }
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
    HierarchicalBitmap allocated;
    HierarchicalBitmap active;
    std::uint32_t cursor = kNoBlock;  // a non-free block of this shape to allocate from, if known
    std::uint64_t full_mask = 0;
  };

  std::uint32_t find_active_block(ShapeId shape);
  ObjectId take_slot(std::uint32_t block) {
    const std::uint64_t word = alloc_words_[block];
    const std::uint32_t slot = static_cast<std::uint32_t>(std::countr_zero(~word));
    const std::uint64_t updated = word | (std::uint64_t{1} << slot);
    alloc_words_[block] = updated;
    ShapeBlocks& s = per_shape_[block_shapes_[block]];
    if (updated == s.full_mask) s.active.clear(block);
    return make_object_id(block, slot);
  }
  ShapeBlocks& blocks_for(ShapeId shape);
  void grow_bitmaps(std::uint32_t blocks);

  const ShapeTable& shapes_;
  std::uint32_t max_blocks_;
  std::uint32_t high_water_ = 0;
  std::uint32_t blocks_in_use_ = 0;
  AddressReservation storage_;
  VirtualArray<std::uint64_t> alloc_words_;
  VirtualArray<ShapeId> block_shapes_;
  HierarchicalBitmap free_;
  std::vector<ShapeBlocks> per_shape_;
};

}  // namespace gcvm
