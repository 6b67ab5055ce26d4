// The mirror's sync plan and patch (gc/device/mirror_plan.hpp), without a device: a
// host copy of the graph's arrays, brought up to date by the plan's direct ranges and
// by applying its patch as the kernel does (kernels/common/memory_ops.h: from the
// patch's own section table), must equal the graph, whether one thread or many
// planned and packed it.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "gc/device/mirror_plan.hpp"
#include "gc/heap/heap.hpp"
#include "gc/markers/serial_marker.hpp"
#include "gc/plans/collector.hpp"
#include "gc/util/thread_pool.hpp"
#include "kernels/common/patch_layout.h"

using namespace gcvm;

namespace {

/// What a device holds of the graph: its three arrays.
struct HostCopy {
  std::vector<std::uint64_t> begin;
  std::vector<std::uint32_t> degree;
  std::vector<ObjectId> edges;

  explicit HostCopy(const RefGraph& g)
      : begin(g.begin_data(), g.begin_data() + g.vertex_count()),
        degree(g.degree_data(), g.degree_data() + g.vertex_count()),
        edges(g.edge_data(), g.edge_data() + g.edge_count()) {}

  std::uint32_t* words(MirrorArray array) {
    if (array == MirrorArray::Begin) return reinterpret_cast<std::uint32_t*>(begin.data());
    if (array == MirrorArray::Degree) return degree.data();
    return edges.data();
  }

  /// Applies a sync of `g` by `plan`, with `patch` as fill_mirror_patch wrote it.
  void apply(const RefGraph& g, const MirrorPlan& plan, const std::vector<std::byte>& patch) {
    resize_and_copy_direct(g, plan);
    for (const MirrorPlan::Piece& piece : plan.pieces) apply_piece(patch.data() + piece.offset);
  }

  void resize_and_copy_direct(const RefGraph& g, const MirrorPlan& plan) {
    begin.resize(g.vertex_count());
    degree.resize(g.vertex_count());
    edges.resize(g.edge_count());
    for (ElementRange r : plan.direct[static_cast<int>(MirrorArray::Begin)])
      std::copy(g.begin_data() + r.begin, g.begin_data() + r.end, begin.begin() + static_cast<std::ptrdiff_t>(r.begin));
    for (ElementRange r : plan.direct[static_cast<int>(MirrorArray::Degree)])
      std::copy(g.degree_data() + r.begin, g.degree_data() + r.end, degree.begin() + static_cast<std::ptrdiff_t>(r.begin));
    for (ElementRange r : plan.direct[static_cast<int>(MirrorArray::Edges)])
      std::copy(g.edge_data() + r.begin, g.edge_data() + r.end, edges.begin() + static_cast<std::ptrdiff_t>(r.begin));
  }

  /// Applies one piece of a patch, as the kernel does: everything from the piece's own
  /// section table, every offset from the piece's start.
  void apply_piece(const std::byte* patch) {
    auto word = [&](std::uint64_t i) {
      std::uint32_t w;
      std::memcpy(&w, patch + 4 * i, 4);
      return w;
    };
    auto field = [&](std::uint64_t i) {
      std::uint64_t f;
      std::memcpy(&f, patch + 8 * i, 8);
      return f;
    };
    std::uint64_t pair = 0;
    for (std::uint64_t s = 0; s < field(GCVM_PATCH_SEGMENT_COUNT); ++s)
      for (; pair < field(GCVM_PATCH_SEGMENT_END(s)); ++pair) {
        const std::uint64_t at = field(GCVM_PATCH_PAIR_WORD) + 2 * pair;
        edges.at(field(GCVM_PATCH_SEGMENT_BASE(s)) + word(at)) = word(at + 1);
      }
    CHECK(pair == field(GCVM_PATCH_PAIR_COUNT));
    for (std::uint64_t i = 0; i < field(GCVM_PATCH_RECORD_COUNT); ++i) {
      const std::uint64_t at = field(GCVM_PATCH_RECORD_WORD) + 4 * i;
      degree.at(word(at)) = word(at + 1);
      begin.at(word(at)) = word(at + 2) | (std::uint64_t{word(at + 3)} << 32);
    }
    for (MirrorArray array : {MirrorArray::Begin, MirrorArray::Degree, MirrorArray::Edges}) {
      const auto a = static_cast<std::uint32_t>(array);
      std::uint32_t* destination = words(array);
      for (std::uint64_t r = 0; r < field(GCVM_PATCH_RUN_COUNT(a)); ++r) {
        std::uint64_t header[3];
        std::memcpy(header, patch + 4 * field(GCVM_PATCH_RUN_WORD(a)) + 24 * r, sizeof(header));
        for (std::uint64_t k = 0; k < header[2]; ++k) destination[header[0] + k] = word(header[1] + k);
      }
    }
  }

