#include "gc/device/mirror_plan.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <span>
#include <thread>

#include "gc/util/thread_pool.hpp"

namespace gcvm {

namespace {

constexpr std::uint64_t kVertexBytes = MirrorPlan::kVertexBytes;
constexpr std::uint64_t kEdgeBytes = MirrorPlan::kEdgeBytes;
constexpr std::uint64_t kPairBytes = 2 * sizeof(std::uint32_t);
constexpr std::uint64_t kRecordBytes = 2 * sizeof(std::uint32_t) + sizeof(std::uint64_t);
constexpr std::uint64_t kRunHeaderBytes = 3 * sizeof(std::uint64_t);
constexpr std::uint64_t kWordBytes = sizeof(std::uint32_t);
constexpr std::uint64_t kSegmentSlots = std::uint64_t{1} << 32;  // edge pairs hold 32-bit offsets
constexpr std::uint64_t kMinSliceEntries = std::uint64_t{1} << 16;
constexpr std::uint64_t kMaxSliceEntries = std::uint64_t{1} << 20;
static_assert(kMaxSliceEntries <= kSegmentSlots, "a slice lies in one 2^32-edge segment");
constexpr std::uint64_t kSlicesPerThread = 8;
/// A refresh pass reads its stop flag every this many entries.
constexpr std::uint64_t kStopCheckEntries = std::uint64_t{1} << 14;
static_assert(kStopCheckEntries % ChangeBitmap::kIndicesPerChunk == 0 && kMinSliceEntries % kStopCheckEntries == 0,
              "a refresh takes whole chunks");
/// The least dense stretch of a sync's walk, in entries: kDirectBytes of them, so that
/// the stretch goes by DMA (at most twice its changed bytes, as it is half changed).
constexpr std::uint64_t kLeastDenseVertices = (MirrorPlan::kDirectBytes + kVertexBytes - 1) / kVertexBytes;
constexpr std::uint64_t kLeastDenseEdges = MirrorPlan::kDirectBytes / kEdgeBytes;
/// How far ahead the patch's fill asks for the entries of the ranges it packs.
constexpr std::size_t kPrefetchRanges = 64;

static_assert(MirrorPatchLayout::section_table_bytes(0) == 88 && MirrorPatchLayout::section_table_bytes(1) == 104,
              "mirror_plan.hpp states the table's size");

constexpr std::uint64_t align8(std::uint64_t bytes) { return (bytes + 7) / 8 * 8; }
constexpr std::uint64_t length(ElementRange r) { return r.end - r.begin; }

/// Entries per slice of an index space of `entries`: a power of two (so slices never
/// cross a 2^32 segment), whole change-bitmap chunks, about kSlicesPerThread per thread,
/// at most kMaxSliceEntries (at most 16 MiB packed, so that pieces stay near their size).
std::uint64_t slice_entries(std::uint64_t entries, unsigned threads) {
  const std::uint64_t target = std::max<std::uint64_t>(entries / (kSlicesPerThread * threads), 1);
  return std::clamp(std::bit_ceil(target), kMinSliceEntries, kMaxSliceEntries);
}

/// The changed runs of [begin, end): the marked ones below `synced`, then the grown part
/// at or above it, joined where they meet; each passed to `classify(run, changed)` with
/// its length as `changed`. Below `synced`, a dense stretch of at least `least_dense`
/// entries (ChangeBitmap::for_each_run_or_dense) is passed whole, with the entries that
/// changed in it.
template <typename F>
void for_each_changed_run(const ChangeBitmap& bits, std::uint64_t begin, std::uint64_t end, std::uint64_t synced,
                          std::uint64_t least_dense, F&& classify) {
  // The run or stretch not yet passed on, empty when its ends are equal, and its changed
  // entries (scalars: a pair kept in a vector register stalled each run on its store's
  // forwarding).
  std::uint64_t open_begin = 0, open_end = 0, open_changed = 0;
  // Runs are the hot path, a step each: passing them on is inlined, a dense stretch's
  // (rare) is not, so that the compiler keeps the runs' state in registers (with both
  // inlined, bench_mirror_sync's default mix planned 13% slower on one thread).
  auto pass_on = [&](std::uint64_t b, std::uint64_t e, std::uint64_t changed) __attribute__((always_inline)) {
    if (open_end != open_begin) classify(ElementRange{open_begin, open_end}, open_changed);
    open_begin = b;
    open_end = e;
    open_changed = changed;
  };
  bits.for_each_run_or_dense(
      begin, std::min(end, synced), least_dense,
      [&](std::uint64_t b, std::uint64_t e) __attribute__((always_inline)) { pass_on(b, e, e - b); },
      [&](std::uint64_t b, std::uint64_t e, std::uint64_t changed) __attribute__((noinline)) {
        pass_on(b, e, changed);
      });
  const std::uint64_t grown_begin = std::max(begin, synced);
  if (grown_begin < end) {
    if (open_end != open_begin && open_end == grown_begin && open_changed == open_end - open_begin) {
      open_changed += end - open_end;
      open_end = end;
    } else {
      pass_on(grown_begin, end, end - grown_begin);
    }
  }
  pass_on(0, 0, 0);
}

/// An index space's entries: bytes of one on the link (by DMA or in a packed run), and
/// the least length of a packed run (see the header).
struct Encoding {
  std::uint64_t entry_bytes;
  std::uint64_t run_min;
};
constexpr Encoding kVertexEncoding{kVertexBytes, MirrorPlan::kVertexRunMin};
constexpr Encoding kEdgeEncoding{kEdgeBytes, MirrorPlan::kEdgeRunMin};

/// Plans the changed runs that `walk` visits, in index order: each is sorted by size,
/// direct (into `found.direct`), packed runs of at least the encoding's least length, and
/// entries packed one by one (`singles`). Runs close together are gathered into clusters
/// whose span holds at most twice the entries they changed; a cluster of several runs
/// whose span reaches kDirectBytes goes by DMA as one range instead, the unchanged
/// entries between its runs with it (at most twice its changed bytes). Its runs are
/// sorted as they come and taken back when it closes so (a step per cluster, not per
/// run), until its span reaches kDirectBytes: runs that join it then are only counted.
/// The entries of every kind are counted here, on the planning threads, so that placing
/// the slices costs a step per slice, not per run. `walk` passes each run with the
/// entries that changed in it: all of them, but for a dense stretch of at least
/// kDirectBytes (for_each_changed_run), which goes by DMA as a run would. `taken` (may be
/// null) gets the runs as visited.
template <typename Walk>
void plan_slice(Walk&& walk, const Encoding& encoding, std::vector<ElementRange>& runs, std::uint64_t& run_entries,
                std::vector<ElementRange>& singles, std::uint64_t& single_entries, std::vector<ElementRange>* taken,
                MirrorPlan::Slice& found) {
  enum class Kind { Direct, Run, Single };
  // The open cluster: its span, the entries its runs changed and how many runs; once it
  // has two, the slice's lists and counts as they were before its first.
  ElementRange span{0, 0};
  std::uint64_t changed = 0, cluster_runs = 0;
  Kind first_kind = Kind::Single;
  std::size_t runs_before = 0, singles_before = 0, direct_before = 0;
  std::uint64_t run_entries_before = 0, single_entries_before = 0;
  auto close = [&] {
    const std::uint64_t bytes = length(span) * encoding.entry_bytes;
    if (bytes < MirrorPlan::kDirectBytes || bytes > 2 * changed * encoding.entry_bytes) return;
    runs.resize(runs_before);
    singles.resize(singles_before);
    found.direct.resize(direct_before);
    run_entries = run_entries_before;
    single_entries = single_entries_before;
    found.direct.push_back(span);
  };
  // A cluster of two runs or more whose span reached kDirectBytes goes by DMA whatever
  // joins it (every run that joins keeps it at half density or more).
  bool committed = false;
  walk([&](ElementRange r, std::uint64_t r_changed) {
    found.changed_bytes += r_changed * encoding.entry_bytes;
    if (taken != nullptr) taken->push_back(r);
    if (cluster_runs != 0 && r.end - span.begin <= 2 * (changed + r_changed)) {
      if (cluster_runs == 1) {  // the cluster's first run is the last one sorted
        const std::uint64_t first = changed;
        runs_before = runs.size() - (first_kind == Kind::Run);
        singles_before = singles.size() - (first_kind == Kind::Single);
        direct_before = found.direct.size() - (first_kind == Kind::Direct);
        run_entries_before = run_entries - (first_kind == Kind::Run ? first : 0);
        single_entries_before = single_entries - (first_kind == Kind::Single ? first : 0);
      }
      span.end = r.end;
      if (committed) [[unlikely]] {
        changed += r_changed;
        ++cluster_runs;
        return;
      }
    } else {
      if (cluster_runs >= 2) close();
      span = r;
      changed = cluster_runs = 0;
    }
    changed += r_changed;
    ++cluster_runs;
    committed = cluster_runs >= 2 && length(span) * encoding.entry_bytes >= MirrorPlan::kDirectBytes;
    Kind kind;
    if (length(r) * encoding.entry_bytes >= MirrorPlan::kDirectBytes) {
      found.direct.push_back(r);
      kind = Kind::Direct;
    } else if (length(r) >= encoding.run_min) {
      runs.push_back(r);
      run_entries += length(r);
      kind = Kind::Run;
    } else {
      singles.push_back(r);
      single_entries += length(r);
      kind = Kind::Single;
    }
    if (cluster_runs == 1) first_kind = kind;
  });
  if (cluster_runs >= 2) close();
}

/// The bytes of `plan`'s direct ranges (a vertex's Begin and Degree ranges are one
/// range of vertex entries).
std::uint64_t direct_range_bytes(const MirrorPlan& plan) {
  std::uint64_t bytes = 0;
  for (ElementRange r : plan.direct[static_cast<int>(MirrorArray::Begin)]) bytes += length(r) * kVertexBytes;
  for (ElementRange r : plan.direct[static_cast<int>(MirrorArray::Edges)]) bytes += length(r) * kEdgeBytes;
  return bytes;
}

/// Bytes of a slice's packed changes: its pairs, records, run headers (a vertex run has
/// one for Begin and one for Degree) and run values.
std::uint64_t packed_bytes(const MirrorPlan::Slice& slice) {
  return slice.pair_entries * kPairBytes + slice.record_entries * kRecordBytes +
         (2 * slice.vertex_runs.size() + slice.edge_runs.size()) * kRunHeaderBytes +
         slice.vertex_run_entries * kVertexBytes + slice.edge_run_entries * kEdgeBytes;
}

/// Fills piece.layout and the placement of each of its slices (see the header for the
/// layout), a step per slice; the piece has something to pack.
void place_piece(MirrorPlan& plan, std::uint64_t index, MirrorPlan::Piece& piece) {
  const std::span<MirrorPlan::Slice> slices(plan.slices.data() + piece.first_slice, piece.end_slice - piece.first_slice);
  MirrorPatchLayout& layout = piece.layout;
  std::uint64_t segments = 0;
  std::uint64_t last_base = 0;
  for (MirrorPlan::Slice& slice : slices) {
    slice.piece = index;
    if (slice.pair_entries == 0 || (segments != 0 && slice.segment_base == last_base)) continue;
    ++segments;
    last_base = slice.segment_base;
  }
  layout.table_bytes = MirrorPatchLayout::section_table_bytes(segments);
  std::uint64_t at = layout.table_bytes;
  for (MirrorPlan::Slice& slice : slices) {
    if (slice.pair_entries == 0) continue;
    if (layout.edge_pairs.empty() || layout.edge_pairs.back().base != slice.segment_base)
      layout.edge_pairs.push_back({at, 0, slice.segment_base});
    slice.pair_offset = at;
    layout.edge_pairs.back().count += slice.pair_entries;
    at += slice.pair_entries * kPairBytes;
  }
  layout.records_offset = at;
  for (MirrorPlan::Slice& slice : slices) {
    slice.record_offset = at;
    layout.record_count += slice.record_entries;
    at += slice.record_entries * kRecordBytes;
  }
  std::uint64_t vertex_runs = 0, edge_runs = 0, all_vertex_entries = 0;
  for (MirrorPlan::Slice& slice : slices) {
    slice.first_vertex_run = vertex_runs;
    slice.first_edge_run = edge_runs;
    vertex_runs += slice.vertex_runs.size();
    edge_runs += slice.edge_runs.size();
    all_vertex_entries += slice.vertex_run_entries;
  }
  for (MirrorArray array : {MirrorArray::Begin, MirrorArray::Degree, MirrorArray::Edges}) {
    const std::uint64_t count = array == MirrorArray::Edges ? edge_runs : vertex_runs;
    if (count == 0) continue;
    layout.runs.push_back({array, at, count});
    at += count * kRunHeaderBytes;
  }
  const std::uint64_t values_word = at / kWordBytes;
  std::uint64_t vertex_entries = 0, edge_entries = 0;
  for (MirrorPlan::Slice& slice : slices) {
    slice.begin_value_word = values_word + 2 * vertex_entries;
    slice.degree_value_word = values_word + 2 * all_vertex_entries + vertex_entries;
    slice.edge_value_word = values_word + 3 * all_vertex_entries + edge_entries;
    vertex_entries += slice.vertex_run_entries;
    edge_entries += slice.edge_run_entries;
  }
  at += vertex_entries * kVertexBytes + edge_entries * kEdgeBytes;
  layout.bytes = align8(at);
}

/// Cuts the patch into pieces of whole slices, each of at most plan.piece_bytes packed
/// bytes unless one slice alone has more, and places each. A plan with nothing to pack
/// has no piece, so no patch and not even a section table.
void place(MirrorPlan& plan) {
  std::uint64_t first = 0, bytes = 0;
  auto close = [&](std::uint64_t end) {
    MirrorPlan::Piece& piece = plan.pieces.emplace_back();
    piece.first_slice = first;
    piece.end_slice = end;
    piece.offset = plan.patch_bytes;
    place_piece(plan, plan.pieces.size() - 1, piece);
    plan.patch_bytes += piece.layout.bytes;
    first = end;
    bytes = 0;
  };
  for (std::uint64_t s = 0; s < plan.slices.size(); ++s) {
    const std::uint64_t slice_bytes = packed_bytes(plan.slices[s]);
    if (bytes != 0 && bytes + slice_bytes > plan.piece_bytes) close(s);
    bytes += slice_bytes;
  }
  if (bytes != 0) close(plan.slices.size());
}

/// The byte offset of the run headers for `array` (0 when it has none).
std::uint64_t headers_offset(const MirrorPatchLayout& layout, MirrorArray array) {
  for (const MirrorPatchLayout::Runs& runs : layout.runs)
    if (runs.array == array) return runs.offset;
  return 0;
}

/// Writes the section table of `layout` (kernels/common/patch_layout.h) at the start of
/// `buffer`.
void write_section_table(const MirrorPatchLayout& layout, std::byte* buffer) {
  auto put = [buffer](std::uint64_t field, std::uint64_t value) {
    std::memcpy(buffer + field * sizeof(std::uint64_t), &value, sizeof(value));
  };
  std::uint64_t pairs = 0;
  for (std::uint64_t s = 0; s < layout.edge_pairs.size(); ++s) {
    pairs += layout.edge_pairs[s].count;
    put(GCVM_PATCH_SEGMENT_END(s), pairs);
    put(GCVM_PATCH_SEGMENT_BASE(s), layout.edge_pairs[s].base);
  }
  put(GCVM_PATCH_SEGMENT_COUNT, layout.edge_pairs.size());
  put(GCVM_PATCH_PAIR_WORD, layout.edge_pairs.empty() ? 0 : layout.edge_pairs.front().offset / kWordBytes);
  put(GCVM_PATCH_PAIR_COUNT, pairs);
  put(GCVM_PATCH_RECORD_WORD, layout.records_offset / kWordBytes);
  put(GCVM_PATCH_RECORD_COUNT, layout.record_count);
  for (std::uint32_t a = 0; a < GCVM_PATCH_ARRAYS; ++a) {
    put(GCVM_PATCH_RUN_WORD(a), 0);
    put(GCVM_PATCH_RUN_COUNT(a), 0);
  }
  for (const MirrorPatchLayout::Runs& runs : layout.runs) {
    put(GCVM_PATCH_RUN_WORD(static_cast<std::uint32_t>(runs.array)), runs.offset / kWordBytes);
    put(GCVM_PATCH_RUN_COUNT(static_cast<std::uint32_t>(runs.array)), runs.count);
  }
}

}  // namespace

void append_joined(std::vector<ElementRange>& to, std::span<const ElementRange> ranges) {
  for (ElementRange r : ranges) {
    if (!to.empty() && to.back().end == r.begin)
      to.back().end = r.end;
    else
      to.push_back(r);
  }
}

std::uint64_t MirrorPlan::edge_pair_count() const {
  std::uint64_t n = 0;
  for (const Slice& s : slices) n += s.pair_entries;
  return n;
}
std::uint64_t MirrorPlan::vertex_record_count() const {
  std::uint64_t n = 0;
  for (const Slice& s : slices) n += s.record_entries;
  return n;
}
std::uint64_t MirrorPlan::edge_run_count() const {
  std::uint64_t n = 0;
  for (const Slice& s : slices) n += s.edge_runs.size();
  return n;
}
std::uint64_t MirrorPlan::vertex_run_count() const {
  std::uint64_t n = 0;
  for (const Slice& s : slices) n += s.vertex_runs.size();
  return n;
}

std::uint64_t MirrorPlan::direct_range_count() const {
  std::uint64_t n = 0;
  for (const auto& ranges : direct) n += ranges.size();
  return n;
}

std::uint64_t MirrorPlan::table_bytes() const {
  std::uint64_t n = 0;
  for (const Piece& piece : pieces) n += piece.layout.table_bytes;
  return n;
}

void MirrorPlan::reset(std::uint64_t slice_count) {
  for (auto& ranges : direct) ranges.clear();
  slices.resize(slice_count);
  for (Slice& slice : slices) {
    for (auto* ranges : {&slice.vertex_runs, &slice.vertex_records, &slice.edge_runs, &slice.edge_pairs, &slice.direct,
                         &slice.taken})
      ranges->clear();
    slice.edges = false;
    slice.changed_bytes = slice.pair_entries = slice.record_entries = 0;
    slice.vertex_run_entries = slice.edge_run_entries = 0;
  }
  pieces.clear();
  changed_bytes = direct_bytes = patch_bytes = 0;
}

namespace {

/// Runs task(t) for every t < `tasks` on `pool` (may be null), task t belonging to group
/// group_of(t) (nondecreasing in t, below `groups`), and calls hand_on(g) on the calling
/// thread for every group in order once its tasks and those of the groups before are
/// done: between the caller's own tasks while the pool's workers are still at later
/// ones, the rest after. An exception from hand_on ends the calls and is thrown again
/// once every task is done.
template <typename GroupOf, typename Task, typename HandOn>
void for_each_task_handing_on(ThreadPool* pool, std::uint64_t tasks, std::uint64_t groups, GroupOf&& group_of,
                              Task&& task, HandOn&& hand_on) {
  // Each group counts its tasks not yet done; the calling thread hands the groups on in
  // order as their counts reach zero (acquiring what the tasks released).
  const std::unique_ptr<std::atomic<std::uint64_t>[]> undone(new std::atomic<std::uint64_t>[groups]);
  for (std::uint64_t g = 0; g < groups; ++g) undone[g].store(0, std::memory_order_relaxed);
  for (std::uint64_t t = 0; t < tasks; ++t) undone[group_of(t)].fetch_add(1, std::memory_order_relaxed);
  const std::thread::id caller = std::this_thread::get_id();
  std::uint64_t handed = 0;
  std::exception_ptr failure;
  auto hand_on_done = [&] {
    for (; handed < groups && undone[handed].load(std::memory_order_acquire) == 0; ++handed) {
      if (failure) continue;
      try {
        hand_on(handed);
      } catch (...) {
        failure = std::current_exception();
      }
    }
  };
  for_each_task(pool, tasks, [&](std::uint64_t t) {
    task(t);
    undone[group_of(t)].fetch_sub(1, std::memory_order_release);
    if (std::this_thread::get_id() == caller) hand_on_done();
  });
  hand_on_done();
  if (failure) std::rethrow_exception(failure);
}

/// Cuts [0, vertex_count) and [0, edge_count) into slices and plans each with
/// `walk(edges, slice, classify)`, which passes the slice's changed runs to classify.
/// Slices are sized for `threads` threads (those of `pool` unless given).
template <typename Walk>
void plan_slices(std::uint64_t vertex_count, std::uint64_t edge_count, ThreadPool* pool, bool keep_taken,
                 const std::function<void(const MirrorPlan::Slice&)>& planned, MirrorPlan& plan, Walk&& walk,
                 unsigned threads = 0) {
  if (threads == 0) threads = pool != nullptr ? pool->size() : 1;
  const std::uint64_t vertex_step = slice_entries(vertex_count, threads);
  const std::uint64_t edge_step = slice_entries(edge_count, threads);
  const std::uint64_t vertex_slices = (vertex_count + vertex_step - 1) / vertex_step;
  const std::uint64_t edge_slices = (edge_count + edge_step - 1) / edge_step;

  plan.reset(vertex_slices + edge_slices);
  auto plan_one = [&](std::uint64_t s) {
    MirrorPlan::Slice& out = plan.slices[s];
    if (s < vertex_slices) {
      const ElementRange slice{s * vertex_step, std::min((s + 1) * vertex_step, vertex_count)};
      plan_slice([&](auto&& classify) { walk(false, slice, classify); }, kVertexEncoding, out.vertex_runs,
                 out.vertex_run_entries, out.vertex_records, out.record_entries, keep_taken ? &out.taken : nullptr,
                 out);
    } else {
      const std::uint64_t e = s - vertex_slices;
      const ElementRange slice{e * edge_step, std::min((e + 1) * edge_step, edge_count)};
      out.edges = true;
      out.segment_base = slice.begin / kSegmentSlots * kSegmentSlots;
      plan_slice([&](auto&& classify) { walk(true, slice, classify); }, kEdgeEncoding, out.edge_runs,
                 out.edge_run_entries, out.edge_pairs, out.pair_entries, keep_taken ? &out.taken : nullptr, out);
    }
  };
  if (planned) {
    for_each_task_handing_on(
        pool, plan.slices.size(), plan.slices.size(), [](std::uint64_t s) { return s; }, plan_one,
        [&](std::uint64_t s) { planned(plan.slices[s]); });
  } else {
    for_each_task(pool, plan.slices.size(), plan_one);
  }

  for (std::uint64_t s = 0; s < plan.slices.size(); ++s) {
    const MirrorPlan::Slice& slice = plan.slices[s];
    plan.changed_bytes += slice.changed_bytes;
    if (s < vertex_slices) {
      append_joined(plan.direct[static_cast<int>(MirrorArray::Begin)], slice.direct);
      append_joined(plan.direct[static_cast<int>(MirrorArray::Degree)], slice.direct);
    } else {
      append_joined(plan.direct[static_cast<int>(MirrorArray::Edges)], slice.direct);
    }
  }
  plan.direct_bytes = direct_range_bytes(plan);
  place(plan);
}

}  // namespace

void plan_mirror_sync(const RefGraph& graph, const GraphChanges& changes, std::uint64_t vertices, std::uint64_t edges,
                      ThreadPool* pool, MirrorPlan& plan,
                      const std::function<void(const MirrorPlan::Slice&)>& planned) {
  plan_slices(graph.vertex_count(), graph.edge_count(), pool, false, planned, plan,
              [&](bool is_edges, ElementRange slice, auto&& classify) {
                for_each_changed_run(is_edges ? changes.edges : changes.vertices, slice.begin, slice.end,
                                     is_edges ? edges : vertices, is_edges ? kLeastDenseEdges : kLeastDenseVertices,
                                     classify);
              });
}

RefreshPlanEnd plan_mirror_refresh(GraphChanges& changes, std::uint64_t vertices, std::uint64_t edges,
                                   MirrorPlan& plan, const std::atomic<bool>* stop, std::uint64_t most_entries) {
  RefreshPlanEnd end = RefreshPlanEnd::Whole;
  std::uint64_t taken = 0;  // the slices are planned in order, on this thread
  auto plan_part = [&](bool is_edges, ElementRange slice, auto&& classify) {
    if (end == RefreshPlanEnd::Whole && taken >= most_entries) end = RefreshPlanEnd::Enough;
    ChangeBitmap& bits = is_edges ? changes.edges : changes.vertices;
    // From one marked part to the next: an idle pass reads the summary, nothing more.
    for (std::uint64_t from = bits.next_marked(slice.begin, slice.end);
         from < slice.end && end == RefreshPlanEnd::Whole;
         from = from + kStopCheckEntries < slice.end ? bits.next_marked(from + kStopCheckEntries, slice.end)
                                                     : slice.end) {
      if (stop != nullptr && stop->load(std::memory_order_acquire)) {
        end = RefreshPlanEnd::Stopped;
      } else {
        bits.take_runs(from, std::min(from + kStopCheckEntries, slice.end), [&](std::uint64_t b, std::uint64_t e) {
          taken += e - b;
          classify(ElementRange{b, e}, e - b);
        });
      }
    }
  };
  // Sliced as a sync on every hardware thread would be: a plan handed to a pause's sync
  // is packed on the pause's threads, a slice to a task.
  static const unsigned hardware_threads = ThreadPool::resolve(0);
  plan_slices(vertices, edges, nullptr, true, {}, plan, plan_part, hardware_threads);
  return end;
}

void add_mirror_growth(GraphChanges& changes, ElementRange vertices, ElementRange edges, MirrorPlan& plan) {
  auto grow = [&](ChangeBitmap& bits, ElementRange grown, std::initializer_list<MirrorArray> arrays,
                  std::uint64_t entry_bytes) {
    if (length(grown) == 0) return;
    // Taking starts at a chunk boundary (ChangeBitmap::take_runs); the bits of the
    // growth's first partial chunk stay, and the next refresh or sync sends them again.
    const std::uint64_t chunk = ChangeBitmap::kIndicesPerChunk;
    if (const std::uint64_t aligned = (grown.begin + chunk - 1) / chunk * chunk; aligned < grown.end)
      bits.take_runs(aligned, grown.end, [](std::uint64_t, std::uint64_t) {});
    for (const MirrorArray array : arrays) append_joined(plan.direct[static_cast<int>(array)], {&grown, 1});
    plan.changed_bytes += length(grown) * entry_bytes;
    plan.direct_bytes += length(grown) * entry_bytes;
  };
  grow(changes.vertices, vertices, {MirrorArray::Begin, MirrorArray::Degree}, kVertexBytes);
  grow(changes.edges, edges, {MirrorArray::Edges}, kEdgeBytes);
}

void restore_mirror_plan(const MirrorPlan& plan, GraphChanges& changes) {
  // A word of bits at a time: a pass given up may hold hundreds of thousands of isolated
  // entries, several to a word, and the pause waits for their restoring.
  auto mark = [](ChangeBitmap& bits, const std::vector<ElementRange>& ranges) {
    std::uint64_t word = 0, pending = 0;
    for (ElementRange r : ranges)
      for (std::uint64_t i = r.begin; i < r.end;) {
        const std::uint64_t w = i / 64;
        const std::uint64_t last = std::min(r.end, (w + 1) * 64);
        const std::uint64_t span = last - i;
        const std::uint64_t run = (span == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << span) - 1) << (i % 64);
        if (w != word && pending != 0) {
          bits.mark_word(word, pending);
          pending = 0;
        }
        word = w;
        pending |= run;
        i = last;
      }
    if (pending != 0) bits.mark_word(word, pending);
  };
  for (const MirrorPlan::Slice& slice : plan.slices) mark(slice.edges ? changes.edges : changes.vertices, slice.taken);
}

