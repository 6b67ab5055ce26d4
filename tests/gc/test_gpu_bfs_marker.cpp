// gpu-bfs against the serial marker (DESIGN.md invariant 4): bit-identical bitmaps
// and equal counts for every option combination, on every device, on the papers'
// heaps, random graphs, edge cases and mutated heaps (device mirror kept exact).
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "device_fixtures.hpp"
#include "gc/plans/collector.hpp"
#include "gc/markers/gpu_bfs_marker.hpp"
#include "gc/markers/serial_marker.hpp"
#include "heap_fixtures.hpp"
#include "heap_mutator.hpp"
#include "kernels/common/mark_layout.h"

using namespace gcvm;

namespace {

/// The options of `texts`, with the host's head start off unless they name it: the
/// cases below are about the device's schedules, whose small heaps the head start
/// would otherwise walk on the host; the head start's own cases name it.
GcOptions options_of(std::initializer_list<const char*> texts) {
  GcOptions options;
  for (const char* t : texts) options.push_back(parse_gc_option(t));
  if (std::ranges::none_of(options, [](const GcOption& o) { return o.key == "head-start"; }))
    options.push_back(parse_gc_option("head-start=off"));
  return options;
}

/// Every combination of the paper's switches (offsets x vector x wide x fallback) in
/// levels mode, and async mode with its fallback off, on, and so eager that the CPU
/// takes over almost at once, with checked and direct claims.
std::vector<GcOptions> option_matrix() {
  std::vector<GcOptions> matrix;
  for (const char* offsets : {"offsets=histogram", "offsets=prefix"})
    for (const char* vector : {"vector=on", "vector=off"})
      for (const char* wide : {"wide=off", "wide=16", "wide=1"})
        for (const char* fallback : {"fallback=off", "fallback=20:5"})
          matrix.push_back(options_of({"queue=levels", offsets, vector, wide, fallback}));
  for (const char* fallback : {"fallback=off", "fallback=20:64", "fallback=1000:1", "fallback=3:2"})
    matrix.push_back(options_of({"queue=async", fallback}));
  matrix.push_back(options_of({"queue=async", "claim=direct"}));
  matrix.push_back(options_of({"queue=async", "claim=direct", "fallback=3:2"}));
  matrix.push_back(options_of({"queue=auto"}));
  matrix.push_back(options_of({"sms=1"}));
  matrix.push_back(options_of({"queue=levels", "sms=1"}));
  matrix.push_back(options_of({"sms=split"}));
  matrix.push_back(options_of({"sms=split", "offsets=prefix", "vector=off", "wide=1"}));
  matrix.push_back(options_of({"levels-per-check=1", "wide=3"}));
  matrix.push_back(options_of({"levels-per-check=7", "offsets=prefix", "fallback=1000:0"}));
  matrix.push_back(options_of({"queue=levels", "expand=off"}));
  matrix.push_back(options_of({"queue=levels", "expand=1", "wide=1"}));
  matrix.push_back(options_of({"queue=levels", "expand=1000", "offsets=prefix", "fallback=20:5"}));
  matrix.push_back(options_of({"queue=levels", "expand=3", "vector=off", "fallback=2:1"}));
  matrix.push_back(options_of({"queue=levels", "frontier=bitmap"}));
  matrix.push_back(options_of({"queue=levels", "frontier=bitmap", "offsets=prefix", "vector=off", "wide=1"}));
  matrix.push_back(options_of({"queue=levels", "frontier=bitmap", "fallback=20:5", "levels-per-check=1"}));
  matrix.push_back(options_of({"queue=levels", "frontier=bitmap", "wide=off", "fallback=1000:0"}));
  matrix.push_back(options_of({"head-start=128"}));
  matrix.push_back(options_of({"queue=levels", "head-start=1"}));
  matrix.push_back(options_of({"queue=levels", "head-start=4", "fallback=20:5", "expand=off"}));
  matrix.push_back(options_of({"queue=levels", "head-start=16", "frontier=bitmap", "fallback=off"}));
  matrix.push_back(options_of({"queue=levels", "deep-fallback=off"}));
  matrix.push_back(options_of({"queue=levels", "deep-fallback=64:3", "expand=off"}));
  matrix.push_back(options_of({"queue=levels", "deep-fallback=100000:2", "level-barrier=launch"}));
  matrix.push_back(options_of({"queue=levels", "deep-fallback=8:3", "frontier=bitmap", "head-start=off"}));
  matrix.push_back(options_of({"queue=async", "head-start=128"}));
  matrix.push_back(options_of({"sms=split", "head-start=128"}));
  // Every level in one launch (CUDA; OpenCL launches a level at a time) and a launch a
  // level, each with the options that change a level's work.
  matrix.push_back(options_of({"queue=levels", "level-barrier=launch"}));
  matrix.push_back(options_of({"queue=levels", "level-barrier=launch", "expand=off", "fallback=2:1"}));
  matrix.push_back(options_of({"queue=levels", "level-barrier=grid", "frontier=bitmap"}));
  matrix.push_back(options_of({"queue=levels", "level-barrier=grid", "levels-per-check=1", "fallback=1000:0"}));
  matrix.push_back(options_of({"queue=levels", "level-barrier=grid", "expand=off", "offsets=prefix", "vector=off",
                               "wide=1"}));
  matrix.push_back(options_of({"queue=levels", "level-barrier=grid", "head-start=4", "fallback=20:5"}));
  // Shares (every group its equal part of a level, expanded while it fits), launched
  // a level at a time and in one launch, and the one launch without them.
  matrix.push_back(options_of({"queue=levels", "shares=on"}));
  matrix.push_back(options_of({"queue=levels", "shares=on", "expand=1", "wide=1", "fallback=20:5"}));
  matrix.push_back(options_of({"queue=levels", "shares=on", "offsets=prefix", "vector=off", "expand=1000"}));
  matrix.push_back(options_of({"queue=levels", "shares=on", "frontier=bitmap", "fallback=2:1"}));
  matrix.push_back(options_of({"queue=levels", "shares=on", "head-start=4", "wide=off", "level-barrier=launch"}));
  matrix.push_back(options_of({"queue=levels", "level-barrier=grid", "shares=off"}));
  matrix.push_back(options_of({"queue=levels", "level-barrier=grid", "shares=on", "expand=2", "wide=1"}));
  matrix.push_back(options_of({"queue=levels", "shares=on", "share-batches=1", "fallback=20:5"}));
  matrix.push_back(options_of({"queue=levels", "level-barrier=grid", "share-batches=4", "head-start=4"}));
  return matrix;
}

std::string describe(const GcOptions& options) {
  std::string text;
  for (const auto& o : options) text += o.key + "=" + o.value + " ";
  return text;
}

/// Marks `request` with the serial marker and with gpu-bfs; checks they agree, and
/// returns gpu-bfs's figures.
MarkStats check_same_as_serial(const MarkRequest& request, GpuBfsMarker& gpu) {
  MarkBitmap expected;
  MarkBitmap actual;
  SerialMarker serial;
  const MarkStats want = serial.mark(request, expected);
  const MarkStats got = gpu.mark(request, actual);
  CHECK(actual == expected);
  CHECK(got.marked_objects == want.marked_objects);
  CHECK(got.edges_traversed == want.edges_traversed);
  return got;
}

void check_spec(const std::string& spec, const std::vector<GcOptions>& matrix) {
  auto built = test::build(spec);
  const MarkRequest request{built.heap->graph(), built.builder->roots(), built.heap->blocks().high_water()};
  for (const std::string& device : test::test_devices()) {
    for (const GcOptions& options : matrix) {
      CAPTURE(spec);
      CAPTURE(device);
      INFO("options: ", describe(options));
      GpuBfsMarker gpu(GpuBfsMarkerOptions::parse(options, device));
      check_same_as_serial(request, gpu);
    }
  }
}

}  // namespace

