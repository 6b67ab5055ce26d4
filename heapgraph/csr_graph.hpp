// A compact, append-only CSR heap: a HeapSink for analyses of large imported heaps.
// Object v's reference slots are targets[begin[v] .. begin[v+1]); a null slot holds
// kCsrNull. Slots are allocated when the object is created (the sink contract fixes
// them then), so stores write in place. Memory: 8 bytes per object + 4 per slot,
// against AdjacencyGraph's ~32 bytes per object + 8 per slot. Handles are 32-bit:
// at most 2^32-2 objects.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "heapgraph/heap_sink.hpp"

namespace gcvm {

inline constexpr std::uint32_t kCsrNull = ~std::uint32_t{0};

class CsrGraph final : public HeapSink {
 public:
  CsrGraph() : begin_{0} {}
  SinkHandle new_object(std::uint32_t ref_fields, std::uint32_t scalar_fields) override;
  SinkHandle new_ref_array(std::uint64_t length) override;
  void store_ref(SinkHandle source, std::uint64_t slot, SinkHandle target) override;
  void add_root(SinkHandle object) override;

  std::uint64_t object_count() const { return begin_.size() - 1; }
  std::uint64_t slot_count() const { return targets_.size(); }
  const std::vector<std::uint32_t>& roots() const { return roots_; }
  /// The reference slots of `v` (null slots included, as kCsrNull).
  std::span<const std::uint32_t> slots(std::uint64_t v) const {
    return {targets_.data() + begin_[v], static_cast<std::size_t>(begin_[v + 1] - begin_[v])};
  }

 private:
  SinkHandle add(std::uint64_t slots);
  std::vector<std::uint64_t> begin_;
  std::vector<std::uint32_t> targets_;
  std::vector<std::uint32_t> roots_;
};

}  // namespace gcvm
