#include "heapgraph/dirty_ranges.hpp"

#include <algorithm>

namespace gcvm {

std::vector<IndexRange> DirtyRanges::ranges(const std::vector<std::uint64_t>& bits, std::uint64_t chunk_size,
                                            std::uint64_t limit) {
  std::vector<IndexRange> out;
  const std::uint64_t chunks = bits.size() * 64;
  for (std::uint64_t chunk = 0; chunk < chunks; ++chunk) {
    if (((bits[chunk >> 6] >> (chunk & 63)) & 1u) == 0) {
      if ((chunk & 63) == 0 && bits[chunk >> 6] == 0) chunk += 63;
      continue;
    }
    const std::uint64_t begin = chunk * chunk_size;
    if (begin >= limit) break;
    const std::uint64_t end = std::min(limit, begin + chunk_size);
    if (!out.empty() && out.back().end == begin)
      out.back().end = end;
    else
      out.push_back({begin, end});
  }
  return out;
}

bool DirtyRanges::any() const {
  auto nonzero = [](std::uint64_t w) { return w != 0; };
  return std::any_of(vertex_chunks_.begin(), vertex_chunks_.end(), nonzero) ||
         std::any_of(edge_chunks_.begin(), edge_chunks_.end(), nonzero);
}

void DirtyRanges::clear() {
  std::fill(vertex_chunks_.begin(), vertex_chunks_.end(), 0);
  std::fill(edge_chunks_.begin(), edge_chunks_.end(), 0);
}

}  // namespace gcvm
