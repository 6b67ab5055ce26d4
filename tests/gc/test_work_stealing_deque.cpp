#include <doctest/doctest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "gc/markers/work_stealing_deque.hpp"

using namespace gcvm;

TEST_CASE("work-stealing deque: owner pops LIFO, thieves steal FIFO, the ring grows") {
  WorkStealingDeque deque(16);
  WorkStealingDeque::Item item = 0;
  CHECK_FALSE(deque.pop(item));
  CHECK(deque.steal(item) == WorkStealingDeque::Steal::Empty);
  for (std::uint64_t i = 0; i < 1000; ++i) deque.push(i);
  CHECK(deque.capacity() >= 1000);
  REQUIRE(deque.steal(item) == WorkStealingDeque::Steal::Taken);
  CHECK(item == 0);
  REQUIRE(deque.pop(item));
  CHECK(item == 999);
  std::uint64_t count = 2;
  while (deque.pop(item)) ++count;
  CHECK(count == 1000);
  CHECK(deque.looks_empty());
  deque.reclaim();
  deque.push(7);
  REQUIRE(deque.pop(item));
  CHECK(item == 7);
}

TEST_CASE("work-stealing deque stress: concurrent push, pop and steal take every item exactly once") {
  constexpr std::uint64_t kItems = 200000;
  for (unsigned thieves : {1u, 3u, 7u}) {
    CAPTURE(thieves);
    WorkStealingDeque deque(16);  // small start: many grows while thieves read
    std::vector<std::vector<std::uint64_t>> taken(thieves + 1);
    std::atomic<bool> done{false};
    std::vector<std::thread> threads;
    for (unsigned t = 1; t <= thieves; ++t)
      threads.emplace_back([&, t] {
        WorkStealingDeque::Item item = 0;
        for (;;) {
          const bool finished = done.load(std::memory_order_acquire);
          const auto result = deque.steal(item);
          if (result == WorkStealingDeque::Steal::Taken)
            taken[t].push_back(item);
          else if (result == WorkStealingDeque::Steal::Empty && finished)
            return;
        }
      });
    // The owner pushes in bursts and pops some of its own work, racing for the last items.
    WorkStealingDeque::Item item = 0;
    for (std::uint64_t i = 0; i < kItems;) {
      const std::uint64_t burst = 1 + (i * 2654435761u) % 64;
      for (std::uint64_t k = 0; k < burst && i < kItems; ++k) deque.push(i++);
      for (std::uint64_t k = 0; k < burst / 2 + 1; ++k)
        if (deque.pop(item)) taken[0].push_back(item);
    }
    while (deque.pop(item)) taken[0].push_back(item);
    done.store(true, std::memory_order_release);
    for (auto& t : threads) t.join();

    std::vector<int> seen(kItems, 0);
    std::uint64_t total = 0, stolen = 0;
    for (unsigned t = 0; t <= thieves; ++t) {
      total += taken[t].size();
      if (t > 0) stolen += taken[t].size();
      for (std::uint64_t v : taken[t]) {
        REQUIRE(v < kItems);
        ++seen[v];
      }
    }
    CHECK(total == kItems);
    for (std::uint64_t v = 0; v < kItems; ++v) REQUIRE(seen[v] == 1);
    MESSAGE("thieves took " << stolen << " of " << kItems);
  }
}