TEST_CASE("gpu-bfs marks every paper heap exactly like the serial marker, with every option") {
  const auto matrix = option_matrix();
  for (const char* spec : {"single", "list:3000", "lists:64x100", "wide:1000", "vp-list", "complete:150:4", "tree:10"})
    check_spec(spec, matrix);
}

TEST_CASE("gpu-bfs on random graphs of many shapes") {
  const std::vector<GcOptions> matrix = {options_of({}), options_of({"fallback=1000:1"}),
                                         options_of({"queue=levels"}),
                                         options_of({"queue=levels", "offsets=prefix", "vector=off"}),
                                         options_of({"queue=levels", "wide=off", "fallback=off"}),
                                         options_of({"queue=levels", "offsets=prefix", "wide=2", "fallback=off"}),
                                         options_of({"queue=levels", "expand=off"}),
                                         options_of({"queue=levels", "expand=2", "fallback=off"}),
                                         options_of({"queue=levels", "frontier=bitmap"}),
                                         options_of({"queue=levels", "frontier=bitmap", "offsets=prefix"}),
                                         options_of({"head-start=128"}),
                                         options_of({"queue=levels", "head-start=3", "fallback=off"}),
                                         options_of({"queue=levels", "level-barrier=launch"}),
                                         options_of({"queue=levels", "level-barrier=grid", "fallback=1000:1"}),
                                         options_of({"sms=split"})};
  for (const char* spec : {"rmat:13", "rmat:11:40", "random:20000:0", "random:20000:1", "random:3000:40", "lists:7x3"})
    check_spec(spec, matrix);
}

TEST_CASE("gpu-bfs on edge cases: empty roots, null-only objects, self-loops, huge objects, long chains") {
  const std::vector<GcOptions> matrix = {options_of({}),
                                         options_of({"fallback=1000:1"}),
                                         options_of({"queue=levels"}),
                                         options_of({"queue=levels", "wide=off", "offsets=prefix"}),
                                         options_of({"queue=levels", "fallback=off", "vector=off"}),
                                         options_of({"queue=levels", "fallback=2:1"}),
                                         options_of({"queue=levels", "frontier=bitmap"}),
                                         options_of({"queue=levels", "frontier=bitmap", "fallback=2:1"}),
                                         options_of({"head-start=128"}),
                                         options_of({"queue=levels", "head-start=100000", "fallback=2:1"}),
                                         options_of({"queue=levels", "level-barrier=launch", "wide=off"}),
                                         options_of({"queue=levels", "level-barrier=grid", "fallback=2:1"}),
                                         options_of({"queue=levels", "level-barrier=grid", "expand=off", "wide=1"}),
                                         options_of({"sms=split"})};
  for (const std::string& device : test::test_devices()) {
    CAPTURE(device);
    Heap heap;
    const ShapeId node = heap.shapes().intern(3, 0);
    std::vector<ObjectId> roots;
    // Null-only objects, self-loops and a cycle.
    for (int i = 0; i < 100; ++i) roots.push_back(heap.allocate(node));
    for (int i = 0; i < 50; ++i) heap.store_ref(roots[i], 0, roots[i]);
    for (int i = 50; i < 99; ++i) heap.store_ref(roots[i], 2, roots[i + 1]);
    heap.store_ref(roots[99], 1, roots[50]);
    // An object with 100,000 references, half to one leaf, half null.
    const ObjectId huge = heap.allocate_ref_array(100000);
    const ObjectId leaf = heap.allocate(node);
    for (std::uint64_t i = 0; i < 100000; i += 2) heap.store_element(huge, i, leaf);
    roots.push_back(huge);
    roots.push_back(kNullRef);
    roots.push_back(huge);  // duplicates are allowed
    for (const GcOptions& options : matrix) {
      GpuBfsMarker gpu(GpuBfsMarkerOptions::parse(options, device));
      const MarkRequest request{heap.graph(), roots, heap.blocks().high_water()};
      check_same_as_serial(request, gpu);
      const MarkRequest empty{heap.graph(), {}, heap.blocks().high_water()};
      check_same_as_serial(empty, gpu);
    }
  }
  // A million-long chain: the CPU fallback takes the narrow tail.
  auto chain = test::build("list:1000000");
  const MarkRequest request{chain.heap->graph(), chain.builder->roots(), chain.heap->blocks().high_water()};
  for (const std::string& device : test::test_devices()) {
    CAPTURE(device);
    GpuBfsMarker gpu(GpuBfsMarkerOptions::parse(options_of({"fallback=20:5"}), device));
    check_same_as_serial(request, gpu);
    // The head start walks the chain's first 8 x 16 objects, the device the next few,
    // the CPU fallback the rest.
    GpuBfsMarker headed(GpuBfsMarkerOptions::parse(options_of({"queue=levels", "head-start=16"}), device));
    const MarkStats stats = check_same_as_serial(request, headed);
    CHECK(stats.detail("head_start_levels") == 128.0);
    CHECK(stats.detail("fallback_objects").value_or(0) > 0.0);
  }
}

TEST_CASE("gpu-bfs levels mode: the host's head start walks a tree's narrow levels, the device the rest") {
  // tree:12: 13 levels of 1, 2, 4, ... 4,096 objects. head-start=128 walks levels
  // 0-7 (255 objects) and the device begins with level 8's 256.
  auto built = test::build("tree:12");
  const MarkRequest request{built.heap->graph(), built.builder->roots(), built.heap->blocks().high_water()};
  for (const std::string& device : test::test_devices()) {
    CAPTURE(device);
    for (const char* queue : {"queue=levels", "queue=auto"}) {
      CAPTURE(std::string(queue));
      GpuBfsMarker gpu(GpuBfsMarkerOptions::parse(options_of({queue, "head-start=128"}), device));
      for (int collection = 0; collection < 3; ++collection) {
        const MarkStats stats = check_same_as_serial(request, gpu);
        CHECK(stats.detail("head_start_levels") == 8.0);
        CHECK(stats.detail("head_start_objects") == 255.0);
        CHECK(stats.detail("root_bytes") == (256.0 + 255.0) * 4);
        // queue=auto's first collection is a depth probe, which counts the host's
        // levels with its launches'.
        if (collection == 0 && std::string(queue) == "queue=auto") CHECK(stats.detail("iterations") == 5.0);
      }
    }
    // Off, or with more roots than a level may hold, the device marks from the roots
    // (a width of 0 is not "off": it is refused).
    CHECK_THROWS_AS(GpuBfsMarkerOptions::parse(options_of({"head-start=0"}), device), ConfigError);
    GpuBfsMarker off(GpuBfsMarkerOptions::parse(options_of({"queue=levels", "head-start=off"}), device));
    CHECK(check_same_as_serial(request, off).detail("head_start_levels") == 0.0);
    auto wide = test::build("lists:64x100");
    const MarkRequest many_roots{wide.heap->graph(), wide.builder->roots(), wide.heap->blocks().high_water()};
    GpuBfsMarker gpu(GpuBfsMarkerOptions::parse(options_of({"queue=levels", "head-start=63"}), device));
    const MarkStats stats = check_same_as_serial(many_roots, gpu);
    CHECK(stats.detail("head_start_levels") == 0.0);
    CHECK(stats.detail("root_bytes") == 64.0 * 4);
  }
}

