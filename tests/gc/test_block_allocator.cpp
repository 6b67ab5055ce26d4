#include <doctest/doctest.h>

#include <bit>
#include <map>
#include <random>
#include <set>
#include <stdexcept>

#include "gc/heap/block_allocator.hpp"

using namespace gcvm;

TEST_CASE("block capacity follows the object size") {
  ShapeTable shapes;
  CHECK(shapes.layout(shapes.intern(1, 1)).capacity == 64);
  CHECK(shapes.layout(shapes.intern(0, 0)).capacity == 64);
  CHECK(shapes.layout(shapes.intern(8, 0)).capacity == 64);  // 32 bytes
  CHECK(shapes.layout(shapes.intern(0, 8)).capacity == 32);  // 64 bytes
  CHECK(shapes.layout(shapes.intern(0, 256)).capacity == 1);
  CHECK(shapes.layout(shapes.intern(3, 5)).full_mask == (std::uint64_t{1} << shapes.layout(shapes.intern(3, 5)).capacity) - 1);
  CHECK(shapes.intern(1, 1) == shapes.intern(1, 1));
  CHECK_THROWS_AS(shapes.intern(0, 257), std::length_error);
  for (ShapeId s = 0; s < shapes.size(); ++s) {
    const auto& l = shapes.layout(s);
    CHECK(l.scalar_field_offset(l.shape.scalar_fields) <= kBlockBytes);
    CHECK(l.scalar_offset % 8 == 0);
  }
}

namespace {

// Frees `victims` through the sweep path (mark word = survivors).
void free_objects(BlockAllocator& blocks, const std::set<ObjectId>& victims) {
  std::map<std::uint32_t, std::uint64_t> dying;
  for (ObjectId id : victims) dying[block_of(id)] |= std::uint64_t{1} << slot_of(id);
  for (const auto& [block, mask] : dying) blocks.sweep_block(block, blocks.alloc_word(block) & ~mask);
}

BlockAllocator::Slot allocate_slot(BlockAllocator& blocks, ShapeId shape) {
  const BlockAllocator::Slot slot = blocks.allocate_in_active_block(shape);
  if (slot.id != kNullRef) return slot;
  const auto block = blocks.initialize_block(shape);
  if (!block) return {};
  return blocks.allocate_in_block(*block);
}

ObjectId allocate(BlockAllocator& blocks, ShapeId shape) { return allocate_slot(blocks, shape).id; }

}  // namespace

TEST_CASE("allocator agrees with a model under random allocation and freeing") {
  ShapeTable shapes;
  const std::vector<ShapeId> kinds = {shapes.intern(1, 1), shapes.intern(0, 40), shapes.intern(4, 0),
                                      shapes.intern(0, 200)};
  BlockAllocator blocks(shapes, 4096);
  std::map<ObjectId, ShapeId> model;
  std::set<ObjectId> handed_out;  // slots taken since their block was last emptied
  std::mt19937_64 rng(1);
  for (int round = 0; round < 60; ++round) {
    const int allocations = static_cast<int>(rng() % 3000);
    for (int i = 0; i < allocations; ++i) {
      const ShapeId shape = kinds[rng() % kinds.size()];
      const auto [id, untouched] = allocate_slot(blocks, shape);
      REQUIRE(id != kNullRef);
      REQUIRE(untouched == (handed_out.count(id) == 0));  // untouched: first use since the block was initialized
      handed_out.insert(id);
      REQUIRE(model.count(id) == 0);  // ids unique among live objects
      REQUIRE(blocks.shape_of_block(block_of(id)) == shape);
      REQUIRE(slot_of(id) < shapes.layout(shape).capacity);
      model[id] = shape;
    }
    std::set<ObjectId> victims;
    for (const auto& [id, shape] : model)
      if (rng() % 100 < 45) victims.insert(id);
    free_objects(blocks, victims);
    for (ObjectId id : victims) model.erase(id);
    std::erase_if(handed_out, [&](ObjectId id) { return blocks.state(block_of(id)) == BlockState::Free; });
    REQUIRE(blocks.check() == "");
    REQUIRE(blocks.live_objects() == model.size());
    for (const auto& [id, shape] : model) REQUIRE(blocks.is_allocated(id));
  }
}

TEST_CASE("emptied blocks return to the free bitmap and are reused by another shape") {
  ShapeTable shapes;
  const ShapeId small = shapes.intern(1, 1), big = shapes.intern(0, 100);
  BlockAllocator blocks(shapes, 1024);
  std::set<ObjectId> ids;
  for (int i = 0; i < 64 * 10; ++i) ids.insert(allocate(blocks, small));
  CHECK(blocks.high_water() == 10);
  CHECK(blocks.blocks_in_use() == 10);
  for (std::uint32_t b = 0; b < 10; ++b) CHECK(blocks.state(b) == BlockState::Full);
  free_objects(blocks, ids);
  CHECK(blocks.blocks_in_use() == 0);
  CHECK(blocks.free_blocks().count() == 10);
  for (std::uint32_t b = 0; b < 10; ++b) CHECK(blocks.state(b) == BlockState::Free);
  const ObjectId reused = allocate(blocks, big);
  CHECK(block_of(reused) == 0);
  CHECK(blocks.state(0) == BlockState::Active);
  CHECK(blocks.high_water() == 10);
  CHECK(blocks.check() == "");
}

