#include <doctest/doctest.h>

#include <set>

#include "gc/heap/heap_materializer.hpp"
#include "gc/markers/marker_registry.hpp"
#include "gc/markers/parallel_marker.hpp"
#include "gc/markers/serial_marker.hpp"
#include "gc/plans/collector.hpp"
#include "gc/heap/sweep.hpp"
#include "heapgraph/graph_spec.hpp"
#include "gc/util/thread_placement.hpp"
#include "heapgraph/synthetic_heaps.hpp"
#include "device_fixtures.hpp"
#include "heap_mutator.hpp"

using namespace gcvm;

namespace {

/// A vp-array heap (~16,000 blocks, mostly garbage) plus a deterministic mutator; two
/// twins with the same seed allocate the same ids as long as their sweeps leave
/// identical heaps.
struct Twin {
  Heap heap;
  test::RandomMutator mutator;

  explicit Twin(std::uint64_t seed)
      : mutator(heap, seed, 16,
                {.alloc_in_10 = 5, .array_one_in = 12, .scalar_arrays = true, .max_array_length = 3000,
                 .root_one_in = 6, .null_one_in = 5}) {
    HeapMaterializer builder(heap);
    build_synthetic_heap(parse_graph_spec("vp-array"), builder, seed);
    mutator.roots.insert(mutator.roots.end(), builder.roots().begin(), builder.roots().end());
  }

  MarkBitmap mark() {
    SerialMarker marker;
    MarkBitmap marks;
    marker.mark({heap.graph(), mutator.roots, heap.blocks().high_water()}, marks);
    return marks;
  }
};

void require_same_heap_state(const Heap& a, const Heap& b) {
  const BlockAllocator& x = a.blocks();
  const BlockAllocator& y = b.blocks();
  REQUIRE(x.check() == "");
  REQUIRE(y.check() == "");
  REQUIRE(x.high_water() == y.high_water());
  REQUIRE(x.blocks_in_use() == y.blocks_in_use());
  REQUIRE(a.used_bytes() == b.used_bytes());
  REQUIRE(a.array_bytes() == b.array_bytes());
  REQUIRE(a.graph().edges_reserved() == b.graph().edges_reserved());
  REQUIRE(a.graph().edge_count() == b.graph().edge_count());
  std::set<ShapeId> shapes;
  for (std::uint32_t blk = 0; blk < x.high_water(); ++blk) {
    REQUIRE(x.alloc_word(blk) == y.alloc_word(blk));
    REQUIRE(x.state(blk) == y.state(blk));
    REQUIRE(x.free_blocks().test(blk) == y.free_blocks().test(blk));
    if (x.state(blk) != BlockState::Free) {
      REQUIRE(x.shape_of_block(blk) == y.shape_of_block(blk));
      shapes.insert(x.shape_of_block(blk));
    }
  }
  REQUIRE(x.free_blocks().check_invariant());
  REQUIRE(y.free_blocks().check_invariant());
  for (ShapeId s : shapes) {
    CAPTURE(s);
    REQUIRE(x.allocated_blocks(s).check_invariant());
    REQUIRE(y.allocated_blocks(s).check_invariant());
    REQUIRE(x.active_blocks(s).check_invariant());
    REQUIRE(y.active_blocks(s).check_invariant());
    REQUIRE(x.allocated_blocks(s).count() == y.allocated_blocks(s).count());
    REQUIRE(x.active_blocks(s).find_first() == y.active_blocks(s).find_first());
    for (std::uint32_t blk = 0; blk < x.high_water(); ++blk) {
      REQUIRE(x.allocated_blocks(s).test(blk) == y.allocated_blocks(s).test(blk));
      REQUIRE(x.active_blocks(s).test(blk) == y.active_blocks(s).test(blk));
    }
  }
}

}  // namespace

TEST_CASE("parallel sweep leaves exactly the heap of the serial sweep, and later allocations agree") {
  for (unsigned threads : {1u, 2u, 3u, 8u}) {
    CAPTURE(threads);
    ThreadPool pool(threads);
    Twin serial(threads), parallel(threads);
    for (int cycle = 0; cycle < 6; ++cycle) {
      CAPTURE(cycle);
      serial.mutator.run(4000);
      parallel.mutator.run(4000);
      REQUIRE(serial.mutator.allocated == parallel.mutator.allocated);
      const MarkBitmap marks = serial.mark();
      REQUIRE(parallel.mark() == marks);
      const SweepStats a = sweep(serial.heap, marks);
      const SweepStats b = sweep(parallel.heap, marks, pool);
      CHECK(a.objects_before == b.objects_before);
      CHECK(a.freed_objects == b.freed_objects);
      CHECK(a.blocks_freed == b.blocks_freed);
      CHECK(b.freed_objects + marks.count() == b.objects_before);
      require_same_heap_state(serial.heap, parallel.heap);
      CHECK(parallel.heap.verify_graph() == "");
      serial.mutator.forget_dead();
      parallel.mutator.forget_dead();
    }
  }
}

