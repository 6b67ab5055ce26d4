// Generational collection: the generations mechanism (gc/heap/generations.hpp),
// young collections on every marker, and the plan's policy. The backbone is a property
// test: a random mutator on a generational heap, young and full collections
// interleaved, every collection checked by the Collector's --verify (graph, remembered
// set, marks against the serial marker, nothing reachable freed) and by an independent
// model of what a young collection must keep.
#include <doctest/doctest.h>

#include <deque>
#include <random>

#include "device_fixtures.hpp"
#include "gc/plans/collector.hpp"
#include "gc/plans/generational_policy.hpp"
#include "gc/heap/generations.hpp"
#include "gc/heap/heap.hpp"
#include "gc/markers/marker_registry.hpp"
#include "heap_mutator.hpp"

using namespace gcvm;

namespace {

HeapConfig generational_config(std::uint32_t promotion_age, RefGraphMode mode = RefGraphMode::Barrier) {
  HeapConfig config;
  config.limit_bytes = 64ull << 20;
  config.graph_mode = mode;
  config.promotion_age = promotion_age;
  return config;
}

std::unique_ptr<Marker> serial() { return make_marker({}); }

/// What a young collection must keep, computed without the remembered set: every
/// mature object, and every young object reachable, through young objects only, from
/// the roots or from a reference held by any live mature object.
MarkBitmap expected_young_marks(const Heap& heap, std::span<const ObjectId> roots) {
  const Generations& gens = *heap.generations();
  MarkBitmap keep;
  keep.reset(heap.blocks().high_water(), gens.mature_words());
  std::deque<ObjectId> queue;
  auto reach = [&](ObjectId t) {
    if (t != kNullRef && keep.test_and_set(t)) queue.push_back(t);
  };
  for (ObjectId r : roots) reach(r);
  heap.for_each_object([&](ObjectId o) {
    if (gens.is_mature(o))
      for (ObjectId t : heap.graph().out_edges(o)) reach(t);
  });
  while (!queue.empty()) {
    const ObjectId v = queue.front();
    queue.pop_front();
    for (ObjectId t : heap.graph().out_edges(v)) reach(t);
  }
  return keep;
}

}  // namespace

TEST_CASE("the write barrier remembers a mature holder of a young target, once") {
  Heap heap(generational_config(1));
  const ShapeId node = heap.shapes().intern(2, 0);
  const ObjectId holder = heap.allocate(node);
  Collector collector(heap, serial(), true);
  const ObjectId roots[] = {holder};
  collector.collect(roots, "test");  // holder survives once: promoted at age 1
  Generations& gens = *heap.generations();
  REQUIRE(gens.is_mature(holder));
  CHECK(gens.remembered_count() == 0);

  const ObjectId young = heap.allocate(node);
  CHECK_FALSE(gens.is_mature(young));
  heap.store_ref(young, 0, holder);  // young -> mature: nothing to remember
  CHECK(gens.remembered_count() == 0);
  heap.store_ref(holder, 0, kNullRef);
  CHECK(gens.remembered_count() == 0);
  heap.store_ref(holder, 0, young);
  heap.store_ref(holder, 1, young);
  CHECK(gens.remembered_count() == 1);
  CHECK(gens.remembered()[0] == holder);

  // The young object is reachable only through the remembered holder's field.
  const CollectionStats young_stats = collector.collect(roots, "test", CollectionKind::Young);
  CHECK(young_stats.kind == CollectionKind::Young);
  CHECK(young_stats.remembered_objects == 1);
  CHECK(young_stats.remembered_roots == 2);
  CHECK(young_stats.mark.marked_objects == 1);
  CHECK(heap.is_live(young));
  CHECK(gens.is_mature(young));  // promoted at age 1; the holder now references no young object
  CHECK(gens.remembered_count() == 0);
}