TEST_CASE("gpu-bfs levels mode: every level in one launch gives the marks, levels and fallback of a launch a level") {
  // A tree (levels that grow), chains under a fallback (a narrow tail for the CPU), a
  // huge array (chunks drained by the level after the one that offered them) and a
  // random graph; three collections each, so that the launches' predictions are used.
  // Without local expansion the levels, their counts and the fallback are the heap's
  // and the same either way; with it they depend on the groups' timing, and the marks
  // alone are compared. OpenCL has no grid-wide barrier: there both launch a level at a
  // time, which the option matrices cover.
  for (const std::string& device : test::test_devices()) {
    CAPTURE(device);
    const bool grid_barrier = device.starts_with("cuda");
    const std::vector<const char*> specs = {"tree:12", "lists:8x3000", "wide:100000", "random:20000:3"};
    for (const char* spec : grid_barrier ? specs : std::vector<const char*>{}) {
      CAPTURE(std::string(spec));
      auto built = test::build(spec);
      const MarkRequest request{built.heap->graph(), built.builder->roots(), built.heap->blocks().high_water()};
      for (const std::string expand : {"expand=32", "expand=off"}) {
        CAPTURE(expand);
        GpuBfsMarker together(
            GpuBfsMarkerOptions::parse(options_of({"queue=levels", "fallback=20:5", expand.c_str(), "level-barrier=grid"}),
                                       device));
        GpuBfsMarker apart(GpuBfsMarkerOptions::parse(
            options_of({"queue=levels", "fallback=20:5", expand.c_str(), "level-barrier=launch"}), device));
        for (int collection = 0; collection < 3; ++collection) {
          const MarkStats one = check_same_as_serial(request, together);
          const MarkStats each = check_same_as_serial(request, apart);
          CHECK(one.detail("levels_in_one_launch") == 1.0);
          CHECK(each.detail("levels_in_one_launch") == 0.0);
          CHECK(one.detail("host_checks") == 1.0);
          CHECK(one.detail("kernel_ms") > 0.0);  // the launch's own clock
          if (expand != "expand=off") continue;
          CHECK(one.detail("iterations") == each.detail("iterations"));
          CHECK(one.detail("fallback_level") == each.detail("fallback_level"));
          CHECK(one.detail("fallback_objects") == each.detail("fallback_objects"));
          CHECK(one.detail("chunks") == each.detail("chunks"));
        }
      }
    }
    // auto: one launch unless levels-per-check asks for checks, a launch leaves its
    // winners in the bitmap, or the last collection's widest level was wide (below).
    auto built = test::build("tree:10");
    const MarkRequest request{built.heap->graph(), built.builder->roots(), built.heap->blocks().high_water()};
    const auto one_launch = [&](std::initializer_list<const char*> texts) {
      GpuBfsMarker gpu(GpuBfsMarkerOptions::parse(options_of(texts), device));
      return check_same_as_serial(request, gpu).detail("levels_in_one_launch");
    };
    CHECK(one_launch({"queue=levels"}) == (grid_barrier ? 1.0 : 0.0));
    CHECK(one_launch({"queue=levels", "levels-per-check=2"}) == 0.0);
    CHECK(one_launch({"queue=levels", "frontier=bitmap"}) == 0.0);
    CHECK(one_launch({"queue=levels", "frontier=bitmap", "level-barrier=grid"}) == (grid_barrier ? 1.0 : 0.0));
    CHECK(one_launch({"queue=async"}) == 0.0);
    CHECK(one_launch({"sms=split", "level-barrier=grid"}) == 0.0);
    // After a collection with a level wider than half the one launch's groups hold,
    // a launch a level: 300,000 objects want 1,172 groups of 256, more than the 528 an
    // H100 or H200 holds at once (and fewer than the bitmap frontier's 2^19).
    if (!grid_barrier) continue;
    auto wide = test::build("wide:300000");
    const MarkRequest wide_request{wide.heap->graph(), wide.builder->roots(), wide.heap->blocks().high_water()};
    GpuBfsMarker gpu(GpuBfsMarkerOptions::parse(options_of({"queue=levels"}), device));
    CHECK(check_same_as_serial(wide_request, gpu).detail("levels_in_one_launch") == 1.0);
    CHECK(check_same_as_serial(wide_request, gpu).detail("levels_in_one_launch") == 0.0);
  }
}

TEST_CASE("gpu-bfs levels mode: references repeated within one vector or one wide step are claimed once") {
  // A thread claims a vector's four references, or four of a wide walk's, together:
  // every mark word read first, then the atomics. Repeated targets, and targets that
  // share one mark word (neighbouring slots), must still be claimed by one thread
  // once, and each object scanned once (edge counts equal the serial marker's).
  const std::vector<GcOptions> matrix = {options_of({"queue=levels"}),
                                         options_of({"queue=levels", "wide=1"}),
                                         options_of({"queue=levels", "wide=off"}),
                                         options_of({"queue=levels", "vector=off", "wide=2"})};
  for (const std::string& device : test::test_devices()) {
    CAPTURE(device);
    Heap heap;
    const ShapeId four = heap.shapes().intern(4, 0);
    const ShapeId eight = heap.shapes().intern(8, 0);
    std::vector<ObjectId> neighbours;
    for (int i = 0; i < 40; ++i) neighbours.push_back(heap.allocate(four));
    std::vector<ObjectId> roots;
    const ObjectId same = heap.allocate(four);  // one target four times
    for (std::uint32_t f = 0; f < 4; ++f) heap.store_ref(same, f, neighbours[0]);
    const ObjectId pairs = heap.allocate(eight);  // a, b, a, b, then four neighbours in one word
    for (std::uint32_t f = 0; f < 8; ++f) heap.store_ref(pairs, f, neighbours[f < 4 ? 1 + f % 2 : f]);
    const ObjectId wide = heap.allocate_ref_array(3000);  // three targets, again and again
    for (std::uint64_t i = 0; i < 3000; ++i) heap.store_element(wide, i, neighbours[10 + i % 3]);
    const ObjectId dense = heap.allocate_ref_array(1100);  // every neighbour, each many times
    for (std::uint64_t i = 0; i < 1100; ++i) heap.store_element(dense, i, neighbours[(i * 7) % neighbours.size()]);
    for (std::size_t i = 0; i + 1 < neighbours.size(); ++i) heap.store_ref(neighbours[i], 3, neighbours[i + 1]);
    for (ObjectId root : {same, pairs, wide, dense, same}) roots.push_back(root);
    for (const GcOptions& options : matrix) {
      INFO("options: ", describe(options));
      GpuBfsMarker gpu(GpuBfsMarkerOptions::parse(options, device));
      const MarkRequest request{heap.graph(), roots, heap.blocks().high_water()};
      const MarkStats got = check_same_as_serial(request, gpu);
      CHECK(got.marked_objects == neighbours.size() + 4);
    }
  }
}