  bool equals(const RefGraph& g) const {
    return begin.size() == g.vertex_count() && edges.size() == g.edge_count() &&
           std::equal(begin.begin(), begin.end(), g.begin_data()) &&
           std::equal(degree.begin(), degree.end(), g.degree_data()) &&
           std::equal(edges.begin(), edges.end(), g.edge_data());
  }
};

/// A bare graph of `entries` vertices and edge slots, every change bit clear: what a
/// refresh's plan takes from.
GraphChanges& bare_graph(RefGraph& graph, std::uint64_t entries) {
  REQUIRE(graph.grow_vertices(entries));
  REQUIRE(graph.reserve_edges(entries));
  graph.changes().clear();
  return graph.changes();
}

/// The maximal runs of set bits of `bits` below `entries`, in order.
std::vector<std::pair<std::uint64_t, std::uint64_t>> runs_of(const ChangeBitmap& bits, std::uint64_t entries) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> runs;
  bits.for_each_run(0, entries, [&](std::uint64_t b, std::uint64_t e) { runs.emplace_back(b, e); });
  return runs;
}

/// Checks that `plan` sends at most twice its changed bytes (plus its tables), and that
/// its direct ranges and its patch, packed on `pool` (may be null), bring a copy of the
/// graph as `before` holds it up to date with `graph`.
void check_plan_updates(const RefGraph& graph, const MirrorPlan& plan, const HostCopy& before, ThreadPool* pool) {
  CHECK(plan.direct_bytes + plan.patch_bytes <= 2 * plan.changed_bytes + plan.table_bytes());
  std::vector<std::byte> patch(plan.patch_bytes);
  fill_mirror_patch(graph, plan, patch.data(), pool);
  HostCopy copy = before;
  copy.apply(graph, plan, patch);
  CHECK(copy.equals(graph));
}

}  // namespace

