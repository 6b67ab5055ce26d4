#include <doctest/doctest.h>

#include <thread>

#include "gc/plans/collector.hpp"
#include "gc/markers/cpu_finish.hpp"
#include "gc/markers/mark_checker.hpp"
#include "gc/markers/parallel_marker.hpp"
#include "gc/markers/serial_marker.hpp"
#include "heap_fixtures.hpp"
#include "heap_mutator.hpp"

using namespace gcvm;

namespace {

/// Marks with the serial marker and with `parallel`; requires identical bitmaps and counts.
void require_same_as_serial(const RefGraph& graph, std::span<const ObjectId> roots, std::uint32_t blocks,
                            ParallelMarker& parallel) {
  SerialMarker serial;
  MarkBitmap expected, actual;
  const MarkStats want = serial.mark({graph, roots, blocks}, expected);
  const MarkStats got = parallel.mark({graph, roots, blocks}, actual);
  REQUIRE(actual == expected);
  REQUIRE(got.marked_objects == want.marked_objects);
  REQUIRE(got.edges_traversed == want.edges_traversed);
  std::uint64_t objects = 0, edges = 0;
  for (const MarkThreadStats& s : parallel.thread_stats()) {
    objects += s.objects;
    edges += s.edges;
    CHECK(s.steals <= s.steal_attempts);
  }
  CHECK(objects == got.marked_objects);
  CHECK(edges == got.edges_traversed);
}

void require_same_as_serial(const test::BuiltHeap& built, ParallelMarker& parallel) {
  require_same_as_serial(built.heap->graph(), built.builder->roots(), built.heap->blocks().high_water(), parallel);
}

constexpr unsigned kThreadCounts[] = {1, 2, 3, 8};

}  // namespace

TEST_CASE("parallel marker: bit-identical to serial on every synthetic spec, 1/2/3/8 threads, two chunk sizes") {
  const char* specs[] = {"single",  "list:5000",         "lists:64x300",   "wide:5000",     "vp-list",
                         "vp-array", "complete:200:5",   "rmat:12",        "rmat:11:40",    "random:4000:3",
                         "tree:10"};
  for (const char* spec : specs) {
    auto built = test::build(spec);
    for (unsigned threads : kThreadCounts)
      for (std::uint32_t chunk : {1024u, 7u}) {
        CAPTURE(spec);
        CAPTURE(threads);
        CAPTURE(chunk);
        ParallelMarker marker({.threads = threads, .chunk = chunk});
        CHECK(marker.threads() == threads);
        require_same_as_serial(built, marker);
        // Against the independent model too, not only the serial marker.
        MarkBitmap marks;
        const MarkStats stats = marker.mark({built.heap->graph(), built.builder->roots(), built.heap->blocks().high_water()}, marks);
        CHECK(stats.marked_objects == built.model.reachable_count());
        CHECK(stats.edges_traversed == built.model.reachable_reference_count());
        CHECK(check_marks(built.heap->graph(), built.heap->blocks(), built.builder->roots(), marks) == "");
      }
  }
}

TEST_CASE("parallel marker: random graphs of many shapes and seeds") {
  const char* specs[] = {"rmat:10", "rmat:13:4", "random:3000:0", "random:6000:1", "random:2000:2", "random:1500:30",
                         "lists:33x17"};
  for (const char* spec : specs)
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
      auto built = test::build(spec, seed);
      const unsigned threads = kThreadCounts[seed % 4];
      CAPTURE(spec);
      CAPTURE(seed);
      CAPTURE(threads);
      ParallelMarker marker({.threads = threads, .chunk = static_cast<std::uint32_t>(1 + seed * 3)});
      require_same_as_serial(built, marker);
    }
}

TEST_CASE("parallel marker: more threads than cores, one pool reused across collections") {
  auto built = test::build("rmat:12", 7);
  const unsigned threads = 2 * std::max(2u, std::thread::hardware_concurrency()) + 1;
  ParallelMarker marker({.threads = threads, .chunk = 16});
  for (int round = 0; round < 5; ++round) require_same_as_serial(built, marker);
}

