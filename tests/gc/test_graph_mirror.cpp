// The device mirror's sync (gc/device/graph_mirror.hpp): what it plans to send stays
// within twice the bytes that changed, and the device copy stays exact under
// adversarial mutation (reused slots, growing arrays, edges rewired back and forth,
// sparse stores, huge arrays rewritten), checked by marking on every device against
// the serial marker after every step.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "device_fixtures.hpp"
#include "fault_injection.hpp"
#include "gc/device/graph_mirror.hpp"
#include "gc/device/mirror_plan.hpp"
#include "gc/device/mirror_refresher.hpp"
#include "gc/device/device_registry.hpp"
#include "gc/heap/sweep.hpp"
#include "gc/util/thread_pool.hpp"
#include "gc/markers/gpu_bfs_marker.hpp"
#include "gc/markers/gpu_dfs_marker.hpp"
#include "gc/markers/serial_marker.hpp"
#include "gc/plans/collector.hpp"

using namespace gcvm;

namespace {

double detail(const CollectionStats& stats, const std::string& key) {
  for (const auto& [k, v] : stats.mark.details)
    if (k == key) return v;
  FAIL("no detail " << key);
  return 0;
}

/// A heap under scripted attack, collected with --verify (marks compared with the
/// serial marker's) after every step.
/// A heap collected by gpu-bfs with verification. The byte counts these tests check are
/// the pause's alone: no refresh runs between collections unless `refresh` says so.
struct MirrorFixture {
  /// `refresh`: the marker's refresh= option. `verify`: whether each collection
  /// checks the graph and the marks first (which takes time before the pause's mark).
  explicit MirrorFixture(const std::string& device, RefGraphMode mode = RefGraphMode::Barrier,
                         const std::string& refresh = "off", bool verify = true)
      : options{{"refresh", refresh}},
        heap(HeapConfig{.graph_mode = mode}),
        collector(heap, std::make_unique<GpuBfsMarker>(GpuBfsMarkerOptions::parse(options, device)), verify) {
    node = heap.shapes().intern(4, 1);
  }
  CollectionStats collect() {
    std::vector<ObjectId> live_roots;
    for (ObjectId r : roots)
      if (r != kNullRef) live_roots.push_back(r);
    return collector.collect(live_roots, "test");  // throws VerifyError on any difference
  }
  /// A rooted reference array of `n` nodes, each pointing at its neighbours.
  ObjectId chain_array(std::uint64_t n) {
    const ObjectId array = heap.allocate_ref_array(n);
    roots.push_back(array);
    ObjectId previous = kNullRef;
    for (std::uint64_t i = 0; i < n; ++i) {
      const ObjectId o = heap.allocate(node);
      heap.store_element(array, i, o);
      if (previous != kNullRef) heap.store_ref(o, 0, previous);
      previous = o;
    }
    return array;
  }

  GcOptions options;
  Heap heap;
  Collector collector;
  ShapeId node;
  std::vector<ObjectId> roots;
};

/// A patch piece's section table, which the byte bound allows on top of twice the
/// changed bytes for every piece: these tests' graphs have fewer than 2^32 edges, so
/// their pairs lie in one segment at most (mirror_plan.hpp).
constexpr double kTableBytes = MirrorPatchLayout::section_table_bytes(1);

/// Checks the byte bound of a sync that was not a full upload, that a pause's sync
/// waits for the device exactly when it copied runs straight from the host arrays (a
/// patch alone is applied before the mark's first launch; SyncEnd::BeforeNextLaunch),
/// and that its timeline fits in it: a first copy exactly when it sent bytes, a wait
/// only when it waited.
void check_bound(const CollectionStats& stats) {
  CHECK(detail(stats, "sync_waited") == (detail(stats, "sync_direct_bytes") > 0 ? 1.0 : 0.0));
  CHECK((detail(stats, "sync_first_copy_ms") > 0) == (detail(stats, "sync_bytes") > 0));
  CHECK(detail(stats, "sync_first_copy_ms") <= detail(stats, "sync_ms"));
  CHECK(detail(stats, "sync_wait_ms") <= detail(stats, "sync_ms"));
  if (detail(stats, "sync_waited") == 0) CHECK(detail(stats, "sync_wait_ms") == 0);
  if (detail(stats, "sync_full") != 0) return;
  CHECK(detail(stats, "sync_bytes") <=
        2 * detail(stats, "sync_changed_bytes") + detail(stats, "sync_patch_pieces") * kTableBytes);
}

}  // namespace