void plan_mirror_upload(const RefGraph& graph, MirrorPlan& plan) {
  plan.reset(0);
  const ElementRange vertices{0, graph.vertex_count()};
  const ElementRange edges{0, graph.edge_count()};
  if (length(vertices) != 0) {
    plan.direct[static_cast<int>(MirrorArray::Begin)].push_back(vertices);
    plan.direct[static_cast<int>(MirrorArray::Degree)].push_back(vertices);
  }
  if (length(edges) != 0) plan.direct[static_cast<int>(MirrorArray::Edges)].push_back(edges);
  plan.changed_bytes = plan.direct_bytes = length(vertices) * kVertexBytes + length(edges) * kEdgeBytes;
}

void plan_mirror_upload_rest(const RefGraph& graph, MirrorPlan& plan) {
  const std::uint64_t changed_bytes = plan.changed_bytes;
  std::vector<ElementRange> rest[3];
  for (const MirrorArray array : {MirrorArray::Begin, MirrorArray::Degree, MirrorArray::Edges}) {
    const std::uint64_t entries = array == MirrorArray::Edges ? graph.edge_count() : graph.vertex_count();
    std::uint64_t at = 0;
    for (const ElementRange r : plan.direct[static_cast<int>(array)]) {
      if (at < r.begin) rest[static_cast<int>(array)].push_back({at, r.begin});
      at = r.end;
    }
    if (at < entries) rest[static_cast<int>(array)].push_back({at, entries});
  }
  plan.reset(0);
  for (int a = 0; a < 3; ++a) plan.direct[a] = std::move(rest[a]);
  plan.direct_bytes = direct_range_bytes(plan);
  plan.changed_bytes = changed_bytes;
}