TEST_CASE("a full block becomes active again when sweep frees one slot") {
  ShapeTable shapes;
  const ShapeId s = shapes.intern(1, 0);
  BlockAllocator blocks(shapes, 16);
  for (int i = 0; i < 64; ++i) allocate(blocks, s);
  CHECK(blocks.state(0) == BlockState::Full);
  CHECK(blocks.active_blocks(s).empty());
  blocks.sweep_block(0, ~std::uint64_t{0} << 1);
  CHECK(blocks.state(0) == BlockState::Active);
  CHECK(allocate(blocks, s) == make_object_id(0, 0));
  CHECK(blocks.check() == "");
}

TEST_CASE("allocation fails cleanly when every block is in use") {
  ShapeTable shapes;
  const ShapeId s = shapes.intern(0, 1);
  BlockAllocator blocks(shapes, 3);
  for (int i = 0; i < 3 * 64; ++i) REQUIRE(allocate(blocks, s) != kNullRef);
  CHECK(allocate(blocks, s) == kNullRef);
  CHECK(blocks.check() == "");
}

TEST_CASE("a run sweep over blocks of many shapes per bitmap word agrees with a model") {
  // Six shapes in turn, so every 64-block word of the state bitmaps holds more shapes
  // than a run gathers before it applies them early; runs start and end inside words.
  // Forty shapes: more than a run notes before it summarizes every block's shape.
  for (std::uint32_t shape_count : {6u, 40u}) {
    CAPTURE(shape_count);
    ShapeTable shapes;
    std::vector<ShapeId> kinds;
    for (std::uint32_t refs = 0; refs < shape_count; ++refs) kinds.push_back(shapes.intern(refs, 1));
    BlockAllocator blocks(shapes, 4096);
    std::mt19937_64 rng(7);
    constexpr std::uint32_t kBlocks = 1000;
    for (std::uint32_t b = 0; b < kBlocks; ++b) {
      const auto block = blocks.initialize_block(kinds[b % kinds.size()]);
      REQUIRE(block == b);
      const std::uint64_t full = shapes.layout(kinds[b % kinds.size()]).full_mask;
      const auto slots = rng() % 3 == 0 ? static_cast<std::uint32_t>(std::popcount(full)) : 1 + rng() % 64;
      for (std::uint32_t i = 0; i < slots && blocks.alloc_word(b) != full; ++i) blocks.allocate_in_block(b);
    }
    std::vector<std::uint64_t> marks(kBlocks), before(kBlocks);
    for (std::uint32_t b = 0; b < kBlocks; ++b) {
      before[b] = blocks.alloc_word(b);
      const std::uint64_t choice = rng() % 4;  // all die, all live, some die
      marks[b] = choice == 0 ? 0 : choice == 1 ? ~std::uint64_t{0} : rng();
    }
    const std::uint32_t in_use = blocks.blocks_in_use();
    std::uint64_t expected_freed = 0, expected_before = 0, expected_emptied = 0, calls = 0;
    const std::uint32_t first = 37, last = 901;
    for (std::uint32_t b = first; b < last; ++b) {
      expected_before += static_cast<std::uint64_t>(std::popcount(before[b]));
      expected_freed += static_cast<std::uint64_t>(std::popcount(before[b] & ~marks[b]));
      expected_emptied += (before[b] & marks[b]) == 0;
    }
    const BlockAllocator::RunSweep run = blocks.sweep_blocks(
        first, last, [&](std::uint32_t b) { return marks[b]; },
        [&](std::uint32_t b, ShapeId shape, std::uint64_t dying, bool emptied) {
          ++calls;
          REQUIRE(shape == kinds[b % kinds.size()]);
          REQUIRE(dying == (before[b] & ~marks[b]));
          REQUIRE(emptied == ((before[b] & marks[b]) == 0));
          REQUIRE(blocks.alloc_word(b) == before[b]);  // called before the block changes
        });
    blocks.count_emptied_blocks(run.emptied_blocks);
    CHECK(run.objects_before == expected_before);
    CHECK(run.freed_objects == expected_freed);
    CHECK(run.emptied_blocks == expected_emptied);
    CHECK(blocks.blocks_in_use() == in_use - expected_emptied);
    CHECK(calls > 0);
    REQUIRE(blocks.check() == "");
    for (std::uint32_t b = 0; b < kBlocks; ++b) {
      CAPTURE(b);
      const bool swept = b >= first && b < last;
      const std::uint64_t after = swept ? before[b] & marks[b] : before[b];
      REQUIRE(blocks.alloc_word(b) == after);
      const std::uint64_t full = shapes.layout(kinds[b % kinds.size()]).full_mask;
      const BlockState expected = after == 0 ? BlockState::Free : after == full ? BlockState::Full : BlockState::Active;
      REQUIRE(blocks.state(b) == expected);
      if (expected != BlockState::Free) REQUIRE(blocks.active_blocks(kinds[b % kinds.size()]).test(b) == (expected == BlockState::Active));
    }
  }
}