TEST_CASE("gpu-bfs levels mode: a batch's wide objects of every size, between narrow ones, are walked together") {
  // The wide walk concatenates the references of a batch's wide objects; a warp takes
  // consecutive references of it a step and each thread finds their owners by one
  // search and by stepping over object ends. Children of every size around the
  // threshold, the warp and step widths and the chunk split, among narrow and empty
  // ones, each with references to leaves of its own (some null): a reference mapped
  // to the wrong owner or skipped leaves a leaf unmarked; one walked twice changes
  // the edge count.
  const std::vector<GcOptions> matrix = {options_of({"queue=levels"}),
                                         options_of({"queue=levels", "wide=1"}),
                                         options_of({"queue=levels", "wide=2", "vector=off"}),
                                         options_of({"queue=levels", "wide=1000", "offsets=prefix"}),
                                         options_of({"queue=levels", "expand=off", "wide=31"}),
                                         options_of({"sms=split", "wide=1"}),
                                         options_of({"queue=async"})};
  Heap heap;
  const ShapeId leaf_shape = heap.shapes().intern(1, 0);
  const std::vector<std::uint64_t> sizes = {0,  1,  2,  3,  5,   16,  17,  18,  31,  32,
                                            33, 63, 64, 65, 100, 255, 256, 257, 1000};
  constexpr std::uint64_t kChildren = 280;
  const ObjectId root = heap.allocate_ref_array(kChildren);
  std::uint64_t leaves = 0;
  for (std::uint64_t c = 0; c < kChildren; ++c) {
    const std::uint64_t size = c == 100   ? GCVM_CHUNK_SPLIT
                               : c == 200 ? GCVM_CHUNK_SPLIT + 1
                                          : sizes[c % sizes.size()];
    const ObjectId child = heap.allocate_ref_array(size);
    heap.store_element(root, c, child);
    for (std::uint64_t i = 0; i < size; ++i) {
      if ((c + i) % 7 == 3) continue;  // null
      heap.store_element(child, i, heap.allocate(leaf_shape));
      ++leaves;
    }
  }
  const std::vector<ObjectId> roots = {root};
  for (const std::string& device : test::test_devices()) {
    CAPTURE(device);
    for (const GcOptions& options : matrix) {
      INFO("options: ", describe(options));
      GpuBfsMarker gpu(GpuBfsMarkerOptions::parse(options, device));
      const MarkRequest request{heap.graph(), roots, heap.blocks().high_water()};
      const MarkStats got = check_same_as_serial(request, gpu);
      CHECK(got.marked_objects == 1 + kChildren + leaves);
    }
  }
}

TEST_CASE("gpu-bfs levels mode falls back when the queue drops below the threshold, not while it still grows") {
  // A binary tree under one root: levels of 1, 2, 4, 8, 16, ... objects, narrow only at
  // the start. A chain hangs off its last leaf: levels of one object at the end.
  Heap heap;
  const ShapeId node = heap.shapes().intern(2, 0);
  std::vector<ObjectId> tree{heap.allocate(node)};
  for (std::size_t parent = 0; tree.size() < (1u << 13) - 1; ++parent)
    for (std::uint32_t child = 0; child < 2; ++child) {
      tree.push_back(heap.allocate(node));
      heap.store_ref(tree[parent], child, tree.back());
    }
  const std::vector<ObjectId> roots{tree.front()};
  const MarkRequest tree_only{heap.graph(), roots, heap.blocks().high_water()};
  for (const std::string& device : test::test_devices()) {
    CAPTURE(device);
    GpuBfsMarker gpu(
        GpuBfsMarkerOptions::parse(options_of({"queue=levels", "fallback=20:5", "expand=off"}), device));
    const MarkStats stats = check_same_as_serial(tree_only, gpu);
    CHECK(stats.detail("fallback_level").value_or(0) == -1.0);  // 16 objects at level 5, growing
    CHECK(stats.detail("fallback_objects").value_or(-1) == 0.0);
  }
  ObjectId tail = tree.back();
  for (int i = 0; i < 20; ++i) {
    const ObjectId next = heap.allocate(node);
    heap.store_ref(tail, 0, next);
    tail = next;
  }
  const MarkRequest with_chain{heap.graph(), roots, heap.blocks().high_water()};
  for (const std::string& device : test::test_devices()) {
    CAPTURE(device);
    GpuBfsMarker gpu(
        GpuBfsMarkerOptions::parse(options_of({"queue=levels", "fallback=20:5", "expand=off"}), device));
    const MarkStats stats = check_same_as_serial(with_chain, gpu);
    // Levels 1-13 are the tree's (4,096 leaves at level 13); level 14, the chain's first
    // object, is the first level under the threshold and no longer than its predecessor.
    CHECK(stats.detail("fallback_level").value_or(0) == 14.0);
    CHECK(stats.detail("fallback_objects").value_or(0) == 1.0);
  }
}

TEST_CASE("gpu-bfs levels mode: a narrow launch expands locally; depth probes and expand=off run a level a launch") {
  // GCBench's long-lived tree: 13 BFS levels of 1, 2, 4, ... 4,096 objects.
  auto built = test::build("tree:12");
  const MarkRequest request{built.heap->graph(), built.builder->roots(), built.heap->blocks().high_water()};
  for (const std::string& device : test::test_devices()) {
    CAPTURE(device);
    GpuBfsMarker paper(GpuBfsMarkerOptions::parse(options_of({"queue=levels", "expand=off"}), device));
    const MarkStats one_level = check_same_as_serial(request, paper);
    CHECK(one_level.detail("iterations") == 13.0);
    CHECK(one_level.detail("kept_objects") == 0.0);
    for (const char* expand : {"expand=1", "expand=32"}) {
      CAPTURE(std::string(expand));
      GpuBfsMarker expanded(GpuBfsMarkerOptions::parse(options_of({"queue=levels", expand}), device));
      const MarkStats stats = check_same_as_serial(request, expanded);
      CHECK(stats.detail("iterations").value_or(99) < 13.0);
      CHECK(stats.detail("kept_objects").value_or(0) > 0.0);
    }
    // queue=auto: the first collection is a depth probe; 13 levels is shallow, so the
    // next runs levels mode, expanded.
    GpuBfsMarker automatic(GpuBfsMarkerOptions::parse(options_of({}), device));
    const MarkStats probe = check_same_as_serial(request, automatic);
    CHECK(probe.detail("iterations") == 13.0);
    CHECK(probe.detail("kept_objects") == 0.0);
    const MarkStats next = check_same_as_serial(request, automatic);
    CHECK(next.detail("async") == 0.0);
    CHECK(next.detail("kept_objects").value_or(0) > 0.0);
  }
}

TEST_CASE("gpu-bfs levels mode: the bitmap frontier builds queues from the bitmap for the launches it is chosen for") {
  // Every collection is marked three times by one marker: frontier=<objects> and auto
  // choose launches by the last collection's queue sizes, so only the later ones use it.
  for (const char* spec : {"rmat:14", "tree:11", "complete:300:20", "wide:20000", "lists:64x100", "random:30000:2"}) {
    auto built = test::build(spec);
    const MarkRequest request{built.heap->graph(), built.builder->roots(), built.heap->blocks().high_water()};
    for (const std::string& device : test::test_devices()) {
      CAPTURE(spec);
      CAPTURE(device);
      struct Case {
        GcOptions options;
        bool first, later;  // whether the first and the later collections leave winners in the bitmap
      };
      const std::vector<Case> cases = {
          {options_of({"queue=levels", "frontier=queue"}), false, false},
          {options_of({"queue=levels", "frontier=bitmap"}), true, true},
          {options_of({"queue=levels", "frontier=1"}), false, true},
          {options_of({"queue=levels", "frontier=1", "expand=off", "fallback=off"}), false, true},
          {options_of({"queue=levels", "frontier=100000000"}), false, false},
          {options_of({"queue=levels", "frontier=bitmap", "sms=1", "fallback=3:2"}), true, true},
      };
      for (const Case& c : cases) {
        INFO("options: ", describe(c.options));
        GpuBfsMarker gpu(GpuBfsMarkerOptions::parse(c.options, device));
        for (int collection = 0; collection < 3; ++collection) {
          CAPTURE(collection);
          const MarkStats stats = check_same_as_serial(request, gpu);
          const bool expected = collection == 0 ? c.first : c.later;
          CHECK((stats.detail("bitmap_frontiers").value_or(0) > 0) == expected);
        }
      }
    }
  }
}

