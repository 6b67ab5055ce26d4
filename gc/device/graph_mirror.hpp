// The device-resident copy of the CSR reference graph (DESIGN.md invariant 5).
//
// A GraphMirror owns no device memory itself: it decides what to copy and asks its
// DeviceBackend to copy it. States: empty (nothing uploaded) → synced (device arrays
// equal the host graph on [0, vertices) and [0, edges)) → stale (the host changed;
// the changes are recorded in the graph's DirtyRanges) → synced again by `sync`.
//
// A sync uploads everything when the mirror is empty, when the device arrays had to
// be reallocated to grow, when the caller has no dirty ranges to offer, or when the
// changed bytes are more than half of the whole graph (a packed patch costs a host
// pack, a copy and a scatter kernel, so past that point one plain copy is cheaper).
// Otherwise it packs the dirty vertex and edge ranges, plus whatever the graph grew
// by, into one patch. After a sync the dirty ranges are cleared: the mirror is their
// only consumer.
#pragma once

#include <cstdint>
#include <vector>

#include "gc/device/device_backend.hpp"
#include "heapgraph/ref_graph.hpp"

namespace gcvm {

struct MirrorSyncStats {
  bool full = false;
  std::uint64_t bytes = 0;
  std::uint64_t ranges = 0;
  double ms = 0;
};

class GraphMirror {
 public:
  explicit GraphMirror(DeviceBackend& backend) : backend_(backend) {}

  /// Brings the device copy up to date with `graph`. `dirty` is the graph's change
  /// record since the last sync (cleared here), or null when unknown.
  MirrorSyncStats sync(const RefGraph& graph, DirtyRanges* dirty);

  std::uint64_t vertices() const { return vertices_; }
  std::uint64_t edges() const { return edges_; }

 private:
  /// What a patch would copy: the dirty ranges plus what the graph grew by, and
  /// their size in bytes.
  struct Changes {
    std::vector<IndexRange> vertices;
    std::vector<IndexRange> edges;
    std::uint64_t bytes = 0;
  };
  Changes changes(const RefGraph& graph, const DirtyRanges& dirty) const;
  MirrorPatch build_patch(const RefGraph& graph, const Changes& changes) const;

  DeviceBackend& backend_;
  const RefGraph* graph_ = nullptr;  // the graph the device copy belongs to
  std::uint64_t vertices_ = 0;
  std::uint64_t edges_ = 0;
};

}  // namespace gcvm