TEST_CASE("parallel sweep of an empty heap and of a heap where everything survives") {
  ThreadPool pool(3);
  Heap empty;
  MarkBitmap none;
  none.reset(0);
  const SweepStats s = sweep(empty, none, pool);
  CHECK(s.objects_before == 0);
  CHECK(s.freed_objects == 0);
  // The serial sweep's one run has no block (and the block bitmaps no word yet).
  const SweepStats serial = sweep(empty, none);
  CHECK(serial.objects_before == 0);
  CHECK(empty.blocks().check() == "");

  Twin twin(5);
  MarkBitmap all;
  all.reset(twin.heap.blocks().high_water());
  for (auto& w : all.words()) w = ~std::uint64_t{0};
  const std::uint64_t before = twin.heap.blocks().live_objects();
  const SweepStats full = sweep(twin.heap, all, pool);
  CHECK(full.objects_before == before);
  CHECK(full.freed_objects == 0);
  CHECK(twin.heap.blocks().live_objects() == before);
  CHECK(twin.heap.blocks().check() == "");
}

TEST_CASE("a collection with the parallel marker sweeps on its pool and reports the threads that swept (one: serially)") {
  for (unsigned threads : {1u, 2u, 3u}) {
    CAPTURE(threads);
    Heap heap(HeapConfig{.limit_bytes = 512u << 20});
    const ShapeId node = heap.shapes().intern(1, 0);
    std::vector<ObjectId> roots;
    while (heap.blocks().high_water() < kParallelSweepMinBlocks + 64) {
      const ObjectId o = heap.allocate(node);
      if (o % 97 == 0) roots.push_back(o);
    }
    Collector collector(heap, std::make_unique<ParallelMarker>(ParallelMarkerOptions{.threads = threads}), true);
    const CollectionStats stats = collector.collect(roots, "test");
    // The caller and the workers that arrived before it ran out of tasks.
    CHECK(stats.sweep.threads >= 1);
    CHECK(stats.sweep.threads <= threads);
    CHECK(stats.mark.marked_objects == roots.size());
    CHECK(heap.blocks().check() == "");
  }
}

TEST_CASE("a device marker's sweep pool leaves one hardware thread to the device's host thread") {
  static_assert(sleeping_sweep_pool_threads(1) == 2 && sleeping_sweep_pool_threads(2) == 2);
  static_assert(sleeping_sweep_pool_threads(3) == 2 && sleeping_sweep_pool_threads(4) == 3);
  static_assert(sleeping_sweep_pool_threads(16) == 15 && sleeping_sweep_pool_threads(128) == 127);
  // The workers poll about twice the last mark's time plus 1 ms, at most 20 ms.
  static_assert(sweep_pool_wake_microseconds(-1) == 20000 && sweep_pool_wake_microseconds(0.5) == 2000);
  static_assert(sweep_pool_wake_microseconds(50) == 20000);
  CHECK(sleeping_sweep_pool_threads(16) == 15);
}

TEST_CASE("a device marker's sweep pool places a worker on each CPU but the two lowest, which the pause keeps") {
  const std::vector<unsigned> cpus{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  const SweepPoolPlacement sixteen = sleeping_sweep_pool_placement(15, cpus);
  CHECK(sixteen.pause == std::vector<unsigned>{0, 1});
  CHECK(sixteen.workers == std::vector<unsigned>{2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15});
  // A process kept to some CPUs (taskset): its own CPUs, in order.
  const SweepPoolPlacement some = sleeping_sweep_pool_placement(4, {3, 5, 8, 9, 12});
  CHECK(some.pause == std::vector<unsigned>{3, 5});
  CHECK(some.workers == std::vector<unsigned>{8, 9, 12});
  // Too few CPUs for the workers and the pause's two: nothing is placed.
  CHECK(sleeping_sweep_pool_placement(4, {0, 1, 2, 3}).empty());
  CHECK(sleeping_sweep_pool_placement(4, {0, 1, 2, 3}).pause.empty());
  CHECK(sleeping_sweep_pool_placement(2, {}).empty());
}

TEST_CASE("a device collector keeps its thread on the pause's CPUs, wakes its pool ahead of pauses and marks exactly") {
  const std::vector<unsigned> before = allowed_cpus();
  // Placed only where the process has a CPU for each of the pool's workers and two more.
  const bool placed = before.size() >= 4;
  for (const std::string& device : test::test_devices()) {
    CAPTURE(device);
    Heap heap(HeapConfig{.limit_bytes = 256u << 20});
    const ShapeId node = heap.shapes().intern(1, 0);
    std::vector<ObjectId> roots;
    {
      Collector collector(heap, make_marker({.name = "gpu-bfs", .options = {}, .threads = 0, .device = device}), true);
      CHECK(allowed_cpus() == (placed ? std::vector<unsigned>{before[0], before[1]} : before));
      // Cycles that fill the heap to the same level with garbage and a few survivors.
      for (int cycle = 0; cycle < 4; ++cycle) {
        while (heap.blocks().blocks_in_use() < kParallelSweepMinBlocks + 64) {
          const ObjectId o = heap.allocate(node);
          REQUIRE(o != kNullRef);
          if (o % 4099 == 0 && roots.size() < 2000) roots.push_back(o);
        }
        const CollectionStats stats = collector.collect(roots, "test");  // --verify: against the serial marker
        CHECK(stats.sweep.threads >= 1);
        CHECK(stats.mark.marked_objects == roots.size());
        // The second pause is the first one woken ahead.
        if (placed && cycle >= 1) CHECK(stats.sweep_pool_lead_ms >= 0);
        if (!placed) CHECK(stats.sweep_pool_lead_ms == -1);
        CHECK(heap.blocks().check() == "");
      }
    }
    CHECK(allowed_cpus() == before);
  }
}
