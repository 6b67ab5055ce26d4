#include <doctest/doctest.h>

#include <functional>

#include "gc/heap/heap.hpp"
#include "gc/plans/sweep_pool_waker.hpp"
#include "gc/util/thread_pool.hpp"

using namespace gcvm;

namespace {

/// Allocates objects of `shape` until the heap has grown by `bytes` (fresh blocks).
void grow(Heap& heap, ShapeId shape, std::uint64_t bytes) {
  const std::uint64_t until = heap.used_bytes() + bytes;
  while (heap.used_bytes() < until) REQUIRE(heap.allocate(shape) != kNullRef);
}

/// A heap of nodes, a pool of two and a clock the test moves.
struct WakerHeap {
  explicit WakerHeap(std::uint64_t limit) : heap(HeapConfig{.limit_bytes = limit}) {}
  Heap heap;
  const ShapeId node = heap.shapes().intern(1, 1);
  ThreadPool pool{2};
  double now = 0;
  std::function<double()> clock() {
    return [this] { return now; };
  }
};

}  // namespace

TEST_CASE("the sweep pool's waker learns the lead from the mutator's rate and from each wake-up's measured lead") {
  WakerHeap h(64 << 20);
  Heap& heap = h.heap;
  const ShapeId node = h.node;
  double& now = h.now;
  SweepPoolWaker waker(heap, h.pool, h.clock());
  constexpr std::uint64_t kCycle = 4 << 20;
  CHECK(waker.armed_bytes() == 0);  // nothing until a pause has ended

  // The mutator grows the heap by 4 MiB in the 10 ms before the first pause: a lead of
  // 2 ms is 0.8 MiB, armed below the level the first pause began at.
  grow(heap, node, kCycle);
  now += 10;
  const std::uint64_t first_start = heap.used_bytes();
  CHECK(waker.pause_started(now, first_start) == -1);
  const std::uint64_t rate_lead = waker.lead_bytes();
  CHECK(rate_lead == doctest::Approx(first_start * SweepPoolWaker::kTargetLeadMs / 10).epsilon(0.02));
  now += 0.5;
  waker.pause_ended(now, first_start, 0, 0.2, true);  // as if the sweep had freed everything
  CHECK(waker.armed_bytes() == first_start - rate_lead);

  // The wake-up comes at the armed level; the pause 4 ms later: the lead halves.
  grow(heap, node, waker.armed_bytes() - heap.used_bytes() - kBlockBytes);
  now += 5;
  grow(heap, node, 2 * kBlockBytes);  // the watch fires in here, at `now`
  const double woken_at = now;
  now += 4;
  CHECK(waker.pause_started(now, heap.used_bytes()) == doctest::Approx(now - woken_at));
  CHECK(waker.lead_bytes() == rate_lead / 2);

  SUBCASE("a pause before the wake-up doubles the lead") {
    // The last pause began 4 MiB above the heap it left; this one comes after 2 MiB.
    waker.pause_ended(now, heap.used_bytes() + kCycle, heap.used_bytes(), 0.2, true);
    const std::uint64_t lead = waker.lead_bytes();
    CHECK(waker.armed_bytes() == heap.used_bytes() + kCycle - lead);
    grow(heap, node, kCycle / 2);
    now += 5;
    CHECK(waker.pause_started(now, heap.used_bytes()) == -1);
    CHECK(waker.lead_bytes() == 2 * lead);
  }
  SUBCASE("a lead is at most half a cycle's growth") {
    waker.pause_ended(now, heap.used_bytes(), heap.used_bytes(), 0.2, true);
    const std::uint64_t before = heap.used_bytes();
    grow(heap, node, 4 * kBlockBytes);
    now += 1;
    waker.pause_started(now, heap.used_bytes());
    CHECK(waker.lead_bytes() <= (heap.used_bytes() - before) / 2);
  }
  SUBCASE("a pause that does not sweep on the pool arms nothing") {
    waker.pause_ended(now, heap.used_bytes(), heap.used_bytes(), 0.2, false);
    CHECK(waker.armed_bytes() == 0);
    grow(heap, node, kCycle);
    now += 10;
    CHECK(waker.pause_started(now, heap.used_bytes()) == -1);
  }
}

TEST_CASE("a waker destroyed while its wake-up is armed leaves the heap's watch disarmed") {
  WakerHeap h(16 << 20);
  {
    SweepPoolWaker waker(h.heap, h.pool, h.clock());
    grow(h.heap, h.node, 1 << 20);
    h.now += 10;
    waker.pause_started(h.now, h.heap.used_bytes());
    waker.pause_ended(h.now + 0.5, h.heap.used_bytes() + (4 << 20), h.heap.used_bytes(), 0.2, true);
    REQUIRE(waker.armed_bytes() != 0);
  }
  grow(h.heap, h.node, 8 << 20);  // past the level the waker had armed: nothing calls into it
  CHECK(h.heap.used_bytes() >= (9u << 20));
}