TEST_CASE("gpu-bfs splits huge objects into chunks that every group takes, in both schedules") {
  // Huge arrays of sizes around the split and chunk boundaries, reachable at
  // different depths, pointing at each other's elements and at a shared chain.
  Heap heap;
  const ShapeId node = heap.shapes().intern(2, 0);
  std::vector<ObjectId> arrays;
  for (std::uint64_t length : {std::uint64_t{GCVM_CHUNK_SPLIT}, std::uint64_t{GCVM_CHUNK_SPLIT} + 1, std::uint64_t{12289},
                               std::uint64_t{100003}, std::uint64_t{4 * GCVM_CHUNK_EDGES},
                               std::uint64_t{GCVM_ASYNC_CHUNK_SPLIT}, std::uint64_t{GCVM_ASYNC_CHUNK_SPLIT} + 1})
    arrays.push_back(heap.allocate_ref_array(length));
  std::vector<ObjectId> nodes;
  for (int i = 0; i < 30000; ++i) nodes.push_back(heap.allocate(node));
  for (std::size_t a = 0; a < arrays.size(); ++a) {
    const std::uint64_t length = heap.array_length(arrays[a]);
    for (std::uint64_t i = 0; i < length; i += 1 + a)
      heap.store_element(arrays[a], i, nodes[(i * 31 + a * 7) % nodes.size()]);
  }
  for (std::size_t i = 0; i + 1 < nodes.size(); i += 3) heap.store_ref(nodes[i], 0, nodes[i + 1]);
  // Array a is reachable from a node that array a - 1 reaches: chunks appear late.
  for (std::size_t a = 1; a < arrays.size(); ++a) heap.store_ref(nodes[(a * 97) % nodes.size()], 1, arrays[a]);
  // Array 1 (the smallest that is split) is a root too, so chunks are offered in the
  // first round or level whatever the schedule: with an eager fallback (3:2) the
  // device may stop before the arrays reached late, and the CPU finishes those whole.
  const std::vector<ObjectId> roots{arrays[0], arrays[1]};
  const MarkRequest request{heap.graph(), roots, heap.blocks().high_water()};
  for (const std::string& device : test::test_devices()) {
    CAPTURE(device);
    for (const GcOptions& options :
         {options_of({"queue=async"}), options_of({"queue=async", "fallback=3:2"}),
          options_of({"queue=async", "claim=direct"}), options_of({"queue=levels"}),
          options_of({"queue=levels", "wide=off", "vector=off"}), options_of({"queue=levels", "fallback=5:3"})}) {
      INFO("options: ", describe(options));
      GpuBfsMarker gpu(GpuBfsMarkerOptions::parse(options, device));
      check_same_as_serial(request, gpu);
      MarkBitmap marks;
      const MarkStats stats = gpu.mark(request, marks);
      double chunks = 0, fallback_chunks = 0;
      for (const auto& [key, value] : stats.details) {
        if (key == "chunks") chunks = value;
        if (key == "fallback_chunks") fallback_chunks = value;
      }
      CHECK(chunks + fallback_chunks > 0);  // the huge arrays went through the chunk queue
    }
  }
}

TEST_CASE("gpu-bfs levels mode: chunks a level offers wait for the next, and a fallback there hands them to the CPU") {
  // Level 1: 2,000 roots and a huge array among them, whose chunks it offers; level 2:
  // the 10 leaves the roots reach. With fallback=1000:1 level 2 falls back (10 < 1,000,
  // no more than level 1's 2,001): the array's chunks, never drained on the device,
  // go to the CPU. Without a fallback level 2 drains them.
  Heap heap;
  const ShapeId node = heap.shapes().intern(1, 0);
  std::vector<ObjectId> leaves;
  for (int i = 0; i < 10; ++i) leaves.push_back(heap.allocate(node));
  std::vector<ObjectId> roots;
  for (int i = 0; i < 2000; ++i) {
    roots.push_back(heap.allocate(node));
    heap.store_ref(roots.back(), 0, leaves[i % leaves.size()]);
  }
  const ObjectId huge = heap.allocate_ref_array(3 * GCVM_CHUNK_EDGES + 17);
  std::vector<ObjectId> targets;
  for (int i = 0; i < 5000; ++i) targets.push_back(heap.allocate(node));
  for (std::uint64_t i = 0; i < heap.array_length(huge); i += 2) heap.store_element(huge, i, targets[i % targets.size()]);
  roots.push_back(huge);
  const MarkRequest request{heap.graph(), roots, heap.blocks().high_water()};
  for (const std::string& device : test::test_devices()) {
    CAPTURE(device);
    for (const char* frontier : {"frontier=queue", "frontier=bitmap"}) {
      CAPTURE(std::string(frontier));
      GpuBfsMarker tail(
          GpuBfsMarkerOptions::parse(options_of({"queue=levels", "fallback=1000:1", "expand=off", frontier}), device));
      const MarkStats handed = check_same_as_serial(request, tail);
      CHECK(handed.detail("fallback_level") == 2.0);
      CHECK(handed.detail("fallback_chunks") == 4.0);  // every chunk of the array
      CHECK(handed.detail("chunks") == 0.0);
      GpuBfsMarker device_only(
          GpuBfsMarkerOptions::parse(options_of({"queue=levels", "fallback=off", "expand=off", frontier}), device));
      const MarkStats drained = check_same_as_serial(request, device_only);
      CHECK(drained.detail("chunks") == 4.0);
      CHECK(drained.detail("fallback_chunks") == 0.0);
    }
  }
}

TEST_CASE("gpu-bfs levels mode: a level that drained chunks expands once they are all taken") {
  // Roots: a huge array whose elements all point at another root (marked by the seed),
  // and the head of a chain of 20. Level 1 offers the array's 4 chunks and queues the
  // chain's second object (its chunks wait for level 2: no expansion there); level 2
  // drains the chunks, which claim nothing, and scans that object. With every chunk of
  // its range taken and none offered during it, nothing waits for the next launch, so
  // the group goes on down the rest of the chain itself: 18 objects kept, and level 2
  // is the last that runs. With shares, the group that holds the chain's head at level
  // 1 goes down the chain at once, chunks waiting or not: 19 objects kept, and level 2
  // only drains the chunks (no level with a queue runs after level 1).
  Heap heap;
  const ShapeId node = heap.shapes().intern(1, 0);
  const ObjectId target = heap.allocate(node);
  const ObjectId huge = heap.allocate_ref_array(3 * GCVM_CHUNK_EDGES + 17);
  for (std::uint64_t i = 0; i < heap.array_length(huge); ++i) heap.store_element(huge, i, target);
  std::vector<ObjectId> chain;
  for (int i = 0; i < 20; ++i) {
    chain.push_back(heap.allocate(node));
    if (i > 0) heap.store_ref(chain[i - 1], 0, chain[i]);
  }
  const std::vector<ObjectId> roots{huge, chain.front(), target};
  const MarkRequest request{heap.graph(), roots, heap.blocks().high_water()};
  for (const std::string& device : test::test_devices()) {
    CAPTURE(device);
    GpuBfsMarker gpu(GpuBfsMarkerOptions::parse(
        options_of({"queue=levels", "fallback=off", "frontier=queue", "level-barrier=launch"}), device));
    const MarkStats stats = check_same_as_serial(request, gpu);
    CHECK(stats.detail("chunks") == 4.0);
    CHECK(stats.detail("kept_objects") == 18.0);
    CHECK(stats.detail("iterations") == 2.0);
    for (const char* barrier : {"level-barrier=launch", "level-barrier=auto"}) {
      CAPTURE(barrier);
      GpuBfsMarker shares(GpuBfsMarkerOptions::parse(
          options_of({"queue=levels", "fallback=off", "frontier=queue", "shares=on", barrier}), device));
      const MarkStats shared = check_same_as_serial(request, shares);
      CHECK(shared.detail("chunks") == 4.0);
      CHECK(shared.detail("kept_objects") == 19.0);
      CHECK(shared.detail("iterations") == 1.0);
    }
  }
}

