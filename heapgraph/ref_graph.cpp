#include "heapgraph/ref_graph.hpp"

#include <algorithm>

namespace gcvm {

RefGraph::RefGraph(std::uint64_t max_vertices, std::uint64_t max_edges)
    : begin_(max_vertices), degree_(max_vertices), edges_(max_edges), edge_space_(max_edges),
      changes_(max_vertices, max_edges) {}

bool RefGraph::grow_vertex_arrays(std::uint64_t count) {
  if (count <= begin_.size()) return true;
  return begin_.grow_to(count) && degree_.grow_to(count) && changes_.vertices.resize(count);
}

bool RefGraph::grow_vertices(std::uint64_t count) {
  if (!grow_vertex_arrays(count)) return false;
  // Fresh vertices are zero, as committed, until written with their bits.
  if (published_vertices_.load(std::memory_order_relaxed) != begin_.size())
    published_vertices_.store(begin_.size(), std::memory_order_release);
  return true;
}

bool RefGraph::assign_vertex_run(ObjectId first, std::uint32_t count, EdgeIndex base, std::uint32_t degree) {
  const std::uint64_t end = std::uint64_t{first} + count;
  const std::uint64_t held = std::clamp<std::uint64_t>(begin_.size(), first, end);
  if (!grow_vertex_arrays(end)) return false;  // published below, once the growth is written
  std::uint64_t* begins = begin_.data();
  std::uint32_t* degrees = degree_.data();
  // The common case, a block back with the range it had, is one pass without a branch
  // per vertex: the differences are or-ed together, and only a nonzero result goes on
  // to compare, write and mark vertex by vertex.
  std::uint64_t difference = 0;
  EdgeIndex expected = base;
  for (std::uint64_t v = first; v < held; ++v, expected += degree)
    difference |= (begins[v] ^ expected) | (degrees[v] ^ degree);
  std::uint64_t changed = 0;  // bits of vertex word v / 64 not yet marked
  for (std::uint64_t v = difference == 0 ? held : first; v < held; ++v) {
    const EdgeIndex target = base + (v - first) * degree;
    if (begins[v] != target || degrees[v] != degree) {
      shared(begins[v]).store(target, std::memory_order_relaxed);
      shared(degrees[v]).store(degree, std::memory_order_relaxed);
      changed |= std::uint64_t{1} << (v % 64);
    }
    if ((v % 64 == 63 || v + 1 == held) && changed != 0) {
      changes_.vertices.mark_word(v / 64, changed);
      changed = 0;
    }
  }
  std::fill(degrees + held, degrees + end, degree);
  expected = base + (held - first) * degree;
  for (std::uint64_t v = held; v < end; ++v, expected += degree) begins[v] = expected;
  if (end > held) published_vertices_.store(begin_.size(), std::memory_order_release);
  return true;
}

std::optional<EdgeIndex> RefGraph::reserve_edges(std::uint64_t count) {
  const std::uint64_t old_high_water = edge_space_.high_water();
  const auto base = edge_space_.allocate(count);
  if (!base) return std::nullopt;
  if (!edges_.grow_to(edge_space_.high_water()) || !changes_.edges.resize(edge_space_.high_water())) {
    edge_space_.release(*base, count);
    return std::nullopt;
  }
  // A range reused from the free lists holds its last owner's references: nulling
  // them is a change. A fresh range (from the old high-water mark up) is growth, which
  // a consumer copies whole (graph_changes.hpp): no bits.
  if (*base >= old_high_water) {
    std::fill_n(edges_.data() + *base, count, kNullRef);
    published_edges_.store(edge_space_.high_water(), std::memory_order_release);
  } else {
    set_null(*base, *base + count);
  }
  return base;
}

bool RefGraph::copy_from(const RefGraph& source, const GraphChanges* changes, std::uint64_t held_vertices,
                         std::uint64_t held_edges) {
  const std::uint64_t vertices = source.vertex_count();
  const std::uint64_t edges = source.edge_count();
  if (vertices > begin_.size() && !(begin_.grow_to(vertices) && degree_.grow_to(vertices))) return false;
  if (edges > edge_space_.high_water()) {
    if (!edge_space_.allocate(edges - edge_space_.high_water())) return false;
    if (!edges_.grow_to(edge_space_.high_water())) return false;
  }
  auto copy_vertices = [&](std::uint64_t from, std::uint64_t to) {
    std::copy(source.begin_.data() + from, source.begin_.data() + to, begin_.data() + from);
    std::copy(source.degree_.data() + from, source.degree_.data() + to, degree_.data() + from);
  };
  auto copy_edges = [&](std::uint64_t from, std::uint64_t to) {
    std::copy(source.edges_.data() + from, source.edges_.data() + to, edges_.data() + from);
  };
  if (changes == nullptr) held_vertices = held_edges = 0;
  held_vertices = std::min(held_vertices, vertices);
  held_edges = std::min(held_edges, edges);
  if (changes != nullptr) {
    changes->vertices.for_each_run(0, held_vertices, copy_vertices);
    changes->edges.for_each_run(0, held_edges, copy_edges);
  }
  copy_vertices(held_vertices, vertices);
  copy_edges(held_edges, edges);
  published_vertices_.store(begin_.size(), std::memory_order_release);
  published_edges_.store(edge_space_.high_water(), std::memory_order_release);
  return true;
}

void RefGraph::release_edges(EdgeIndex base, std::uint64_t count) { edge_space_.release(base, count); }

std::uint64_t RefGraph::committed_bytes() const {
  return begin_.committed_bytes() + degree_.committed_bytes() + edges_.committed_bytes();
}

void RefGraph::pin_with(const std::shared_ptr<HostPinner>& pinner) const {
  begin_.pin_with(pinner);
  degree_.pin_with(pinner);
  edges_.pin_with(pinner);
}

std::uint64_t RefGraph::pinned_bytes() const {
  return begin_.pinned_bytes() + degree_.pinned_bytes() + edges_.pinned_bytes();
}

}  // namespace gcvm