TEST_CASE("a sync planned and packed on many threads brings a copy of the graph up to date, as one on one thread does") {
  Heap heap;
  const ShapeId node = heap.shapes().intern(4, 1);
  std::mt19937_64 rng(5);
  const std::uint64_t n = 120000;
  const ObjectId array = heap.allocate_ref_array(n);
  for (std::uint64_t i = 0; i < n; ++i) heap.store_element(array, i, heap.allocate(node));
  Collector collector(heap, std::make_unique<SerialMarker>(SerialMarkerOptions{}), /*verify=*/false);
  std::vector<ObjectId> roots{array};
  collector.collect(roots, "test");
  RefGraph& graph = heap.graph();
  graph.changes().clear();
  const HostCopy before(graph);
  const std::uint64_t synced_vertices = graph.vertex_count(), synced_edges = graph.edge_count();

  // Every kind of change: scattered stores (pairs), short runs (packed runs), a long
  // run (direct), freed slots reallocated (vertex records and runs), growth.
  for (int i = 0; i < 40000; ++i) {
    const ObjectId holder = heap.load_element(array, rng() % n);
    heap.store_ref(holder, static_cast<std::uint32_t>(rng() % 4), heap.load_element(array, rng() % n));
  }
  for (int run = 0; run < 300; ++run) {
    const std::uint64_t at = rng() % (n - 20);
    for (std::uint64_t k = 0; k < 12; ++k) heap.store_element(array, at + k, heap.load_element(array, (at + 7 * k) % n));
  }
  for (std::uint64_t i = 50000; i < 80000; ++i) heap.store_element(array, i, heap.load_element(array, i - 50000));
  for (std::uint64_t i = 0; i < n; i += 3) heap.store_element(array, i, kNullRef);
  collector.collect(roots, "test");
  for (std::uint64_t i = 0; i < n; i += 3) heap.store_element(array, i, heap.allocate(node));
  heap.allocate_ref_array(200000);

  std::uint64_t changed_bytes = 0;
  MirrorPlan plan;  // reused, as a mirror reuses it: nothing of one plan may leak into the next
  // One piece (the patch is smaller than the default size), then pieces of at most 4 KiB
  // unless one slice has more: many slices, many pieces.
  for (const std::uint64_t piece_bytes : {MirrorPlan::kPieceBytes, std::uint64_t{4096}}) {
    for (unsigned threads : {1u, 3u, 8u, 1u}) {
      CAPTURE(piece_bytes);
      CAPTURE(threads);
      ThreadPool pool(threads);
      plan.piece_bytes = piece_bytes;
      plan_mirror_sync(graph, graph.changes(), synced_vertices, synced_edges, &pool, plan);
      CHECK(plan.edge_pair_count() > 0);
      CHECK(plan.vertex_record_count() + plan.vertex_run_count() > 0);
      CHECK(plan.edge_run_count() > 0);
      CHECK_FALSE(plan.direct[static_cast<int>(MirrorArray::Edges)].empty());
      REQUIRE_FALSE(plan.pieces.empty());
      if (piece_bytes == MirrorPlan::kPieceBytes) CHECK(plan.pieces.size() == 1);
      else CHECK(plan.pieces.size() > 4);
      // A piece's table: 88 bytes, 16 more if it has pairs (in this graph's one segment).
      CHECK(plan.table_bytes() <= plan.pieces.size() * MirrorPatchLayout::section_table_bytes(1));
      CHECK(plan.table_bytes() >= plan.pieces.size() * MirrorPatchLayout::section_table_bytes(0));
      CHECK(plan.direct_bytes + plan.patch_bytes <= 2 * plan.changed_bytes + plan.table_bytes());
      // The pieces lie one after another, each of whole slices, and cover the patch.
      std::uint64_t end = 0;
      for (const MirrorPlan::Piece& piece : plan.pieces) {
        CHECK(piece.offset == end);
        CHECK(piece.first_slice < piece.end_slice);
        end += piece.layout.bytes;
      }
      CHECK(end == plan.patch_bytes);
      if (threads == 1) changed_bytes = plan.changed_bytes;
      CHECK(plan.changed_bytes == changed_bytes);  // however the index spaces were cut
      // Each piece is handed on once, in order, when its slices are written: applying
      // each then (to a copy the plan's direct ranges were copied into) gives the graph.
      std::vector<std::byte> patch(plan.patch_bytes);
      HostCopy copy = before;
      copy.resize_and_copy_direct(graph, plan);
      std::uint64_t handed = 0;
      fill_mirror_patch(graph, plan, patch.data(), &pool, GraphAccess::Exclusive, [&](const MirrorPlan::Piece& piece) {
        CHECK(&piece == &plan.pieces[handed]);
        ++handed;
        copy.apply_piece(patch.data() + piece.offset);
      });
      CHECK(handed == plan.pieces.size());
      CHECK(copy.equals(graph));
      // Filled with no one to hand the pieces to, the whole patch applies the same.
      std::vector<std::byte> whole(plan.patch_bytes);
      fill_mirror_patch(graph, plan, whole.data(), &pool);
      CHECK(whole == patch);
    }
  }
  // A failure handing a piece on ends the handing on, and comes out once the patch is written.
  ThreadPool pool(4);
  plan.piece_bytes = 4096;
  plan_mirror_sync(graph, graph.changes(), synced_vertices, synced_edges, &pool, plan);
  std::vector<std::byte> patch(plan.patch_bytes);
  int handed = 0;
  CHECK_THROWS_WITH(fill_mirror_patch(graph, plan, patch.data(), &pool, GraphAccess::Exclusive,
                                      [&](const MirrorPlan::Piece&) {
                                        if (++handed == 2) throw DeviceError("the device went away");
                                      }),
                    "the device went away");
  CHECK(handed == 2);
  std::vector<std::byte> whole(plan.patch_bytes);
  fill_mirror_patch(graph, plan, whole.data(), nullptr);
  CHECK(whole == patch);
}

