// The heap as a graph: a CSR reference graph indexed by object id.
//
// Invariants (DESIGN.md 1 and 3):
// - Vertex v is the object with id v. Its outgoing references are
//   edges[begin[v] .. begin[v] + degree[v]), one slot per reference field or array
//   element, in field order. A null reference is kNullRef, which every marker skips.
// - Vertices that are not live objects may hold stale begin/degree/edges; markers
//   only read vertices reachable from roots, which are always live.
// - Every reference store in the heap passes through `record_store` (barrier mode) or
//   the graph is rebuilt before a collection (rebuild mode); either way the graph is
//   complete when a marker reads it.
// - Every write to the vertex or edge arrays marks its chunk in `dirty()`, so a
//   device mirror can copy exactly what changed (DESIGN.md invariant 5).
//
// Memory: 8 bytes (begin) + 4 bytes (degree) per vertex slot and 4 bytes per edge
// slot (docs/memory-layout.md). Arrays live in address reservations that grow in
// place, so 100 M objects and 1 G edges never need a copy to grow.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "heapgraph/dirty_ranges.hpp"
#include "heapgraph/edge_space.hpp"
#include "heapgraph/object_id.hpp"
#include "heapgraph/virtual_array.hpp"

namespace gcvm {

class RefGraph {
 public:
  static constexpr std::uint64_t kDefaultMaxEdges = std::uint64_t{1} << 33;

  explicit RefGraph(std::uint64_t max_vertices = std::uint64_t{kMaxBlocks} * kSlotsPerBlock,
                    std::uint64_t max_edges = kDefaultMaxEdges);

  // --- structure (called by the allocator) ---
  /// Makes vertices [0, count) addressable; new vertices have degree 0.
  bool grow_vertices(std::uint64_t count);
  /// Reserves `count` edge slots, all null. nullopt when the edge space is exhausted.
  std::optional<EdgeIndex> reserve_edges(std::uint64_t count);
  void release_edges(EdgeIndex base, std::uint64_t count);
  /// Points vertex v at its edge range.
  void assign_vertex(ObjectId v, EdgeIndex begin, std::uint32_t degree) {
    begin_[v] = begin;
    degree_[v] = degree;
    dirty_.mark_vertex(v);
  }
  /// Sets every outgoing reference of v to null (a freshly allocated object).
  void clear_out_edges(ObjectId v) {
    const EdgeIndex b = begin_[v];
    const std::uint32_t d = degree_[v];
    ObjectId* e = edges_.data() + b;
    for (std::uint32_t i = 0; i < d; ++i) e[i] = kNullRef;
    dirty_.mark_edges(b, b + d);
  }

  // --- the write barrier: the one entry point for reference stores ---
  void record_store(ObjectId source, std::uint32_t slot, ObjectId target) {
    const EdgeIndex e = begin_[source] + slot;
    edges_[e] = target;
    dirty_.mark_edge(e);
  }

  // --- reading (markers, device mirrors, checkers) ---
  std::uint64_t vertex_count() const { return begin_.size(); }
  /// Length of the edge array (every slot ever reserved, live or not).
  std::uint64_t edge_count() const { return edge_space_.high_water(); }
  std::uint64_t edges_reserved() const { return edge_space_.in_use(); }
  std::uint64_t begin(ObjectId v) const { return begin_[v]; }
  std::uint32_t degree(ObjectId v) const { return degree_[v]; }
  std::span<const ObjectId> out_edges(ObjectId v) const { return {edges_.data() + begin_[v], degree_[v]}; }
  const std::uint64_t* begin_data() const { return begin_.data(); }
  const std::uint32_t* degree_data() const { return degree_.data(); }
  const ObjectId* edge_data() const { return edges_.data(); }
  /// Mutable edge access for rebuild; marks nothing dirty (the caller does).
  ObjectId* mutable_edge_data() { return edges_.data(); }

  DirtyRanges& dirty() { return dirty_; }
  const DirtyRanges& dirty() const { return dirty_; }

  /// Bytes of host memory the graph's arrays occupy (committed).
  std::uint64_t committed_bytes() const;

 private:
  VirtualArray<std::uint64_t> begin_;
  VirtualArray<std::uint32_t> degree_;
  VirtualArray<ObjectId> edges_;
  EdgeSpace edge_space_;
  DirtyRanges dirty_;
};

}  // namespace gcvm
