// Generations on the non-moving SOA heap (FastCollect §2.1, §3.3): which
// objects are young and which mature, how old the young ones are, and the remembered
// set of mature objects that may reference young ones. The policy that decides when a
// collection is young or full lives in gc/plans/generational_policy.hpp; the collection
// itself in gc/plans/collector.hpp.
//
// In contrast to the paper, which copies the surviving young objects into the mature
// generation (FastCollect §5, through HotSpot's SerialGC), nothing moves here: the SOA
// allocator's object id is its slot (DESIGN.md invariant 1) and the CSR vertex is that
// id. An object's generation is one bit per slot, laid out like the allocation and
// mark words (one 64-bit word per block, invariant 2): "sticky mark bits" (Demers et
// al., POPL 1990). Promotion flips the bit; young and mature objects share blocks.
//
// States of a slot:
//   free    -- not allocated; mature bit 0, age 0
//   young   -- allocated, mature bit 0, age = young collections and full collections
//              survived (0 .. promotion_age - 1), kept in kAgeBits bit planes
//   mature  -- allocated, mature bit 1, age planes 0
// Transitions, all in after_collection() except the first:
//   free -> young (allocation; the slot's bits are already 0)
//   young -> young (survived, age + 1 < promotion age) | mature (age reached) | free
//   mature -> free (a full collection found it unreachable; a young one never frees it)
//
// Invariants (check_remembered_set() checks them; --verify-heap runs it at every
// collection of the generational plan):
// - mature ⊆ allocated, word by word; a freed slot's mature bit and age are 0, so a new
//   object is always young.
// - Remembered-set completeness: every mature object with a reference to a young
//   object is in the remembered set. The write barrier (Heap::store_ref/store_element
//   call record_store) adds a mature holder when a young target is stored into it;
//   after_collection() adds promoted objects that still reference young ones, and drops
//   entries that died or no longer reference any young object.
// - A young collection marks from the roots plus the young targets of the remembered
//   set, with every mature object pre-marked (MarkRequest::premarked), so every marker
//   traces only young objects (Alg. 4's "vertices[v].address < range" test, done by the
//   mark bit instead) and the sweep, `alloc &= mark`, frees only young objects.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gc/heap/block_allocator.hpp"
#include "gc/heap/mark_bitmap.hpp"
#include "heapgraph/ref_graph.hpp"

namespace gcvm {

class Generations {
 public:
  /// Bit planes of a young object's age: promotion ages up to 2^kAgeBits - 1.
  static constexpr std::uint32_t kAgeBits = 4;
  static constexpr std::uint32_t kMaxPromotionAge = (1u << kAgeBits) - 1;

  /// Survivors are promoted when they have survived `promotion_age` collections (1 =
  /// at the first, 1 .. kMaxPromotionAge).
  explicit Generations(std::uint32_t promotion_age);

  std::uint32_t promotion_age() const { return promotion_age_; }

  bool is_mature(ObjectId id) const {
    const std::uint32_t b = block_of(id);
    return b < mature_.size() && ((mature_[b] >> slot_of(id)) & 1u) != 0;
  }
  /// The young age of `id` (0 for mature and free slots).
  std::uint32_t age(ObjectId id) const;

  /// The generational half of the write barrier, called for every reference store
  /// `holder.field = target`: remembers a mature holder of a young target, once.
  void record_store(ObjectId holder, ObjectId target) {
    if (target == kNullRef) return;
    const std::uint32_t b = block_of(holder);
    if (b >= mature_.size()) return;  // a block first used after the last collection: all young
    const std::uint64_t bit = std::uint64_t{1} << slot_of(holder);
    if ((mature_[b] & bit) == 0 || (remembered_[b] & bit) != 0 || is_mature(target)) return;
    remembered_[b] |= bit;
    remembered_list_.push_back(holder);
  }

  /// Mature words, one per block up to the heap's size at the last collection (blocks
  /// beyond hold only young objects): a young collection's MarkRequest::premarked.
  std::span<const std::uint64_t> mature_words() const { return mature_; }
  std::size_t remembered_count() const { return remembered_list_.size(); }
  std::span<const ObjectId> remembered() const { return remembered_list_; }
  std::uint64_t mature_objects() const;

  /// The roots of a young collection: `roots`, then every young target of every
  /// remembered object (read from `graph`, which must be current), into `out`.
  void young_roots(const RefGraph& graph, std::span<const ObjectId> roots, std::vector<ObjectId>& out) const;

  struct Outcome {
    std::uint64_t survivors = 0;  // young objects that survived
    std::uint64_t promoted = 0;   // of them, promoted to mature
    std::uint64_t mature = 0;     // mature objects after the collection
  };
  /// After the sweep of a collection (young or full) whose marks were `marks`:
  /// mature objects that died are forgotten, young survivors age by one and those that
  /// reach the promotion age become mature, and the remembered set is recomputed from
  /// its old entries and the promoted objects (reading `graph`).
  Outcome after_collection(const RefGraph& graph, const MarkBitmap& marks);

  /// Empty if the invariants above hold for the heap (`blocks`) and its graph; else
  /// the first violation.
  std::string check_remembered_set(const RefGraph& graph, const BlockAllocator& blocks) const;

 private:
  void grow(std::size_t blocks);
  /// The first young object `holder` references, or kNullRef.
  ObjectId first_young_target(const RefGraph& graph, ObjectId holder) const;

  std::uint32_t promotion_age_;
  std::vector<std::uint64_t> mature_;
  std::array<std::vector<std::uint64_t>, kAgeBits> age_;  // bit plane i = bit i of the age
  std::vector<std::uint64_t> remembered_;                 // bit per slot: in remembered_list_
  std::vector<ObjectId> remembered_list_;
  std::vector<ObjectId> candidates_;                      // scratch of after_collection
};

}  // namespace gcvm
