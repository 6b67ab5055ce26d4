#include "heapgraph/edge_space.hpp"

#include <bit>

namespace gcvm {

std::uint64_t EdgeSpace::size_class(std::uint64_t count) {
  if (count <= kExactLimit) return count;
  const int top = 63 - std::countl_zero(count);  // count >= 2^top
  const std::uint64_t quarter = std::uint64_t{1} << (top - 2);
  return (count + quarter - 1) / quarter * quarter;
}

std::optional<EdgeIndex> EdgeSpace::allocate(std::uint64_t count) {
  if (count == 0) return EdgeIndex{0};
  const std::uint64_t size = size_class(count);
  if (std::vector<EdgeIndex>& free = free_list(size); !free.empty()) {
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
  const std::uint64_t size = size_class(count);
  in_use_ -= size;
  free_list(size).push_back(base);
}

}  // namespace gcvm
