// The synthetic mutator (gc/mutator/synthetic_mutator.hpp): its rounds change the heap
// only through the write barrier (the graph still matches the heap), do the amounts the
// spec asks for, produce garbage that the next collection frees, and are deterministic
// per seed; every marker marks the mutated heaps alike. Safepoints: polls every interval
// of stores and allocations with the live set and the garbage held, one heap-full call
// before giving up; a round on what the mutator reaches now equals one on the marks.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "gc/markers/marker_registry.hpp"
#include "gc/mutator/synthetic_mutator.hpp"
#include "gc/plans/collector.hpp"
#include "heap_fixtures.hpp"

using namespace gcvm;

namespace {

std::unique_ptr<Marker> cpu_marker(const std::string& name) {
  CollectorChoice choice;
  choice.name = name;
  return make_marker(choice);
}

/// Builds `spec`, collects it, then runs `rounds` rounds each followed by a collection;
/// returns the mark words after every collection.
std::vector<MarkWords> mutated_marks(const std::string& spec, const MutationSpec& mutation, std::uint64_t seed,
                                     int rounds, const std::string& marker = "serial") {
  test::BuiltHeap built = test::build(spec);
  Collector collector(*built.heap, cpu_marker(marker), true);
  SyntheticMutator mutator(*built.heap, mutation, seed);
  std::vector<MarkWords> marks;
  collector.collect(built.builder->roots(), "first");
  marks.push_back(collector.last_marks().words());
  for (int i = 0; i < rounds; ++i) {
    mutator.mutate(collector.last_marks());
    collector.collect(built.builder->roots(), "repeat");
    marks.push_back(collector.last_marks().words());
  }
  return marks;
}

/// Counts the polls and remembers what the mutator held at them; counts heap-full calls
/// and gives up at each.
class CountingSafepoint final : public MutatorSafepoint {
 public:
  explicit CountingSafepoint(std::uint64_t interval) : interval_(interval) {}
  std::uint64_t poll_interval() const override { return interval_; }
  void poll(HeldObjects held) override {
    ++polls;
    held_live = held.live.size();
    held_garbage = std::max<std::size_t>(held_garbage, held.garbage.size());
  }
  bool heap_full(HeldObjects) override {
    ++full;
    return false;
  }
  std::uint64_t polls = 0, full = 0;
  std::size_t held_live = 0, held_garbage = 0;

 private:
  std::uint64_t interval_;
};

}  // namespace

TEST_CASE("a mutation round does what its spec says, through the barrier, and its garbage dies") {
  test::BuiltHeap built = test::build("random:4000:4");
  Heap& heap = *built.heap;
  Collector collector(heap, cpu_marker("serial"), true);
  const CollectionStats first = collector.collect(built.builder->roots(), "first");
  const MutationSpec spec{.rewire = 0.1, .replace = 0.05, .garbage_bytes = 64 * 1024};
  SyntheticMutator mutator(heap, spec, 7);
  const std::uint64_t used_before = heap.used_bytes();
  const MutationStats m = mutator.mutate(collector.last_marks());

  CHECK(m.live_objects == first.mark.marked_objects);
  CHECK(m.live_references == first.mark.edges_traversed);
  CHECK(m.rewired == static_cast<std::uint64_t>(std::llround(0.1 * static_cast<double>(m.live_references))));
  CHECK(m.rewired_null <= m.rewired);
  CHECK(m.replaced > 0);
  CHECK(m.replaced <= static_cast<std::uint64_t>(std::llround(0.05 * static_cast<double>(m.live_objects))));
  CHECK(m.garbage_objects > 0);
  CHECK(m.objects_allocated == m.garbage_objects + m.replaced);
  CHECK(m.bytes_allocated >= spec.garbage_bytes);
  CHECK(m.stores >= m.rewired + m.replaced);
  CHECK(heap.used_bytes() > used_before);
  CHECK(heap.verify_graph().empty());

  const CollectionStats second = collector.collect(built.builder->roots(), "repeat");
  CHECK(second.sweep.objects_before == first.mark.marked_objects + m.objects_allocated);
  CHECK(second.sweep.freed_objects >= m.garbage_objects);
}

