#include <doctest/doctest.h>


#include <cstdlib>
#include <vector>

#include "gc/heap/storage_releaser.hpp"
#include "gc/plans/collector.hpp"
#include "gc/markers/mark_checker.hpp"
#include "gc/markers/serial_marker.hpp"
#include "heap_fixtures.hpp"
#include "heap_mutator.hpp"

using namespace gcvm;

TEST_CASE("sweep frees exactly the unmarked objects of every paper heap") {
  for (const char* spec : {"single", "list:10000", "wide:1000", "vp-list", "vp-array", "complete:300:3", "rmat:12"}) {
    CAPTURE(spec);
    auto built = test::build(spec);
    Heap& heap = *built.heap;
    const std::uint64_t total = built.builder->object_count();
    const std::uint64_t reachable = built.model.reachable_count();
    Collector collector(heap, std::make_unique<SerialMarker>(), /*verify=*/true);
    const auto stats = collector.collect(built.builder->roots(), "test");
    CHECK(stats.sweep.objects_before == total);
    CHECK(stats.sweep.freed_objects == total - reachable);
    CHECK(heap.blocks().live_objects() == reachable);
    CHECK(heap.blocks().check() == "");
    CHECK(heap.verify_graph() == "");
    const auto is_reachable = built.model.reachable();
    for (SinkHandle h = 0; h < total; ++h) REQUIRE(heap.is_live(built.builder->object(h)) == is_reachable[h]);
    // A second collection finds nothing more to free.
    const auto again = collector.collect(built.builder->roots(), "test");
    CHECK(again.mark.marked_objects == reachable);
    CHECK(again.sweep.freed_objects == 0);
  }
}

TEST_CASE("sweep releases blocks, edge ranges and array storage for reuse") {
  auto built = test::build("vp-array");
  Heap& heap = *built.heap;
  const auto blocks_before = heap.blocks().blocks_in_use();
  const auto edges_before = heap.graph().edges_reserved();
  const auto high_water = heap.blocks().high_water();
  Collector collector(heap, std::make_unique<SerialMarker>(), true);
  const auto stats = collector.collect(built.builder->roots(), "test");
  CHECK(stats.sweep.blocks_freed > 0);
  CHECK(heap.blocks().blocks_in_use() == blocks_before - stats.sweep.blocks_freed);
  CHECK(heap.graph().edges_reserved() == edges_before - 960 * 1024);
  CHECK(heap.array_bytes() == 64 * 1024 * 4);
  CHECK(stats.heap_after_bytes < stats.heap_before_bytes);
  // Rebuilding the garbage part of the heap reuses the freed blocks and edges.
  HeapMaterializer again(heap);
  build_synthetic_heap(parse_graph_spec("vp-array"), again);
  CHECK(heap.blocks().high_water() <= high_water + 1 + high_water / 16 + 64);
  CHECK(heap.verify_graph() == "");
}

TEST_CASE("collections interleaved with random mutation keep marks exact and the heap consistent") {
  for (auto mode : {RefGraphMode::Barrier, RefGraphMode::Rebuild}) {
    Heap heap(HeapConfig{.graph_mode = mode});
    test::RandomMutator mutator(heap, mode == RefGraphMode::Barrier ? 11 : 12, 32);
    Collector collector(heap, std::make_unique<SerialMarker>(), /*verify=*/true);
    for (int cycle = 0; cycle < 15; ++cycle) {
      mutator.run(5000);
      const auto stats = collector.collect(mutator.roots, "cycle");  // verify=true checks graph and marks
      CHECK(heap.blocks().check() == "");
      CHECK(heap.blocks().live_objects() == stats.mark.marked_objects);
      mutator.forget_dead();
      CHECK(mutator.live.size() == stats.mark.marked_objects);
    }
  }
}

TEST_CASE("swept array storage goes back to malloc after the sweep, exactly once") {
  Heap heap;
  std::vector<ObjectId> keep;
  for (int round = 0; round < 4; ++round) {
    for (int i = 0; i < 5000; ++i) {
      const ObjectId a = i % 2 == 0 ? heap.allocate_ref_array(1 + i % 7) : heap.allocate_scalar_array(1 + i % 5);
      if (i % 10 == 0) keep.push_back(a);
    }
    Collector collector(heap, std::make_unique<SerialMarker>(), /*verify=*/true);
    const auto stats = collector.collect(keep, "test");
    CHECK(stats.sweep.freed_objects == 4500);
    if (round % 2 == 0) heap.drain_released_storage();  // and leave some pending for the destructor
    CHECK(heap.blocks().check() == "");
  }
  // Storage counts as freed at the sweep, whether or not malloc has it back yet.
  std::uint64_t live_bytes = 0;
  for (ObjectId a : keep) live_bytes += heap.array_length(a) * (heap.shape_of(a) == ShapeTable::kRefArray ? 4 : 8);
  CHECK(heap.array_bytes() == live_bytes);
}

TEST_CASE("the storage releaser frees every batch, from drain or from its destructor") {
  for (int pending_at_destruction : {0, 1}) {
    StorageReleaser releaser;
    for (int batch = 0; batch < 50; ++batch) {
      std::vector<void*> pointers;
      for (int i = 0; i < 100; ++i) pointers.push_back(std::malloc(16 + i));
      releaser.release(pointers);
      CHECK(pointers.empty());
      if (batch % 7 == 0) releaser.drain();
    }
    if (pending_at_destruction == 0) releaser.drain();
  }
}
