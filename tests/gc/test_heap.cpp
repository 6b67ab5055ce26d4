#include <doctest/doctest.h>

#include <random>
#include <stdexcept>
#include <vector>

#include "gc/heap/heap.hpp"

using namespace gcvm;

TEST_CASE("fresh objects have null references and zero scalars; fields are independent") {
  Heap heap;
  const ShapeId node = heap.shapes().intern(2, 2);
  std::vector<ObjectId> objs;
  for (int i = 0; i < 200; ++i) objs.push_back(heap.allocate(node));
  for (ObjectId o : objs) {
    CHECK(heap.load_ref(o, 0) == kNullRef);
    CHECK(heap.load_ref(o, 1) == kNullRef);
    CHECK(heap.load_scalar(o, 0) == 0);
  }
  for (std::size_t i = 0; i < objs.size(); ++i) {
    heap.store_ref(objs[i], 1, objs[(i + 1) % objs.size()]);
    heap.store_scalar(objs[i], 1, i * 7);
  }
  for (std::size_t i = 0; i < objs.size(); ++i) {
    CHECK(heap.load_ref(objs[i], 0) == kNullRef);
    CHECK(heap.load_ref(objs[i], 1) == objs[(i + 1) % objs.size()]);
    CHECK(heap.load_scalar(objs[i], 0) == 0);
    CHECK(heap.load_scalar(objs[i], 1) == i * 7);
    CHECK(heap.graph().out_edges(objs[i])[1] == objs[(i + 1) % objs.size()]);
  }
  CHECK(heap.verify_graph() == "");
  CHECK_THROWS_AS(heap.allocate(ShapeTable::kRefArray), std::invalid_argument);
}

TEST_CASE("objects in reused slots and reused blocks start null and zero, and the graph records the same changes") {
  Heap heap;
  const ShapeId node = heap.shapes().intern(2, 3);
  const ShapeId other = heap.shapes().intern(1, 7);
  std::vector<ObjectId> objs;
  for (int i = 0; i < 300; ++i) objs.push_back(heap.allocate(node));
  for (std::size_t i = 0; i < objs.size(); ++i) {
    heap.store_ref(objs[i], 0, objs[(i + 1) % objs.size()]);
    heap.store_ref(objs[i], 1, objs[i]);
    for (std::uint32_t f = 0; f < 3; ++f) heap.store_scalar(objs[i], f, i + f + 1);
  }
  // Free every other object of block 0 and every object of the others: block 0 keeps
  // used slots, the rest return to the free bitmap and are taken by another shape.
  MarkBitmap marks;
  marks.reset(heap.blocks().high_water());
  marks.words()[0] = 0xAAAAAAAAAAAAAAAAull;
  Heap::SweepDebt debt;
  for (std::uint32_t b = 0; b < heap.blocks().high_water(); ++b) heap.sweep_block(b, marks.words()[b], debt);
  heap.settle_sweep(debt);
  heap.reset_allocation_cursors();
  heap.graph().changes().clear();
  for (int i = 0; i < 32; ++i) {
    const ObjectId o = heap.allocate(node);
    CHECK(block_of(o) == 0);
    CHECK(slot_of(o) % 2 == 0);  // a slot that held an object
    CHECK(heap.load_ref(o, 0) == kNullRef);
    CHECK(heap.load_ref(o, 1) == kNullRef);
    for (std::uint32_t f = 0; f < 3; ++f) CHECK(heap.load_scalar(o, f) == 0);
  }
  // Nulling each one's two old out-edges is a change the device mirror must see.
  CHECK(heap.graph().changes().edges.count(heap.graph().edge_count()) == 64);
  CHECK(heap.graph().changes().vertices.count(heap.graph().vertex_count()) == 0);
  for (int i = 0; i < 200; ++i) {
    const ObjectId o = heap.allocate(other);
    CHECK(heap.load_ref(o, 0) == kNullRef);
    for (std::uint32_t f = 0; f < 7; ++f) CHECK(heap.load_scalar(o, f) == 0);
  }
  CHECK(heap.verify_graph() == "");
  CHECK(heap.blocks().check() == "");
}

TEST_CASE("blocks emptied by a sweep and taken again get back their edge ranges: no vertex changes") {
  Heap heap;
  const ShapeId node = heap.shapes().intern(2, 1);
  std::vector<ObjectId> objs;
  for (int i = 0; i < 64 * 5; ++i) objs.push_back(heap.allocate(node));
  std::vector<std::uint64_t> begins;
  for (ObjectId o : objs) begins.push_back(heap.graph().begin(o));
  Heap::SweepDebt debt;
  for (std::uint32_t b = 0; b < heap.blocks().high_water(); ++b) heap.sweep_block(b, 0, debt);
  heap.settle_sweep(debt);
  heap.reset_allocation_cursors();
  CHECK(heap.blocks().blocks_in_use() == 0);
  heap.graph().changes().clear();
  for (std::size_t i = 0; i < objs.size(); ++i) {
    REQUIRE(heap.allocate(node) == objs[i]);
    CHECK(heap.graph().begin(objs[i]) == begins[i]);
  }
  CHECK_FALSE(heap.graph().changes().vertices.any());
  CHECK(heap.verify_graph() == "");
}