TEST_CASE("gpu-bfs async: a stop while a huge object's chunks are queued hands those chunks to the CPU") {
  // One root array of 2,000,003 elements, 3,907 chunks: one SM's groups, one chunk
  // each a round, cannot walk them all before the first poll of a round with work,
  // where a fallback threshold above any pending count stops the device. The chunks
  // not taken reach the CPU as chunks of async mode's size, every chunk is walked
  // once, on one side or the other, and the marks equal serial's.
  Heap heap;
  const ShapeId node = heap.shapes().intern(1, 0);
  const ObjectId array = heap.allocate_ref_array(2000003);
  std::vector<ObjectId> nodes;
  for (int i = 0; i < 50000; ++i) nodes.push_back(heap.allocate(node));
  for (std::uint64_t i = 0; i < 2000003; i += 3) heap.store_element(array, i, nodes[(i * 7) % nodes.size()]);
  for (std::size_t i = 0; i + 1 < nodes.size(); i += 2) heap.store_ref(nodes[i], 0, nodes[i + 1]);
  const std::vector<ObjectId> roots{array};
  const MarkRequest request{heap.graph(), roots, heap.blocks().high_water()};
  for (const std::string& device : test::test_devices()) {
    CAPTURE(device);
    GpuBfsMarker gpu(GpuBfsMarkerOptions::parse(options_of({"queue=async", "fallback=100000000:1", "sms=1"}), device));
    const MarkStats stats = check_same_as_serial(request, gpu);
    CHECK(stats.detail("fallback_chunks").value_or(0) > 0);
    CHECK(stats.detail("fallback_chunks").value_or(0) + stats.detail("chunks").value_or(0) ==
          (2000003 + GCVM_ASYNC_CHUNK_EDGES - 1) / GCVM_ASYNC_CHUNK_EDGES);
  }
}

TEST_CASE("gpu-bfs async: a group walks a chain from its own ring, and wide frontiers spread through the queue") {
  for (const std::string& device : test::test_devices()) {
    CAPTURE(device);
    // One list: every object after the root is discovered and scanned by the group
    // that holds the chain, never published (a ring publishes only beyond one round's
    // worth of objects, and a chain holds one).
    auto chain = test::build("list:3000");
    const MarkRequest chain_request{chain.heap->graph(), chain.builder->roots(), chain.heap->blocks().high_water()};
    GpuBfsMarker async(GpuBfsMarkerOptions::parse(options_of({"queue=async", "fallback=off"}), device));
    MarkBitmap marks;
    const MarkStats on_chain = async.mark(chain_request, marks);
    CHECK(on_chain.marked_objects == 3000);
    CHECK(on_chain.detail("kept_objects").value_or(-1) == 2999.0);
    // One object with 1,000 references (more than a ring keeps between steps, fewer
    // than are split into chunks): its discoveries overflow the group's ring, so some
    // of them pass through the queue.
    static_assert(1000 > GCVM_ASYNC_RING - (GCVM_ASYNC_STEP_REFS + 1) * GCVM_ASYNC_GROUP_SIZE &&
                  1000 <= GCVM_ASYNC_CHUNK_SPLIT);
    auto wide = test::build("wide:1000");
    const MarkRequest wide_request{wide.heap->graph(), wide.builder->roots(), wide.heap->blocks().high_water()};
    const MarkStats on_wide = async.mark(wide_request, marks);
    CHECK(on_wide.marked_objects == 1001);
    CHECK(on_wide.detail("kept_objects").value_or(-1) < 1000.0);
    CHECK(on_wide.detail("chunks").value_or(-1) == 0.0);
    check_same_as_serial(wide_request, async);
  }
}

TEST_CASE("gpu-bfs queue=auto: levels to count a heap's depth, async between counts on a deep heap") {
  for (const std::string& device : test::test_devices()) {
    CAPTURE(device);
    for (const auto& [spec, deep] : {std::pair<const char*, bool>{"lists:8x300", true}, {"vp-array", false}}) {
      CAPTURE(std::string(spec));
      auto built = test::build(spec);
      const MarkRequest request{built.heap->graph(), built.builder->roots(), built.heap->blocks().high_water()};
      GpuBfsMarker gpu(GpuBfsMarkerOptions::parse(options_of({"fallback=off"}), device));
      std::vector<double> schedule;
      for (int collection = 0; collection < 18; ++collection) {
        MarkBitmap marks;
        schedule.push_back(gpu.mark(request, marks).detail("async").value_or(-1));
      }
      for (int collection = 0; collection < 18; ++collection) {
        CAPTURE(collection);
        const bool probe = collection % 16 == 0;
        CHECK(schedule[collection] == (deep && !probe ? 1.0 : 0.0));
      }
      check_same_as_serial(request, gpu);
    }
  }
}

TEST_CASE("gpu-bfs levels mode: the first batch, sized from the last collection, stays exact when the heap's "
          "depth, size and graph change; the marks come with the last check") {
  // A launch a level (the batches and checks are those launches'; one launch of every
  // level has one check).
  for (const std::string& device : test::test_devices()) {
    CAPTURE(device);
    for (const auto& [fallback, expand] : {std::pair<std::string, std::string>{"fallback=off", "expand=off"},
                                           {"fallback=20:5", "expand=off"},
                                           {"fallback=off", "expand=32"}}) {
      CAPTURE(fallback);
      CAPTURE(expand);
      GpuBfsMarker gpu(
          GpuBfsMarkerOptions::parse(options_of({"queue=levels", "level-barrier=launch", fallback.c_str(), expand.c_str()}),
                                     device));
      // Same heap (the same first batch), deeper heap (another), larger heap (the
      // device's arrays move), and back.
      for (const char* spec : {"vp-array", "vp-array", "lists:8x300", "lists:8x300", "rmat:14", "rmat:14", "vp-array"}) {
        CAPTURE(std::string(spec));
        auto built = test::build(spec);
        const MarkRequest request{built.heap->graph(), built.builder->roots(), built.heap->blocks().high_water()};
        for (int collection = 0; collection < 3; ++collection) {
          CAPTURE(collection);
          const MarkStats stats = check_same_as_serial(request, gpu);
          // Every collection after the first on a heap predicts its launches, so its
          // first check is its last and brings the marks, unless the heap needs more
          // than one batch (300 levels of lists a launch each, without a fallback at
          // level 5; expanded, a launch walks 33 of them).
          const bool one_batch =
              std::string(spec) != "lists:8x300" || fallback != "fallback=off" || expand != "expand=off";
          if (collection > 0) CHECK(stats.detail("marks_with_state") == (one_batch ? 1.0 : 0.0));
          if (collection > 0 && one_batch) CHECK(stats.detail("host_checks") == 1.0);
        }
      }
    }
  }
}

TEST_CASE("gpu-bfs levels mode: with nothing to predict the depth, the first check comes after 8 launches and "
          "the batches double") {
  // A launch a level; one launch of every level checks once.
  for (const std::string& device : test::test_devices()) {
    CAPTURE(device);
    // 300 levels a launch each: checks after 8, 24, 56, 120, 184, 248 and 312 launches
    // (one launch more than a batch of 1, 2, 4, ... would have needed 11 checks for).
    auto lists = test::build("lists:8x300");
    const MarkRequest deep{lists.heap->graph(), lists.builder->roots(), lists.heap->blocks().high_water()};
    GpuBfsMarker levels(GpuBfsMarkerOptions::parse(
        options_of({"queue=levels", "level-barrier=launch", "fallback=off", "expand=off"}), device));
    CHECK(check_same_as_serial(deep, levels).detail("host_checks") == 7.0);
    // A shallow heap: one check, as deep as the first batch.
    auto shallow = test::build("vp-array");
    const MarkRequest request{shallow.heap->graph(), shallow.builder->roots(), shallow.heap->blocks().high_water()};
    for (const char* expand : {"expand=off", "expand=32"}) {
      CAPTURE(expand);
      GpuBfsMarker gpu(GpuBfsMarkerOptions::parse(options_of({"queue=levels", "fallback=off", expand}), device));
      CHECK(check_same_as_serial(request, gpu).detail("host_checks") == 1.0);
      GpuBfsMarker apart(GpuBfsMarkerOptions::parse(
          options_of({"queue=levels", "level-barrier=launch", "fallback=off", expand}), device));
      CHECK(check_same_as_serial(request, apart).detail("host_checks") == 1.0);
    }
  }
}