TEST_CASE("young objects age in bit planes and are promoted at the promotion age") {
  for (std::uint32_t age : {1u, 2u, 3u, 7u, Generations::kMaxPromotionAge}) {
    CAPTURE(age);
    Heap heap(generational_config(age));
    const ShapeId node = heap.shapes().intern(1, 1);
    const ObjectId survivor = heap.allocate(node);
    const ObjectId dies = heap.allocate(node);
    Collector collector(heap, serial(), true);
    const ObjectId roots[] = {survivor};
    for (std::uint32_t n = 1; n <= age; ++n) {
      const CollectionStats s = collector.collect(roots, "test", n % 2 == 0 ? CollectionKind::Full : CollectionKind::Young);
      CHECK(heap.is_live(survivor));
      CHECK_FALSE(heap.is_live(dies));
      CHECK(heap.generations()->is_mature(survivor) == (n == age));
      CHECK(heap.generations()->age(survivor) == (n == age ? 0u : n));
      CHECK(s.promoted_objects == (n == age ? 1u : 0u));
    }
    // The freed slot is young (age 0) when it is reused.
    const ObjectId reused = heap.allocate(node);
    CHECK(reused == dies);
    CHECK_FALSE(heap.generations()->is_mature(reused));
    CHECK(heap.generations()->age(reused) == 0);
  }
}

TEST_CASE("a full collection frees unreachable mature objects; a young one never does") {
  Heap heap(generational_config(1));
  const ShapeId node = heap.shapes().intern(1, 0);
  const ObjectId a = heap.allocate(node);
  const ObjectId b = heap.allocate(node);
  Collector collector(heap, serial(), true);
  const ObjectId both[] = {a, b};
  collector.collect(both, "test");
  REQUIRE(heap.generations()->mature_objects() == 2);
  const ObjectId only_a[] = {a};
  const CollectionStats young = collector.collect(only_a, "test", CollectionKind::Young);
  CHECK(young.sweep.freed_objects == 0);
  CHECK(heap.is_live(b));
  const CollectionStats full = collector.collect(only_a, "test", CollectionKind::Full);
  CHECK(full.sweep.freed_objects == 1);
  CHECK_FALSE(heap.is_live(b));
  CHECK(heap.generations()->mature_objects() == 1);
  const ObjectId reused = heap.allocate(node);
  CHECK(reused == b);
  CHECK_FALSE(heap.generations()->is_mature(reused));
}

TEST_CASE("promoted objects that reference young ones join the remembered set") {
  Heap heap(generational_config(2));
  const ShapeId node = heap.shapes().intern(1, 0);
  const ObjectId old_parent = heap.allocate(node);
  Collector collector(heap, serial(), true);
  const ObjectId roots[] = {old_parent};
  collector.collect(roots, "test", CollectionKind::Young);  // parent age 1
  const ObjectId child = heap.allocate(node);
  heap.store_ref(old_parent, 0, child);  // young -> young: no barrier entry
  collector.collect(roots, "test", CollectionKind::Young);  // parent promoted, child age 1
  CHECK(heap.generations()->is_mature(old_parent));
  CHECK_FALSE(heap.generations()->is_mature(child));
  REQUIRE(heap.generations()->remembered_count() == 1);
  CHECK(heap.generations()->remembered()[0] == old_parent);
  const ObjectId none[] = {kNullRef};
  collector.collect(none, "test", CollectionKind::Young);  // child kept through the remembered parent
  CHECK(heap.is_live(child));
  CHECK(heap.generations()->is_mature(child));
}

TEST_CASE("check_remembered_set finds a mature object missing from the remembered set") {
  Heap heap(generational_config(1));
  const ShapeId node = heap.shapes().intern(1, 0);
  const ObjectId holder = heap.allocate(node);
  Collector collector(heap, serial(), false);
  const ObjectId roots[] = {holder};
  collector.collect(roots, "test");
  const ObjectId young = heap.allocate(node);
  heap.graph().record_store(holder, 0, young);  // the graph's half of a store, without the barrier
  const std::string problem = heap.generations()->check_remembered_set(heap.graph(), heap.blocks());
  CHECK(problem.find("is not in the remembered set") != std::string::npos);
  Collector verifying(heap, serial(), true);
  CHECK_THROWS_AS(verifying.collect(roots, "test", CollectionKind::Young), VerifyError);
}

