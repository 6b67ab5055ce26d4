#include "heapgraph/csr_graph.hpp"

#include <stdexcept>

namespace gcvm {

SinkHandle CsrGraph::add(std::uint64_t slots) {
  if (object_count() >= kCsrNull - 1) throw std::length_error("CsrGraph holds at most 2^32-2 objects");
  targets_.resize(targets_.size() + slots, kCsrNull);
  begin_.push_back(targets_.size());
  return object_count() - 1;
}

SinkHandle CsrGraph::new_object(std::uint32_t ref_fields, std::uint32_t /*scalar_fields*/) { return add(ref_fields); }

SinkHandle CsrGraph::new_ref_array(std::uint64_t length) { return add(length); }

void CsrGraph::store_ref(SinkHandle source, std::uint64_t slot, SinkHandle target) {
  if (source >= object_count() || slot >= begin_[source + 1] - begin_[source] ||
      (target != kNoHandle && target >= object_count()))
    throw std::out_of_range("CsrGraph::store_ref: no such object or slot");
  targets_[begin_[source] + slot] = target == kNoHandle ? kCsrNull : static_cast<std::uint32_t>(target);
}

void CsrGraph::add_root(SinkHandle object) {
  if (object >= object_count()) throw std::out_of_range("CsrGraph::add_root: no such object");
  roots_.push_back(static_cast<std::uint32_t>(object));
}

}  // namespace gcvm