TEST_CASE("growth added to a refresh takes the growth's change bits and leaves those below it") {
  RefGraph graph;
  const std::uint64_t chunk = ChangeBitmap::kIndicesPerChunk;
  const std::uint64_t held = 3 * chunk + 100, grown_to = 6 * chunk + 7;  // growth starts mid-chunk
  REQUIRE(graph.grow_vertices(grown_to));
  REQUIRE(graph.reserve_edges(grown_to));
  GraphChanges& changes = graph.changes();
  changes.clear();
  for (const std::uint64_t i : {held - 1, held - 50, held, held + 1, 4 * chunk, 5 * chunk + 3, grown_to - 1}) {
    changes.vertices.mark(i);
    changes.edges.mark(i);
  }
  MirrorPlan plan;
  plan_mirror_refresh(changes, held, held, plan);  // takes the held entries' bits
  CHECK(changes.vertices.count(held) == 0);
  for (const std::uint64_t i : {held - 1, held - 50}) {  // the mutator stores again meanwhile
    changes.vertices.mark(i);
    changes.edges.mark(i);
  }
  add_mirror_growth(changes, {held, grown_to}, {held, grown_to}, plan);
  for (ChangeBitmap* bits : {&changes.vertices, &changes.edges}) {
    CHECK(bits->count(held) == 2);       // held entries' new changes stay for the next pass
    CHECK(bits->count(4 * chunk) == 4);  // and so do the bits of the growth's partial first chunk
    CHECK(bits->count(grown_to) == 4);   // whole chunks of growth were taken
  }
  CHECK(plan.direct[static_cast<int>(MirrorArray::Edges)].back().end == grown_to);
  CHECK(plan.direct[static_cast<int>(MirrorArray::Begin)].back().begin <= held);
  CHECK(plan.changed_bytes >= (grown_to - held) * (MirrorPlan::kVertexBytes + MirrorPlan::kEdgeBytes));
}

TEST_CASE("a refresh's plan stops taking changes once a pause raises its stop flag") {
  RefGraph graph;
  const std::uint64_t entries = 64 * ChangeBitmap::kIndicesPerChunk;  // several slices
  GraphChanges& changes = bare_graph(graph, entries);
  for (std::uint64_t i = 0; i < entries; i += 3) {
    changes.vertices.mark(i);
    changes.edges.mark(i);
  }
  const std::uint64_t marked = changes.vertices.count(entries);
  std::atomic<bool> stop{true};
  MirrorPlan plan;
  CHECK(plan_mirror_refresh(changes, entries, entries, plan, &stop) == RefreshPlanEnd::Stopped);  // before any slice
  CHECK(plan.changed_bytes == 0);
  CHECK(changes.vertices.count(entries) == marked);
  CHECK(changes.edges.count(entries) == marked);
  stop = false;
  CHECK(plan_mirror_refresh(changes, entries, entries, plan, &stop) == RefreshPlanEnd::Whole);
  CHECK(plan.changed_bytes == marked * (MirrorPlan::kVertexBytes + MirrorPlan::kEdgeBytes));
  CHECK(changes.vertices.count(entries) == 0);
  restore_mirror_plan(plan, changes);  // a plan never sent leaves the record as it found it
  CHECK(changes.vertices.count(entries) == marked);
  CHECK(changes.edges.count(entries) == marked);

  // Raised while a slice is being planned (by another thread, at any moment): whatever
  // was taken is in the plan, the rest still marked, and restoring gives the record back.
  for (int attempt = 0; attempt < 20; ++attempt) {
    std::atomic<bool> racing{false};
    std::thread raiser([&] {
      for (int spin = 0; spin < attempt * 50; ++spin) std::this_thread::yield();
      racing.store(true, std::memory_order_release);
    });
    const bool whole = plan_mirror_refresh(changes, entries, entries, plan, &racing) == RefreshPlanEnd::Whole;
    raiser.join();
    const std::uint64_t vertices_left = changes.vertices.count(entries), edges_left = changes.edges.count(entries);
    if (whole) CHECK(vertices_left + edges_left == 0);  // planned whole: every bit taken
    CHECK(plan.changed_bytes ==
          (marked - vertices_left) * MirrorPlan::kVertexBytes + (marked - edges_left) * MirrorPlan::kEdgeBytes);
    restore_mirror_plan(plan, changes);
    CHECK(changes.vertices.count(entries) == marked);
    CHECK(changes.edges.count(entries) == marked);
  }
  // Restored bit for bit: every third entry, nothing else.
  for (const ChangeBitmap* bits : {&changes.vertices, &changes.edges}) {
    std::uint64_t next = 0;
    bool exact = true;
    bits->for_each_run(0, entries, [&](std::uint64_t b, std::uint64_t e) {
      exact = exact && b == next && e == b + 1;
      next = b + 3;
    });
    CHECK(exact);
    CHECK(next >= entries);
  }
}

