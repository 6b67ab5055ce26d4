// What one sync of the device mirror sends (gc/device/graph_mirror.hpp), and the
// packing of its patch: the mechanism; GraphMirror decides when to use it.
//
// The graph's index spaces (vertices, edges) are cut into slices of whole change-bitmap
// chunks (heapgraph/change_bitmap.hpp), never crossing a 2^32-edge segment (edge pairs
// hold 32-bit offsets). Each slice is planned, and later packed, on its own, so both
// steps run on every thread of a pool when many entries changed; with one thread the
// result is the same plan. Within a slice, each maximal run of changed entries goes as
// below; but runs close together are gathered, in index order, into clusters whose span
// holds at most twice the entries they changed, and a cluster of several runs whose
// span reaches kDirectBytes goes by DMA as one range, the unchanged entries between its
// runs with it: a burst of allocation into a heap's freed slots changes about half the
// entries of long stretches, in short runs, which then cross the link at its speed
// instead of being packed by the hundred thousand. (Smaller clusters go run by run:
// packing the unchanged entries between them cost the host more than the headers it
// saved.) A sync does not even find the runs of such stretches: a stretch of whole
// change-bitmap chunks that stays at least half changed and spans kDirectBytes or more
// from its first change to its last is found by the chunks' popcounts
// (ChangeBitmap::for_each_run_or_dense) and planned as one run that changed as many
// entries as it has set bits, so dense change costs a popcount a bitmap word instead of
// a step a run (a refresh takes its bits run by run, to restore them exactly). A run goes
//   - by DMA from the host array when it is at least kDirectBytes long;
//   - else as a packed run (a 24-byte header and its values) when it is at least
//     kEdgeRunMin edges or kVertexRunMin vertices long;
//   - else entry by entry: an edge as an (offset, value) pair of 8 bytes, a vertex as a
//     (vertex, degree, begin) record of 16 bytes.
// Runs and clusters are cut at slice boundaries; adjacent direct ranges are joined
// again. A run's encoding costs at most twice the bytes of the entries it carries (a
// pair 8 for 4, a record 16 for 12, a packed run at least 32 bytes of values under its
// 24-byte header), and so does a cluster's range, so a plan sends at most twice its
// changed bytes plus a section table per piece of the patch (below): a fixed header of
// MirrorPatchLayout::section_table_bytes(segments) bytes, 88 and 16 more per 2^32-slot
// edge segment that has pairs, so at most 104 for a graph of fewer than 2^32 edges; a
// plan with nothing to pack sends no patch and no table.
//
// Pieces. The patch is cut between slices into pieces of about `piece_bytes` (a slice is
// never cut; a plan of fewer bytes has one piece), each a patch of its own, one after
// another in the buffer: fill_mirror_patch hands each piece to its caller as soon as its
// slices are written, so that it crosses the link and is applied while the next ones
// are packed (the pieces' slices are taken in index order). A piece's layout
// (MirrorPatchLayout; kernels/common/patch_layout.h describes it and memory_ops.h
// applies it, in one launch), with offsets from the piece's start: the section table;
// the edge pairs of its slices in index order, grouped by segment; the vertex records;
// the run headers for Begin, Degree and Edges; then the runs' values in the order of
// their headers. `place` computes where each slice writes, so slices fill disjoint parts
// of the buffer; fill_mirror_patch writes each piece's table from its layout.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "gc/device/device_backend.hpp"
#include "heapgraph/ref_graph.hpp"

namespace gcvm {

class ThreadPool;

struct MirrorPlan {
  /// Bytes of one graph entry on the link: a vertex (begin and degree), an edge.
  static constexpr std::uint64_t kVertexBytes = sizeof(std::uint64_t) + sizeof(std::uint32_t);
  static constexpr std::uint64_t kEdgeBytes = sizeof(ObjectId);
  /// Runs of at least this many bytes go by DMA from the host arrays; shorter ones are
  /// packed (a DMA costs microseconds to issue, about as long as packing this much).
  static constexpr std::uint64_t kDirectBytes = std::uint64_t{64} << 10;
  /// Edge runs of at least this many slots are packed as runs (24-byte header), shorter
  /// ones as pairs (8 bytes a slot); vertex runs likewise, against 16-byte records.
  static constexpr std::uint64_t kEdgeRunMin = 8;
  static constexpr std::uint64_t kVertexRunMin = 4;
  /// The pieces' size: a piece's copy takes about 40 µs at the link's speed, against
  /// about 5 µs to issue it and its launch.
  static constexpr std::uint64_t kPieceBytes = std::uint64_t{2} << 20;

