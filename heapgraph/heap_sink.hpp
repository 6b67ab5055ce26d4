// Where synthetic generators, trace replay and heap importers put the heaps they
// produce. The sink decides what an object really is: gc/ materializes it in the SOA
// heap (so garbage is really allocated and sweep has work), AdjacencyGraph keeps a
// plain adjacency list for independent checks. heapgraph/ never sees the allocator.
//
// Handles are numbered 0, 1, 2, ... in creation order by every sink, so a producer
// may compute handles itself. A failed allocation throws (the sink's own exception).
#pragma once

#include <cstdint>

namespace gcvm {

using SinkHandle = std::uint64_t;
inline constexpr SinkHandle kNoHandle = ~SinkHandle{0};

class HeapSink {
 public:
  virtual ~HeapSink() = default;
  /// A plain object with `ref_fields` references (initially null) and `scalar_fields` scalars.
  virtual SinkHandle new_object(std::uint32_t ref_fields, std::uint32_t scalar_fields) = 0;
  /// An array of `length` references, initially null.
  virtual SinkHandle new_ref_array(std::uint64_t length) = 0;
  /// Sets reference `slot` (field or element) of `source` to `target` (kNoHandle = null).
  virtual void store_ref(SinkHandle source, std::uint64_t slot, SinkHandle target) = 0;
  virtual void add_root(SinkHandle object) = 0;
};

}  // namespace gcvm
