#include "gc/markers/cpu_finish.hpp"

#include <algorithm>

#include "gc/markers/parallel_marker.hpp"

namespace gcvm {

namespace {

/// Marks the targets of references [e, end) into `out`, adding the newly marked to
/// `pending`; returns the non-null references.
std::uint64_t scan_references(const ObjectId* e, const ObjectId* end, std::vector<ObjectId>& pending, MarkBitmap& out) {
  std::uint64_t traversed = 0;
  for (; e != end; ++e) {
    if (*e == kNullRef) continue;
    ++traversed;
    if (out.test_and_set(*e)) pending.push_back(*e);
  }
  return traversed;
}

/// Scans the chunks (references [chunk * chunk_edges, +chunk_edges) of marked objects),
/// marking into `out` and adding what they newly mark to `pending`; returns the
/// references traversed.
std::uint64_t scan_chunks(const MarkRequest& request, std::vector<ObjectId>& pending, MarkBitmap& out,
                          std::span<const std::uint64_t> chunks, std::uint32_t chunk_edges) {
  const std::uint64_t* begin = request.graph.begin_data();
  const std::uint32_t* degree = request.graph.degree_data();
  const ObjectId* edges = request.graph.edge_data();
  std::uint64_t traversed = 0;
  for (const std::uint64_t item : chunks) {
    const auto v = static_cast<ObjectId>(item >> 32);
    const std::uint64_t first = std::uint64_t{static_cast<std::uint32_t>(item)} * chunk_edges;
    const std::uint64_t last = std::min<std::uint64_t>(first + chunk_edges, degree[v]);
    if (first < last) traversed += scan_references(edges + begin[v] + first, edges + begin[v] + last, pending, out);
  }
  return traversed;
}

}  // namespace

CpuFinish::CpuFinish() : parallel_(std::make_unique<ParallelMarker>(ParallelMarkerOptions{})) {}
CpuFinish::~CpuFinish() = default;

std::uint64_t CpuFinish::finish(const MarkRequest& request, std::vector<ObjectId> pending, MarkBitmap& out,
                                std::span<const std::uint64_t> chunks, std::uint32_t chunk_edges) {
  last_threads_ = 1;
  const std::uint64_t traversed = scan_chunks(request, pending, out, chunks, chunk_edges);
  if (pending.size() < kParallelObjects) return traversed + finish_mark_on_cpu(request, std::move(pending), out);
  premarked_.assign(out.words().begin(), out.words().end());
  for (const ObjectId v : pending) premarked_[v / 64] &= ~(std::uint64_t{1} << (v % 64));
  const MarkRequest tail{request.graph, pending, request.block_count, nullptr, premarked_};
  const MarkStats stats =
      request.host_pool != nullptr ? parallel_->mark_on(*request.host_pool, tail, out) : parallel_->mark(tail, out);
  last_threads_ = static_cast<unsigned>(stats.detail("threads_joined").value_or(1));
  return traversed + stats.edges_traversed;
}

std::uint64_t finish_mark_on_cpu(const MarkRequest& request, std::vector<ObjectId> pending, MarkBitmap& out,
                                 std::span<const std::uint64_t> chunks, std::uint32_t chunk_edges) {
  const std::uint64_t* begin = request.graph.begin_data();
  const std::uint32_t* degree = request.graph.degree_data();
  const ObjectId* edges = request.graph.edge_data();
  std::uint64_t traversed = scan_chunks(request, pending, out, chunks, chunk_edges);
  while (!pending.empty()) {
    const ObjectId v = pending.back();
    pending.pop_back();
    traversed += scan_references(edges + begin[v], edges + begin[v] + degree[v], pending, out);
  }
  return traversed;
}

}  // namespace gcvm
