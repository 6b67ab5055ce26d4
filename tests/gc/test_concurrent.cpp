// The concurrent plan (gc/plans/concurrent_collector.hpp): the lazy sweep, the host
// copy of CPU markers' snapshots, the trigger policy, and property tests in which a random mutator changes the heap while every
// marker (the GPU markers through OpenCL, PoCL in CI) marks a snapshot of it.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <vector>

#include "device_fixtures.hpp"
#include "gc/heap/heap.hpp"
#include "gc/markers/marker_registry.hpp"
#include "gc/markers/serial_marker.hpp"
#include "gc/markers/snapshot_mark.hpp"
#include "gc/plans/concurrent_collector.hpp"
#include "gc/plans/concurrent_policy.hpp"
#include "heap_mutator.hpp"
#include "slow_marker.hpp"

namespace gcvm {

namespace {

/// Everything reachable from `roots` in the heap's graph now.
MarkBitmap reachable(const Heap& heap, const std::vector<ObjectId>& roots) {
  MarkBitmap marks;
  SerialMarker().mark({heap.graph(), roots, heap.blocks().high_water()}, marks);
  return marks;
}

/// A marker that marks nothing: a broken mark for --verify to catch.
class MarksNothing final : public Marker {
 public:
  std::string_view name() const override { return "marks-nothing"; }
  MarkerConstraints constraints() const override { return {}; }
  MarkStats mark(const MarkRequest& request, MarkBitmap& out) override {
    out.reset(request.block_count);
    return {};
  }
};

}  // namespace

TEST_CASE("the lazy sweep frees exactly the doomed slots, when the allocator needs a block or at the end") {
  Heap heap(HeapConfig{.limit_bytes = 4u << 20});
  const ShapeId node = heap.shapes().intern(1, 0);
  std::vector<ObjectId> objects;
  for (int i = 0; i < 64 * 8; ++i) objects.push_back(heap.allocate(node));  // blocks full of one shape
  const std::uint32_t blocks = heap.blocks().high_water();
  const std::vector<std::uint64_t> at_snapshot(heap.blocks().alloc_words(), heap.blocks().alloc_words() + blocks);
  MarkBitmap marks;
  marks.reset(blocks);
  for (std::size_t i = 0; i < objects.size(); i += 2) marks.test_and_set(objects[i]);  // every other one lives
  const std::uint64_t capacity = heap.shapes().layout(node).capacity;
  const std::uint64_t allocated = objects.size();

  DoomedSlots doomed;
  doomed.compute(at_snapshot, marks);
  CHECK(doomed.allocated_objects() == allocated);
  CHECK(doomed.objects() == allocated / 2);
  CHECK(heap.defer_sweep(doomed) == allocated / 2);
  CHECK(heap.lazy_sweep_pending());
  CHECK(heap.blocks().live_objects() == allocated);  // nothing is freed yet
  // The next allocation of the shape finds no active block: the heap sweeps one block
  // and allocates in it instead of taking a fresh block.
  const ObjectId fresh = heap.allocate(node);
  CHECK(block_of(fresh) == 0);
  CHECK(heap.lazy_sweep_pending());
  const LazySweepTotals first = heap.take_lazy_sweep_totals();
  CHECK(first.blocks == 1);
  CHECK(first.freed_objects == capacity / 2);
  // Objects allocated since the snapshot survive the rest of the sweep.
  heap.finish_lazy_sweep();
  CHECK_FALSE(heap.lazy_sweep_pending());
  CHECK(heap.is_live(fresh));
  for (std::size_t i = 0; i < objects.size(); ++i)
    if (objects[i] != fresh) CHECK(heap.is_live(objects[i]) == (i % 2 == 0));  // fresh took a freed slot
  CHECK(heap.take_lazy_sweep_totals().freed_objects == allocated / 2 - capacity / 2);
  CHECK(heap.blocks().check().empty());
  CHECK(heap.verify_graph().empty());
}

TEST_CASE("doomed slots reuse their storage: computed twice, handed over, computed again") {
  Heap heap(HeapConfig{.limit_bytes = 4u << 20});
  const ShapeId node = heap.shapes().intern(1, 0);
  std::vector<ObjectId> objects;
  for (int i = 0; i < 64 * 6; ++i) objects.push_back(heap.allocate(node));
  auto snapshot = [&] {
    return std::vector<std::uint64_t>(heap.blocks().alloc_words(),
                                      heap.blocks().alloc_words() + heap.blocks().high_water());
  };
  MarkBitmap marks;
  marks.reset(heap.blocks().high_water());
  for (std::size_t i = 0; i < objects.size(); i += 3) marks.test_and_set(objects[i]);
  DoomedSlots doomed;
  MarkBitmap none;
  none.reset(heap.blocks().high_water());
  doomed.compute(snapshot(), none);  // never handed over: the next compute replaces it
  doomed.compute(snapshot(), marks);
  const std::uint64_t kept = (objects.size() + 2) / 3;
  CHECK(heap.defer_sweep(doomed) == objects.size() - kept);
  heap.finish_lazy_sweep();
  CHECK(heap.blocks().live_objects() == kept);
  // The second cycle frees every other survivor, with the storage the first sweep gave back.
  MarkBitmap second;
  second.reset(heap.blocks().high_water());
  for (std::size_t i = 0; i < objects.size(); i += 6) second.test_and_set(objects[i]);
  doomed.compute(snapshot(), second);
  CHECK(doomed.allocated_objects() == kept);
  CHECK(heap.defer_sweep(doomed) == kept - (objects.size() + 5) / 6);
  heap.finish_lazy_sweep();
  for (std::size_t i = 0; i < objects.size(); ++i) CHECK(heap.is_live(objects[i]) == (i % 6 == 0));
  CHECK(heap.blocks().check().empty());
}

TEST_CASE("a lazy sweep still pending is finished before a stop-the-world collection") {
  Heap heap(HeapConfig{.limit_bytes = 4u << 20});
  const ShapeId node = heap.shapes().intern(1, 0);
  for (int i = 0; i < 200; ++i) heap.allocate(node);
  const std::vector<std::uint64_t> at_snapshot(heap.blocks().alloc_words(),
                                               heap.blocks().alloc_words() + heap.blocks().high_water());
  MarkBitmap none;
  none.reset(heap.blocks().high_water());
  DoomedSlots doomed;
  doomed.compute(at_snapshot, none);
  heap.defer_sweep(doomed);
  const ObjectId kept = heap.allocate(node);  // allocated black, in a slot that was free
  Collector collector(heap, std::make_unique<SerialMarker>(), true);
  const std::vector<ObjectId> roots{kept};
  const CollectionStats s = collector.collect(roots, "test");
  CHECK_FALSE(heap.lazy_sweep_pending());
  CHECK(heap.is_live(kept));
  CHECK(s.mark.marked_objects == 1);
  CHECK(heap.blocks().live_objects() == 1);
}

TEST_CASE("a CPU marker's host copy copies what changed since the last snapshot, and equals the graph") {
  Heap heap(HeapConfig{.limit_bytes = 16u << 20});
  test::RandomMutator mutator(heap, 5, 32);
  HostGraphCopy copy;
  auto equal = [&] {
    const RefGraph& live = heap.graph();
    const RefGraph& held = copy.graph();
    if (held.vertex_count() != live.vertex_count()) return false;
    for (std::uint64_t v = 0; v < live.vertex_count(); ++v)
      if (held.begin(v) != live.begin(v) || held.degree(v) != live.degree(v)) return false;
    return std::equal(live.edge_data(), live.edge_data() + live.edge_count(), held.edge_data());
  };
  mutator.run(4000);
  const std::uint64_t full = copy.update(heap.graph(), &heap.graph().changes());
  CHECK(full == heap.graph().vertex_count() * 12 + heap.graph().edge_count() * 4);
  CHECK(equal());
  CHECK_FALSE(heap.graph().changes().any());  // the copy consumed them
  for (int round = 0; round < 5; ++round) {
    mutator.run(300);
    const std::uint64_t bytes = copy.update(heap.graph(), &heap.graph().changes());
    CHECK(bytes < heap.graph().vertex_count() * 12 + heap.graph().edge_count() * 4);
    CHECK(equal());
  }
  // Someone else cleared the changes: the next update copies everything.
  mutator.run(300);
  heap.graph().changes().clear();
  CHECK(copy.update(heap.graph(), &heap.graph().changes()) ==
        heap.graph().vertex_count() * 12 + heap.graph().edge_count() * 4);
  CHECK(equal());
}

TEST_CASE("the trigger leaves room for what the mutator allocates during a cycle") {
  const std::uint64_t limit = 100u << 20;
  ConcurrentPolicy adaptive({}, limit);
  CHECK(adaptive.trigger_bytes() < limit / 2 + 1);  // half the heap before any cycle
  adaptive.cycle_finished(0);
  adaptive.cycle_finished(0);
  adaptive.cycle_finished(0);
  const std::uint64_t calm = adaptive.trigger_bytes();
  CHECK(calm > limit * 3 / 4);
  CHECK(calm <= limit / 100 * ConcurrentPolicy::kMaxTriggerPercent);
  for (int i = 0; i < 4; ++i) adaptive.cycle_finished(40u << 20);  // a cycle sees 40 MiB allocated
  CHECK(adaptive.trigger_bytes() < calm);
  CHECK(adaptive.trigger_bytes() >= limit / 100 * ConcurrentPolicy::kMinTriggerPercent);
  CHECK(adaptive.bytes_until_trigger(limit) == ConcurrentPolicy::kMinPollBytes);
  CHECK(adaptive.poll_bytes() == limit / 64);

  ConcurrentPolicy fixed({.trigger_percent = 30}, limit);
  fixed.cycle_finished(90u << 20);
  CHECK(fixed.trigger_bytes() == limit / 100 * 30);
  CHECK_THROWS_AS(ConcurrentPolicy({.trigger_percent = 101}, limit), std::invalid_argument);
}

TEST_CASE("a cycle finished before its mark is done stalls the mutator, and the stall is a pause of its own") {
  Heap heap(HeapConfig{.limit_bytes = 4u << 20});
  const ShapeId node = heap.shapes().intern(1, 0);
  const std::vector<ObjectId> roots{heap.allocate(node)};
  heap.allocate(node);  // garbage
  ConcurrentCollector collector(heap, std::make_unique<test::SlowMarker>(), true);
  collector.start(roots, "test");
  const CollectionStats stats = collector.finish(roots);  // at once: the mark still naps
  CHECK(stats.stall_ms >= 100);
  REQUIRE(stats.pauses.size() == 3);
  CHECK(stats.pauses[1].kind == PauseKind::Stall);
  CHECK(stats.pauses[1].ms == doctest::Approx(stats.stall_ms));
  CHECK(stats.mark.marked_objects == 1);
}

TEST_CASE("--verify catches a snapshot mark that would free a reachable object") {
  Heap heap(HeapConfig{.limit_bytes = 4u << 20});
  const ShapeId node = heap.shapes().intern(1, 0);
  const std::vector<ObjectId> roots{heap.allocate(node)};
  ConcurrentCollector collector(heap, std::make_unique<MarksNothing>(), true);
  collector.start(roots, "test");
  CHECK_THROWS_AS(collector.finish(roots), VerifyError);
}

// The mutator follows the rule every real mutator obeys: it stores only references it
// can reach. Its `live` list plays its registers, which are no roots: at each snapshot
// and after each cycle it keeps only what the roots reach, and it adds what it allocates.
TEST_CASE("property: with random mutation during marks, nothing reachable is freed, objects allocated during a "
          "cycle survive it, and floating garbage goes in the next cycle") {
  for (const CollectorChoice& choice : test::every_marker()) {
    for (RefGraphMode mode : {RefGraphMode::Barrier, RefGraphMode::Rebuild}) {
      if (mode == RefGraphMode::Rebuild && choice.name != "serial") continue;
      CAPTURE(choice.name);
      CAPTURE(choice.device);
      CAPTURE(mode == RefGraphMode::Barrier ? "barrier" : "rebuild");
      Heap heap(HeapConfig{.limit_bytes = 64u << 20, .graph_mode = mode});
      test::MutationMix mix;
      mix.alloc_in_10 = 5;
      mix.root_one_in = 16;
      test::RandomMutator mutator(heap, 77, 64, mix);
      ConcurrentCollector collector(heap, make_marker(choice), true);
      std::vector<ObjectId> floating;  // survived the last cycle, unreachable at its end
      std::uint64_t floating_total = 0, freed_total = 0, mutated_during_marks = 0;
      for (int cycle = 0; cycle < 10; ++cycle) {
        CAPTURE(cycle);
        mutator.run(3000);
        if (mode == RefGraphMode::Rebuild) heap.rebuild_graph();
        const MarkBitmap at_snapshot_reachable = reachable(heap, mutator.roots);
        std::erase_if(mutator.live, [&](ObjectId o) { return !at_snapshot_reachable.test(o); });
        const std::vector<std::uint64_t> at_snapshot(heap.blocks().alloc_words(),
                                                     heap.blocks().alloc_words() + heap.blocks().high_water());
        const std::size_t allocated_before = mutator.allocated.size();

        collector.start(mutator.roots, "property");
        for (int round = 0; round < 40 && (round < 2 || !collector.mark_done()); ++round) {
          mutator.run(250);
          mutated_during_marks += 250;
        }
        const CollectionStats s = collector.finish(mutator.roots);  // verify: marks and safety now
        heap.finish_lazy_sweep();
        freed_total += s.sweep.freed_objects;
        CHECK(s.kind == CollectionKind::Concurrent);
        CHECK(s.pauses.size() >= 2);

        for (std::size_t b = 0; b < at_snapshot.size(); ++b)
          REQUIRE((heap.blocks().alloc_word(static_cast<std::uint32_t>(b)) & at_snapshot[b]) ==
                  at_snapshot_reachable.words()[b]);
        for (std::size_t i = allocated_before; i < mutator.allocated.size(); ++i)
          if (mutator.allocated[i] != kNullRef) REQUIRE(heap.is_live(mutator.allocated[i]));
        for (const ObjectId o : floating) REQUIRE_FALSE(heap.is_live(o));
        REQUIRE(heap.blocks().check().empty());

        // Floating garbage: everything allocated that the roots no longer reach (it died
        // during the mark, or was allocated during it and dropped). The mutator forgets
        // it too, so it stays unreachable and the next cycle must free all of it.
        if (mode == RefGraphMode::Rebuild) heap.rebuild_graph();
        const MarkBitmap now = reachable(heap, mutator.roots);
        std::erase_if(mutator.live, [&](ObjectId o) { return !now.test(o); });
        floating.clear();
        for (std::uint32_t b = 0; b < heap.blocks().high_water(); ++b)
          for (std::uint64_t w = heap.blocks().alloc_word(b) & ~now.words()[b]; w != 0; w &= w - 1)
            floating.push_back(make_object_id(b, static_cast<std::uint32_t>(__builtin_ctzll(w))));
        floating_total += floating.size();
      }
      CHECK(floating_total > 0);  // garbage made during marks existed, and the next cycles took it
      CHECK(freed_total > 0);
      CHECK(mutated_during_marks > 0);
    }
  }
}

}  // namespace gcvm