TEST_CASE("a refresh plan given up restores the change record bit for bit, runs and isolated entries alike") {
  RefGraph graph;
  const std::uint64_t entries = 48 * ChangeBitmap::kIndicesPerChunk;
  GraphChanges& changes = bare_graph(graph, entries);
  std::mt19937_64 rng(7);
  for (std::uint64_t i = 0; i < entries;) {
    const std::uint64_t length = 1 + rng() % (rng() % 4 == 0 ? 300 : 3);  // long runs now and then
    for (std::uint64_t k = i; k < std::min(entries, i + length); ++k) {
      changes.edges.mark(k);
      if (k % 2 == 1) changes.vertices.mark(k);  // the vertices' runs cut into single entries
    }
    i += length + 1 + rng() % 70;
  }
  const auto vertices_before = runs_of(changes.vertices, entries), edges_before = runs_of(changes.edges, entries);
  REQUIRE(edges_before.size() > 1000);
  MirrorPlan plan;
  plan_mirror_refresh(changes, entries, entries, plan);
  CHECK(changes.edges.count(entries) == 0);
  restore_mirror_plan(plan, changes);
  CHECK(runs_of(changes.vertices, entries) == vertices_before);
  CHECK(runs_of(changes.edges, entries) == edges_before);
}

TEST_CASE("changed runs close together go by DMA as one range when it is large and costs at most twice their bytes") {
  RefGraph graph;
  const std::uint64_t entries = 32 * ChangeBitmap::kIndicesPerChunk;
  GraphChanges& changes = bare_graph(graph, entries);
  const HostCopy before(graph);
  auto store = [&](std::uint64_t e) { graph.set_edge(e, static_cast<ObjectId>(e % 1000 + 1)); };
  // Every other edge over 40,000: a cluster of half its span, 160 KB, one range by DMA.
  for (std::uint64_t e = 1000; e < 41000; e += 2) store(e);
  // Every other edge over 300: a cluster below the DMA's least size, run by run: pairs.
  for (std::uint64_t e = 44000; e < 44300; e += 2) store(e);
  // Ten runs of ten edges, five apart: packed runs, each on its own.
  for (std::uint64_t e = 50000; e < 50150; ++e)
    if ((e - 50000) % 15 < 10) store(e);
  // One edge in three over 6,000: too sparse for a cluster, 2,000 pairs.
  for (std::uint64_t e = 60000; e < 66000; e += 3) store(e);
  // Two vertices in three over 9,000 (108 KB): one range of Begin and of Degree by DMA;
  // one in three over 300: records.
  for (ObjectId v = 10000; v < 19000; ++v)
    if ((v - 10000) % 3 != 2) graph.assign_vertex(v, v, 1);
  for (ObjectId v = 1000; v < 1300; v += 3) graph.assign_vertex(v, v, 1);

  MirrorPlan plan;
  plan_mirror_sync(graph, changes, entries, entries, nullptr, plan);
  const std::uint64_t changed_edges = 20000 + 150 + 100 + 2000, changed_vertices = 6000 + 100;
  CHECK(plan.changed_bytes == changed_edges * MirrorPlan::kEdgeBytes + changed_vertices * MirrorPlan::kVertexBytes);
  REQUIRE(plan.direct[static_cast<int>(MirrorArray::Edges)].size() == 1);
  CHECK(plan.direct[static_cast<int>(MirrorArray::Edges)][0] == ElementRange{1000, 40999});
  for (const MirrorArray array : {MirrorArray::Begin, MirrorArray::Degree}) {
    REQUIRE(plan.direct[static_cast<int>(array)].size() == 1);
    CHECK(plan.direct[static_cast<int>(array)][0] == ElementRange{10000, 18999});
  }
  CHECK(plan.edge_run_count() == 10);
  CHECK(plan.edge_pair_count() == 150 + 2000);
  CHECK(plan.vertex_run_count() == 0);
  CHECK(plan.vertex_record_count() == 100);
  check_plan_updates(graph, plan, before, nullptr);

  // A refresh plans the same clusters, and one given up restores only the bits it took.
  const auto vertices_before = runs_of(changes.vertices, entries), edges_before = runs_of(changes.edges, entries);
  MirrorPlan refresh;
  CHECK(plan_mirror_refresh(changes, entries, entries, refresh) == RefreshPlanEnd::Whole);
  CHECK(refresh.direct[static_cast<int>(MirrorArray::Edges)] == plan.direct[static_cast<int>(MirrorArray::Edges)]);
  CHECK(refresh.patch_bytes == plan.patch_bytes);
  CHECK(changes.edges.count(entries) == 0);
  restore_mirror_plan(refresh, changes);
  CHECK(runs_of(changes.edges, entries) == edges_before);
  CHECK(runs_of(changes.vertices, entries) == vertices_before);
}