TEST_CASE("parallel marker: empty and null roots, self-loops, a 100,000-reference object, a million-long chain") {
  SUBCASE("empty root set and null roots") {
    auto built = test::build("rmat:10");
    for (unsigned threads : kThreadCounts) {
      ParallelMarker marker({.threads = threads});
      const std::vector<ObjectId> none;
      require_same_as_serial(built.heap->graph(), none, built.heap->blocks().high_water(), marker);
      const std::vector<ObjectId> nulls(5, kNullRef);
      MarkBitmap marks;
      const auto stats = marker.mark({built.heap->graph(), nulls, built.heap->blocks().high_water()}, marks);
      CHECK(stats.marked_objects == 0);
      CHECK(marks.count() == 0);
    }
  }
  SUBCASE("self-loops, mutual cycles and duplicate roots") {
    Heap heap;
    const ShapeId pair = heap.shapes().intern(2, 0);
    std::vector<ObjectId> objects;
    for (int i = 0; i < 500; ++i) objects.push_back(heap.allocate(pair));
    for (int i = 0; i < 500; ++i) {
      heap.store_ref(objects[i], 0, objects[i]);                    // self-loop
      heap.store_ref(objects[i], 1, objects[(i + 1) % 500 == 0 ? i : i + 1]);  // chain ending in a self-loop
    }
    const std::vector<ObjectId> roots = {objects[0], objects[0], objects[250], kNullRef, objects[250]};
    for (unsigned threads : kThreadCounts) {
      ParallelMarker marker({.threads = threads, .chunk = 1});
      require_same_as_serial(heap.graph(), roots, heap.blocks().high_water(), marker);
    }
  }
  SUBCASE("one object with 100,000 references is split into chunks") {
    auto built = test::build("wide:100000");
    for (unsigned threads : kThreadCounts) {
      ParallelMarker marker({.threads = threads, .chunk = 1024});
      require_same_as_serial(built, marker);
      MarkBitmap marks;
      const auto stats = marker.mark({built.heap->graph(), built.builder->roots(), built.heap->blocks().high_water()}, marks);
      std::uint64_t splits = 0, items = 0;
      for (const auto& s : marker.thread_stats()) {
        splits += s.splits;
        items += s.items;
      }
      CHECK(splits == 1);
      CHECK(items == 100000 + (100000 + 1023) / 1024);  // every leaf plus every chunk of the array
      CHECK(stats.marked_objects == 100001);
    }
  }
  SUBCASE("a million-long chain") {
    auto built = test::build("list:1000000");
    for (unsigned threads : {1u, 3u}) {
      ParallelMarker marker({.threads = threads});
      require_same_as_serial(built, marker);
    }
  }
}