TEST_CASE("gpu-bfs with more roots than the pause setup's page-locked buffer holds, and premarked objects") {
  auto built = test::build("random:300000:3");
  const Heap& heap = *built.heap;
  // 80,000 roots (the setup buffer holds the level state and about 64 Ki roots; the
  // rest go through the staging copies), and the first quarter of the blocks premarked
  // as a young collection's mature objects are.
  std::vector<ObjectId> roots;
  heap.for_each_object([&](ObjectId id) {
    if (roots.size() < 80000 && id % 3 == 0) roots.push_back(id);
  });
  REQUIRE(roots.size() == 80000);
  std::vector<std::uint64_t> premarked(heap.blocks().high_water() / 4);
  for (std::uint32_t b = 0; b < premarked.size(); ++b) premarked[b] = heap.blocks().alloc_word(b);
  for (const std::string& device : test::test_devices()) {
    CAPTURE(device);
    using Words = std::span<const std::uint64_t>;
    for (const Words premark : {Words(), Words(premarked)}) {
      CAPTURE(premark.size());
      const MarkRequest request{heap.graph(), roots, heap.blocks().high_water(), nullptr, premark};
      GpuBfsMarker levels(GpuBfsMarkerOptions::parse(options_of({"queue=levels"}), device));
      GpuBfsMarker async(GpuBfsMarkerOptions::parse(options_of({"queue=async"}), device));
      for (int collection = 0; collection < 2; ++collection) {
        check_same_as_serial(request, levels);
        check_same_as_serial(request, async);
      }
    }
  }
}

TEST_CASE("gpu-bfs tells the plan once per mark that the device is busy, in every schedule; snapshots never") {
  auto built = test::build("lists:8x300");
  for (const std::string& device : test::test_devices()) {
    CAPTURE(device);
    for (const GcOptions& options :
         {options_of({"queue=levels", "fallback=off", "expand=off"}), options_of({"queue=levels"}),
          options_of({"queue=async"}), options_of({"queue=async", "fallback=1000:1"}), options_of({"sms=split"}),
          options_of({"queue=auto"})}) {
      INFO("options: ", describe(options));
      GpuBfsMarker gpu(GpuBfsMarkerOptions::parse(options, device));
      int told = 0;
      MarkRequest request{built.heap->graph(), built.builder->roots(), built.heap->blocks().high_water()};
      request.on_device_busy = [&] { ++told; };
      for (int collection = 1; collection <= 3; ++collection) {
        check_same_as_serial(request, gpu);
        CHECK(told == collection);
      }
      auto snapshot = gpu.snapshot(request);
      MarkBitmap marks;
      snapshot->mark(marks);
      CHECK(told == 3);
    }
  }
}

TEST_CASE("gpu-bfs names its figures after the pause when asked: the names of a mark that named them at once") {
  auto built = test::build("lists:8x300");
  for (const std::string& device : test::test_devices()) {
    CAPTURE(device);
    for (const GcOptions& options : {options_of({"queue=levels"}), options_of({"queue=async"})}) {
      INFO("options: ", describe(options));
      GpuBfsMarker gpu(GpuBfsMarkerOptions::parse(options, device));
      MarkRequest request{built.heap->graph(), built.builder->roots(), built.heap->blocks().high_water()};
      MarkBitmap marks;
      const MarkStats at_once = gpu.mark(request, marks);
      CHECK(!at_once.later_details);
      request.details_after_pause = true;
      MarkStats later = gpu.mark(request, marks);
      CHECK(later.marked_objects == at_once.marked_objects);
      REQUIRE(later.later_details);
      CHECK(!later.detail("kernel_ms"));
      later.finish_details();
      CHECK(!later.later_details);
      REQUIRE(later.details.size() == at_once.details.size());
      for (std::size_t i = 0; i < later.details.size(); ++i) CHECK(later.details[i].first == at_once.details[i].first);
      CHECK(later.detail("levels_in_one_launch") == at_once.detail("levels_in_one_launch"));
    }
  }
}

TEST_CASE("gpu-bfs keeps its device mirror exact across mutations and sweeps") {
  // In barrier mode, the bitmap frontier for every launch that had any work last time;
  // then every level in one launch (on CUDA), which takes a small patch into its own
  // setup, with the pause's whole patch (no refresher) and without a head start (with
  // one, a patch goes to the device while the host walks).
  struct Case {
    RefGraphMode mode;
    std::vector<const char*> options;
  };
  const std::vector<Case> cases = {
      {RefGraphMode::Barrier, {"queue=levels", "frontier=1", "head-start=off"}},
      {RefGraphMode::Rebuild, {}},
      {RefGraphMode::Barrier, {"queue=levels", "level-barrier=grid", "refresh=off"}},
      {RefGraphMode::Barrier, {"queue=levels", "level-barrier=grid", "head-start=off"}},
  };
  for (const std::string& device : test::test_devices()) {
    for (const auto& [mode, texts] : cases) {
      CAPTURE(device);
      CAPTURE(texts.size());
      // A large stable heap (rooted) plus a mutated part, so a collection after few
      // changes has a small patch to upload.
      auto built = test::build("rmat:15", 5, HeapConfig{.graph_mode = mode});
      Heap& heap = *built.heap;
      test::RandomMutator mutator(heap, 21, 32);
      GcOptions options;
      for (const char* text : texts) options.push_back(parse_gc_option(text));
      auto marker = std::make_unique<GpuBfsMarker>(GpuBfsMarkerOptions::parse(options, device));
      GpuBfsMarker* gpu = marker.get();
      Collector collector(heap, std::move(marker), /*verify=*/true);
      std::uint64_t partial_syncs = 0;
      for (int cycle = 0; cycle < 10; ++cycle) {
        mutator.run(cycle % 3 == 2 ? 200 : 4000);  // some collections see few changes
        std::vector<ObjectId> roots = built.builder->roots();
        roots.insert(roots.end(), mutator.roots.begin(), mutator.roots.end());
        const auto stats = collector.collect(roots, "cycle");  // throws VerifyError on any difference
        mutator.forget_dead();
        for (const auto& [key, value] : stats.mark.details)
          if (key == "sync_full" && value == 0.0) ++partial_syncs;
      }
      CHECK(gpu->device() != nullptr);
      CHECK(partial_syncs > 0);  // the mirror was patched, not re-uploaded, at least once
    }
  }
}