TEST_CASE("a long stretch changed at random, a little over half, goes by DMA as one range, its changed entries "
          "counted exactly") {
  RefGraph graph;
  const std::uint64_t entries = 64 * ChangeBitmap::kIndicesPerChunk;
  GraphChanges& changes = bare_graph(graph, entries);
  const HostCopy before(graph);
  std::mt19937_64 rng(5);
  std::uint64_t first = entries, last = 0, changed = 0;
  for (std::uint64_t e = 10001; e < 200001; ++e)
    if (rng() % 100 < 60) {
      graph.set_edge(e, static_cast<ObjectId>(e % 1000 + 1));
      first = std::min(first, e);
      last = e;
      ++changed;
    }
  for (const unsigned threads : {1u, 3u}) {
    ThreadPool pool(threads);
    MirrorPlan plan;
    plan_mirror_sync(graph, changes, entries, entries, &pool, plan);
    CHECK(plan.changed_bytes == changed * MirrorPlan::kEdgeBytes);
    // By DMA from the first chunk's runs (clustered) to the last chunk, whose 3,392
    // entries changed at random fall below a cluster's least size and go run by run; cut
    // where a slice ends on an unchanged entry.
    const auto& direct = plan.direct[static_cast<int>(MirrorArray::Edges)];
    REQUIRE(!direct.empty());
    CHECK(direct.size() <= 3);
    CHECK(direct.front().begin >= first);
    CHECK(direct.front().begin < 3 * ChangeBitmap::kIndicesPerChunk);
    CHECK(direct.back().end <= 48 * ChangeBitmap::kIndicesPerChunk);
    CHECK(direct.back().end > 48 * ChangeBitmap::kIndicesPerChunk - 64);
    for (std::size_t r = 1; r < direct.size(); ++r) CHECK(direct[r].begin - direct[r - 1].end < 64);
    CHECK(plan.patch_bytes < 2 * (last + 1 - direct.back().end) * MirrorPlan::kEdgeBytes + plan.table_bytes());
    check_plan_updates(graph, plan, before, &pool);
  }
}

