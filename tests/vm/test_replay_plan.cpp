// gcvm replay's plans in-process (vm/cli/replay_plan.hpp), with a marker slow enough
// that the mutation round always finishes or fills the heap before the mark: under the
// concurrent plan a round that ends first waits for the mark (a stall), and a round
// whose allocation does not fit while the mark runs waits for it, then goes on in the
// room the lazy sweep makes; under mark-sweep the round runs before its collection.
#include <doctest/doctest.h>

#include <chrono>

#include "gc/heap_fixtures.hpp"
#include "gc/slow_marker.hpp"
#include "gc/markers/serial_marker.hpp"
#include "vm/cli/replay_plan.hpp"

using namespace gcvm;

namespace {

constexpr const char* kHeap = "random:4000:4";
const MutationSpec kGarbage{.garbage_bytes = 128 * 1024};

bool stalled(const CollectionStats& stats) {
  for (const PauseRecord& p : stats.pauses)
    if (p.kind == PauseKind::Stall) return true;
  return false;
}

struct RoundBytes {
  std::uint64_t live = 0;   // kHeap in use after its first collection
  std::uint64_t round = 0;  // what one round of kGarbage adds
};

/// What one round of kGarbage adds to kHeap after its first collection (mark-sweep).
RoundBytes round_heap_bytes() {
  test::BuiltHeap built = test::build(kHeap);
  cli::PlanArgs marksweep;
  auto plan = cli::make_replay_plan(marksweep, *built.heap, std::make_unique<SerialMarker>(), false, {});
  SyntheticMutator mutator(*built.heap, kGarbage, 1);
  plan->collect(built.builder->roots(), "first", nullptr);
  const std::uint64_t before = built.heap->used_bytes();
  const cli::ReplayCollection second = plan->collect(built.builder->roots(), "repeat", &mutator);
  REQUIRE(second.mutation);
  CHECK(second.stats.kind == CollectionKind::Full);
  CHECK(second.mutation->live_set_ms == 0);  // the round used the first collection's marks
  return {before, second.stats.heap_before_bytes - before};
}

}  // namespace

TEST_CASE("concurrent replay plan: a round that ends before the mark stalls; one that fills the heap waits, then "
          "allocates where the lazy sweep freed the last round's garbage") {
  const RoundBytes bytes = round_heap_bytes();
  REQUIRE(bytes.round > 0);
  // Room for the live heap and one round's garbage and a half: the second round fits
  // only once the first round's garbage is swept, which its cycle's final pause allows.
  test::BuiltHeap built =
      test::build(kHeap, kDefaultGraphSeed, HeapConfig{.limit_bytes = bytes.live + bytes.round * 3 / 2});
  cli::PlanArgs concurrent;
  concurrent.name = "concurrent";
  auto plan = cli::make_replay_plan(concurrent, *built.heap, std::make_unique<test::SlowMarker>(std::chrono::milliseconds(100)), true, {});
  CHECK(plan->name() == "concurrent");
  SyntheticMutator mutator(*built.heap, kGarbage, 1);
  const auto roots = built.builder->roots();

  const cli::ReplayCollection first = plan->collect(roots, "first", nullptr);
  CHECK(first.stats.kind == CollectionKind::Concurrent);
  CHECK(stalled(first.stats));  // a whole cycle: nothing to run during its mark
  CHECK_FALSE(first.mutation);

  const cli::ReplayCollection second = plan->collect(roots, "repeat", &mutator);
  REQUIRE(second.mutation);
  CHECK(second.mutation->garbage_objects > 0);
  CHECK(second.mutation->live_objects == second.stats.mark.marked_objects);
  CHECK(second.mutation->live_set_ms > 0);
  CHECK(stalled(second.stats));  // the round ended first

  const cli::ReplayCollection third = plan->collect(roots, "repeat", &mutator);
  REQUIRE(third.mutation);
  CHECK(third.mutation->garbage_objects == second.mutation->garbage_objects);
  CHECK(stalled(third.stats));  // the heap filled during the mark
  CHECK(third.stats.sweep.freed_objects >= second.mutation->garbage_objects);
  CHECK(third.stats.pauses.back().kind == PauseKind::Final);

  const std::optional<LazySweepTotals> exit_sweep = plan->finish();
  REQUIRE(exit_sweep);
  // What the third round's allocations swept and the rest at the end: the second round's garbage.
  CHECK(exit_sweep->freed_objects == third.stats.sweep.freed_objects);
  CHECK(built.heap->used_bytes() <= built.heap->limit_bytes());
}