TEST_CASE("a sync plan sends at most twice the changed bytes, by the cheapest encoding per run") {
  Heap heap;
  const ShapeId node = heap.shapes().intern(2, 0);
  std::vector<ObjectId> objects;
  for (int i = 0; i < 20000; ++i) objects.push_back(heap.allocate(node));
  const ObjectId big = heap.allocate_ref_array(100000);
  RefGraph& graph = heap.graph();
  const std::uint64_t vertices = graph.vertex_count(), edges = graph.edge_count();
  graph.changes().clear();

  // Isolated stores: pairs. A short run: a packed run. A long run: direct.
  heap.store_ref(objects[10], 1, objects[20]);
  heap.store_ref(objects[5000], 0, objects[21]);
  for (int i = 0; i < 20; ++i) heap.store_element(big, 500 + i, objects[i]);
  for (int i = 0; i < 40000; ++i) heap.store_element(big, 50000 + i, objects[i % 1000]);
  MirrorPlan plan;
  plan_mirror_sync(graph, graph.changes(), vertices, edges, nullptr, plan);
  CHECK(plan.edge_pair_count() == 2);
  CHECK(plan.edge_run_count() == 1);
  REQUIRE(plan.direct[static_cast<int>(MirrorArray::Edges)].size() >= 1);
  CHECK(plan.direct[static_cast<int>(MirrorArray::Edges)][0] ==
        ElementRange{graph.begin(big) + 50000, graph.begin(big) + 90000});
  REQUIRE(plan.pieces.size() == 1);
  CHECK(plan.table_bytes() == MirrorPatchLayout::section_table_bytes(1));
  CHECK(plan.direct_bytes + plan.patch_bytes <= 2 * plan.changed_bytes + plan.table_bytes());
  const std::uint64_t changed_edges = 2 + 20 + 40000;
  CHECK(plan.changed_bytes >= changed_edges * 4);

  // Nothing changed: nothing to send.
  graph.changes().clear();
  MirrorPlan idle;
  plan_mirror_sync(graph, graph.changes(), graph.vertex_count(), graph.edge_count(), nullptr, idle);
  CHECK(idle.changed_bytes == 0);
  CHECK(idle.direct_bytes + idle.patch_bytes == 0);
}

TEST_CASE("one launch applies a patch of edge pairs, vertex records and runs into all three arrays") {
  // A bare graph whose one chain from the root passes through every changed entry:
  // an edge pair, a packed run of edges, a vertex record or a run of vertices (begin
  // and degree) on each hop, so a section left unapplied cuts the chain and gpu-bfs's
  // marks differ from the serial marker's. No CPU fallback (it would read the host
  // graph) and no refresh (the pause's one patch must carry every section).
  constexpr std::uint64_t kVertices = 4096;
  constexpr std::uint64_t kWide = kVertices / 2;  // [0, kWide): degree 4; the rest degree 0
  for (const std::string& device : test::test_devices()) {
    CAPTURE(device);
    RefGraph graph;
    REQUIRE(graph.grow_vertices(kVertices));
    const EdgeIndex base = *graph.reserve_edges(4 * kVertices);
    for (ObjectId v = 0; v < kVertices; ++v) graph.assign_vertex(v, base + 4 * v, v < kWide ? 4 : 0);
    const std::vector<ObjectId> roots{0};
    const MarkRequest request{graph, roots, kVertices / kSlotsPerBlock, &graph.changes()};
    GpuBfsMarker gpu(GpuBfsMarkerOptions::parse({{"refresh", "off"}, {"queue", "levels"}, {"fallback", "off"}}, device));
    SerialMarker serial;
    MarkBitmap expected, actual;
    gpu.mark(request, actual);  // the first sync uploads everything
    const std::uint64_t synced_vertices = graph.vertex_count(), synced_edges = graph.edge_count();

    // Wide vertices are taken in steps of 3 (the one after each may join it in an edge
    // run, the next stays unchanged) and narrow ones far enough apart that the plan does
    // not send them together as one range (mirror_plan.hpp: clusters).
    ObjectId next_wide = 0, next_narrow = kWide;
    auto wide = [&] { return next_wide += 3; };
    ObjectId tail = 0;  // the chain's end: a wide vertex whose edges have not changed
    auto reassign = [&](ObjectId v, ObjectId target) {  // v's row moves to one fresh edge: target
      const EdgeIndex edge = *graph.reserve_edges(1);
      graph.assign_vertex(v, edge, 1);
      graph.set_edge(edge, target);
    };
    for (int hop = 0; hop < 400; ++hop) {
      const ObjectId next = wide();
      REQUIRE(next + 1 < kWide);
      if (hop % 40 == 7) {  // a packed edge run: tail's four slots and its neighbour's
        for (std::uint32_t k = 0; k < 4; ++k) {
          graph.record_store(tail, k, k == 0 ? tail + 1 : 0);
          graph.record_store(tail + 1, k, k == 0 ? next : 0);
        }
      } else if (hop % 40 == 19) {  // a run of five vertices, one after the other
        const ObjectId first = next_narrow + 4;
        next_narrow += 13;
        graph.record_store(tail, 0, first);
        for (ObjectId v = first; v < first + 5; ++v) reassign(v, v + 1 < first + 5 ? v + 1 : next);
      } else if (hop % 10 == 3) {  // a vertex record
        const ObjectId single = next_narrow;
        next_narrow += 3;
        graph.record_store(tail, 0, single);
        reassign(single, next);
      } else {  // an edge pair
        graph.record_store(tail, 0, next);
      }
      tail = next;
    }
    REQUIRE(next_narrow < kVertices);

    MirrorPlan plan;
    plan_mirror_sync(graph, graph.changes(), synced_vertices, synced_edges, nullptr, plan);
    CHECK(plan.edge_pair_count() > GCVM_GROUP_SIZE);  // more than one group's worth of items
    CHECK(plan.vertex_record_count() > 0);
    CHECK(plan.vertex_run_count() > 0);  // into Begin and into Degree
    CHECK(plan.edge_run_count() > 0);
    for (const auto& ranges : plan.direct) CHECK(ranges.empty());

    const MarkStats want = serial.mark(request, expected);
    const MarkStats got = gpu.mark(request, actual);
    CHECK(*got.detail("sync_full") == 0);
    CHECK(*got.detail("sync_direct_bytes") == 0);
    CHECK(*got.detail("sync_vertex_records") == static_cast<double>(plan.vertex_record_count()));
    CHECK(*got.detail("sync_patch_runs") ==
          static_cast<double>(2 * plan.vertex_run_count() + plan.edge_run_count()));
    CHECK(want.marked_objects > 400);
    CHECK(got.marked_objects == want.marked_objects);
    CHECK(actual == expected);
  }
}

