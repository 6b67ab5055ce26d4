#include "gc/heap/generations.hpp"

#include <bit>
#include <stdexcept>

namespace gcvm {

namespace {

template <typename F>
void for_each_bit(std::uint32_t block, std::uint64_t word, F&& visit) {
  for (; word != 0; word &= word - 1) visit(make_object_id(block, static_cast<std::uint32_t>(std::countr_zero(word))));
}

}  // namespace

Generations::Generations(std::uint32_t promotion_age) : promotion_age_(promotion_age) {
  if (promotion_age < 1 || promotion_age > kMaxPromotionAge)
    throw std::invalid_argument("promotion age " + std::to_string(promotion_age) + " is outside 1.." +
                                std::to_string(kMaxPromotionAge));
}

std::uint32_t Generations::age(ObjectId id) const {
  const std::uint32_t b = block_of(id);
  if (b >= mature_.size()) return 0;
  std::uint32_t a = 0;
  for (std::uint32_t i = 0; i < kAgeBits; ++i) a |= static_cast<std::uint32_t>((age_[i][b] >> slot_of(id)) & 1u) << i;
  return a;
}

std::uint64_t Generations::mature_objects() const { return MarkBitmap::count_bits(mature_); }

void Generations::grow(std::size_t blocks) {
  if (blocks <= mature_.size()) return;
  mature_.resize(blocks, 0);
  remembered_.resize(blocks, 0);
  for (auto& plane : age_) plane.resize(blocks, 0);
}

ObjectId Generations::first_young_target(const RefGraph& graph, ObjectId holder) const {
  for (ObjectId t : graph.out_edges(holder))
    if (t != kNullRef && !is_mature(t)) return t;
  return kNullRef;
}

void Generations::young_roots(const RefGraph& graph, std::span<const ObjectId> roots, std::vector<ObjectId>& out) const {
  out.assign(roots.begin(), roots.end());
  for (ObjectId holder : remembered_list_)
    for (ObjectId t : graph.out_edges(holder))
      if (t != kNullRef && !is_mature(t)) out.push_back(t);
}

Generations::Outcome Generations::after_collection(const RefGraph& graph, const MarkBitmap& marks) {
  grow(marks.block_count());
  Outcome outcome;
  candidates_.assign(remembered_list_.begin(), remembered_list_.end());
  for (ObjectId holder : remembered_list_) remembered_[block_of(holder)] = 0;
  remembered_list_.clear();

  const auto& mark_words = marks.words();
  for (std::uint32_t b = 0; b < mature_.size(); ++b) {
    const std::uint64_t marked = b < mark_words.size() ? mark_words[b] : 0;
    const std::uint64_t survivors = marked & ~mature_[b];
    mature_[b] &= marked;  // a full collection's dead mature objects; a young one marked them all
    // Bit-sliced increment: age + 1 for survivors, 0 for every other slot.
    std::uint64_t carry = survivors;
    for (auto& plane : age_) {
      const std::uint64_t bits = plane[b];
      plane[b] = (bits ^ carry) & survivors;
      carry &= bits;
    }
    std::uint64_t reached = survivors;
    for (std::uint32_t i = 0; i < kAgeBits; ++i)
      reached &= ((promotion_age_ >> i) & 1u) != 0 ? age_[i][b] : ~age_[i][b];
    if (reached != 0) {
      mature_[b] |= reached;
      for (auto& plane : age_) plane[b] &= ~reached;
      for_each_bit(b, reached, [&](ObjectId id) { candidates_.push_back(id); });
    }
    outcome.survivors += static_cast<std::uint64_t>(std::popcount(survivors));
    outcome.promoted += static_cast<std::uint64_t>(std::popcount(reached));
    outcome.mature += static_cast<std::uint64_t>(std::popcount(mature_[b]));
  }

  for (ObjectId holder : candidates_) {
    const std::uint32_t b = block_of(holder);
    const std::uint64_t bit = std::uint64_t{1} << slot_of(holder);
    if ((mature_[b] & bit) == 0 || (remembered_[b] & bit) != 0 || first_young_target(graph, holder) == kNullRef)
      continue;
    remembered_[b] |= bit;
    remembered_list_.push_back(holder);
  }
  return outcome;
}

std::string Generations::check_remembered_set(const RefGraph& graph, const BlockAllocator& blocks) const {
  const std::uint64_t remembered_bits = MarkBitmap::count_bits(remembered_);
  if (remembered_bits != remembered_list_.size())
    return "remembered set lists " + std::to_string(remembered_list_.size()) + " objects, its bitmap " +
           std::to_string(remembered_bits);
  for (std::uint32_t b = 0; b < mature_.size(); ++b) {
    const std::uint64_t alloc = b < blocks.high_water() ? blocks.alloc_word(b) : 0;
    if (const std::uint64_t stray = mature_[b] & ~alloc; stray != 0)
      return "mature bit of unallocated slot " + object_id_text(make_object_id(b, static_cast<std::uint32_t>(std::countr_zero(stray))));
    if (const std::uint64_t stray = remembered_[b] & ~mature_[b]; stray != 0)
      return "remembered object " + object_id_text(make_object_id(b, static_cast<std::uint32_t>(std::countr_zero(stray)))) +
             " is not mature";
    std::string problem;
    for_each_bit(b, mature_[b] & ~remembered_[b], [&](ObjectId holder) {
      if (!problem.empty()) return;
      if (const ObjectId young = first_young_target(graph, holder); young != kNullRef)
        problem = "mature object " + object_id_text(holder) + " references young " + object_id_text(young) +
                  " but is not in the remembered set";
    });
    if (!problem.empty()) return problem;
  }
  return {};
}

}  // namespace gcvm
