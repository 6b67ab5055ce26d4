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
// - Every write that changes a vertex (begin or degree) or an edge slot marks it in
//   `changes()`, so that a device mirror copies what changed and little else
//   (DESIGN.md invariant 5). Writes compare first: storing the value a slot already
//   holds marks nothing. Vertices and edges past the old length (growth) are marked
//   only where a later write changes them; a consumer knows its own length.
// - `published_vertex_count()` and `published_edge_count()` never exceed the sizes and
//   are raised (release) only after the entries below them hold their initial values:
//   a thread that reads them (acquire) while the mutator goes on growing the graph may
//   copy every entry below them, and each entry the mutator writes after that marks its
//   change bit as above. That is how a mirror's background refresh sends growth
//   (gc/device/mirror_refresher.hpp).
//
// Memory: 8 bytes (begin) + 4 bytes (degree) per vertex slot and 4 bytes per edge
// slot (docs/memory-layout.md), plus one change bit per vertex and per edge slot.
// Arrays live in address reservations that grow in place, so 100 M objects and 1 G
// edges never need a copy to grow. `pin_with` page-locks the three arrays for a
// device's DMA engines (host_pinning.hpp), now and as they grow.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include <memory>

#include "heapgraph/edge_space.hpp"
#include "heapgraph/graph_changes.hpp"
#include "heapgraph/host_pinning.hpp"
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
  /// Releases batches of ranges as `release_edges` would one by one, in `order`
  /// (EdgeSpace::release_in_order).
  void release_edges_in_order(std::span<const std::span<const EdgeRange>> batches, EdgeSpace::ReleaseOrder order,
                              const EdgeSpace::ForEachIndex& for_each) {
    edge_space_.release_in_order(batches, order, for_each);
  }
  /// The same with each batch's counts given (EdgeSpace::count).
  void release_edges_in_order(std::span<const std::span<const EdgeRange>> batches,
                              std::span<EdgeSpace::BatchCounts* const> counts, EdgeSpace::ReleaseOrder order,
                              const EdgeSpace::ForEachIndex& for_each) {
    edge_space_.release_in_order(batches, counts, order, for_each);
  }
  /// Points vertex v at its edge range.
  void assign_vertex(ObjectId v, EdgeIndex begin, std::uint32_t degree) {
    if (begin_[v] == begin && degree_[v] == degree) return;
    shared(begin_[v]).store(begin, std::memory_order_relaxed);
    shared(degree_[v]).store(degree, std::memory_order_relaxed);
    changes_.vertices.mark(v);
  }
  /// Points vertex first + i, for i < count, at edges [base + i * degree, base + (i + 1)
  /// * degree), growing the graph to first + count vertices if it has fewer: a block's
  /// objects in one step. Vertices past the old vertex_count() are growth, written
  /// without change bits and published after they are written; the others are
  /// compared and marked where they change, as by `assign_vertex`. False (nothing written) when the vertices do not fit.
  bool assign_vertex_run(ObjectId first, std::uint32_t count, EdgeIndex base, std::uint32_t degree);
  /// Sets every outgoing reference of v to null (a freshly allocated object).
  void clear_out_edges(ObjectId v) { set_null(begin_[v], begin_[v] + degree_[v]); }

  // --- the write barrier: the one entry point for reference stores ---
  void record_store(ObjectId source, std::uint32_t slot, ObjectId target) { set_edge(begin_[source] + slot, target); }
  /// Writes edge slot `e` (rebuild mode's store), marking it if the value changes.
  void set_edge(EdgeIndex e, ObjectId target) {
    ObjectId& edge = edges_[e];
    if (edge == target) return;
    shared(edge).store(target, std::memory_order_relaxed);
    changes_.edges.mark(e);
  }

  // --- reading (markers, device mirrors, checkers) ---
  std::uint64_t vertex_count() const { return begin_.size(); }
  /// Length of the edge array (every slot ever reserved, live or not).
  std::uint64_t edge_count() const { return edge_space_.high_water(); }
  std::uint64_t edges_reserved() const { return edge_space_.in_use(); }
  /// The sizes as published to concurrent readers (see the invariants above).
  std::uint64_t published_vertex_count() const { return published_vertices_.load(std::memory_order_acquire); }
  std::uint64_t published_edge_count() const { return published_edges_.load(std::memory_order_acquire); }
  /// The limits given to the constructor (the address space reserved).
  std::uint64_t max_vertices() const { return begin_.max_size(); }
  std::uint64_t max_edges() const { return edge_space_.max_edges(); }
  std::uint64_t begin(ObjectId v) const { return begin_[v]; }
  std::uint32_t degree(ObjectId v) const { return degree_[v]; }
  std::span<const ObjectId> out_edges(ObjectId v) const { return {edges_.data() + begin_[v], degree_[v]}; }
  const std::uint64_t* begin_data() const { return begin_.data(); }
  const std::uint32_t* degree_data() const { return degree_.data(); }
  const ObjectId* edge_data() const { return edges_.data(); }

  GraphChanges& changes() { return changes_; }
  const GraphChanges& changes() const { return changes_; }

  /// Makes this graph a copy of `source` at this moment: its vertices, edge array and
  /// edge high-water mark (a concurrent cycle's host snapshot, which a CPU marker marks
  /// while the mutator changes `source`). With `changes`, this graph already equals
  /// `source` as it was when `changes` were last cleared, on its first `held_vertices`
  /// vertices and `held_edges` edge slots, and only the entries `changes` marks there,
  /// and everything past them, are copied. Neither graph's change record changes; this
  /// graph must only ever be a copy (it keeps its memory between copies). False when
  /// the copy does not fit this graph's limits.
  bool copy_from(const RefGraph& source, const GraphChanges* changes = nullptr, std::uint64_t held_vertices = 0,
                 std::uint64_t held_edges = 0);

  /// Bytes of host memory the graph's arrays occupy (committed).
  std::uint64_t committed_bytes() const;

  /// Page-locks the begin, degree and edge arrays with `pinner`, now and as they grow.
  /// Const: pinning changes how the memory can be copied, not what it holds.
  void pin_with(const std::shared_ptr<HostPinner>& pinner) const;
  /// Bytes of the three arrays that are pinned, from each array's start.
  std::uint64_t pinned_bytes() const;
  std::uint64_t begin_pinned_bytes() const { return begin_.pinned_bytes(); }
  std::uint64_t degree_pinned_bytes() const { return degree_.pinned_bytes(); }
  std::uint64_t edge_pinned_bytes() const { return edges_.pinned_bytes(); }

 private:
  /// Makes vertices [0, count) addressable without publishing them (the caller
  /// publishes once it has written them).
  bool grow_vertex_arrays(std::uint64_t count);
  /// Nulls edge slots [begin, end), marking the ones that change.
  void set_null(EdgeIndex begin, EdgeIndex end) {
    ObjectId* e = edges_.data();
    for (EdgeIndex i = begin; i < end; ++i)
      if (e[i] != kNullRef) {
        shared(e[i]).store(kNullRef, std::memory_order_relaxed);
        changes_.edges.mark(i);
      }
  }
  /// The graph's entries below the sizes of the last pause may be read by a mirror's
  /// background refresh while the mutator writes them (change_bitmap.hpp): the
  /// mutator's stores are atomic (plain stores on x86), so those reads are no race.
  template <typename T>
  static std::atomic_ref<T> shared(T& entry) {
    return std::atomic_ref<T>(entry);
  }

  mutable VirtualArray<std::uint64_t> begin_;
  mutable VirtualArray<std::uint32_t> degree_;
  mutable VirtualArray<ObjectId> edges_;
  EdgeSpace edge_space_;
  GraphChanges changes_;
  std::atomic<std::uint64_t> published_vertices_{0};
  std::atomic<std::uint64_t> published_edges_{0};
};

}  // namespace gcvm
