// A plain adjacency-list heap: the simplest possible HeapSink, used as an independent
// model by tests (reachable counts that do not go through the allocator, the CSR or
// any marker) and by analyses that need no heap.
#pragma once

#include <cstdint>
#include <vector>

#include "heapgraph/heap_sink.hpp"

namespace gcvm {

class AdjacencyGraph final : public HeapSink {
 public:
  SinkHandle new_object(std::uint32_t ref_fields, std::uint32_t scalar_fields) override;
  SinkHandle new_ref_array(std::uint64_t length) override;
  void store_ref(SinkHandle source, std::uint64_t slot, SinkHandle target) override;
  void add_root(SinkHandle object) override { roots_.push_back(object); }

  std::uint64_t object_count() const { return out_.size(); }
  const std::vector<SinkHandle>& roots() const { return roots_; }
  const std::vector<SinkHandle>& out_edges(SinkHandle v) const { return out_[v]; }
  /// Number of non-null references in the whole graph.
  std::uint64_t reference_count() const;

  /// Which objects are reachable from the roots (breadth-first, no bitmaps).
  std::vector<bool> reachable() const;
  std::uint64_t reachable_count() const;
  /// Sum of non-null out-references over reachable objects (what markers report as
  /// edges traversed).
  std::uint64_t reachable_reference_count() const;

 private:
  std::vector<std::vector<SinkHandle>> out_;
  std::vector<SinkHandle> roots_;
};

}  // namespace gcvm
