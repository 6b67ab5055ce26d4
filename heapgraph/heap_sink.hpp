// Where synthetic generators, trace replay and heap importers put the heaps they
// produce. The sink decides what an object really is: gc/ materializes it in the SOA
// heap (so garbage is really allocated and sweep has work), AdjacencyGraph keeps a
// plain adjacency list for independent checks. heapgraph/ never sees the allocator.
//
// Handles are numbered 0, 1, 2, ... in creation order by every sink, so a producer
// may compute handles itself. A failed allocation throws (the sink's own exception).
//
// A generated batch (`new_generated_objects`) names every reference of many objects
// by a pure function, so a sink may build it in bulk and on several threads; the
// result is the one the same calls of new_object and store_ref, in handle order,
// would give (the default does exactly that).
#pragma once

#include <cstdint>
#include <functional>

namespace gcvm {

using SinkHandle = std::uint64_t;
inline constexpr SinkHandle kNoHandle = ~SinkHandle{0};

/// The target of reference `slot` of object `index` of a generated batch: the index of
/// an object of the batch, or kNoHandle (null). A pure function of its arguments: a
/// sink may call it from several threads at once, in any order.
using GeneratedTarget = std::function<SinkHandle(std::uint64_t index, std::uint32_t slot)>;

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

  /// `count` plain objects of `ref_fields` references and no scalars, reference `slot`
  /// of object i set to `target(i, slot)`; returns the first handle (object i is
  /// first + i), or kNoHandle when count is 0.
  virtual SinkHandle new_generated_objects(std::uint64_t count, std::uint32_t ref_fields,
                                           const GeneratedTarget& target) {
    if (count == 0) return kNoHandle;
    const SinkHandle first = new_object(ref_fields, 0);
    for (std::uint64_t i = 1; i < count; ++i) new_object(ref_fields, 0);
    for (std::uint64_t i = 0; i < count; ++i)
      for (std::uint32_t slot = 0; slot < ref_fields; ++slot) {
        const SinkHandle t = target(i, slot);
        store_ref(first + i, slot, t == kNoHandle ? kNoHandle : first + t);
      }
    return first;
  }
};

}  // namespace gcvm
