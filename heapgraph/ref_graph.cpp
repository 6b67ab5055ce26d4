#include "heapgraph/ref_graph.hpp"

#include <algorithm>

namespace gcvm {

RefGraph::RefGraph(std::uint64_t max_vertices, std::uint64_t max_edges)
    : begin_(max_vertices), degree_(max_vertices), edges_(max_edges), edge_space_(max_edges) {}

bool RefGraph::grow_vertices(std::uint64_t count) {
  const std::uint64_t before = begin_.size();
  if (count <= before) return true;
  if (!begin_.grow_to(count) || !degree_.grow_to(count)) return false;
  dirty_.mark_vertices(before, count);
  return true;
}

std::optional<EdgeIndex> RefGraph::reserve_edges(std::uint64_t count) {
  const auto base = edge_space_.allocate(count);
  if (!base) return std::nullopt;
  if (!edges_.grow_to(edge_space_.high_water())) {
    edge_space_.release(*base, count);
    return std::nullopt;
  }
  std::fill_n(edges_.data() + *base, count, kNullRef);
  dirty_.mark_edges(*base, *base + count);
  return base;
}

void RefGraph::release_edges(EdgeIndex base, std::uint64_t count) { edge_space_.release(base, count); }

std::uint64_t RefGraph::committed_bytes() const {
  return begin_.committed_bytes() + degree_.committed_bytes() + edges_.committed_bytes();
}

}  // namespace gcvm
