#include "gc/device/graph_mirror.hpp"

#include <algorithm>

#include "gc/util/stopwatch.hpp"

namespace gcvm {

namespace {

constexpr std::uint64_t kBytesPerVertex = sizeof(std::uint64_t) + sizeof(std::uint32_t);

/// Appends [begin, end) of a host array of `Word`s to the patch as 32-bit words.
template <typename Word>
void append_range(MirrorPatch& patch, std::vector<MirrorRange>& ranges, const Word* host, IndexRange range) {
  constexpr std::uint64_t kWordsPer = sizeof(Word) / sizeof(std::uint32_t);
  const std::uint64_t words = (range.end - range.begin) * kWordsPer;
  const auto* from = reinterpret_cast<const std::uint32_t*>(host + range.begin);
  ranges.push_back({range.begin * kWordsPer, patch.packed.size(), words});
  patch.packed.insert(patch.packed.end(), from, from + words);
}

/// Dirty ranges plus the grown tail [old_end, end), merged where they touch.
std::vector<IndexRange> with_growth(std::vector<IndexRange> ranges, std::uint64_t old_end, std::uint64_t end) {
  if (old_end < end) {
    while (!ranges.empty() && ranges.back().end >= old_end) {
      old_end = std::min(old_end, ranges.back().begin);
      ranges.pop_back();
    }
    ranges.push_back({old_end, end});
  }
  return ranges;
}

}  // namespace

GraphMirror::Changes GraphMirror::changes(const RefGraph& graph, const DirtyRanges& dirty) const {
  Changes c;
  c.vertices = with_growth(dirty.vertex_ranges(graph.vertex_count()), vertices_, graph.vertex_count());
  c.edges = with_growth(dirty.edge_ranges(graph.edge_count()), edges_, graph.edge_count());
  for (const IndexRange r : c.vertices) c.bytes += (r.end - r.begin) * kBytesPerVertex;
  for (const IndexRange r : c.edges) c.bytes += (r.end - r.begin) * sizeof(ObjectId);
  return c;
}

MirrorPatch GraphMirror::build_patch(const RefGraph& graph, const Changes& changes) const {
  MirrorPatch patch;
  patch.packed.reserve(changes.bytes / sizeof(std::uint32_t));
  for (const IndexRange r : changes.vertices) {
    append_range(patch, patch.begin_ranges, graph.begin_data(), r);
    append_range(patch, patch.degree_ranges, graph.degree_data(), r);
  }
  for (const IndexRange r : changes.edges) append_range(patch, patch.edge_ranges, graph.edge_data(), r);
  return patch;
}

MirrorSyncStats GraphMirror::sync(const RefGraph& graph, DirtyRanges* dirty) {
  const Stopwatch clock;
  MirrorSyncStats stats;
  const std::uint64_t vertex_count = graph.vertex_count();
  const std::uint64_t edge_count = graph.edge_count();
  const bool kept = backend_.reserve_graph(vertex_count, edge_count);
  const std::uint64_t full_bytes = vertex_count * kBytesPerVertex + edge_count * sizeof(ObjectId);
  bool full = !kept || graph_ != &graph || dirty == nullptr;
  MirrorPatch patch;
  if (!full) {
    // Decide from the ranges' sizes before packing anything.
    const Changes changed = changes(graph, *dirty);
    full = changed.bytes > full_bytes / 2;
    if (!full) patch = build_patch(graph, changed);
  }
  if (full) {
    backend_.upload_graph(graph.begin_data(), graph.degree_data(), graph.edge_data(), vertex_count, edge_count);
    stats.bytes = full_bytes;
    stats.ranges = 3;
  } else if (!patch.packed.empty()) {
    backend_.patch_graph(patch);
    stats.bytes = patch.packed.size() * sizeof(std::uint32_t);
    stats.ranges = patch.begin_ranges.size() + patch.degree_ranges.size() + patch.edge_ranges.size();
  }
  if (dirty != nullptr) dirty->clear();
  graph_ = &graph;
  vertices_ = vertex_count;
  edges_ = edge_count;
  stats.full = full;
  stats.ms = clock.elapsed_ms();
  return stats;
}

}  // namespace gcvm
