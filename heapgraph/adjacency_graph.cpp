#include "heapgraph/adjacency_graph.hpp"

#include <algorithm>
#include <deque>

namespace gcvm {

SinkHandle AdjacencyGraph::new_object(std::uint32_t ref_fields, std::uint32_t /*scalar_fields*/) {
  out_.emplace_back(ref_fields, kNoHandle);
  return out_.size() - 1;
}

SinkHandle AdjacencyGraph::new_ref_array(std::uint64_t length) {
  out_.emplace_back(length, kNoHandle);
  return out_.size() - 1;
}

void AdjacencyGraph::store_ref(SinkHandle source, std::uint64_t slot, SinkHandle target) {
  out_.at(source).at(slot) = target;
}

std::uint64_t AdjacencyGraph::reference_count() const {
  std::uint64_t total = 0;
  for (const auto& edges : out_)
    total += static_cast<std::uint64_t>(std::count_if(edges.begin(), edges.end(), [](SinkHandle t) { return t != kNoHandle; }));
  return total;
}

std::vector<bool> AdjacencyGraph::reachable() const {
  std::vector<bool> seen(out_.size(), false);
  std::deque<SinkHandle> queue;
  for (SinkHandle r : roots_)
    if (r != kNoHandle && !seen[r]) {
      seen[r] = true;
      queue.push_back(r);
    }
  while (!queue.empty()) {
    const SinkHandle v = queue.front();
    queue.pop_front();
    for (SinkHandle t : out_[v])
      if (t != kNoHandle && !seen[t]) {
        seen[t] = true;
        queue.push_back(t);
      }
  }
  return seen;
}

std::uint64_t AdjacencyGraph::reachable_count() const {
  const auto seen = reachable();
  return static_cast<std::uint64_t>(std::count(seen.begin(), seen.end(), true));
}

std::uint64_t AdjacencyGraph::reachable_reference_count() const {
  const auto seen = reachable();
  std::uint64_t total = 0;
  for (SinkHandle v = 0; v < out_.size(); ++v)
    if (seen[v])
      for (SinkHandle t : out_[v]) total += t != kNoHandle;
  return total;
}

}  // namespace gcvm