TEST_CASE("arrays of any length, far larger than a block") {
  Heap heap;
  const ObjectId big = heap.allocate_ref_array(100'000);
  const ObjectId empty = heap.allocate_ref_array(0);
  const ObjectId nums = heap.allocate_scalar_array(1'000'000);
  REQUIRE(big != kNullRef);
  CHECK(heap.array_length(big) == 100'000);
  CHECK(heap.array_length(empty) == 0);
  CHECK(heap.graph().degree(big) == 100'000);
  CHECK(heap.graph().degree(nums) == 0);
  CHECK(heap.load_element(big, 99'999) == kNullRef);
  heap.store_element(big, 99'999, empty);
  heap.store_scalar_element(nums, 999'999, 42);
  CHECK(heap.load_element(big, 99'999) == empty);
  CHECK(heap.load_scalar_element(nums, 999'999) == 42);
  CHECK(heap.graph().out_edges(big)[99'999] == empty);
  CHECK(heap.array_bytes() == 100'000 * 4 + 1'000'000 * 8);
  CHECK(heap.verify_graph() == "");
}

TEST_CASE("a scalar array starts at zero, also in storage that held a swept array's values") {
  Heap heap;
  for (std::uint64_t length : {std::uint64_t{1000}, std::uint64_t{1} << 23}) {  // 8 KB, 64 MB: from malloc's arena and mapped
    CAPTURE(length);
    const ObjectId first = heap.allocate_scalar_array(length);
    REQUIRE(first != kNullRef);
    for (std::uint64_t i = 0; i < length; i += 97) CHECK(heap.load_scalar_element(first, i) == 0);
    for (std::uint64_t i = 0; i < length; ++i) heap.store_scalar_element(first, i, i + 1);
    Heap::SweepDebt debt;
    heap.sweep_block(block_of(first), 0, debt);
    heap.settle_sweep(debt);
    heap.drain_released_storage();
    heap.reset_allocation_cursors();
    const ObjectId again = heap.allocate_scalar_array(length);
    REQUIRE(again != kNullRef);
    std::uint64_t nonzero = 0;
    for (std::uint64_t i = 0; i < length; ++i) nonzero += heap.load_scalar_element(again, i) != 0;
    CHECK(nonzero == 0);
  }
}

TEST_CASE("the heap limit yields kNullRef and leaves the heap unchanged") {
  Heap heap(HeapConfig{.limit_bytes = 4 * kBlockBytes});
  const ShapeId s = heap.shapes().intern(1, 1);
  int allocated = 0;
  while (heap.allocate(s) != kNullRef) ++allocated;
  CHECK(allocated == 4 * 64);
  CHECK(heap.used_bytes() == 4 * kBlockBytes);
  CHECK(heap.allocate_ref_array(10) == kNullRef);
  CHECK(heap.allocate_scalar_array(1 << 20) == kNullRef);
  CHECK(heap.used_bytes() == 4 * kBlockBytes);
  CHECK(heap.blocks().check() == "");
  CHECK(heap.verify_graph() == "");
}

namespace {

// Random mutator: allocates objects and arrays and stores references at random.
std::vector<ObjectId> mutate(Heap& heap, std::mt19937_64& rng, int steps) {
  std::vector<ObjectId> objs;
  std::vector<ShapeId> shapes = {heap.shapes().intern(1, 1), heap.shapes().intern(3, 0), heap.shapes().intern(0, 2),
                                 heap.shapes().intern(16, 1)};
  for (int i = 0; i < steps; ++i) {
    const auto choice = rng() % 10;
    if (choice < 3 || objs.empty()) {
      objs.push_back(rng() % 8 == 0 ? heap.allocate_ref_array(rng() % 300) : heap.allocate(shapes[rng() % shapes.size()]));
      continue;
    }
    const ObjectId src = objs[rng() % objs.size()];
    const ObjectId dst = rng() % 5 == 0 ? kNullRef : objs[rng() % objs.size()];
    if (heap.shape_of(src) == ShapeTable::kRefArray) {
      if (heap.array_length(src) > 0) heap.store_element(src, rng() % heap.array_length(src), dst);
    } else if (const auto refs = heap.shapes().layout(heap.shape_of(src)).shape.ref_fields; refs > 0) {
      heap.store_ref(src, static_cast<std::uint32_t>(rng() % refs), dst);
    }
  }
  return objs;
}

}  // namespace

TEST_CASE("barrier-maintained graph equals the rebuilt graph after random mutations") {
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    std::mt19937_64 rng_a(seed), rng_b(seed);
    Heap barrier(HeapConfig{.graph_mode = RefGraphMode::Barrier});
    Heap rebuild(HeapConfig{.graph_mode = RefGraphMode::Rebuild});
    mutate(barrier, rng_a, 20000);
    mutate(rebuild, rng_b, 20000);
    CHECK(barrier.verify_graph() == "");
    CHECK(rebuild.verify_graph() != "");  // not maintained until rebuilt
    rebuild.rebuild_graph();
    CHECK(rebuild.verify_graph() == "");
    REQUIRE(barrier.graph().vertex_count() == rebuild.graph().vertex_count());
    barrier.for_each_object([&](ObjectId v) {
      const auto a = barrier.graph().out_edges(v);
      const auto b = rebuild.graph().out_edges(v);
      REQUIRE(std::vector<ObjectId>(a.begin(), a.end()) == std::vector<ObjectId>(b.begin(), b.end()));
    });
  }
}

TEST_CASE("verify_graph reports a store that bypassed the barrier") {
  Heap heap;
  const ShapeId s = heap.shapes().intern(2, 0);
  const ObjectId a = heap.allocate(s), b = heap.allocate(s);
  heap.store_ref(a, 0, b);
  CHECK(heap.verify_graph() == "");
  heap.graph().set_edge(heap.graph().begin(a) + 1, a);  // corrupt the graph
  const std::string report = heap.verify_graph();
  CHECK(report.find("reference 1") != std::string::npos);
}

TEST_CASE("rebuild marks only the slots it changes") {
  Heap heap(HeapConfig{.graph_mode = RefGraphMode::Rebuild});
  const ShapeId s = heap.shapes().intern(1, 0);
  std::vector<ObjectId> objs;
  for (int i = 0; i < 100000; ++i) objs.push_back(heap.allocate(s));
  heap.rebuild_graph();
  heap.graph().changes().clear();
  heap.store_ref(objs[99999], 0, objs[0]);
  heap.rebuild_graph();
  CHECK(heap.graph().changes().edges.count(heap.graph().edge_count()) == 1);
  CHECK(heap.graph().edge_data()[heap.graph().begin(objs[99999])] == objs[0]);
}

TEST_CASE("a used-bytes watch fires once, from the allocation that grows the heap to its level") {
  Heap heap(HeapConfig{.limit_bytes = 4 << 20});
  const ShapeId node = heap.shapes().intern(2, 1);
  int fired = 0;
  std::uint64_t used_when_fired = 0;
  const std::uint64_t level = 64 * kBlockBytes + 1;
  heap.watch_used_bytes(level, [&] {
    ++fired;
    used_when_fired = heap.used_bytes();
  });
  std::uint64_t used_before_last = 0;
  while (fired == 0) {
    used_before_last = heap.used_bytes();
    REQUIRE(heap.allocate(node) != kNullRef);
  }
  CHECK(used_before_last < level);
  CHECK(used_when_fired >= level);
  CHECK(used_when_fired == heap.used_bytes());
  for (int i = 0; i < 10000; ++i) REQUIRE(heap.allocate(node) != kNullRef);
  CHECK(fired == 1);

  SUBCASE("an array's storage reaches the level too") {
    heap.watch_used_bytes(heap.used_bytes() + 100000, [&] { ++fired; });
    REQUIRE(heap.allocate_scalar_array(1000) != kNullRef);  // 8,000 bytes: below the level
    CHECK(fired == 1);
    REQUIRE(heap.allocate_ref_array(30000) != kNullRef);  // 120,000 bytes
    CHECK(fired == 2);
  }
  SUBCASE("a disarmed watch does not fire, a replaced one fires at its new level") {
    heap.watch_used_bytes(heap.used_bytes() + 1, [&] { fired += 10; });
    heap.disarm_used_bytes_watch();
    for (int i = 0; i < 10000; ++i) REQUIRE(heap.allocate(node) != kNullRef);
    CHECK(fired == 1);
    heap.watch_used_bytes(heap.used_bytes() + 1, [&] { fired += 10; });
    heap.watch_used_bytes(heap.used_bytes() + 8 * kBlockBytes, [&] { fired += 100; });
    for (int i = 0; i < 10000; ++i) REQUIRE(heap.allocate(node) != kNullRef);
    CHECK(fired == 101);
  }
}