TEST_CASE("gpu-bfs rejects bad options and devices with one clear message") {
  CHECK_THROWS_WITH_AS(GpuBfsMarkerOptions::parse(options_of({"offsets=middle"}), "auto"),
                       doctest::Contains("does not accept --gc-opt offsets=middle"), ConfigError);
  CHECK_THROWS_AS(GpuBfsMarkerOptions::parse(options_of({"wide=0"}), "auto"), ConfigError);
  CHECK_THROWS_AS(GpuBfsMarkerOptions::parse(options_of({"fallback=20"}), "auto"), ConfigError);
  CHECK_THROWS_AS(GpuBfsMarkerOptions::parse(options_of({"deep-fallback=1024"}), "auto"), ConfigError);
  CHECK_THROWS_AS(GpuBfsMarkerOptions::parse(options_of({"deep-fallback=0:64"}), "auto"), ConfigError);
  CHECK_THROWS_AS(GpuBfsMarkerOptions::parse(options_of({"deep-fallback=1024:0"}), "auto"), ConfigError);
  CHECK_THROWS_AS(GpuBfsMarkerOptions::parse(options_of({"deep-fallback=on"}), "auto"), ConfigError);
  CHECK(GpuBfsMarkerOptions::parse(options_of({"deep-fallback=off"}), "auto").deep_fallback_threshold == 0);
  CHECK(GpuBfsMarkerOptions::parse(options_of({"deep-fallback=500:40"}), "auto").deep_fallback_level == 40);
  CHECK_THROWS_AS(GpuBfsMarkerOptions::parse(options_of({"levels-per-check=65"}), "auto"), ConfigError);
  CHECK_THROWS_AS(GpuBfsMarkerOptions::parse(options_of({"expand=0"}), "auto"), ConfigError);
  CHECK_THROWS_AS(GpuBfsMarkerOptions::parse(options_of({"expand=many"}), "auto"), ConfigError);
  CHECK_THROWS_AS(GpuBfsMarkerOptions::parse(options_of({"shares=maybe"}), "auto"), ConfigError);
  CHECK_THROWS_AS(GpuBfsMarkerOptions::parse(options_of({"share-batches=0"}), "auto"), ConfigError);
  CHECK_THROWS_AS(GpuBfsMarkerOptions::parse(options_of({"share-batches=5"}), "auto"), ConfigError);
  CHECK(GpuBfsMarkerOptions::parse(options_of({"share-batches=4"}), "auto").share_batches == 4);
  CHECK_THROWS_AS(GpuBfsMarkerOptions::parse(options_of({"frontier=0"}), "auto"), ConfigError);
  CHECK_THROWS_AS(GpuBfsMarkerOptions::parse(options_of({"frontier=sorted"}), "auto"), ConfigError);
  CHECK_THROWS_WITH_AS(GpuBfsMarkerOptions::parse(options_of({"refresh=9"}), "auto"),
                       doctest::Contains("refresh=on|off|<10..10000000 microseconds>"), ConfigError);
  CHECK_THROWS_AS(GpuBfsMarkerOptions::parse(options_of({"refresh=10000001"}), "auto"), ConfigError);
  CHECK_THROWS_AS(GpuBfsMarkerOptions::parse(options_of({"refresh=1ms"}), "auto"), ConfigError);
  CHECK_THROWS_AS(GpuBfsMarkerOptions::parse(options_of({"refresh=-100"}), "auto"), ConfigError);
  CHECK(GpuBfsMarkerOptions::parse(options_of({"refresh=250"}), "auto").refresh == std::chrono::microseconds{250});
  CHECK(GpuBfsMarkerOptions::parse(options_of({"refresh=off"}), "auto").refresh == std::chrono::microseconds{0});
  CHECK(GpuBfsMarkerOptions::parse(options_of({"refresh=on"}), "auto").refresh == MirrorRefresher::kDefaultInterval);
  CHECK(GpuBfsMarkerOptions::parse({}, "auto").refresh_wait == RefreshWait::Auto);
  CHECK(GpuBfsMarkerOptions::parse(options_of({"refresh-wait=sleep"}), "auto").refresh_wait == RefreshWait::Sleep);
  CHECK(GpuBfsMarkerOptions::parse(options_of({"refresh-wait=poll"}), "auto").refresh_wait == RefreshWait::Poll);
  CHECK_THROWS_AS(GpuBfsMarkerOptions::parse(options_of({"refresh-wait=spin"}), "auto"), ConfigError);
  CHECK_THROWS_AS(GpuBfsMarkerOptions::parse(options_of({"colour=red"}), "auto"), ConfigError);
  CHECK_THROWS_AS(GpuBfsMarkerOptions::parse({}, "vulkan"), ConfigError);
  CHECK_THROWS_AS(GpuBfsMarkerOptions::parse({}, "cuda:x"), ConfigError);
  CHECK_THROWS_AS(GpuBfsMarkerOptions::parse({}, "auto:1"), ConfigError);
  CHECK_THROWS_AS(GpuBfsMarker(GpuBfsMarkerOptions::parse({}, "opencl:99")), DeviceError);
}

TEST_CASE("gpu-bfs: levels that stay narrow deep into the heap go to the CPU at the deep fallback's level") {
  // 256 lists of 300: every level holds 256 objects, far above fallback's 20, so only
  // the deep fallback stops the device: at its level, with a list's worth per list left.
  auto built = test::build("lists:256x300");
  const MarkRequest request{built.heap->graph(), built.builder->roots(), built.heap->blocks().high_water()};
  for (const std::string& device : test::test_devices()) {
    for (const char* barrier : {"level-barrier=launch", "level-barrier=auto"}) {
      CAPTURE(device);
      CAPTURE(barrier);
      GpuBfsMarker deep(GpuBfsMarkerOptions::parse(
          options_of({"queue=levels", "head-start=off", "expand=off", "deep-fallback=1024:40", barrier}), device));
      const MarkStats stats = check_same_as_serial(request, deep);
      CHECK(stats.detail("fallback_level") == 40.0);
      CHECK(stats.detail("fallback_objects").value_or(0) >= 256.0);
      GpuBfsMarker off(GpuBfsMarkerOptions::parse(
          options_of({"queue=levels", "head-start=off", "expand=off", "deep-fallback=off", barrier}), device));
      CHECK(check_same_as_serial(request, off).detail("fallback_level") == -1.0);
      // Narrower than the levels: the device goes on to the end.
      GpuBfsMarker narrow(GpuBfsMarkerOptions::parse(
          options_of({"queue=levels", "head-start=off", "expand=off", "deep-fallback=200:40", barrier}), device));
      CHECK(check_same_as_serial(request, narrow).detail("fallback_level") == -1.0);
    }
  }
}

TEST_CASE("gpu-bfs: a fallback that leaves many chains finishes them on every hardware thread, exactly") {
  // 256 chains: the device stops early (an eager fallback) with about 256 objects
  // pending, which the CPU finishes with the parallel marker (cpu_finish.hpp).
  auto built = test::build("lists:256x300");
  const MarkRequest request{built.heap->graph(), built.builder->roots(), built.heap->blocks().high_water()};
  for (const std::string& device : test::test_devices()) {
    for (const GcOptions& options : {options_of({"queue=async", "fallback=1000:1"}),
                                     options_of({"queue=levels", "expand=off", "fallback=1000:2"})}) {
      CAPTURE(device);
      INFO("options: ", describe(options));
      GpuBfsMarker gpu(GpuBfsMarkerOptions::parse(options, device));
      for (int collection = 0; collection < 2; ++collection) {
        const MarkStats stats = check_same_as_serial(request, gpu);
        CHECK(stats.detail("fallback_objects").value_or(0) >= static_cast<double>(CpuFinish::kParallelObjects));
        CHECK(stats.detail("fallback_threads").value_or(0) >= 1.0);
      }
      // In a Collector's pause, on its sweep pool (MarkRequest::host_pool); --verify
      // compares with the serial marker. A collection frees nothing here (every chain
      // is rooted), so the heap stays the same for the next.
      auto collected = test::build("lists:256x300");
      Collector collector(*collected.heap, std::make_unique<GpuBfsMarker>(GpuBfsMarkerOptions::parse(options, device)),
                          /*verify=*/true);
      for (int collection = 0; collection < 2; ++collection) {
        const CollectionStats stats = collector.collect(collected.builder->roots(), "test");
        CHECK(stats.mark.detail("fallback_objects").value_or(0) >= static_cast<double>(CpuFinish::kParallelObjects));
        CHECK(stats.mark.detail("fallback_threads").value_or(0) >= 1.0);
      }
    }
  }
}