TEST_CASE("the mirror stays exact under adversarial mutation, within the byte bound") {
  for (const std::string& device : test::test_devices()) {
    for (auto mode : {RefGraphMode::Barrier, RefGraphMode::Rebuild}) {
      CAPTURE(device);
      MirrorFixture f(device, mode);
      std::mt19937_64 rng(99);
      const ObjectId array = f.chain_array(30000);
      const CollectionStats first = f.collect();
      CHECK(detail(first, "sync_full") == 1);  // the first sync uploads everything
      check_bound(first);  // it waits for its copies from the host arrays

      // Edges rewired back and forth between syncs (A -> B -> A) and across them.
      for (int round = 0; round < 3; ++round) {
        const ObjectId a = f.heap.load_element(array, 7), b = f.heap.load_element(array, 9);
        f.heap.store_element(array, 7, b);
        f.heap.store_element(array, 7, a);
        f.heap.store_element(array, 100, round % 2 == 0 ? b : a);
        check_bound(f.collect());
      }

      // Sparse isolated stores across the whole graph: pairs.
      for (int i = 0; i < 300; ++i) {
        const ObjectId holder = f.heap.load_element(array, rng() % 30000);
        f.heap.store_ref(holder, 1 + rng() % 3, f.heap.load_element(array, rng() % 30000));
      }
      auto sparse = f.collect();
      check_bound(sparse);
      CHECK(detail(sparse, "sync_full") == 0);
      CHECK(detail(sparse, "sync_edge_pairs") > 0);
      CHECK(detail(sparse, "sync_bytes") <= 2 * 300 * 4 + kTableBytes);
      // A patch alone is applied before the mark's first launch, without a wait.
      CHECK(detail(sparse, "sync_direct_bytes") == 0);
      CHECK(detail(sparse, "sync_waited") == 0);
      CHECK(detail(sparse, "sync_gbps") == 0);

      // Drop half the nodes, collect (their slots are freed), then allocate into the
      // reused slots: only the reused slots' vertices and edges cross the link.
      for (std::uint64_t i = 0; i < 30000; i += 2) f.heap.store_element(array, i, kNullRef);
      for (std::uint64_t i = 1; i < 30000; i += 2) f.heap.store_ref(f.heap.load_element(array, i), 0, kNullRef);
      check_bound(f.collect());
      for (std::uint64_t i = 0; i < 30000; i += 2) {
        const ObjectId fresh = f.heap.allocate(f.node);
        f.heap.store_element(array, i, fresh);
        f.heap.store_ref(fresh, 2, f.heap.load_element(array, (i + 1) % 30000));
      }
      check_bound(f.collect());

      // Arrays that grow the graph (and the device arrays, which keep their contents).
      for (std::uint64_t n = 10; n < 400000; n *= 7) {
        const ObjectId grown = f.heap.allocate_ref_array(n);
        f.roots.push_back(grown);
        for (std::uint64_t i = 0; i < n; i += 1 + n / 100) f.heap.store_element(grown, i, f.heap.load_element(array, i % 30000));
        const auto stats = f.collect();
        check_bound(stats);
      }

      // Over half of the graph's bytes changed, after the mirror holds it: what was
      // planned to go by DMA is sent as planned and the rest of the graph by DMA too,
      // each entry once.
      {
        std::uint64_t rewritten = 0;
        for (const ObjectId root : f.roots)
          for (std::uint64_t i = 0; i < f.heap.array_length(root); ++i, ++rewritten)
            f.heap.store_element(root, i, f.heap.load_element(array, (i * 13 + 1) % 30000));
        for (std::uint64_t i = 0; i < 30000; ++i, rewritten += 2)
          for (const std::uint32_t slot : {1u, 2u})
            f.heap.store_ref(f.heap.load_element(array, i), slot, f.heap.load_element(array, (i * 7 + slot) % 30000));
        const RefGraph& graph = f.heap.graph();
        const double whole = static_cast<double>(graph.vertex_count() * MirrorPlan::kVertexBytes +
                                                 graph.edge_count() * MirrorPlan::kEdgeBytes);
        const auto most = f.collect();
        check_bound(most);
        CHECK(rewritten > 200000);
        CHECK(detail(most, "sync_full") == 1);
        CHECK(detail(most, "sync_changed_bytes") > whole / 2);
        CHECK(detail(most, "sync_bytes") == whole);
        CHECK(detail(most, "sync_direct_bytes") == whole);
        CHECK(detail(most, "sync_direct_ranges") > 3);  // some sent while planning, the rest after
      }

      // A huge array rewritten end to end: direct ranges.
      for (std::uint64_t i = 0; i < 30000; ++i)
        f.heap.store_element(array, i, f.heap.load_element(array, (i * 7919) % 30000));
      const auto rewritten = f.collect();
      check_bound(rewritten);

      // Everything dropped but the array, then churn in the freed slots.
      f.roots.resize(1);
      check_bound(f.collect());
      for (int i = 0; i < 5000; ++i) {
        const ObjectId o = f.heap.allocate(f.node);
        f.heap.store_element(array, rng() % 30000, o);
      }
      check_bound(f.collect());

      // Scattered stores by the ten thousand, fewer changed entries than
      // GraphMirror::kParallelEntries: planned and packed on the caller's thread.
      for (std::uint64_t i = 0; i < 65536; ++i) {
        const ObjectId holder = f.heap.load_element(array, rng() % 30000);
        if (holder != kNullRef) f.heap.store_ref(holder, rng() % 4, f.heap.load_element(array, rng() % 30000));
      }
      const auto scattered = f.collect();
      check_bound(scattered);
      CHECK(detail(scattered, "sync_full") == 0);
      CHECK(detail(scattered, "sync_threads") == 1);

      // Three times kParallelEntries isolated changes (one slot in three: too sparse to
      // go as ranges): planned and packed on the pause's pool (the Collector's sweep
      // pool, MarkRequest::host_pool), a patch of several pieces. The objects they store
      // were reachable only from `keep` before, which is dropped: a piece not applied
      // leaves them unmarked.
      const std::uint64_t slots = 9 * GraphMirror::kParallelEntries;
      const ObjectId wide = f.heap.allocate_ref_array(slots);
      f.roots.push_back(wide);
      const ObjectId keep = f.heap.allocate_ref_array(slots / 3);
      for (std::uint64_t i = 0; i < slots / 3; ++i) f.heap.store_element(keep, i, f.heap.allocate(f.node));
      f.roots.push_back(keep);
      check_bound(f.collect());
      for (std::uint64_t i = 0; i < slots; i += 3) f.heap.store_element(wide, i, f.heap.load_element(keep, i / 3));
      f.roots.pop_back();
      const auto many = f.collect();
      check_bound(many);
      CHECK(detail(many, "sync_full") == 0);
      CHECK(detail(many, "sync_changed_bytes") >= 3 * GraphMirror::kParallelEntries * 4);
      CHECK(detail(many, "sync_threads") == sleeping_sweep_pool_threads(ThreadPool::resolve(0)));
      CHECK(detail(many, "sync_patch_pieces") >= 2);
      CHECK(detail(many, "sync_patch_bytes") > MirrorPlan::kPieceBytes);
    }
  }
}

