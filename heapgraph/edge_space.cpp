#include "heapgraph/edge_space.hpp"

#include <bit>

namespace gcvm {

namespace {

/// Fewer ranges than this are released on the calling thread: counting them on a
/// pool would cost more than pushing them.
constexpr std::uint64_t kParallelReleaseMinRanges = 16384;

/// Per-class scratch of the thread that counts or places a batch: all zero between
/// batches (a batch resets the entries it touched).
std::vector<std::uint64_t>& class_scratch() {
  thread_local std::vector<std::uint64_t> scratch(EdgeSpace::kClassCount, 0);
  return scratch;
}

}  // namespace

std::uint64_t EdgeSpace::size_class(std::uint64_t count) {
  if (count <= kExactLimit) return count;
  const int top = 63 - std::countl_zero(count);  // count >= 2^top
  const std::uint64_t quarter = std::uint64_t{1} << (top - 2);
  return (count + quarter - 1) / quarter * quarter;
}

std::size_t EdgeSpace::class_index(std::uint64_t count) {
  const std::uint64_t size = size_class(count);
  if (size <= kExactLimit) return size;
  // A rounded size is q quarters of 2^top, the highest power of two in it, q in [4, 7]
  // (a count rounded up to 2^(top + 1) is 4 quarters of the next power).
  const int top = 63 - std::countl_zero(size);
  const std::uint64_t quarters = size >> (top - 2);
  return kExactLimit + 1 + static_cast<std::size_t>(top - 12) * 4 + static_cast<std::size_t>(quarters - 4);
}

std::optional<EdgeIndex> EdgeSpace::allocate(std::uint64_t count) {
  if (count == 0) return EdgeIndex{0};
  const std::uint64_t size = size_class(count);
  if (FreeList& free = free_[class_index(count)]; !free.empty()) {
    const EdgeIndex base = free.back();
    free.pop_back();
    in_use_ += size;
    return base;
  }
  if (size > max_edges_ - high_water_) return std::nullopt;
  const EdgeIndex base = high_water_;
  high_water_ += size;
  in_use_ += size;
  return base;
}

void EdgeSpace::release(EdgeIndex base, std::uint64_t count) {
  if (count == 0) return;
  in_use_ -= size_class(count);
  free_[class_index(count)].push_back(base);
}

void EdgeSpace::count(std::span<const EdgeRange> batch, BatchCounts& counts) {
  std::vector<std::uint64_t>& per_class = class_scratch();
  counts.classes.clear();
  std::uint64_t slots = 0;
  for (const EdgeRange& r : batch) {
    if (r.count == 0) continue;
    const std::size_t c = class_index(r.count);
    if (per_class[c]++ == 0) counts.classes.emplace_back(static_cast<std::uint32_t>(c), 0);
    slots += size_class(r.count);
  }
  counts.slots = slots;
  for (auto& [c, n] : counts.classes) {
    n = per_class[c];
    per_class[c] = 0;
  }
}

void EdgeSpace::release_in_order(std::span<const std::span<const EdgeRange>> batches, ReleaseOrder order,
                                 const ForEachIndex& for_each) {
  std::uint64_t ranges = 0;
  for (const auto batch : batches) ranges += batch.size();
  std::vector<BatchCounts> counts(batches.size());
  std::vector<BatchCounts*> each(batches.size());
  for (std::size_t b = 0; b < batches.size(); ++b) each[b] = &counts[b];
  if (ranges >= kParallelReleaseMinRanges)
    for_each(batches.size(), [&](std::uint64_t b) { count(batches[b], counts[b]); });
  release_in_order(batches, each, order, for_each);
}

void EdgeSpace::release_in_order(std::span<const std::span<const EdgeRange>> batches,
                                 std::span<BatchCounts* const> counts, ReleaseOrder order,
                                 const ForEachIndex& for_each) {
  const bool last_first = order == ReleaseOrder::LastFirst;
  // The i-th batch, or range of a batch, in release order.
  auto nth = [last_first](auto& items, std::size_t i) -> auto& { return items[last_first ? items.size() - 1 - i : i]; };
  std::uint64_t ranges = 0;
  for (const auto batch : batches) ranges += batch.size();
  if (ranges < kParallelReleaseMinRanges) {
    for (std::size_t b = 0; b < batches.size(); ++b) {
      const std::span<const EdgeRange> batch = nth(batches, b);
      for (std::size_t i = 0; i < batch.size(); ++i) release(nth(batch, i).base, nth(batch, i).count);
    }
    return;
  }
  // Place: batch b's ranges of class c go after those of the batches before it; each
  // count becomes that batch's first position in its class's list.
  for (std::size_t k = 0; k < batches.size(); ++k) {
    const std::size_t b = last_first ? batches.size() - 1 - k : k;
    for (auto& [c, n] : counts[b]->classes) {
      FreeList& list = free_[c];
      const std::uint64_t first = list.size();
      list.resize(first + n);
      n = first;
    }
    in_use_ -= counts[b]->slots;
  }
  for_each(batches.size(), [&](std::uint64_t b) {
    std::vector<std::uint64_t>& cursor = class_scratch();
    for (const auto& [c, first] : counts[b]->classes) cursor[c] = first;
    const std::span<const EdgeRange> batch = batches[b];
    for (std::size_t i = 0; i < batch.size(); ++i) {
      const EdgeRange& r = nth(batch, i);
      if (r.count == 0) continue;
      const std::size_t c = class_index(r.count);
      free_[c][cursor[c]++] = r.base;
    }
    for (const auto& [c, first] : counts[b]->classes) cursor[c] = 0;
  });
}

}  // namespace gcvm