TEST_CASE("an empty spec changes nothing; a heap limit too small for the garbage is HeapExhausted, after one call "
          "to the safepoint") {
  HeapConfig config;
  config.limit_bytes = 256 * 1024;
  test::BuiltHeap built = test::build("list:1000", kDefaultGraphSeed, config);
  Collector collector(*built.heap, cpu_marker("serial"), false);
  collector.collect(built.builder->roots(), "first");
  const MarkWords before = collector.last_marks().words();
  SyntheticMutator idle(*built.heap, MutationSpec{}, 1);
  const MutationStats none = idle.mutate(collector.last_marks());
  CHECK(none.stores == 0);
  CHECK(none.objects_allocated == 0);
  collector.collect(built.builder->roots(), "repeat");
  CHECK(collector.last_marks().words() == before);

  SyntheticMutator greedy(*built.heap, MutationSpec{.garbage_bytes = 1024 * 1024}, 1);
  CountingSafepoint safepoint(1 << 20);
  CHECK_THROWS_AS(greedy.mutate(collector.last_marks(), &safepoint), HeapExhausted);
  CHECK(safepoint.full == 1);
}

TEST_CASE("the same seed gives the same rounds; another seed other ones") {
  const MutationSpec spec{.rewire = 0.05, .replace = 0.01, .garbage_bytes = 32 * 1024};
  const auto a = mutated_marks("rmat:12", spec, 3, 3);
  const auto b = mutated_marks("rmat:12", spec, 3, 3);
  const auto c = mutated_marks("rmat:12", spec, 4, 3);
  CHECK(a == b);
  CHECK(a.front() == c.front());
  CHECK(a.back() != c.back());
}

TEST_CASE("every CPU marker marks the mutated heaps as the serial marker does (verified per collection)") {
  const MutationSpec spec{.rewire = 0.02, .replace = 0.01, .garbage_bytes = 64 * 1024};
  const auto serial = mutated_marks("vp-list", spec, 11, 3);
  CHECK(mutated_marks("vp-list", spec, 11, 3, "parallel") == serial);
}

TEST_CASE("the spec's text names what is set") {
  CHECK(MutationSpec{}.text() == "none");
  CHECK(MutationSpec{.rewire = 0.01, .garbage_bytes = 1024}.text() == "rewire=0.01,garbage=1024");
  CHECK(MutationSpec{.replace = 0.5}.text() == "replace=0.5");
}

TEST_CASE("a round polls its safepoint every interval's stores and allocations, holding L and its garbage") {
  test::BuiltHeap built = test::build("random:4000:4");
  Collector collector(*built.heap, cpu_marker("serial"), false);
  collector.collect(built.builder->roots(), "first");
  const MutationSpec spec{.rewire = 0.1, .replace = 0.05, .garbage_bytes = 64 * 1024};
  SyntheticMutator mutator(*built.heap, spec, 7);
  CountingSafepoint safepoint(64);
  const MutationStats m = mutator.mutate(collector.last_marks(), &safepoint);
  const std::uint64_t operations = m.stores + m.objects_allocated;
  // A poll comes at the first step boundary after 64 operations; a step does at most
  // one allocation and a model's references' stores plus one.
  CHECK(safepoint.polls > 0);
  CHECK(safepoint.polls <= operations / 64);
  CHECK(safepoint.held_live == m.live_objects);
  CHECK(safepoint.held_garbage > 0);
  CHECK(safepoint.held_garbage <= m.garbage_objects);
  CHECK(safepoint.full == 0);
}

TEST_CASE("a round on what the mutator reaches now is the round on the last collection's marks") {
  const MutationSpec spec{.rewire = 0.1, .replace = 0.05, .garbage_bytes = 32 * 1024};
  std::vector<MarkWords> by_marks = mutated_marks("random:3000:4", spec, 3, 2);
  test::BuiltHeap built = test::build("random:3000:4");
  Collector collector(*built.heap, cpu_marker("serial"), true);
  SyntheticMutator mutator(*built.heap, spec, 3);
  collector.collect(built.builder->roots(), "first");
  CHECK(collector.last_marks().words() == by_marks[0]);
  for (std::size_t i = 1; i <= 2; ++i) {
    const MutationStats m = mutator.mutate_reachable(built.builder->roots());
    CHECK(m.live_set_ms > 0);
    CHECK(m.mutate_ms >= m.live_set_ms);
    collector.collect(built.builder->roots(), "repeat");
    CHECK(collector.last_marks().words() == by_marks[i]);
  }
}