TEST_CASE("bursts of every density, gathered into clusters: the plan brings a copy up to date within twice the "
          "changed bytes, and a refresh of them restores bit for bit") {
  std::mt19937_64 rng(31);
  for (int round = 0; round < 6; ++round) {
    CAPTURE(round);
    RefGraph graph;
    const std::uint64_t entries = 64 * ChangeBitmap::kIndicesPerChunk;
    GraphChanges& changes = bare_graph(graph, entries);
    const HostCopy before(graph);
    std::uint64_t changed = 0;
    // Bursts from a few entries to 60,000, at densities around the half that decides
    // whether a stretch goes whole, random or regular (every other, two in three, runs
    // of three with gaps of two), in edges and vertices, some touching or overlapping.
    for (int burst = 0; burst < 40; ++burst) {
      const std::uint64_t length = 1 + rng() % (burst % 4 == 0 ? 60000 : 3000);
      const std::uint64_t at = rng() % (entries - length);
      const unsigned pattern = static_cast<unsigned>(rng() % 5);
      const double density = std::array{0.3, 0.45, 0.5, 0.55, 0.7, 1.0}[rng() % 6];
      const bool vertices = rng() % 4 == 0;
      for (std::uint64_t k = 0; k < length; ++k) {
        const bool change = pattern == 0   ? k % 2 == 0
                            : pattern == 1 ? k % 3 != 2
                            : pattern == 2 ? k % 5 < 3
                                           : std::uniform_real_distribution<>(0, 1)(rng) < density;
        if (!change) continue;
        const std::uint64_t e = at + k;
        if (vertices) {
          graph.assign_vertex(static_cast<ObjectId>(e), graph.begin(static_cast<ObjectId>(e)) + 1, 1);
        } else {
          graph.set_edge(e, static_cast<ObjectId>(graph.edge_data()[e] + 1));
        }
        ++changed;
      }
    }
    REQUIRE(changed > 0);
    std::uint64_t changed_bytes = 0;
    for (const unsigned threads : {1u, 4u}) {
      CAPTURE(threads);
      ThreadPool pool(threads);
      MirrorPlan plan;
      plan_mirror_sync(graph, changes, entries, entries, &pool, plan);
      if (threads == 1) changed_bytes = plan.changed_bytes;
      CHECK(plan.changed_bytes == changed_bytes);
      check_plan_updates(graph, plan, before, &pool);
    }
    const auto vertices_before = runs_of(changes.vertices, entries), edges_before = runs_of(changes.edges, entries);
    MirrorPlan refresh;
    CHECK(plan_mirror_refresh(changes, entries, entries, refresh) == RefreshPlanEnd::Whole);
    CHECK(refresh.changed_bytes == changed_bytes);
    check_plan_updates(graph, refresh, before, nullptr);
    CHECK(changes.edges.count(entries) + changes.vertices.count(entries) == 0);
    restore_mirror_plan(refresh, changes);
    CHECK(runs_of(changes.edges, entries) == edges_before);
    CHECK(runs_of(changes.vertices, entries) == vertices_before);
  }
}

TEST_CASE("a refresh whose index spaces end inside a chunk takes the changes there and ends") {
  RefGraph graph;
  const std::uint64_t entries = 5 * ChangeBitmap::kIndicesPerChunk + 100;
  GraphChanges& changes = bare_graph(graph, entries);
  for (const std::uint64_t i : {std::uint64_t{3}, entries - 90, entries - 1}) {
    changes.vertices.mark(i);
    changes.edges.mark(i);
  }
  MirrorPlan plan;
  CHECK(plan_mirror_refresh(changes, entries, entries, plan) == RefreshPlanEnd::Whole);
  CHECK(plan.changed_bytes == 3 * (MirrorPlan::kVertexBytes + MirrorPlan::kEdgeBytes));
  CHECK(changes.vertices.count(entries) + changes.edges.count(entries) == 0);
}

