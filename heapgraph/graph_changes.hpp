// What changed in a reference graph since its consumer, a device mirror, last synced
// (DESIGN.md invariant 5): which vertices (begin and degree) and which edge slots were
// written with new values. RefGraph marks them on every write (ref_graph.hpp); the
// mirror reads and clears them (gc/device/graph_mirror.hpp). Entries appended past
// what the consumer already holds need no bits: the consumer knows its own length.
#pragma once

#include <cstdint>

#include "heapgraph/change_bitmap.hpp"

namespace gcvm {

struct GraphChanges {
  GraphChanges(std::uint64_t max_vertices, std::uint64_t max_edges) : vertices(max_vertices), edges(max_edges) {}

  ChangeBitmap vertices;
  ChangeBitmap edges;

  bool any() const { return vertices.any() || edges.any(); }
  void clear() {
    vertices.clear();
    edges.clear();
  }
  /// Changes both bitmaps with every clear; see ChangeBitmap::generation.
  std::uint64_t generation() const { return edges.generation(); }
};

}  // namespace gcvm
