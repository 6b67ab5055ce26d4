#include "gc/device/graph_mirror.hpp"

#include <algorithm>
#include <cstring>

#include "gc/util/stopwatch.hpp"

namespace gcvm {

namespace {

constexpr std::uint64_t kVertexBytes = sizeof(std::uint64_t) + sizeof(std::uint32_t);
constexpr std::uint64_t kEdgeBytes = sizeof(ObjectId);
constexpr std::uint64_t kPairBytes = 2 * sizeof(std::uint32_t);
constexpr std::uint64_t kRecordBytes = 2 * sizeof(std::uint32_t) + sizeof(std::uint64_t);
constexpr std::uint64_t kRunHeaderBytes = 3 * sizeof(std::uint64_t);
constexpr std::uint64_t kSegmentSlots = std::uint64_t{1} << 32;  // edge pairs hold 32-bit offsets

constexpr std::uint64_t align8(std::uint64_t bytes) { return (bytes + 7) / 8 * 8; }
constexpr std::uint64_t length(ElementRange r) { return r.end - r.begin; }

/// The changed runs of `bits` below `synced`, then the grown tail [synced, total),
/// merged with a run that ends where it starts.
std::vector<ElementRange> changed_runs(const ChangeBitmap& bits, std::uint64_t synced, std::uint64_t total) {
  std::vector<ElementRange> runs;
  bits.for_each_run(std::min(synced, total), [&](std::uint64_t b, std::uint64_t e) { runs.push_back({b, e}); });
  if (total > synced) {
    if (!runs.empty() && runs.back().end == synced)
      runs.back().end = total;
    else
      runs.push_back({synced, total});
  }
  return runs;
}

/// Calls visit(segment_base, range) for the parts of `ranges` in each 2^32-slot segment.
template <typename F>
void for_each_segment_part(const std::vector<ElementRange>& ranges, F&& visit) {
  for (ElementRange r : ranges)
    for (std::uint64_t b = r.begin; b < r.end;) {
      const std::uint64_t base = b / kSegmentSlots * kSegmentSlots;
      const std::uint64_t e = std::min(r.end, base + kSegmentSlots);
      visit(base, ElementRange{b, e});
      b = e;
    }
}

/// Byte offsets of every section of `plan`'s patch (MirrorPatchLayout), and where the
/// runs' values start.
struct PatchPlacement {
  MirrorPatchLayout layout;
  std::uint64_t values_offset = 0;
};

PatchPlacement place(const GraphMirror::Plan& plan) {
  PatchPlacement p;
  MirrorPatchLayout& l = p.layout;
  std::uint64_t at = 0;
  for_each_segment_part(plan.edge_pairs, [&](std::uint64_t base, ElementRange part) {
    if (l.edge_pairs.empty() || l.edge_pairs.back().base != base) l.edge_pairs.push_back({at, 0, base});
    l.edge_pairs.back().count += length(part);
    at += length(part) * kPairBytes;
  });
  l.records_offset = at;
  for (ElementRange r : plan.vertex_records) l.record_count += length(r);
  at += l.record_count * kRecordBytes;
  const std::uint64_t vertex_runs = plan.vertex_runs.size();
  for (MirrorArray array : {MirrorArray::Begin, MirrorArray::Degree, MirrorArray::Edges}) {
    const std::uint64_t count = array == MirrorArray::Edges ? plan.edge_runs.size() : vertex_runs;
    if (count == 0) continue;
    l.runs.push_back({array, at, count});
    at += count * kRunHeaderBytes;
  }
  p.values_offset = at;
  for (ElementRange r : plan.vertex_runs) at += length(r) * kVertexBytes;
  for (ElementRange r : plan.edge_runs) at += length(r) * kEdgeBytes;
  l.bytes = align8(at);
  return p;
}

}  // namespace

std::vector<std::pair<std::string, double>> MirrorSyncStats::details() const {
  auto count = [](std::uint64_t n) { return static_cast<double>(n); };
  return {
      {"sync_full", full ? 1.0 : 0.0},
      {"sync_changed_bytes", count(changed_bytes)},
      {"sync_bytes", count(bytes)},
      {"sync_direct_bytes", count(direct_bytes)},
      {"sync_direct_ranges", count(direct_ranges)},
      {"sync_patch_bytes", count(patch_bytes)},
      {"sync_edge_pairs", count(edge_pairs)},
      {"sync_vertex_records", count(vertex_records)},
      {"sync_patch_runs", count(patch_runs)},
      {"sync_pinned_bytes", count(pinned_bytes)},
      {"sync_plan_ms", plan_ms},
      {"sync_patch_buffer_ms", patch_buffer_ms},
      {"sync_fill_ms", fill_ms},
      {"sync_pack_ms", pack_ms},
      {"sync_ms", ms},
      {"sync_gbps", ms > 0 ? static_cast<double>(bytes) / (ms * 1e6) : 0.0},
  };
}

GraphMirror::Plan GraphMirror::plan(const RefGraph& graph, const GraphChanges& changes, std::uint64_t vertices,
                                    std::uint64_t edges) {
  Plan p;
  for (ElementRange r : changed_runs(changes.vertices, vertices, graph.vertex_count())) {
    const std::uint64_t bytes = length(r) * kVertexBytes;
    p.changed_bytes += bytes;
    if (bytes >= kDirectBytes) {
      p.direct[static_cast<int>(MirrorArray::Begin)].push_back(r);
      p.direct[static_cast<int>(MirrorArray::Degree)].push_back(r);
      p.direct_bytes += bytes;
    } else if (length(r) >= kVertexRunMin) {
      p.vertex_runs.push_back(r);
    } else {
      p.vertex_records.push_back(r);
    }
  }
  for (ElementRange r : changed_runs(changes.edges, edges, graph.edge_count())) {
    const std::uint64_t bytes = length(r) * kEdgeBytes;
    p.changed_bytes += bytes;
    if (bytes >= kDirectBytes) {
      p.direct[static_cast<int>(MirrorArray::Edges)].push_back(r);
      p.direct_bytes += bytes;
    } else if (length(r) >= kEdgeRunMin) {
      p.edge_runs.push_back(r);
    } else {
      p.edge_pairs.push_back(r);
    }
  }
  p.patch_bytes = place(p).layout.bytes;
  return p;
}

GraphMirror::Plan GraphMirror::full_plan(const RefGraph& graph) {
  Plan p;
  const ElementRange vertices{0, graph.vertex_count()};
  const ElementRange edges{0, graph.edge_count()};
  if (length(vertices) != 0) {
    p.direct[static_cast<int>(MirrorArray::Begin)].push_back(vertices);
    p.direct[static_cast<int>(MirrorArray::Degree)].push_back(vertices);
  }
  if (length(edges) != 0) p.direct[static_cast<int>(MirrorArray::Edges)].push_back(edges);
  p.changed_bytes = p.direct_bytes = length(vertices) * kVertexBytes + length(edges) * kEdgeBytes;
  return p;
}

MirrorPatchLayout GraphMirror::build_patch(const RefGraph& graph, const Plan& plan, MirrorSyncStats& stats) {
  const PatchPlacement placement = place(plan);
  const MirrorPatchLayout& layout = placement.layout;
  const Stopwatch buffer_clock;
  std::byte* buffer = backend_.patch_buffer(layout.bytes).data();
  stats.patch_buffer_ms = buffer_clock.elapsed_ms();
  const Stopwatch fill_clock;
  const std::uint64_t* begin = graph.begin_data();
  const std::uint32_t* degree = graph.degree_data();
  const ObjectId* edges = graph.edge_data();

  auto* pair = reinterpret_cast<std::uint32_t*>(buffer);
  for_each_segment_part(plan.edge_pairs, [&](std::uint64_t base, ElementRange part) {
    for (std::uint64_t e = part.begin; e < part.end; ++e) {
      *pair++ = static_cast<std::uint32_t>(e - base);
      *pair++ = edges[e];
    }
  });
  std::byte* record = buffer + layout.records_offset;
  for (ElementRange r : plan.vertex_records)
    for (std::uint64_t v = r.begin; v < r.end; ++v, record += kRecordBytes) {
      const std::uint32_t head[2] = {static_cast<std::uint32_t>(v), degree[v]};
      std::memcpy(record, head, sizeof(head));
      std::memcpy(record + sizeof(head), &begin[v], sizeof(std::uint64_t));
    }

  // Runs: headers per array, values after all headers, in the same order.
  std::uint64_t value_word = placement.values_offset / sizeof(std::uint32_t);
  auto* words = reinterpret_cast<std::uint32_t*>(buffer);
  auto put_run = [&](std::uint64_t*& header, std::uint64_t destination_word, const void* from, std::uint64_t count) {
    *header++ = destination_word;
    *header++ = value_word;
    *header++ = count;
    std::memcpy(words + value_word, from, count * sizeof(std::uint32_t));
    value_word += count;
  };
  for (const MirrorPatchLayout::Runs& runs : layout.runs) {
    auto* header = reinterpret_cast<std::uint64_t*>(buffer + runs.offset);
    if (runs.array == MirrorArray::Begin)
      for (ElementRange r : plan.vertex_runs) put_run(header, 2 * r.begin, begin + r.begin, 2 * length(r));
    else if (runs.array == MirrorArray::Degree)
      for (ElementRange r : plan.vertex_runs) put_run(header, r.begin, degree + r.begin, length(r));
    else
      for (ElementRange r : plan.edge_runs) put_run(header, r.begin, edges + r.begin, length(r));
  }
  stats.fill_ms = fill_clock.elapsed_ms();
  return layout;
}

MirrorSyncStats GraphMirror::sync(const RefGraph& graph, GraphChanges* changes) {
  const Stopwatch clock;
  MirrorSyncStats stats;
  graph.pin_with(backend_.host_pinner());
  const std::uint64_t vertex_count = graph.vertex_count();
  const std::uint64_t edge_count = graph.edge_count();
  const std::uint64_t full_bytes = vertex_count * kVertexBytes + edge_count * kEdgeBytes;
  bool full = graph_ != &graph || changes == nullptr || changes->generation() != generation_;
  const Stopwatch pack_clock;
  Plan plan;
  std::uint64_t changed_bytes = full_bytes;  // a mirror with no usable change record: all of it is new
  if (!full) {
    // Counting the changes costs a popcount per marked word; planning costs a step per
    // run. So whether a full upload is cheaper is decided before any run is visited.
    const std::uint64_t synced_vertices = std::min(vertices_, vertex_count);
    const std::uint64_t synced_edges = std::min(edges_, edge_count);
    changed_bytes = (changes->vertices.count(synced_vertices) + vertex_count - synced_vertices) * kVertexBytes +
                    (changes->edges.count(synced_edges) + edge_count - synced_edges) * kEdgeBytes;
    full = changed_bytes > full_bytes / 2;
    if (!full) plan = GraphMirror::plan(graph, *changes, vertices_, edges_);
  }
  if (full) plan = full_plan(graph);
  stats.plan_ms = pack_clock.elapsed_ms();
  backend_.reserve_graph(vertex_count, edge_count, full ? 0 : vertices_, full ? 0 : edges_);
  backend_.upload_ranges(MirrorArray::Begin, graph.begin_data(), plan.direct[static_cast<int>(MirrorArray::Begin)]);
  backend_.upload_ranges(MirrorArray::Degree, graph.degree_data(), plan.direct[static_cast<int>(MirrorArray::Degree)]);
  backend_.upload_ranges(MirrorArray::Edges, graph.edge_data(), plan.direct[static_cast<int>(MirrorArray::Edges)]);
  if (plan.patch_bytes != 0) {
    const MirrorPatchLayout layout = build_patch(graph, plan, stats);
    backend_.apply_patch(layout);
    stats.vertex_records = layout.record_count;
    for (const MirrorPatchLayout::Runs& runs : layout.runs) stats.patch_runs += runs.count;
    for (const MirrorPatchLayout::Pairs& pairs : layout.edge_pairs) stats.edge_pairs += pairs.count;
  }
  stats.pack_ms = pack_clock.elapsed_ms();
  backend_.finish_sync();
  if (changes != nullptr) {
    changes->clear();
    generation_ = changes->generation();
  }
  graph_ = &graph;
  vertices_ = vertex_count;
  edges_ = edge_count;
  stats.full = full;
  stats.changed_bytes = changed_bytes;
  stats.direct_bytes = plan.direct_bytes;
  stats.patch_bytes = plan.patch_bytes;
  stats.bytes = plan.direct_bytes + plan.patch_bytes;
  for (const auto& ranges : plan.direct) stats.direct_ranges += ranges.size();
  stats.pinned_bytes = graph.pinned_bytes();
  stats.ms = clock.elapsed_ms();
  return stats;
}

}  // namespace gcvm