TEST_CASE("a patch larger than the page-locked patch buffer goes over in parts of whole pieces") {
  // A buffer of two and a half pieces: parts. One of half a piece, which no piece fits:
  // the whole patch at once, staged where the backend stages (CUDA), piece by piece.
  const std::uint64_t capacities[] = {2 * MirrorPlan::kPieceBytes + MirrorPlan::kPieceBytes / 2,
                                      MirrorPlan::kPieceBytes / 2};
  for (const std::string& device : test::test_devices()) {
    for (const std::uint64_t capacity : capacities) {
      CAPTURE(device);
      CAPTURE(capacity);
      auto backend = std::make_unique<test::FaultyBackend>(open_device(parse_device_selector(device)), test::Fault{});
      backend->cap_patch_buffer(capacity);
      GcOptions options{{"refresh", "off"}};
      Heap heap;
      Collector collector(heap,
                          std::make_unique<GpuBfsMarker>(GpuBfsMarkerOptions::parse(options, device), std::move(backend)),
                          /*verify=*/true);
      const ShapeId node = heap.shapes().intern(4, 1);
      // As the adversarial test's last step, larger: isolated stores of objects that only
      // `keep` held before, so that a part not applied leaves them unmarked; and a
      // rewritten array, sent by DMA ahead of the patch (the CUDA backend's pieces cross
      // the link beside such copies), whose elements only it holds then too.
      const std::uint64_t slots = 27 * GraphMirror::kParallelEntries;
      const std::uint64_t dense_slots = 2 * GraphMirror::kParallelEntries;
      const ObjectId wide = heap.allocate_ref_array(slots);
      const ObjectId dense = heap.allocate_ref_array(dense_slots);
      const ObjectId keep = heap.allocate_ref_array(slots / 3 + dense_slots);
      for (std::uint64_t i = 0; i < slots / 3 + dense_slots; ++i) heap.store_element(keep, i, heap.allocate(node));
      std::vector<ObjectId> roots{wide, dense, keep};
      collector.collect(roots, "test");
      for (std::uint64_t i = 0; i < slots; i += 3) heap.store_element(wide, i, heap.load_element(keep, i / 3));
      for (std::uint64_t i = 0; i < dense_slots; ++i) heap.store_element(dense, i, heap.load_element(keep, slots / 3 + i));
      roots.pop_back();
      const CollectionStats stats = collector.collect(roots, "test");  // throws VerifyError on any difference
      CHECK(detail(stats, "sync_full") == 0);
      CHECK(detail(stats, "sync_direct_bytes") >= dense_slots * MirrorPlan::kEdgeBytes);
      CHECK(detail(stats, "sync_patch_bytes") > 4 * MirrorPlan::kPieceBytes);
      if (capacity >= MirrorPlan::kPieceBytes) {
        CHECK(detail(stats, "sync_patch_parts") >= 2);
        CHECK(detail(stats, "sync_patch_pieces") > detail(stats, "sync_patch_parts"));
      } else {
        CHECK(detail(stats, "sync_patch_parts") == 1);
        CHECK(detail(stats, "sync_patch_pieces") >= 2);
      }
      check_bound(stats);
      CHECK(stats.mark.marked_objects >= slots / 3 + dense_slots);
    }
  }
}

