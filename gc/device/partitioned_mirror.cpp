#include "gc/device/partitioned_mirror.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <functional>
#include <mutex>

#include "gc/device/edge_partition.hpp"
#include "heapgraph/change_bitmap.hpp"
#include "gc/util/stopwatch.hpp"

namespace gcvm {

std::vector<std::pair<std::string, double>> PartitionedSyncStats::details() const {
  MirrorSyncStats sum;
  for (const MirrorSyncStats& p : partitions) sum += p;
  sum.ms = ms;
  auto details = sum.details();
  append_details(details, {{"sync_rows_ms", rows_ms},
                           {"sync_cut", cut ? 1.0 : 0.0},
                           {"sync_rebuilt_partitions", static_cast<double>(rebuilt)}});
  return details;
}

PartitionedMirror::PartitionedMirror(std::vector<DeviceBackend*> backends) {
  for (DeviceBackend* backend : backends) {
    Part part;
    part.backend = backend;
    part.mirror = std::make_unique<GraphMirror>(*backend);
    parts_.push_back(std::move(part));
  }
}

PartitionedMirror::~PartitionedMirror() = default;

void PartitionedMirror::cut(const RefGraph& graph) {
  bounds_ = edge_balanced_bounds({graph.degree_data(), graph.vertex_count()}, partitions());
  vertices_at_cut_ = graph.vertex_count();
  for (Part& part : parts_) part.rebuild = true;
  rebuild_marked(graph);
}

std::uint64_t PartitionedMirror::rebuild_marked(const RefGraph& graph) {
  std::vector<unsigned> marked;
  for (unsigned p = 0; p < partitions(); ++p)
    if (parts_[p].rebuild) marked.push_back(p);
  if (marked.empty()) return 0;
  if (!pool_) pool_ = std::make_unique<ThreadPool>(0);
  std::exception_ptr failure;
  std::mutex failure_lock;
  auto in_parallel = [&](std::uint64_t tasks, const std::function<void(std::uint64_t)>& task) {
    pool_->for_each_task(tasks, [&](std::uint64_t t) {
      try {
        task(t);
      } catch (...) {
        const std::lock_guard<std::mutex> hold(failure_lock);
        if (!failure) failure = std::current_exception();
      }
    });
    if (failure) std::rethrow_exception(failure);
  };
  in_parallel(marked.size(), [&](std::uint64_t t) { start_rebuild(graph, marked[t]); });
  // The copies, in pieces of whole change-record summary words (no two pieces mark one word).
  constexpr std::uint64_t kPiece = ChangeBitmap::kIndicesPerChunk * 64;
  std::vector<RowsPiece> pieces;
  for (const unsigned p : marked) {
    for (std::uint64_t from = 0; from < parts_[p].covered; from += kPiece)
      pieces.push_back({p, true, from, std::min(parts_[p].covered, from + kPiece)});
    const std::uint64_t vertices = bounds_[p + 1] - bounds_[p];
    for (std::uint64_t from = 0; from < vertices; from += kPiece)
      pieces.push_back({p, false, from, std::min(vertices, from + kPiece)});
  }
  in_parallel(pieces.size(), [&](std::uint64_t t) { fill_rows(graph, pieces[t]); });
  return marked.size();
}

void PartitionedMirror::start_rebuild(const RefGraph& graph, unsigned p) {
  Part& part = parts_[p];
  // Made before the old rows go, so its address differs and its GraphMirror uploads it whole.
  auto rows = std::make_unique<RefGraph>(graph.max_vertices(), graph.max_edges());
  const std::uint32_t lo = bounds_[p], hi = bounds_[p + 1];
  rows->grow_vertices(hi - lo);
  std::uint64_t first = graph.edge_count(), end = 0;
  for (std::uint32_t v = lo; v < hi; ++v)
    if (graph.degree(v) != 0) {
      first = std::min(first, graph.begin(v));
      end = std::max(end, graph.begin(v) + graph.degree(v));
    }
  part.rows = std::move(rows);
  part.base = end == 0 ? 0 : first;
  part.covered = 0;
  part.rebuild = false;
  if (end == 0) return;
  const auto slot = part.rows->reserve_edges(end - first);
  if (!slot || *slot != 0)
    throw DeviceError(fmt::format("partitioned mirror: partition {}'s host rows cannot hold its window of {} edge slots",
                                  p, end - first));
  part.covered = end - first;
}

void PartitionedMirror::fill_rows(const RefGraph& graph, const RowsPiece& piece) {
  Part& part = parts_[piece.partition];
  RefGraph& rows = *part.rows;
  if (piece.edges) {
    const ObjectId* edges = graph.edge_data() + part.base;
    for (std::uint64_t i = piece.from; i < piece.to; ++i) rows.set_edge(i, edges[i]);
    return;
  }
  const std::uint32_t lo = bounds_[piece.partition];
  for (std::uint64_t local = piece.from; local < piece.to; ++local) {
    const auto v = static_cast<ObjectId>(lo + local);
    const std::uint32_t degree = graph.degree(v);
    rows.assign_vertex(static_cast<ObjectId>(local), degree == 0 ? 0 : graph.begin(v) - part.base, degree);
  }
}

bool PartitionedMirror::extend(const RefGraph& graph, Part& part, std::uint64_t end) {
  const std::uint64_t wanted = end - part.base;
  if (wanted <= part.covered) return true;
  RefGraph& rows = *part.rows;
  if (wanted > rows.edge_count()) {
    const std::uint64_t have = rows.edge_count();
    const auto slot = rows.reserve_edges(wanted - have);
    if (!slot || *slot != have) return false;  // the rows' edge space did not grow at its end
  }
  const ObjectId* edges = graph.edge_data();
  for (std::uint64_t i = part.covered; i < wanted; ++i) rows.set_edge(i, edges[part.base + i]);
  part.covered = wanted;
  return true;
}

void PartitionedMirror::update_object(const RefGraph& graph, unsigned p, ObjectId v) {
  Part& part = parts_[p];
  if (part.rebuild) return;
  const std::uint32_t degree = graph.degree(v);
  const std::uint64_t begin = graph.begin(v);
  const ObjectId local = v - bounds_[p];
  if (degree == 0) {
    part.rows->assign_vertex(local, 0, 0);
    return;
  }
  if (part.covered == 0) part.base = begin;
  if (begin < part.base || !extend(graph, part, begin + degree)) {
    part.rebuild = true;
    return;
  }
  part.rows->assign_vertex(local, begin - part.base, degree);
}

PartitionedSyncStats PartitionedMirror::sync(const RefGraph& graph, GraphChanges* changes) {
  const Stopwatch clock;
  PartitionedSyncStats stats;
  const std::uint64_t vertex_count = graph.vertex_count();
  stats.cut = graph_ != &graph || changes == nullptr || changes->generation() != generation_ || bounds_.empty() ||
              vertex_count > 2 * std::max<std::uint64_t>(vertices_at_cut_, kSlotsPerBlock);
  if (stats.cut) {
    cut(graph);
    stats.rebuilt = partitions();
  } else {
    // Step 1: the heap's changes into the partitions' rows. Objects first (a window
    // that grows copies its new slots), then edge slots.
    const unsigned last = partitions() - 1;
    if (vertex_count > vertices_) {
      bounds_.back() = static_cast<std::uint32_t>(vertex_count);
      parts_[last].rows->grow_vertices(vertex_count - bounds_[last]);
    }
    changes->vertices.for_each_run(0, vertices_, [&](std::uint64_t from, std::uint64_t to) {
      for (std::uint64_t v = from; v < to; ++v) {
        const auto id = static_cast<ObjectId>(v);
        update_object(graph, partition_of(bounds_, id), id);
      }
    });
    for (std::uint64_t v = vertices_; v < vertex_count; ++v) update_object(graph, last, static_cast<ObjectId>(v));
    const ObjectId* edges = graph.edge_data();
    changes->edges.for_each_run(0, edges_, [&](std::uint64_t from, std::uint64_t to) {
      for (Part& part : parts_) {
        const std::uint64_t first = std::max(from, part.base);
        const std::uint64_t end = std::min(to, part.base + part.covered);
        for (std::uint64_t e = first; e < end; ++e) part.rows->set_edge(e - part.base, edges[e]);
      }
    });
    stats.rebuilt = rebuild_marked(graph);
  }
  if (changes != nullptr) {
    changes->clear();
    generation_ = changes->generation();
  }
  graph_ = &graph;
  vertices_ = vertex_count;
  edges_ = graph.edge_count();
  stats.rows_ms = clock.elapsed_ms();
  // Step 2: each partition's device copy from its rows.
  for (Part& part : parts_) stats.partitions.push_back(part.mirror->sync(*part.rows, &part.rows->changes()));
  stats.ms = clock.elapsed_ms();
  return stats;
}

}  // namespace gcvm