TEST_CASE("a young collection on a heap without generations is refused") {
  Heap heap;
  Collector collector(heap, serial(), false);
  CHECK_THROWS_AS(collector.collect({}, "test", CollectionKind::Young), std::logic_error);
}

TEST_CASE("property: random mutation with young and full collections, on every marker") {
  for (const CollectorChoice& choice : test::every_marker()) {
    for (std::uint32_t age : {1u, 3u}) {
      for (RefGraphMode mode : {RefGraphMode::Barrier, RefGraphMode::Rebuild}) {
        CAPTURE(choice.name);
        CAPTURE(choice.device);
        CAPTURE(age);
        CAPTURE(mode == RefGraphMode::Barrier ? "barrier" : "rebuild");
        Heap heap(generational_config(age, mode));
        test::MutationMix mix;
        mix.alloc_in_10 = 5;
        mix.root_one_in = 20;  // most objects are reached from other objects, many from old ones
        test::RandomMutator mutator(heap, 1000 + age, 256, mix);
        Collector collector(heap, make_marker(choice), true);
        std::mt19937_64 rng(age);
        std::uint64_t young_count = 0, remembered_roots = 0, promoted = 0;
        for (int cycle = 0; cycle < 30; ++cycle) {
          mutator.run(cycle % 5 == 4 ? 50 : 5000);
          const bool young = rng() % 4 != 0;
          CAPTURE(cycle);
          if (young) {
            if (mode == RefGraphMode::Rebuild) heap.rebuild_graph();  // the model reads the graph
            const MarkBitmap expected = expected_young_marks(heap, mutator.roots);
            const CollectionStats s = collector.collect(mutator.roots, "property", CollectionKind::Young);
            REQUIRE(collector.last_marks() == expected);
            ++young_count;
            remembered_roots += s.remembered_roots;
            promoted += s.promoted_objects;
          } else {
            promoted += collector.collect(mutator.roots, "property").promoted_objects;
          }
          mutator.forget_dead();
          REQUIRE(heap.generations()->check_remembered_set(heap.graph(), heap.blocks()).empty());
        }
        CHECK(young_count > 10);
        CHECK(remembered_roots > 0);  // the remembered set mattered
        CHECK(promoted > 0);
      }
    }
  }
}

TEST_CASE("the generational policy: young on a spent nursery, full when the heap is full or asked") {
  GenerationalOptions options;
  options.nursery_bytes = 1 << 20;
  options.full_trigger_percent = 50;
  const GenerationalPolicy policy(options, 16 << 20);
  CHECK(policy.decide(true, 2 << 20, "heap full").kind == CollectionKind::Young);
  CHECK(policy.decide(true, 2 << 20, "heap full").reason == "nursery full");
  CHECK(policy.decide(true, 8 << 20, "heap full").kind == CollectionKind::Full);
  CHECK(policy.decide(false, 2 << 20, "gc instruction").kind == CollectionKind::Full);
  CHECK(policy.decide(false, 2 << 20, "gc instruction").reason == "gc instruction");
  options.full_trigger_percent = 100;
  const GenerationalPolicy no_trigger(options, 16 << 20);
  CHECK(no_trigger.decide(true, 15 << 20, "heap full").kind == CollectionKind::Young);
  CHECK(no_trigger.decide(true, (15 << 20) + 1, "heap full").kind == CollectionKind::Full);  // no room for a nursery
  CHECK(GenerationalPolicy({}, 64 << 20).nursery_bytes() == 8 << 20);

  for (GenerationalOptions bad : {GenerationalOptions{.nursery_bytes = 1024}, GenerationalOptions{.nursery_bytes = 32 << 20},
                                  GenerationalOptions{.promotion_age = 0}, GenerationalOptions{.promotion_age = 16},
                                  GenerationalOptions{.full_trigger_percent = 0},
                                  GenerationalOptions{.full_trigger_percent = 101}})
    CHECK_THROWS_AS(GenerationalPolicy(bad, 16 << 20), std::invalid_argument);
}