TEST_CASE("parallel marker: huge arrays (over a million references, several, nested) with 1/2/3/8 threads") {
  // One heap holds every shape; each subcase marks from its own roots. Structures are
  // pairs of nodes (each pointing to the other and to itself); array elements include
  // nulls and repeats, so one chunk meets targets it already claimed, in the same mark
  // word and in others.
  Heap heap;
  const ShapeId node = heap.shapes().intern(2, 1);
  auto pair = [&] {
    const ObjectId a = heap.allocate(node), b = heap.allocate(node);
    heap.store_ref(a, 0, b);
    heap.store_ref(a, 1, a);
    heap.store_ref(b, 0, a);
    return a;
  };
  std::uint64_t state = 2026;
  auto random = [&](std::uint64_t bound) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (state >> 33) % bound;
  };

  // More than a million references in one object.
  const std::uint64_t huge = 1'100'000;
  const ObjectId big = heap.allocate_ref_array(huge);
  for (std::uint64_t i = 0; i < huge; ++i) {
    ObjectId element = kNullRef;
    if (i % 5 == 4)
      element = heap.load_element(big, i - 1 - random(i < 64 ? 1 : 64));  // a repeat, near or adjacent
    else if (i % 7 != 3)
      element = pair();
    heap.store_element(big, i, element);
  }
  // Several huge arrays sharing targets with each other and with `big`.
  std::vector<ObjectId> several;
  for (int k = 0; k < 3; ++k) {
    const ObjectId array = heap.allocate_ref_array(200'000);
    for (std::uint64_t i = 0; i < 200'000; ++i)
      heap.store_element(array, i, i % 2 == 0 ? heap.load_element(big, random(huge)) : pair());
    several.push_back(array);
  }
  heap.store_element(several[0], 17, several[1]);  // an array inside another
  // Arrays nested in arrays: an outer array of inner arrays of structures, one inner
  // array twice, and an inner array that holds the outer one (a cycle through arrays).
  const ObjectId outer = heap.allocate_ref_array(300);
  for (std::uint64_t i = 0; i < 300; ++i) {
    const ObjectId inner = heap.allocate_ref_array(2'000 + i);
    for (std::uint64_t j = 0; j < 2'000 + i; ++j) heap.store_element(inner, j, j % 3 == 0 ? kNullRef : pair());
    heap.store_element(outer, i, inner);
  }
  heap.store_element(outer, 299, heap.load_element(outer, 0));
  heap.store_element(heap.load_element(outer, 5), 1, outer);
  const ObjectId deep = heap.allocate_ref_array(1);  // a chain of arrays 5,000 deep
  ObjectId tail = deep;
  for (int d = 0; d < 5000; ++d) {
    const ObjectId next = heap.allocate_ref_array(d % 100 == 0 ? 3000 : 1);
    heap.store_element(tail, 0, next);
    tail = next;
  }

  auto check = [&](std::vector<ObjectId> roots, std::uint64_t expected_splits) {
    for (unsigned threads : kThreadCounts)
      for (std::uint32_t chunk : {1024u, 333u}) {
        CAPTURE(threads);
        CAPTURE(chunk);
        ParallelMarker marker({.threads = threads, .chunk = chunk});
        require_same_as_serial(heap.graph(), roots, heap.blocks().high_water(), marker);
        std::uint64_t splits = 0;
        for (const MarkThreadStats& s : marker.thread_stats()) splits += s.splits;
        if (chunk == 1024) CHECK(splits == expected_splits);
      }
  };
  SUBCASE("one object with more than a million references") { check({big}, 1); }
  SUBCASE("several huge arrays") { check({several[2], several[0], kNullRef}, 3); }
  SUBCASE("arrays nested in arrays") { check({outer, deep}, 299 + 50); }  // inner array 299 was replaced
  SUBCASE("everything at once") {
    std::vector<ObjectId> roots = {outer, deep, big};
    roots.insert(roots.end(), several.begin(), several.end());
    check(roots, 1 + 3 + 299 + 50);
  }
}

TEST_CASE("parallel marker: collections interleaved with random mutation, verified against serial") {
  Heap heap;
  test::RandomMutator mutator(heap, 2026, 32, {.max_array_length = 80});
  // verify=true: every collection checks the marks independently and against the serial marker.
  Collector collector(heap, std::make_unique<ParallelMarker>(ParallelMarkerOptions{.threads = 3, .chunk = 5}), true);
  for (int cycle = 0; cycle < 12; ++cycle) {
    mutator.run(6000);
    const auto stats = collector.collect(mutator.roots, "cycle");
    CHECK(heap.blocks().check() == "");
    CHECK(heap.blocks().live_objects() == stats.mark.marked_objects);
    mutator.forget_dead();
    CHECK(mutator.live.size() == stats.mark.marked_objects);
  }
}

TEST_CASE("parallel marker: options and statistics") {
  CHECK(ParallelMarkerOptions::parse({}, 4).threads == 4);
  CHECK(ParallelMarkerOptions::parse({{"chunk", "64"}}, 0).chunk == 64);
  CHECK_THROWS_AS(ParallelMarkerOptions::parse({{"chunk", "0"}}, 1), ConfigError);
  CHECK_THROWS_AS(ParallelMarkerOptions::parse({{"chunk", "12x"}}, 1), ConfigError);
  CHECK_THROWS_AS(ParallelMarkerOptions::parse({{"chunk", "99999999999"}}, 1), ConfigError);
  CHECK_THROWS_AS(ParallelMarkerOptions::parse({{"steal", "half"}}, 1), ConfigError);
  CHECK(ParallelMarker({.threads = 0}).threads() == ThreadPool::resolve(0));

  auto built = test::build("vp-array");
  ParallelMarker marker({.threads = 3, .chunk = 100});
  MarkBitmap marks;
  const auto stats = marker.mark({built.heap->graph(), built.builder->roots(), built.heap->blocks().high_water()}, marks);
  auto detail = [&](const std::string& key) {
    for (const auto& [k, v] : stats.details)
      if (k == key) return v;
    FAIL("missing detail " << key);
    return 0.0;
  };
  CHECK(detail("threads") == 3);
  CHECK(detail("chunk") == 100);
  CHECK(detail("splits") == 64);
  CHECK(detail("objects_per_thread_min") <= detail("objects_per_thread_max"));
  CHECK(detail("objects_per_thread_max") <= static_cast<double>(stats.marked_objects));
  CHECK(detail("steals") <= detail("steal_attempts"));
}

TEST_CASE("parallel marker: a small mark ends on the calling thread, a large one wakes the pool") {
  auto detail = [](const MarkStats& stats, const std::string& key) {
    for (const auto& [k, v] : stats.details)
      if (k == key) return v;
    FAIL("missing detail " << key);
    return 0.0;
  };
  ParallelMarker marker({.threads = 3, .chunk = 1024});
  auto small = test::build("single");
  MarkBitmap marks;
  const MarkStats alone = marker.mark({small.heap->graph(), small.builder->roots(), small.heap->blocks().high_water()}, marks);
  CHECK(detail(alone, "pool_woken") == 0);
  CHECK(detail(alone, "prelude_items") == detail(alone, "items"));
  require_same_as_serial(small, marker);

  // A chain longer than the prelude's budget, and many roots beyond it: the pool takes
  // over mid-chain and shares the roots the prelude did not reach.
  for (const char* spec : {"list:100000", "lists:2000x10"}) {
    CAPTURE(std::string(spec));
    auto large = test::build(spec);
    const MarkStats pooled =
        marker.mark({large.heap->graph(), large.builder->roots(), large.heap->blocks().high_water()}, marks);
    CHECK(detail(pooled, "pool_woken") == 1);
    CHECK(detail(pooled, "prelude_items") == ParallelMarker::kPreludeItems);
    require_same_as_serial(large, marker);
  }

  // Leaf roots only: the prelude's budget runs out exactly when it has nothing
  // pending, and the roots it did not reach must still be marked by the pool.
  Heap heap;
  const ShapeId leaf = heap.shapes().intern(0, 1);
  std::vector<ObjectId> roots;
  for (std::uint64_t i = 0; i < 3 * ParallelMarker::kPreludeItems; ++i) roots.push_back(heap.allocate(leaf));
  const MarkStats leaves = marker.mark({heap.graph(), roots, heap.blocks().high_water()}, marks);
  CHECK(detail(leaves, "pool_woken") == 1);
  CHECK(leaves.marked_objects == roots.size());
  require_same_as_serial(heap.graph(), roots, heap.blocks().high_water(), marker);
}

TEST_CASE("parallel marker: a mark completes with whichever threads join it; late threads never join a finished "
          "mark") {
  auto detail = [](const MarkStats& stats, const std::string& key) {
    for (const auto& [k, v] : stats.details)
      if (k == key) return v;
    FAIL("missing detail " << key);
    return 0.0;
  };
  // Just past the prelude's budget, so that the pool is woken and the mark is often
  // over before every thread has run; more threads than cores makes some threads late
  // in most marks. Every mark equals the serial one whoever joined, and the caller
  // always joins.
  const unsigned threads = 2 * std::max(2u, std::thread::hardware_concurrency()) + 1;
  ParallelMarker marker({.threads = threads, .chunk = 1024});
  for (const char* spec : {"list:5000", "lists:64x80", "random:6000:2"}) {
    CAPTURE(std::string(spec));
    auto built = test::build(spec);
    double fewest = threads;
    for (int round = 0; round < 60; ++round) {
      MarkBitmap marks;
      const MarkStats stats =
          marker.mark({built.heap->graph(), built.builder->roots(), built.heap->blocks().high_water()}, marks);
      REQUIRE(detail(stats, "pool_woken") == 1);
      const double joined = detail(stats, "threads_joined");
      REQUIRE(joined >= 1);
      REQUIRE(joined <= threads);
      fewest = std::min(fewest, joined);
      // Workers that scanned anything joined (the caller's prelude counts for it even
      // when the others finished the mark before it joined).
      unsigned active_workers = 0;
      for (std::size_t i = 1; i < marker.thread_stats().size(); ++i) active_workers += marker.thread_stats()[i].items != 0;
      CHECK(active_workers <= joined);
      require_same_as_serial(built, marker);
    }
    MESSAGE(spec << ": fewest threads that joined a mark: " << fewest << " of " << threads);
  }
}

TEST_CASE("a GPU fallback's CPU end marks many pending objects on every thread as one thread does") {
  // What a device leaves when it stops early: the marks it set, and the marked objects
  // it did not scan. Here: a serial mark stopped after the first objects of 256 chains.
  auto built = test::build("lists:256x300");
  const MarkRequest request{built.heap->graph(), built.builder->roots(), built.heap->blocks().high_water()};
  MarkBitmap expected;
  const MarkStats full = SerialMarker().mark(request, expected);
  const RefGraph& graph = built.heap->graph();
  for (const std::size_t pending_count : {std::size_t{3}, CpuFinish::kParallelObjects, std::size_t{200}}) {
    CAPTURE(pending_count);
    MarkBitmap partial;
    partial.reset(request.block_count);
    std::vector<ObjectId> pending;
    std::uint64_t scanned_edges = 0;
    // The roots and their direct children are marked; the roots scanned, the children pending.
    for (const ObjectId root : request.roots) {
      partial.test_and_set(root);
      for (std::uint32_t i = 0; i < graph.degree(root); ++i) {
        const ObjectId child = graph.edge_data()[graph.begin(root) + i];
        if (child == kNullRef) continue;
        ++scanned_edges;
        if (partial.test_and_set(child)) pending.push_back(child);
      }
    }
    REQUIRE(pending.size() >= 200);
    // The rest of the chains behind the first pending_count children: marked, scanned by
    // the serial marker's finish, so the pending set is exactly pending_count long.
    MarkBitmap serial_out = partial;
    std::vector<ObjectId> few(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(pending_count));
    std::vector<ObjectId> rest(pending.begin() + static_cast<std::ptrdiff_t>(pending_count), pending.end());
    std::uint64_t rest_edges = finish_mark_on_cpu(request, rest, serial_out);
    MarkBitmap parallel_out = serial_out;
    const std::uint64_t serial_edges = finish_mark_on_cpu(request, few, serial_out);
    MarkBitmap pooled_out = parallel_out;
    CpuFinish finish;
    const std::uint64_t parallel_edges = finish.finish(request, few, parallel_out);
    CHECK(parallel_out == serial_out);
    CHECK(serial_out == expected);
    CHECK(parallel_edges == serial_edges);
    CHECK(scanned_edges + rest_edges + serial_edges == full.edges_traversed);
    if (pending_count < CpuFinish::kParallelObjects) CHECK(finish.last_threads() == 1);
    // On threads the caller offers (the Collector's sweep pool), more than the finish's
    // own pool has: the same marks and count.
    ThreadPool offered(ThreadPool::resolve(0) + 3);
    MarkRequest with_pool = request;
    with_pool.host_pool = &offered;
    CHECK(finish.finish(with_pool, few, pooled_out) == serial_edges);
    CHECK(pooled_out == serial_out);
    CHECK(finish.last_threads() <= offered.size());
    if (pending_count < CpuFinish::kParallelObjects) CHECK(finish.last_threads() == 1);
  }
}