TEST_CASE("a sync's plan hands each slice on in index order as it is planned; the rest of a whole upload covers "
          "the graph outside the ranges sent") {
  RefGraph graph;
  const std::uint64_t entries = 64 * ChangeBitmap::kIndicesPerChunk;  // several slices on four threads
  GraphChanges& changes = bare_graph(graph, entries);
  for (std::uint64_t e = 0; e < entries; e += 40000)  // stretches of every other edge, by DMA
    for (std::uint64_t k = e; k < std::min(entries, e + 30000); k += 2)
      graph.set_edge(k, static_cast<ObjectId>(k % 7 + 1));
  for (ObjectId v = 5; v < entries; v += 1000) graph.assign_vertex(v, v, 1);  // records
  ThreadPool pool(4);
  MirrorPlan plan;
  std::vector<const MirrorPlan::Slice*> handed;
  std::vector<ElementRange> sent[2];  // vertices, edges
  const std::thread::id caller = std::this_thread::get_id();
  plan_mirror_sync(graph, changes, entries, entries, &pool, plan, [&](const MirrorPlan::Slice& slice) {
    CHECK(std::this_thread::get_id() == caller);
    handed.push_back(&slice);
    sent[slice.edges].insert(sent[slice.edges].end(), slice.direct.begin(), slice.direct.end());
  });
  REQUIRE(handed.size() == plan.slices.size());
  REQUIRE(plan.slices.size() > 4);
  for (std::size_t s = 0; s < handed.size(); ++s) CHECK(handed[s] == &plan.slices[s]);
  REQUIRE(sent[1].size() > 2);
  std::uint64_t sent_bytes = 0;
  for (const ElementRange r : sent[1]) sent_bytes += (r.end - r.begin) * MirrorPlan::kEdgeBytes;
  CHECK(sent_bytes == plan.direct_bytes);

  // The rest: every entry outside the ranges sent, each once, and no patch.
  const std::uint64_t changed_bytes = plan.changed_bytes;
  plan_mirror_upload_rest(graph, plan);
  CHECK(plan.pieces.empty());
  CHECK(plan.patch_bytes == 0);
  CHECK(plan.changed_bytes == changed_bytes);
  CHECK(plan.direct_bytes + sent_bytes == entries * (MirrorPlan::kVertexBytes + MirrorPlan::kEdgeBytes));
  std::vector<int> covered(entries, 0);
  for (const ElementRange r : sent[1])
    for (std::uint64_t e = r.begin; e < r.end; ++e) ++covered[e];
  for (const ElementRange r : plan.direct[static_cast<int>(MirrorArray::Edges)])
    for (std::uint64_t e = r.begin; e < r.end; ++e) ++covered[e];
  CHECK(std::count(covered.begin(), covered.end(), 1) == static_cast<std::ptrdiff_t>(entries));
  for (const MirrorArray array : {MirrorArray::Begin, MirrorArray::Degree})
    CHECK(plan.direct[static_cast<int>(array)] == std::vector<ElementRange>{{0, entries}});  // none of them sent
}

TEST_CASE("a refresh plan ends after the slice that reaches its most entries, and the next pass takes the rest") {
  RefGraph graph;
  const std::uint64_t entries = 64 * ChangeBitmap::kIndicesPerChunk;  // several slices
  GraphChanges& changes = bare_graph(graph, entries);
  for (std::uint64_t i = 0; i < entries; i += 2) changes.edges.mark(i);
  const std::uint64_t marked = changes.edges.count(entries);
  MirrorPlan plan;
  std::uint64_t passes = 0, taken = 0;
  for (RefreshPlanEnd end = RefreshPlanEnd::Enough; end == RefreshPlanEnd::Enough; ++passes) {
    end = plan_mirror_refresh(changes, entries, entries, plan, nullptr, marked / 5);
    const std::uint64_t this_pass = plan.changed_bytes / MirrorPlan::kEdgeBytes;
    if (end == RefreshPlanEnd::Enough) CHECK(this_pass >= marked / 5);
    CHECK(this_pass > 0);
    taken += this_pass;
    CHECK(changes.edges.count(entries) == marked - taken);
    REQUIRE(passes < 20);
  }
  CHECK(taken == marked);
  CHECK(passes >= 2);  // a slice at least a pass: here each of the four slices holds more than the most
}
