#include "gc/device/graph_mirror.hpp"

#include <algorithm>
#include <utility>

#include "gc/markers/marker.hpp"
#include "gc/util/stopwatch.hpp"

namespace gcvm {

namespace {

constexpr std::uint64_t kVertexBytes = MirrorPlan::kVertexBytes;
constexpr std::uint64_t kEdgeBytes = MirrorPlan::kEdgeBytes;
/// The most bytes of direct ranges a sync gathers into one batch while it plans.
constexpr std::uint64_t kMostBatchBytes = 4 * MirrorPlan::kPieceBytes;

/// Records, at a sync's first copy, how long after its start (`clock`) it was issued.
void note_first_copy(MirrorSyncStats& stats, const Stopwatch& clock) {
  if (stats.first_copy_ms == 0) stats.first_copy_ms = clock.elapsed_ms();
}

}  // namespace

std::vector<std::pair<std::string, double>> MirrorSyncStats::details() const {
  auto count = [](std::uint64_t n) { return static_cast<double>(n); };
  std::vector<std::pair<std::string, double>> details;
  append_details(details, {
      {"sync_full", full ? 1.0 : 0.0},
      {"sync_changed_bytes", count(changed_bytes)},
      {"sync_handed_over_bytes", count(handed_over_bytes)},
      {"sync_bytes", count(bytes)},
      {"sync_direct_bytes", count(direct_bytes)},
      {"sync_direct_ranges", count(direct_ranges)},
      {"sync_patch_bytes", count(patch_bytes)},
      {"sync_edge_pairs", count(edge_pairs)},
      {"sync_vertex_records", count(vertex_records)},
      {"sync_patch_runs", count(patch_runs)},
      {"sync_patch_pieces", count(patch_pieces)},
      {"sync_patch_parts", count(patch_parts)},
      {"sync_threads", count(threads)},
      {"sync_pinned_bytes", count(pinned_bytes)},
      {"sync_plan_ms", plan_ms},
      {"sync_patch_buffer_ms", patch_buffer_ms},
      {"sync_fill_ms", fill_ms},
      {"sync_pack_ms", pack_ms},
      {"sync_first_copy_ms", first_copy_ms},
      {"sync_wait_ms", wait_ms},
      {"sync_ms", ms},
      {"sync_waited", waited ? 1.0 : 0.0},
      {"sync_gbps", waited && ms > 0 ? static_cast<double>(bytes) / (ms * 1e6) : 0.0},
  });
  return details;
}

MirrorSyncStats& MirrorSyncStats::operator+=(const MirrorSyncStats& other) {
  full = full || other.full;
  changed_bytes += other.changed_bytes;
  handed_over_bytes += other.handed_over_bytes;
  bytes += other.bytes;
  direct_bytes += other.direct_bytes;
  direct_ranges += other.direct_ranges;
  patch_bytes += other.patch_bytes;
  edge_pairs += other.edge_pairs;
  vertex_records += other.vertex_records;
  patch_runs += other.patch_runs;
  patch_pieces += other.patch_pieces;
  patch_parts += other.patch_parts;
  threads = std::max(threads, other.threads);
  pinned_bytes += other.pinned_bytes;
  plan_ms += other.plan_ms;
  patch_buffer_ms += other.patch_buffer_ms;
  fill_ms += other.fill_ms;
  pack_ms += other.pack_ms;
  first_copy_ms = std::max(first_copy_ms, other.first_copy_ms);
  wait_ms += other.wait_ms;
  ms += other.ms;
  waited = waited && other.waited;
  return *this;
}

MirrorRefreshStats& MirrorRefreshStats::operator+=(const MirrorRefreshStats& other) {
  passes += other.passes;
  bytes += other.bytes;
  changed_bytes += other.changed_bytes;
  handed_over += other.handed_over;
  busy_ms += other.busy_ms;
  return *this;
}

std::vector<std::pair<std::string, double>> MirrorRefreshStats::details() const {
  auto count = [](std::uint64_t n) { return static_cast<double>(n); };
  std::vector<std::pair<std::string, double>> details;
  append_details(details, {
      {"sync_refresh_passes", count(passes)},
      {"sync_refresh_bytes", count(bytes)},
      {"sync_refresh_changed_bytes", count(changed_bytes)},
      {"sync_refresh_handed_over", count(handed_over)},
      {"sync_refresh_ms", busy_ms},
  });
  return details;
}

GraphMirror::GraphMirror(DeviceBackend& backend) : backend_(backend) {}

GraphMirror::~GraphMirror() = default;

MirrorSyncStats GraphMirror::sync(const RefGraph& graph, GraphChanges* changes, SyncEnd end, ThreadPool* threads) {
  try {
    return sync_changes(graph, changes, end, threads);
  } catch (...) {
    forget();
    throw;
  }
}

void GraphMirror::forget() {
  graph_ = nullptr;
  vertices_ = edges_ = 0;
  refresh_handed_over_ = false;
}

MirrorSyncStats GraphMirror::sync_changes(const RefGraph& graph, GraphChanges* changes, SyncEnd end,
                                          ThreadPool* threads) {
  const Stopwatch clock;
  MirrorSyncStats stats;
  graph.pin_with(backend_.host_pinner());
  const std::uint64_t vertex_count = graph.vertex_count();
  const std::uint64_t edge_count = graph.edge_count();
  const std::uint64_t full_bytes = vertex_count * kVertexBytes + edge_count * kEdgeBytes;
  bool full = graph_ != &graph || changes == nullptr || changes->generation() != generation_;
  // A refresh pass the pause stopped before it sent anything left its plan here: its
  // entries' change bits are taken, so this sync sends it (unless it uploads everything).
  const bool handed_over = std::exchange(refresh_handed_over_, false) && !full;
  const MirrorPlan& held = refresh_plan_;
  const Stopwatch pack_clock;
  MirrorPlan& plan = plan_;
  std::uint64_t changed_bytes = full_bytes;  // a mirror with no usable change record: all of it is new
  ThreadPool* pool = nullptr;
  std::uint64_t streamed_bytes = 0, streamed_ranges = 0;  // direct ranges sent while planning
  if (!full) {
    const std::uint64_t held_entries = handed_over ? std::min(held.changed_bytes / kEdgeBytes, kParallelEntries) : 0;
    const std::uint64_t wanted = kParallelEntries - held_entries;
    const std::uint64_t vertices = changes->vertices.count_up_to(wanted);
    if (vertices >= wanted || changes->edges.count_up_to(wanted - vertices) >= wanted - vertices) {
      if (threads == nullptr && !pool_) pool_ = std::make_unique<ThreadPool>(0);
      pool = threads != nullptr ? threads : pool_.get();
    }
    // The device arrays first, so that the slices' direct ranges cross the link as they
    // are planned, while the rest is planned; the handed-over plan before planning, so
    // that its copies cross the link meanwhile.
    backend_.reserve_graph(vertex_count, edge_count, vertices_, edges_);
    if (handed_over) send(graph, held, pool, GraphAccess::Exclusive, stats, /*send_direct=*/true, clock);
    // The slices' direct ranges gather (joined where adjacent) into batches, each one
    // driver call per array: a slice's ranges alone would cost a call each, about as long
    // as the link takes to carry them. The first batch goes at a piece's bytes, so that
    // the link starts early; each later one waits until it holds as many bytes as went
    // before it (planning outpaces the link, which carries those meanwhile), up to
    // kMostBatchBytes: the link idles a few microseconds between two calls' copies
    // (H200: 7 copies of 2.1 MB took 4.3 µs a copy longer in 7 calls than in one).
    std::uint64_t batched_bytes = 0, sent_bytes = 0;
    auto send_batch = [&] {
      auto& [vertex_ranges, edge_ranges] = direct_batch_;
      if (!vertex_ranges.empty() || !edge_ranges.empty()) note_first_copy(stats, clock);
      if (!vertex_ranges.empty()) {
        backend_.upload_ranges(MirrorArray::Begin, graph.begin_data(), vertex_ranges);
        backend_.upload_ranges(MirrorArray::Degree, graph.degree_data(), vertex_ranges);
      }
      if (!edge_ranges.empty()) backend_.upload_ranges(MirrorArray::Edges, graph.edge_data(), edge_ranges);
      vertex_ranges.clear();
      edge_ranges.clear();
      sent_bytes += batched_bytes;
      batched_bytes = 0;
    };
    plan_mirror_sync(graph, *changes, vertices_, edges_, pool, plan, [&](const MirrorPlan::Slice& slice) {
      if (slice.direct.empty()) return;
      append_joined(slice.edges ? direct_batch_.second : direct_batch_.first, slice.direct);
      for (const ElementRange r : slice.direct)
        batched_bytes += (r.end - r.begin) * (slice.edges ? kEdgeBytes : kVertexBytes);
      streamed_ranges += slice.direct.size();
      if (batched_bytes >= std::clamp(sent_bytes, MirrorPlan::kPieceBytes, kMostBatchBytes)) send_batch();
    });
    send_batch();
    streamed_bytes = plan.direct_bytes;
    changed_bytes = plan.changed_bytes;
    // Planning counts the changes on the way, on every thread, so whether the whole
    // graph is cheaper is known only after it: then what was not sent yet goes by DMA
    // too, where the patch would pack over half of the graph.
    full = changed_bytes > full_bytes / 2;
    if (full) plan_mirror_upload_rest(graph, plan);
  } else {
    plan_mirror_upload(graph, plan);
    backend_.reserve_graph(vertex_count, edge_count, 0, 0);
  }
  stats.plan_ms = pack_clock.elapsed_ms();
  // A plan's direct ranges were sent as it was made; a whole upload's (or its rest) not.
  send(graph, plan, pool, GraphAccess::Exclusive, stats, /*send_direct=*/full, clock);
  stats.pack_ms = pack_clock.elapsed_ms();
  std::uint64_t direct_bytes = full ? plan.direct_bytes + streamed_bytes : plan.direct_bytes;
  std::uint64_t patch_bytes = plan.patch_bytes;
  if (handed_over) {
    changed_bytes += held.changed_bytes;
    direct_bytes += held.direct_bytes;
    patch_bytes += held.patch_bytes;
    streamed_ranges += held.direct_range_count();
    stats.handed_over_bytes = held.changed_bytes;
  }
  // The change record is cleared while the link still carries the copies (clearing
  // churn_array's dense change took about a millisecond after the wait, GCBench's
  // 40 µs); should the device fail meanwhile, the mirror forgets what it holds and the
  // next sync uploads everything.
  if (changes != nullptr) {
    changes->clear();
    generation_ = changes->generation();
  }
  stats.waited = end == SyncEnd::Wait || direct_bytes != 0;
  if (stats.waited) {
    const Stopwatch wait_clock;
    backend_.finish_sync();
    stats.wait_ms = wait_clock.elapsed_ms();
  }
  graph_ = &graph;
  vertices_ = vertex_count;
  edges_ = edge_count;
  stats.full = full;
  stats.threads = pool != nullptr ? pool->size() : 1;
  stats.changed_bytes = changed_bytes;
  stats.direct_bytes = direct_bytes;
  stats.patch_bytes = patch_bytes;
  stats.bytes = direct_bytes + patch_bytes;
  stats.direct_ranges = streamed_ranges;
  if (full) stats.direct_ranges += plan.direct_range_count();
  stats.pinned_bytes = graph.pinned_bytes();
  stats.ms = clock.elapsed_ms();
  return stats;
}

void GraphMirror::send(const RefGraph& graph, const MirrorPlan& plan, ThreadPool* pool, GraphAccess access,
                       MirrorSyncStats& stats, bool send_direct, const Stopwatch& clock) {
  // The patch goes in parts of whole pieces that fit the backend's page-locked buffer
  // (the whole patch when it fits, or when not even a piece would: then it is staged).
  const std::uint64_t capacity = backend_.patch_buffer_capacity();
  const bool whole = plan.patch_bytes <= capacity || capacity < plan.piece_bytes;
  auto part_end = [&](std::uint64_t first) {
    if (whole) return static_cast<std::uint64_t>(plan.pieces.size());
    const std::uint64_t from = plan.pieces[first].offset;
    std::uint64_t end = first + 1;  // a piece alone larger than the buffer is staged
    while (end < plan.pieces.size() && plan.pieces[end].offset + plan.pieces[end].layout.bytes - from <= capacity) ++end;
    return end;
  };
  auto part_bytes = [&](std::uint64_t first, std::uint64_t end) {
    return plan.pieces[end - 1].offset + plan.pieces[end - 1].layout.bytes - plan.pieces[first].offset;
  };
  // The first part's buffer first (getting it waits for the device's queue), then the
  // direct runs, so that they cross the link while the patch is packed.
  std::byte* buffer = nullptr;
  std::uint64_t first = 0, end = 0;
  auto next_part = [&] {
    end = part_end(first);
    const Stopwatch buffer_clock;
    buffer = backend_.patch_buffer(part_bytes(first, end)).data();
    stats.patch_buffer_ms += buffer_clock.elapsed_ms();
  };
  if (plan.patch_bytes != 0) next_part();
  if (end < plan.pieces.size()) backend_.want_patch_buffer(plan.patch_bytes);
  if (send_direct) {
    if (plan.direct_bytes != 0) note_first_copy(stats, clock);
    auto direct = [&](MirrorArray array) { return std::span(plan.direct[static_cast<int>(array)]); };
    backend_.upload_ranges(MirrorArray::Begin, graph.begin_data(), direct(MirrorArray::Begin));
    backend_.upload_ranges(MirrorArray::Degree, graph.degree_data(), direct(MirrorArray::Degree));
    backend_.upload_ranges(MirrorArray::Edges, graph.edge_data(), direct(MirrorArray::Edges));
  }
  if (plan.patch_bytes != 0) {
    // Each piece crosses the link as soon as it is written, while the next are packed.
    const Stopwatch fill_clock;
    const double first_buffer_ms = stats.patch_buffer_ms;
    for (;;) {
      const std::uint64_t from = plan.pieces[first].offset;
      fill_mirror_patch_pieces(graph, plan, first, end, buffer, pool, access, [&](const MirrorPlan::Piece& piece) {
        note_first_copy(stats, clock);
        backend_.apply_patch(piece.layout, piece.offset - from);
      });
      ++stats.patch_parts;
      first = end;
      if (first == plan.pieces.size()) break;
      next_part();
    }
    stats.fill_ms += fill_clock.elapsed_ms() - (stats.patch_buffer_ms - first_buffer_ms);
    stats.patch_pieces += plan.pieces.size();
    for (const MirrorPlan::Piece& piece : plan.pieces) {
      stats.vertex_records += piece.layout.record_count;
      for (const MirrorPatchLayout::Runs& runs : piece.layout.runs) stats.patch_runs += runs.count;
      for (const MirrorPatchLayout::Pairs& pairs : piece.layout.edge_pairs) stats.edge_pairs += pairs.count;
    }
  }
}

MirrorRefreshStats GraphMirror::refresh(const RefGraph& graph, GraphChanges& changes, const std::atomic<bool>& stop) {
  MirrorRefreshStats stats;
  const bool adopting = graph_ == nullptr;
  if (&changes != &graph.changes() || (!adopting && (graph_ != &graph || changes.generation() != generation_)))
    return stats;
  const Stopwatch clock;
  // Published sizes first: everything below them is initialised, and every later
  // write to it marks its bit (ref_graph.hpp).
  const std::uint64_t vertex_count = std::max(graph.published_vertex_count(), vertices_);
  const std::uint64_t edge_count = std::max(graph.published_edge_count(), edges_);
  MirrorPlan& plan = refresh_plan_;
  // A plan handed over to a pause that did not sync (a pause that marked on the CPU):
  // its bits are marked again, and this pass takes them anew.
  if (std::exchange(refresh_handed_over_, false)) restore_mirror_plan(plan, changes);
  plan_mirror_refresh(changes, vertices_, edges_, plan, &stop, kParallelEntries);
  if (plan.changed_bytes == 0 && vertex_count == vertices_ && edge_count == edges_) return stats;
  // A pause began before anything was sent: the plan, however far it got, goes with the
  // pause's sync, which packs it on the pause's threads and plans only the rest (the
  // growth it finds itself).
  if (stop.load(std::memory_order_acquire)) {
    refresh_handed_over_ = true;
    stats.handed_over = 1;
    return stats;
  }
  add_mirror_growth(changes, {vertices_, vertex_count}, {edges_, edge_count}, plan);
  try {
    backend_.reserve_graph(vertex_count, edge_count, vertices_, edges_);
    MirrorSyncStats sent;
    send(graph, plan, nullptr, GraphAccess::SharedWithMutator, sent, true, clock);
    backend_.finish_sync();
  } catch (...) {
    forget();
    throw;
  }
  if (adopting) {
    graph_ = &graph;
    generation_ = changes.generation();
  }
  vertices_ = vertex_count;
  edges_ = edge_count;
  stats.passes = 1;
  stats.bytes = plan.direct_bytes + plan.patch_bytes;
  stats.changed_bytes = plan.changed_bytes;
  stats.busy_ms = clock.elapsed_ms();
  return stats;
}

}  // namespace gcvm