  /// The packed changes of one slice of the vertex or the edge index space, and where
  /// they go in the patch.
  struct Slice {
    std::vector<ElementRange> vertex_runs;
    std::vector<ElementRange> vertex_records;
    std::vector<ElementRange> edge_runs;
    std::vector<ElementRange> edge_pairs;
    std::uint64_t segment_base = 0;  // of the 2^32-edge segment an edge slice lies in
    std::vector<ElementRange> direct;  // found while planning, before they are joined
    std::vector<ElementRange> taken;   // a refresh's changed runs, as taken (restore_mirror_plan)
    bool edges = false;                // a slice of the edge index space
    std::uint64_t changed_bytes = 0;   // likewise
    std::uint64_t pair_entries = 0;    // entries in edge_pairs, vertex_records, vertex_runs, edge_runs
    std::uint64_t record_entries = 0;
    std::uint64_t vertex_run_entries = 0;
    std::uint64_t edge_run_entries = 0;
    // Placement (filled by the plan): the piece it is packed in; from that piece's
    // start, byte offsets of the first pair and record, index of the first run header
    // of each kind, and 32-bit word of the first run value.
    std::uint64_t piece = 0;
    std::uint64_t pair_offset = 0;
    std::uint64_t record_offset = 0;
    std::uint64_t first_vertex_run = 0;
    std::uint64_t first_edge_run = 0;
    std::uint64_t begin_value_word = 0;
    std::uint64_t degree_value_word = 0;
    std::uint64_t edge_value_word = 0;
  };

  /// Consecutive slices whose packed changes form one patch, at `offset` in the buffer.
  struct Piece {
    std::uint64_t first_slice = 0;
    std::uint64_t end_slice = 0;
    std::uint64_t offset = 0;
    MirrorPatchLayout layout;  // offsets from the piece's start; layout.bytes: its size
  };

  std::vector<ElementRange> direct[3];  // per MirrorArray, joined where adjacent
  std::vector<Slice> slices;            // vertex slices, then edge slices, in index order; some empty
  std::vector<Piece> pieces;            // of the packed patch, in buffer order; none without a patch
  std::uint64_t piece_bytes = kPieceBytes;  // kept by reset: the size planning aims at
  std::uint64_t changed_bytes = 0;
  std::uint64_t direct_bytes = 0;
  std::uint64_t patch_bytes = 0;  // the pieces', summed

  /// Totals over the slices, in entries.
  std::uint64_t edge_pair_count() const;
  std::uint64_t vertex_record_count() const;
  std::uint64_t edge_run_count() const;
  std::uint64_t vertex_run_count() const;
  /// The direct ranges of all three arrays.
  std::uint64_t direct_range_count() const;
  /// The pieces' section tables' bytes, summed.
  std::uint64_t table_bytes() const;

