// Object identity shared by the whole project.
//
// Invariant 1 (DESIGN.md): an object's id is `block_index * 64 + slot`, a 32-bit
// number. The CSR vertex of an object is its id; there is no second numbering.
// `kNullRef` (all ones) is the null reference. It can never name a real object
// because the allocator never hands out the last block of the id space.
#pragma once

#include <cstdint>
#include <string>

namespace gcvm {

using ObjectId = std::uint32_t;

inline constexpr ObjectId kNullRef = 0xFFFFFFFFu;
inline constexpr std::uint32_t kSlotsPerBlock = 64;
inline constexpr std::uint32_t kSlotBits = 6;
/// Blocks that ids can address; the last one is reserved so no id equals kNullRef.
inline constexpr std::uint32_t kMaxBlocks = (1u << (32 - kSlotBits)) - 1;

static_assert(kSlotsPerBlock == (1u << kSlotBits));
static_assert(static_cast<std::uint64_t>(kMaxBlocks) * kSlotsPerBlock < kNullRef);

constexpr std::uint32_t block_of(ObjectId id) { return id >> kSlotBits; }
constexpr std::uint32_t slot_of(ObjectId id) { return id & (kSlotsPerBlock - 1); }
constexpr ObjectId make_object_id(std::uint32_t block, std::uint32_t slot) {
  return (block << kSlotBits) | slot;
}
/// "id (block b slot s)", for messages about one object.
inline std::string object_id_text(ObjectId id) {
  return std::to_string(id) + " (block " + std::to_string(block_of(id)) + " slot " + std::to_string(slot_of(id)) + ")";
}

}  // namespace gcvm
