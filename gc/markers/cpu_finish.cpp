#include "gc/markers/cpu_finish.hpp"

namespace gcvm {

std::uint64_t finish_mark_on_cpu(const MarkRequest& request, std::vector<ObjectId> pending, MarkBitmap& out) {
  const std::uint64_t* begin = request.graph.begin_data();
  const std::uint32_t* degree = request.graph.degree_data();
  const ObjectId* edges = request.graph.edge_data();
  std::uint64_t traversed = 0;
  while (!pending.empty()) {
    const ObjectId v = pending.back();
    pending.pop_back();
    const ObjectId* e = edges + begin[v];
    for (const ObjectId* end = e + degree[v]; e != end; ++e) {
      if (*e == kNullRef) continue;
      ++traversed;
      if (out.test_and_set(*e)) pending.push_back(*e);
    }
  }
  return traversed;
}

}  // namespace gcvm