  /// Empties the plan for `slice_count` slices, keeping every vector's capacity.
  void reset(std::uint64_t slice_count);
};

/// Appends `ranges` to `to`, joining a range that starts where the last one ends.
void append_joined(std::vector<ElementRange>& to, std::span<const ElementRange> ranges);

/// Plans into `plan` (its old contents dropped, its vectors' capacity kept: a mirror
/// reuses one plan, so that a sync of millions of changes allocates no memory) the
/// changes of `graph` (its change record `changes`) against a device that holds its
/// first `vertices` and `edges` entries; what the graph grew by beyond them counts as
/// changed. `pool` (may be null) plans the slices in parallel. Calls `planned(slice)` on
/// the calling thread for every slice, in index order, once it is planned (while the
/// pool's workers plan later ones): its direct ranges (Slice::direct, not yet joined
/// across slices) may cross the link while the rest is planned.
void plan_mirror_sync(const RefGraph& graph, const GraphChanges& changes, std::uint64_t vertices, std::uint64_t edges,
                      ThreadPool* pool, MirrorPlan& plan,
                      const std::function<void(const MirrorPlan::Slice&)>& planned = {});
/// Turns a sync's `plan` of `graph`, whose direct ranges were sent as it was planned,
/// into the rest of a whole upload: every entry outside those ranges, as direct ranges,
/// and no patch (its changed_bytes kept).
void plan_mirror_upload_rest(const RefGraph& graph, MirrorPlan& plan);
/// A background refresh's plan (gc/device/mirror_refresher.hpp): the changes of
/// [0, vertices) and [0, edges), entries the device already holds, taken from `changes`
/// (ChangeBitmap::take_runs) while the mutator may go on marking; on this thread, in
/// slices sized as for a sync on every hardware thread (so that a plan handed to a
/// pause's sync packs on the pause's threads). The stop flag `stop` (may be null) is
/// read every 16,384 entries: once it is raised, the entries not yet planned are
/// skipped, their bits left where they are, so a pause that begins meanwhile waits for
/// 16,384 entries' planning at most before the pass hands what it planned to the
/// pause's sync (GraphMirror::refresh). Once the slices planned hold `most_entries`
/// changed entries or more, the rest are skipped likewise, for the next pass: a pass
/// that takes a burst of stores in parts sends each part while the program goes on.
/// Says how it ended.
enum class RefreshPlanEnd { Whole, Enough, Stopped };
RefreshPlanEnd plan_mirror_refresh(GraphChanges& changes, std::uint64_t vertices, std::uint64_t edges,
                                   MirrorPlan& plan, const std::atomic<bool>* stop = nullptr,
                                   std::uint64_t most_entries = UINT64_MAX);
/// Adds to a refresh's `plan` what the graph grew by beyond the entries the device
/// holds, `vertices` and `edges` (from what the device holds to what the graph has
/// published, RefGraph::published_vertex_count), as direct ranges: their change bits
/// are taken from the first chunk boundary in them on (the values go whole); the device
/// arrays must be reserved for them.
void add_mirror_growth(GraphChanges& changes, ElementRange vertices, ElementRange edges, MirrorPlan& plan);
/// Marks again in `changes` every change bit a refresh's `plan` took (and not the
/// unchanged entries it would have sent with them): a refresh plan that is never sent
/// leaves the change record as if it had never been made.
void restore_mirror_plan(const MirrorPlan& plan, GraphChanges& changes);
/// The whole graph as direct ranges, into `plan` likewise.
void plan_mirror_upload(const RefGraph& graph, MirrorPlan& plan);

/// Whether the mutator may store into the graph while a patch is filled (a background
/// refresh): then its entries are read with atomic loads.
enum class GraphAccess { Exclusive, SharedWithMutator };

/// Writes pieces [first_piece, end_piece) of `plan`'s patch into `buffer`, which holds
/// them from the first one's offset on (a piece's bytes go to buffer + piece.offset -
/// plan.pieces[first_piece].offset): each piece's section table, then the packed
/// changes, the slices in parallel on `pool` (may be null), taken in index order. Calls
/// `filled(piece)` on the calling thread for every piece, in order, once the piece is
/// written: while the slices of later pieces are written where the pool's workers are
/// still at them, the rest after. An exception from `filled` ends the calls and is
/// thrown again once every slice is written.
void fill_mirror_patch_pieces(const RefGraph& graph, const MirrorPlan& plan, std::uint64_t first_piece,
                              std::uint64_t end_piece, std::byte* buffer, ThreadPool* pool, GraphAccess access,
                              const std::function<void(const MirrorPlan::Piece&)>& filled);
/// The whole patch (plan.patch_bytes bytes) into `buffer`, as above.
inline void fill_mirror_patch(const RefGraph& graph, const MirrorPlan& plan, std::byte* buffer, ThreadPool* pool,
                              GraphAccess access = GraphAccess::Exclusive,
                              const std::function<void(const MirrorPlan::Piece&)>& filled = {}) {
  fill_mirror_patch_pieces(graph, plan, 0, plan.pieces.size(), buffer, pool, access, filled);
}

}  // namespace gcvm