void fill_mirror_patch_pieces(const RefGraph& graph, const MirrorPlan& plan, std::uint64_t first_piece,
                              std::uint64_t end_piece, std::byte* buffer, ThreadPool* pool, GraphAccess access,
                              const std::function<void(const MirrorPlan::Piece&)>& filled) {
  if (first_piece >= end_piece) return;
  const std::uint64_t buffer_offset = plan.pieces[first_piece].offset;
  const std::uint64_t* begin = graph.begin_data();
  const std::uint32_t* degree = graph.degree_data();
  const ObjectId* edges = graph.edge_data();

  const bool shared = access == GraphAccess::SharedWithMutator;
  // Entries the mutator may be storing into are read with atomic loads (ref_graph.hpp).
  auto read = [shared]<typename T>(const T* at) {
    return shared ? std::atomic_ref<T>(*const_cast<T*>(at)).load(std::memory_order_relaxed) : *at;
  };
  // A run: its header (destination word, first value word, word count), then its values
  // at `words` (the piece's start) + value_word.
  auto put_run = [&](std::uint32_t* words, std::byte* header, std::uint64_t destination_word, std::uint64_t& value_word,
                     const auto* from, std::uint64_t count) {
    const std::uint64_t fields[3] = {destination_word, value_word, count};
    std::memcpy(header, fields, sizeof(fields));
    if (shared) {
      const std::uint64_t entries = count * kWordBytes / sizeof(*from);
      for (std::uint64_t i = 0; i < entries; ++i) {
        const auto value = read(from + i);
        std::memcpy(words + value_word + i * sizeof(value) / kWordBytes, &value, sizeof(value));
      }
    } else {
      std::memcpy(words + value_word, from, count * kWordBytes);
    }
    value_word += count;
  };

  auto fill_slice = [&](const MirrorPlan::Slice& slice) {
    const MirrorPlan::Piece& piece = plan.pieces[slice.piece];
    std::byte* const base = buffer + (piece.offset - buffer_offset);
    auto* const words = reinterpret_cast<std::uint32_t*>(base);
    // Scattered entries miss the cache: each loop asks for the entries of the range
    // kPrefetchRanges ahead, so that many misses are in flight at once.
    auto* pair = reinterpret_cast<std::uint32_t*>(base + slice.pair_offset);
    const std::size_t pair_ranges = slice.edge_pairs.size();
    for (std::size_t i = 0; i < pair_ranges; ++i) {
      if (i + kPrefetchRanges < pair_ranges) __builtin_prefetch(edges + slice.edge_pairs[i + kPrefetchRanges].begin);
      const ElementRange r = slice.edge_pairs[i];
      for (std::uint64_t e = r.begin; e < r.end; ++e) {
        *pair++ = static_cast<std::uint32_t>(e - slice.segment_base);
        *pair++ = read(edges + e);
      }
    }
    std::byte* record = base + slice.record_offset;
    const std::size_t record_ranges = slice.vertex_records.size();
    for (std::size_t i = 0; i < record_ranges; ++i) {
      if (i + kPrefetchRanges < record_ranges) {
        __builtin_prefetch(begin + slice.vertex_records[i + kPrefetchRanges].begin);
        __builtin_prefetch(degree + slice.vertex_records[i + kPrefetchRanges].begin);
      }
      const ElementRange r = slice.vertex_records[i];
      for (std::uint64_t v = r.begin; v < r.end; ++v, record += kRecordBytes) {
        const std::uint32_t head[2] = {static_cast<std::uint32_t>(v), read(degree + v)};
        const std::uint64_t first = read(begin + v);
        std::memcpy(record, head, sizeof(head));
        std::memcpy(record + sizeof(head), &first, sizeof(first));
      }
    }
    std::byte* const begin_headers = base + headers_offset(piece.layout, MirrorArray::Begin);
    std::byte* const degree_headers = base + headers_offset(piece.layout, MirrorArray::Degree);
    std::byte* const edge_headers = base + headers_offset(piece.layout, MirrorArray::Edges);
    std::uint64_t begin_word = slice.begin_value_word, degree_word = slice.degree_value_word;
    std::uint64_t edge_word = slice.edge_value_word;
    for (std::uint64_t i = 0; i < slice.vertex_runs.size(); ++i) {
      if (i + kPrefetchRanges < slice.vertex_runs.size()) {
        __builtin_prefetch(begin + slice.vertex_runs[i + kPrefetchRanges].begin);
        __builtin_prefetch(degree + slice.vertex_runs[i + kPrefetchRanges].begin);
      }
      const ElementRange r = slice.vertex_runs[i];
      const std::uint64_t header = (slice.first_vertex_run + i) * kRunHeaderBytes;
      put_run(words, begin_headers + header, 2 * r.begin, begin_word, begin + r.begin, 2 * length(r));
      put_run(words, degree_headers + header, r.begin, degree_word, degree + r.begin, length(r));
    }
    for (std::uint64_t i = 0; i < slice.edge_runs.size(); ++i) {
      if (i + kPrefetchRanges < slice.edge_runs.size()) __builtin_prefetch(edges + slice.edge_runs[i + kPrefetchRanges].begin);
      const ElementRange r = slice.edge_runs[i];
      const std::uint64_t header = (slice.first_edge_run + i) * kRunHeaderBytes;
      put_run(words, edge_headers + header, r.begin, edge_word, edges + r.begin, length(r));
    }
  };

  for (std::uint64_t p = first_piece; p < end_piece; ++p)
    write_section_table(plan.pieces[p].layout, buffer + (plan.pieces[p].offset - buffer_offset));
  const std::uint64_t first_slice = plan.pieces[first_piece].first_slice;
  for_each_task_handing_on(
      pool, plan.pieces[end_piece - 1].end_slice - first_slice, end_piece - first_piece,
      [&](std::uint64_t t) { return plan.slices[first_slice + t].piece - first_piece; },
      [&](std::uint64_t t) { fill_slice(plan.slices[first_slice + t]); },
      [&](std::uint64_t p) {
        if (filled) filled(plan.pieces[first_piece + p]);
      });
}

}  // namespace gcvm
