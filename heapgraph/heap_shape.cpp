#include "heapgraph/heap_shape.hpp"

#include <algorithm>

namespace gcvm {

double HeapShape::no_reference_share() const {
  if (reachable == 0) return 0.0;
  const auto it = degree_histogram.find(0);
  return it == degree_histogram.end() ? 0.0 : static_cast<double>(it->second) / static_cast<double>(reachable);
}

double HeapShape::share_with_at_most(std::uint64_t degree) const {
  if (reachable == 0) return 0.0;
  std::uint64_t objects = 0;
  for (auto it = degree_histogram.begin(); it != degree_histogram.end() && it->first <= degree; ++it) objects += it->second;
  return static_cast<double>(objects) / static_cast<double>(reachable);
}

std::vector<std::uint64_t> bfs_levels(const CsrGraph& graph, std::uint64_t cap) {
  std::vector<bool> marked(graph.object_count(), false);
  std::vector<std::uint32_t> queue;  // every reachable object enters once; [head, size) is the frontier
  for (std::uint32_t r : graph.roots())
    if (!marked[r]) {
      marked[r] = true;
      queue.push_back(r);
    }
  std::vector<std::uint64_t> levels;
  std::size_t head = 0;
  while (head < queue.size()) {
    const std::size_t available = queue.size() - head;
    const std::size_t step = cap == 0 ? available : static_cast<std::size_t>(std::min<std::uint64_t>(cap, available));
    for (std::size_t end = head + step; head < end; ++head)
      for (std::uint32_t t : graph.slots(queue[head]))
        if (t != kCsrNull && !marked[t]) {
          marked[t] = true;
          queue.push_back(t);
        }
    levels.push_back(step);
  }
  return levels;
}

HeapShape analyze_heap_shape(const CsrGraph& graph, const std::vector<std::uint64_t>& caps) {
  HeapShape shape;
  shape.objects = graph.object_count();
  std::vector<bool> is_root(graph.object_count(), false);
  for (std::uint32_t r : graph.roots()) is_root[r] = true;
  shape.roots = static_cast<std::uint64_t>(std::count(is_root.begin(), is_root.end(), true));

  shape.levels = bfs_levels(graph, 0);
  for (std::uint64_t cap : caps)
    if (cap != 0) shape.capped_levels[cap] = bfs_levels(graph, cap);

  // Reachability once more, for the per-object statistics.
  std::vector<bool> marked(graph.object_count(), false);
  std::vector<std::uint32_t> stack(graph.roots().begin(), graph.roots().end());
  for (std::uint32_t r : stack) marked[r] = true;
  while (!stack.empty()) {
    const std::uint32_t v = stack.back();
    stack.pop_back();
    for (std::uint32_t t : graph.slots(v))
      if (t != kCsrNull && !marked[t]) {
        marked[t] = true;
        stack.push_back(t);
      }
  }
  for (std::uint64_t v = 0; v < graph.object_count(); ++v) {
    const auto slots = graph.slots(v);
    const auto degree = static_cast<std::uint64_t>(std::count_if(slots.begin(), slots.end(), [](std::uint32_t t) { return t != kCsrNull; }));
    shape.references += degree;
    if (!marked[v]) continue;
    ++shape.reachable;
    shape.reachable_references += degree;
    ++shape.degree_histogram[degree];
    shape.max_degree = std::max(shape.max_degree, degree);
  }
  return shape;
}

}  // namespace gcvm
