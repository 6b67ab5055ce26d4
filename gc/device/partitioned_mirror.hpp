// The device mirror of a heap spread over several devices (DESIGN.md invariant 5:
// the union of the partitions equals the host graph after a sync).
//
// The heap is cut into K partitions of whole blocks, balanced by edges
// (gc/device/edge_partition.hpp). Partition p owns objects [lo, hi) and keeps, on its
// own device, only its rows: a host graph of the partition (`rows`, a RefGraph whose
// vertex i is object lo + i) mirrored by a GraphMirror, the single-device mirror, so
// the partition's device copy is synced from the rows' change record exactly as one
// GPU's is (mirror_plan.hpp), with the same bytes-on-the-link bound.
//
// The rows' edge array is a window of the heap's: slot i of partition p is the
// heap's edge slot base_p + i, for i < covered_p, where [base_p, base_p + covered_p)
// spans the edges of every object of p (the targets stay global object ids). So a
// changed heap edge slot maps to one slot of each window that contains it, without
// knowing which object owns it; objects allocated in id order (the usual case) make
// the windows disjoint, and a heap whose edge ranges interleave across partitions
// costs some window slots that belong to another partition (memory, not
// correctness).
//
// A sync, in the pause:
//   1. from the heap's change record (consumed and cleared here): each changed
//      object's (begin, degree) is rewritten in its partition's rows, growing the
//      window upward where the object's edges lie past it (the new slots are copied);
//      each changed edge slot is copied into every window that holds it; objects the
//      heap grew by join the last partition;
//   2. each partition's GraphMirror syncs its rows from the rows' change record.
// A partition is rebuilt (its rows made anew, its device copy uploaded whole) when an
// object's edges start below its window. A rebuild runs on every core: the rows of
// each partition are made on one thread each, then their window slots and vertices
// are copied in pieces of whole words of the rows' change record (so that no two
// threads mark one word; each partition's rows are its own). The heap is cut anew, and every partition
// rebuilt, on the first sync, when the mirror last synced another graph or has no
// usable change record, and when the heap has doubled in objects since the last cut.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "gc/device/graph_mirror.hpp"
#include "gc/util/thread_pool.hpp"
#include "heapgraph/ref_graph.hpp"

namespace gcvm {

struct PartitionedSyncStats {
  std::vector<MirrorSyncStats> partitions;  // each partition's device sync
  bool cut = false;                         // the heap was cut anew
  std::uint64_t rebuilt = 0;                // partitions whose rows were made anew
  double rows_ms = 0;                       // step 1: updating the partitions' rows on the host
  double ms = 0;                            // the whole sync

  /// The figures as MarkStats::details entries: sync_* summed over the partitions
  /// (sync_full: any partition uploaded whole), then the partition figures.
  std::vector<std::pair<std::string, double>> details() const;
};

class PartitionedMirror {
 public:
  /// One partition per backend, in order (a backend may not appear twice).
  explicit PartitionedMirror(std::vector<DeviceBackend*> backends);
  ~PartitionedMirror();

  /// Brings every partition's device copy up to date with `graph`; `changes` is the
  /// graph's change record (cleared here), or null when unknown.
  PartitionedSyncStats sync(const RefGraph& graph, GraphChanges* changes);

  unsigned partitions() const { return static_cast<unsigned>(parts_.size()); }
  /// bounds[K + 1] (edge_partition.hpp), after a sync.
  std::span<const std::uint32_t> bounds() const { return bounds_; }
  /// Partition p's rows and their window's first heap edge slot (tests check them
  /// against the heap).
  const RefGraph& rows(unsigned p) const { return *parts_[p].rows; }
  std::uint64_t edge_base(unsigned p) const { return parts_[p].base; }
  std::uint64_t edges_covered(unsigned p) const { return parts_[p].covered; }

 private:
  struct Part {
    DeviceBackend* backend = nullptr;
    std::unique_ptr<GraphMirror> mirror;
    std::unique_ptr<RefGraph> rows;
    std::uint64_t base = 0;     // heap edge slot of the window's slot 0
    std::uint64_t covered = 0;  // window slots that mirror heap slots
    bool rebuild = false;       // step 1 found an object below the window
  };

  /// A piece of a rebuild's copy: window slots (`edges`) or vertices [from, to) of one
  /// partition's rows.
  struct RowsPiece {
    unsigned partition = 0;
    bool edges = false;
    std::uint64_t from = 0;
    std::uint64_t to = 0;
  };

  void cut(const RefGraph& graph);
  /// Makes partition p's rows anew: sized, its window found and reserved, nothing copied.
  void start_rebuild(const RefGraph& graph, unsigned p);
  /// Copies one piece of a rebuilt partition's rows from the heap's graph.
  void fill_rows(const RefGraph& graph, const RowsPiece& piece);
  /// Rebuilds every partition whose `rebuild` is set, on every core; returns how many.
  std::uint64_t rebuild_marked(const RefGraph& graph);
  /// Rewrites object v's row in its partition p (step 1).
  void update_object(const RefGraph& graph, unsigned p, ObjectId v);
  /// Makes partition p's window cover heap edge slots up to `end`, copying the new ones.
  bool extend(const RefGraph& graph, Part& part, std::uint64_t end);

  std::vector<Part> parts_;
  std::unique_ptr<ThreadPool> pool_;  // made by the first parallel rebuild
  std::vector<std::uint32_t> bounds_;
  const RefGraph* graph_ = nullptr;
  std::uint64_t generation_ = 0;
  std::uint64_t vertices_ = 0;  // of the heap, at the last sync
  std::uint64_t edges_ = 0;
  std::uint64_t vertices_at_cut_ = 0;
};

}  // namespace gcvm
