#include "gc/markers/cpu_finish.hpp"

#include <algorithm>

namespace gcvm {

std::uint64_t finish_mark_on_cpu(const MarkRequest& request, std::vector<ObjectId> pending, MarkBitmap& out,
                                 std::span<const std::uint64_t> chunks, std::uint32_t chunk_edges) {
  const std::uint64_t* begin = request.graph.begin_data();
  const std::uint32_t* degree = request.graph.degree_data();
  const ObjectId* edges = request.graph.edge_data();
  std::uint64_t traversed = 0;
  auto scan = [&](const ObjectId* e, const ObjectId* end) {
    for (; e != end; ++e) {
      if (*e == kNullRef) continue;
      ++traversed;
      if (out.test_and_set(*e)) pending.push_back(*e);
    }
  };
  for (const std::uint64_t item : chunks) {
    const auto v = static_cast<ObjectId>(item >> 32);
    const std::uint64_t first = std::uint64_t{static_cast<std::uint32_t>(item)} * chunk_edges;
    const std::uint64_t last = std::min<std::uint64_t>(first + chunk_edges, degree[v]);
    if (first < last) scan(edges + begin[v] + first, edges + begin[v] + last);
  }
  while (!pending.empty()) {
    const ObjectId v = pending.back();
    pending.pop_back();
    scan(edges + begin[v], edges + begin[v] + degree[v]);
  }
  return traversed;
}

}  // namespace gcvm