TEST_CASE("allocation into a reused slot does not resend the slot's block neighbours") {
  for (const std::string& device : test::test_devices()) {
    CAPTURE(device);
    MirrorFixture f(device);
    const ObjectId array = f.chain_array(6400);  // 100 full blocks of nodes
    f.collect();
    f.heap.store_element(array, 3200, kNullRef);  // one node dies
    f.heap.store_ref(f.heap.load_element(array, 3201), 0, kNullRef);
    f.collect();
    const ObjectId fresh = f.heap.allocate(f.node);  // into the freed slot
    f.heap.store_element(array, 3200, fresh);
    f.heap.store_ref(fresh, 1, array);
    const auto stats = f.collect();
    CHECK(detail(stats, "sync_full") == 0);
    // Changed: one array element and one edge of the new node (its other edges were
    // cleared when the old node's were already null or are cleared now: at most 4).
    CHECK(detail(stats, "sync_changed_bytes") <= (1 + 4) * 4);
    check_bound(stats);
  }
}

TEST_CASE("a mirror whose changes another consumer cleared uploads everything, and stays exact") {
  for (const std::string& device : test::test_devices()) {
    CAPTURE(device);
    Heap heap;
    const ShapeId node = heap.shapes().intern(2, 0);
    std::vector<ObjectId> objects;
    for (int i = 0; i < 5000; ++i) objects.push_back(heap.allocate(node));
    for (int i = 1; i < 5000; ++i) heap.store_ref(objects[i - 1], 0, objects[i]);
    const std::vector<ObjectId> roots{objects[0]};
    GpuBfsMarker bfs(GpuBfsMarkerOptions::parse({}, device));
    GpuDfsMarker dfs(GpuDfsMarkerOptions::parse({}, device));
    MarkBitmap marks_bfs, marks_dfs;
    const MarkRequest request{heap.graph(), roots, heap.blocks().high_water(), &heap.graph().changes()};
    bfs.mark(request, marks_bfs);
    dfs.mark(request, marks_dfs);
    for (int round = 0; round < 4; ++round) {
      heap.store_ref(objects[100 + round], 0, kNullRef);  // cut the chain: fewer marks
      bfs.mark(request, marks_bfs);  // consumes and clears the changes
      heap.store_ref(objects[100 + round], 0, objects[101 + round]);
      heap.store_ref(objects[200 + round], 0, kNullRef);
      const MarkStats stats = dfs.mark(request, marks_dfs);  // must not trust its stale copy
      CHECK(marks_dfs.count() == 201 + static_cast<std::uint64_t>(round));
      for (const auto& [key, value] : stats.details)
        if (key == "sync_full") CHECK(value == 1);
      heap.store_ref(objects[200 + round], 0, objects[201 + round]);
    }
  }
}

