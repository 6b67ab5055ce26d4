#include "gc/device/edge_partition.hpp"

#include <algorithm>

#include "heapgraph/object_id.hpp"

namespace gcvm {

std::vector<std::uint32_t> edge_balanced_bounds(std::span<const std::uint32_t> degrees, unsigned partitions) {
  partitions = std::max(1u, partitions);
  const auto vertices = static_cast<std::uint32_t>(degrees.size());
  const std::uint64_t blocks = (std::uint64_t{vertices} + kSlotsPerBlock - 1) / kSlotsPerBlock;
  std::vector<std::uint64_t> prefix(blocks + 1, 0);  // edges of blocks [0, b)
  for (std::uint64_t b = 0; b < blocks; ++b) {
    std::uint64_t sum = 0;
    const std::uint64_t end = std::min<std::uint64_t>((b + 1) * kSlotsPerBlock, vertices);
    for (std::uint64_t v = b * kSlotsPerBlock; v < end; ++v) sum += degrees[v];
    prefix[b + 1] = prefix[b] + sum;
  }
  const std::uint64_t total = prefix[blocks];
  std::vector<std::uint32_t> bounds(partitions + 1, 0);
  std::uint64_t block = 0;
  for (unsigned p = 1; p < partitions; ++p) {
    if (total == 0) {
      block = blocks * p / partitions;
    } else {
      const std::uint64_t share = (total * p + partitions - 1) / partitions;
      while (block < blocks && prefix[block] < share) ++block;
    }
    bounds[p] = static_cast<std::uint32_t>(std::min<std::uint64_t>(block * kSlotsPerBlock, vertices));
  }
  bounds[partitions] = vertices;
  return bounds;
}

unsigned partition_of(std::span<const std::uint32_t> bounds, std::uint32_t id) {
  const auto after = std::upper_bound(bounds.begin() + 1, bounds.end() - 1, id);
  return static_cast<unsigned>(after - bounds.begin() - 1);
}

}  // namespace gcvm
