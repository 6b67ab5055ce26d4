#include "gc/markers/snapshot_mark.hpp"

#include <stdexcept>

#include "gc/util/stopwatch.hpp"

namespace gcvm {

HostCopyMark::HostCopyMark(Marker& marker, RefGraph& copy, const MarkRequest& request)
    : marker_(marker),
      copy_(copy),
      roots_(request.roots.begin(), request.roots.end()),
      block_count_(request.block_count) {
  const Stopwatch clock;
  if (!copy.copy_from(request.graph))
    throw MarkError("the snapshot's copy of the reference graph does not fit in memory");
  pause_details.emplace_back("copy_ms", clock.elapsed_ms());
  const std::uint64_t bytes = request.graph.vertex_count() * 12 + request.graph.edge_count() * 4;
  pause_details.emplace_back("copy_bytes", static_cast<double>(bytes));
}

MarkStats HostCopyMark::mark(MarkBitmap& out) { return marker_.mark({copy_, roots_, block_count_}, out); }

std::unique_ptr<SnapshotMark> Marker::snapshot(const MarkRequest& request) {
  if (!request.premarked.empty()) throw std::logic_error("a snapshot mark takes no pre-marked objects");
  const RefGraph& graph = request.graph;
  if (!host_copy_ || host_copy_->max_vertices() < graph.max_vertices() || host_copy_->max_edges() < graph.max_edges())
    host_copy_ = std::make_unique<RefGraph>(graph.max_vertices(), graph.max_edges());
  return std::make_unique<HostCopyMark>(*this, *host_copy_, request);
}

}  // namespace gcvm
