#include "gc/markers/serial_marker.hpp"

#include "gc/util/stopwatch.hpp"

namespace gcvm {

SerialMarkerOptions SerialMarkerOptions::parse(const GcOptions& options) {
  if (!options.empty()) reject_gc_option("serial", options.front(), "");
  return {};
}

MarkStats SerialMarker::mark(const MarkRequest& request, MarkBitmap& out) {
  const Stopwatch clock;
  out.reset(request.block_count, request.premarked);
  const std::uint64_t* begin = request.graph.begin_data();
  const std::uint32_t* degree = request.graph.degree_data();
  const ObjectId* edges = request.graph.edge_data();
  MarkStats stats;
  stack_.clear();
  for (ObjectId root : request.roots)
    if (root != kNullRef && out.test_and_set(root)) stack_.push_back(root);
  std::uint64_t marked = stack_.size();
  std::uint64_t traversed = 0;
  while (!stack_.empty()) {
    const ObjectId v = stack_.back();
    stack_.pop_back();
    const ObjectId* e = edges + begin[v];
    const ObjectId* end = e + degree[v];
    for (; e != end; ++e) {
      const ObjectId target = *e;
      if (target == kNullRef) continue;
      ++traversed;
      if (out.test_and_set(target)) {
        ++marked;
        stack_.push_back(target);
      }
    }
  }
  stats.marked_objects = marked;
  stats.edges_traversed = traversed;
  stats.mark_ms = clock.elapsed_ms();
  return stats;
}

}  // namespace gcvm