TEST_CASE("refreshes between pauses keep the mirror exact while the mutator stores, and leave the pause little") {
  // The default interval, and one much shorter than the bursts below (passes while
  // the mutator stores, and one likely in flight when the pause begins).
  for (const std::string& device : test::test_devices()) {
    for (const std::string interval : {"on", "50"}) {
      CAPTURE(device);
      CAPTURE(interval);
      MirrorFixture f(device, RefGraphMode::Barrier, interval);
      std::mt19937_64 rng(17);
      const std::uint64_t n = 20000;
      const ObjectId array = f.chain_array(n);
      f.collect();
      double refreshed = 0;
      for (int round = 0; round < 6; ++round) {
        // Stores, drops and allocation into freed slots, spread over several refresh
        // intervals, the last ones right before the pause (its sync must catch them).
        for (int burst = 0; burst < 8; ++burst) {
          for (int k = 0; k < 2000; ++k) {
            const std::uint64_t i = rng() % n;
            if (rng() % 4 == 0) {
              const ObjectId fresh = f.heap.allocate(f.node);
              f.heap.store_ref(fresh, 0, f.heap.load_element(array, (i + 1) % n));
              f.heap.store_element(array, i, fresh);
            } else if (const ObjectId holder = f.heap.load_element(array, i); holder != kNullRef) {
              f.heap.store_ref(holder, static_cast<std::uint32_t>(rng() % 4), f.heap.load_element(array, rng() % n));
            }
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
        const auto stats = f.collect();  // verified against the serial marker
        refreshed += detail(stats, "sync_refresh_bytes");
        CHECK(detail(stats, "sync_bytes") <=
        2 * detail(stats, "sync_changed_bytes") + detail(stats, "sync_patch_pieces") * kTableBytes);
      }
      CHECK(refreshed > 0);
    }
  }
}

TEST_CASE("refresh=off sends everything in the pause and reports no refreshes") {
  for (const std::string& device : test::test_devices()) {
    CAPTURE(device);
    MirrorFixture f(device);
    const ObjectId array = f.chain_array(1000);
    // Page-locked as the program commits it, before the first pause, where the backend
    // pins (CUDA; OpenCL cannot pin existing memory).
    if (device.rfind("cuda", 0) == 0) CHECK(f.heap.graph().pinned_bytes() > 0);
    f.collect();
    for (std::uint64_t i = 0; i < 1000; i += 2) f.heap.store_element(array, i, kNullRef);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const auto stats = f.collect();
    CHECK(detail(stats, "sync_changed_bytes") >= 500 * 4);
    for (const auto& [key, value] : stats.mark.details) CHECK(key.rfind("sync_refresh", 0) != 0);
  }
}

TEST_CASE("the refresher copies the graph before the first pause and its growth between pauses") {
  for (const std::string& device : test::test_devices()) {
    CAPTURE(device);
    MirrorFixture f(device, RefGraphMode::Barrier, "on");  // the collector starts the refresher
    std::mt19937_64 rng(5);
    const std::uint64_t n = 30000;
    const ObjectId array = f.chain_array(n);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const std::uint64_t graph_bytes =
        f.heap.graph().vertex_count() * MirrorPlan::kVertexBytes + f.heap.graph().edge_count() * MirrorPlan::kEdgeBytes;
    auto first = f.collect();  // verified against the serial marker
    CHECK(detail(first, "sync_full") == 0);
    CHECK(detail(first, "sync_refresh_bytes") >= graph_bytes);
    CHECK(detail(first, "sync_bytes") < graph_bytes / 4);
    double grown = 0, refreshed = 0;
    for (int round = 0; round < 4; ++round) {
      // Fresh objects past the old sizes (growth), stores into them and into old ones,
      // some right before the pause.
      const std::uint64_t vertices_before = f.heap.graph().vertex_count();
      const std::uint64_t edges_before = f.heap.graph().edge_count();
      for (int burst = 0; burst < 6; ++burst) {
        for (int k = 0; k < 3000; ++k) {
          const ObjectId fresh = f.heap.allocate(f.node);
          f.heap.store_ref(fresh, 1, f.heap.load_element(array, rng() % n));
          f.heap.store_element(array, rng() % n, fresh);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      grown += static_cast<double>((f.heap.graph().vertex_count() - vertices_before) * MirrorPlan::kVertexBytes +
                                   (f.heap.graph().edge_count() - edges_before) * MirrorPlan::kEdgeBytes);
      const auto stats = f.collect();
      refreshed += detail(stats, "sync_refresh_bytes");
      CHECK(detail(stats, "sync_full") == 0);
    }
    CHECK(grown > 0);
    CHECK(refreshed >= grown);
  }
}

namespace {

/// Waits until a refresh pass has taken the change bit of edge `slot`: the pass plans
/// from then on. Fails after ten seconds.
void wait_until_taken(const RefGraph& graph, std::uint64_t slot) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (graph.changes().edges.marked(slot)) {
    if (std::chrono::steady_clock::now() > deadline) FAIL("no refresh pass took the stores");
  }
}

}  // namespace

TEST_CASE("a refresh pass the pause stops mid-plan hands its plan to the pause's sync, which sends it") {
  for (const std::string& device : test::test_devices()) {
    CAPTURE(device);
    // Passes a second apart: none runs while the stores below are made, and the pause
    // begins as soon as one starts taking them, while it plans. Without verification,
    // which would walk the heap before the mark while the pass goes on.
    MirrorFixture f(device, RefGraphMode::Barrier, "1000000", /*verify=*/false);
    const std::uint64_t slots = 6 * GraphMirror::kParallelEntries;
    const ObjectId wide = f.heap.allocate_ref_array(slots);
    f.roots.push_back(wide);
    f.roots.push_back(f.heap.allocate_ref_array(4 * slots));  // so that a round changes less than half the graph
    f.collect();
    bool handed_over = false;
    for (int attempt = 0; attempt < 4 && !handed_over; ++attempt) {
      CAPTURE(attempt);
      // Fresh objects reachable only through the stored slots: a store the device
      // missed leaves one unmarked, and the sweep frees it.
      std::vector<ObjectId> fresh;
      for (std::uint64_t i = 0; i < slots; i += 3) {
        fresh.push_back(f.heap.allocate(f.node));
        f.heap.store_element(wide, i, fresh.back());
      }
      wait_until_taken(f.heap.graph(), f.heap.graph().begin(wide));
      const auto stats = f.collect();
      CHECK(std::count_if(fresh.begin(), fresh.end(), [&](ObjectId o) { return !f.heap.is_live(o); }) == 0);
      check_bound(stats);
      CHECK(detail(stats, "sync_full") == 0);
      // A pass the pause stopped before it sent (the usual case here; a thread that
      // comes late to the stop may let it send first): the pause sends all the stores.
      handed_over = detail(stats, "sync_refresh_handed_over") == 1;
      if (handed_over) {
        CHECK(detail(stats, "sync_changed_bytes") >= static_cast<double>(slots / 3 * MirrorPlan::kEdgeBytes));
        CHECK(detail(stats, "sync_handed_over_bytes") > 0);
        CHECK(detail(stats, "sync_refresh_bytes") == 0);
      }
    }
    CHECK(handed_over);
  }
}

TEST_CASE("a refresh plan handed over that no sync took is marked again by the next pass, and sent whole") {
  for (const std::string& device : test::test_devices()) {
    CAPTURE(device);
    std::unique_ptr<DeviceBackend> backend = open_device(parse_device_selector(device));
    GraphMirror mirror(*backend);
    Heap heap;
    RefGraph& graph = heap.graph();
    const std::uint64_t slots = 6 * GraphMirror::kParallelEntries;
    const ObjectId wide = heap.allocate_ref_array(slots);
    const ShapeId leaf = heap.shapes().intern(1, 0);
    CHECK(mirror.sync(graph, &graph.changes()).full);
    std::atomic<bool> stop = false;
    bool handed_over = false;
    for (int attempt = 0; attempt < 4 && !handed_over; ++attempt) {
      // Every stored slot's value changes, whatever a pass sent before.
      const ObjectId target = heap.allocate(leaf);
      for (std::uint64_t i = 0; i < slots; i += 3) heap.store_element(wide, i, target);
      MirrorRefreshStats pass;
      std::thread refreshing([&] { pass = mirror.refresh(graph, graph.changes(), stop); });
      wait_until_taken(graph, graph.begin(wide));
      stop = true;
      refreshing.join();
      stop = false;
      handed_over = pass.handed_over == 1;
    }
    REQUIRE(handed_over);
    // No sync took it: the next passes mark its bits again and send every stored slot,
    // each once (the target's growth with them).
    MirrorRefreshStats sent;
    for (int pass = 0; pass < 100 && graph.changes().edges.count(graph.edge_count()) != 0; ++pass)
      sent += mirror.refresh(graph, graph.changes(), stop);
    CHECK(sent.handed_over == 0);
    CHECK(sent.changed_bytes >= slots / 3 * MirrorPlan::kEdgeBytes);
    CHECK(sent.changed_bytes < slots / 3 * MirrorPlan::kEdgeBytes * 101 / 100);  // and the targets' growth
    const MirrorSyncStats rest = mirror.sync(graph, &graph.changes());
    CHECK_FALSE(rest.full);
    CHECK(rest.changed_bytes < slots / 3 * MirrorPlan::kEdgeBytes / 100);  // none of the stores left
  }
}

TEST_CASE("a mark's device side runs on the refresher's thread, which resumes refreshing after it; errors reach "
          "the caller") {
  for (const std::string& device : test::test_devices()) {
    for (const RefreshWait wait : {RefreshWait::Sleep, RefreshWait::Poll}) {
      CAPTURE(device);
      CAPTURE(wait == RefreshWait::Poll);
      std::unique_ptr<DeviceBackend> backend = open_device(parse_device_selector(device));
      GraphMirror mirror(*backend);
      MirrorRefresher refresher(*backend, mirror, std::chrono::microseconds{50}, wait);
      Heap heap;
      const ShapeId node = heap.shapes().intern(2, 0);
      std::vector<ObjectId> objects;
      for (int i = 0; i < 2000; ++i) objects.push_back(heap.allocate(node));
      std::mt19937_64 rng(3);
      MirrorRefreshStats sent;
      for (int round = 0; round < 20; ++round) {
        CAPTURE(round);
        refresher.resume(heap.graph(), heap.graph().changes());
        for (int k = 0; k < 500; ++k)
          heap.store_ref(objects[rng() % objects.size()], static_cast<std::uint32_t>(rng() % 2),
                         objects[rng() % objects.size()]);
        std::this_thread::sleep_for(std::chrono::microseconds(200 * (round % 3)));
        const std::thread::id caller = std::this_thread::get_id();
        std::thread::id ran_on = caller;
        if (round % 5 == 4) {
          CHECK_THROWS_WITH_AS(
              refresher.stop_and_run([&] {
                ran_on = std::this_thread::get_id();
                throw DeviceError("failed on the refresher's thread");
              }),
              "failed on the refresher's thread", DeviceError);
        } else {
          sent += refresher.stop_and_run([&] { ran_on = std::this_thread::get_id(); });
        }
        CHECK(ran_on != caller);
      }
      CHECK(sent.passes > 0);
      // Nothing runs after the last stop: the mirror stays as it is.
      CHECK(refresher.stop().passes == 0);
    }
  }
}

TEST_CASE("refresh-wait: auto polls on hosts of 8 hardware threads or more") {
  static_assert(!MirrorRefresher::polls(RefreshWait::Auto, 2) && !MirrorRefresher::polls(RefreshWait::Auto, 7));
  static_assert(MirrorRefresher::polls(RefreshWait::Auto, 8) && MirrorRefresher::polls(RefreshWait::Auto, 16));
  static_assert(MirrorRefresher::polls(RefreshWait::Poll, 1) && !MirrorRefresher::polls(RefreshWait::Sleep, 64));
  CHECK(MirrorRefresher::parse_wait("auto") == RefreshWait::Auto);
  CHECK(MirrorRefresher::parse_wait("poll") == RefreshWait::Poll);
  CHECK(MirrorRefresher::parse_wait("sleep") == RefreshWait::Sleep);
  CHECK_FALSE(MirrorRefresher::parse_wait("spin"));
  CHECK_FALSE(MirrorRefresher::parse_wait(""));
}
