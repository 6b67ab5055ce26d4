#include "gc/markers/snapshot_mark.hpp"

#include <stdexcept>

#include "gc/util/stopwatch.hpp"

namespace gcvm {

std::uint64_t HostGraphCopy::update(const RefGraph& source, GraphChanges* changes) {
  if (!copy_ || copy_->max_vertices() < source.max_vertices() || copy_->max_edges() < source.max_edges()) {
    copy_ = std::make_unique<RefGraph>(source.max_vertices(), source.max_edges());
    source_ = nullptr;
  }
  const bool incremental = changes != nullptr && source_ == &source && changes->generation() == generation_;
  const std::uint64_t held_vertices = incremental ? vertices_ : 0;
  const std::uint64_t held_edges = incremental ? edges_ : 0;
  std::uint64_t bytes = (source.vertex_count() - held_vertices) * 12 + (source.edge_count() - held_edges) * 4;
  if (incremental) bytes += changes->vertices.count(held_vertices) * 12 + changes->edges.count(held_edges) * 4;
  if (!copy_->copy_from(source, incremental ? changes : nullptr, held_vertices, held_edges))
    throw MarkError("the snapshot's copy of the reference graph does not fit in memory");
  source_ = &source;
  vertices_ = source.vertex_count();
  edges_ = source.edge_count();
  if (changes != nullptr) {
    changes->clear();
    generation_ = changes->generation();
  }
  return bytes;
}

HostCopyMark::HostCopyMark(Marker& marker, HostGraphCopy& copy, const MarkRequest& request)
    : marker_(marker),
      copy_(copy),
      roots_(request.roots.begin(), request.roots.end()),
      block_count_(request.block_count) {
  const Stopwatch clock;
  const std::uint64_t bytes = copy.update(request.graph, request.changes);
  pause_details.emplace_back("copy_ms", clock.elapsed_ms());
  pause_details.emplace_back("copy_bytes", static_cast<double>(bytes));
}

MarkStats HostCopyMark::mark(MarkBitmap& out) { return marker_.mark({copy_.graph(), roots_, block_count_}, out); }

Marker::Marker() = default;
Marker::~Marker() = default;

std::unique_ptr<SnapshotMark> Marker::snapshot(const MarkRequest& request) {
  if (!request.premarked.empty()) throw std::logic_error("a snapshot mark takes no pre-marked objects");
  if (!host_copy_) host_copy_ = std::make_unique<HostGraphCopy>();
  return std::make_unique<HostCopyMark>(*this, *host_copy_, request);
}

}  // namespace gcvm
