#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "gc/util/thread_pool.hpp"

using namespace gcvm;

TEST_CASE("thread pool: every participant runs each job once, and sees and leaves plain memory consistent") {
  for (unsigned threads : {1u, 2u, 3u, 8u, 2 * std::max(2u, std::thread::hardware_concurrency()) + 1}) {
    CAPTURE(threads);
    ThreadPool pool(threads);
    REQUIRE(pool.size() == threads);
    std::vector<std::uint64_t> calls(threads, 0);  // plain memory: run() orders it
    std::uint64_t input = 0;
    for (std::uint64_t round = 1; round <= 300; ++round) {
      input = round;  // written before run(): every participant must see it
      std::atomic<unsigned> seen_input{0};
      pool.run([&](unsigned index) {
        ++calls[index];  // distinct elements: no two participants share an index
        if (input == round) seen_input.fetch_add(1, std::memory_order_relaxed);
      });
      REQUIRE(seen_input.load() == threads);
      for (unsigned i = 0; i < threads; ++i) REQUIRE(calls[i] == round);
    }
  }
}

TEST_CASE("thread pool: jobs after the workers fell asleep, and a pool destroyed while idle") {
  ThreadPool pool(4);
  for (int round = 0; round < 3; ++round) {
    // Longer than the workers' spin: they block in the futex wait and must wake.
    std::this_thread::sleep_for(std::chrono::microseconds(5 * ThreadPool::kSpinMicroseconds));
    std::atomic<unsigned> ran{0};
    pool.run([&](unsigned) { ran.fetch_add(1); });
    CHECK(ran.load() == 4);
  }
  { ThreadPool idle(3); }
  CHECK(ThreadPool::resolve(0) >= 1);
  CHECK(ThreadPool::resolve(5) == 5);
}

TEST_CASE("thread pool: wake-ups without a job, before jobs, after their polling ran out, and at destruction") {
  for (unsigned threads : {1u, 2u, 5u}) {
    CAPTURE(threads);
    ThreadPool pool(threads);
    std::vector<std::uint64_t> calls(threads, 0);
    for (std::uint64_t round = 1; round <= 200; ++round) {
      // Every pattern of wake-ups between two jobs: none, one, two in a row, one whose
      // polling ends before the job comes.
      for (std::uint64_t w = 0; w < round % 3; ++w) pool.wake(round % 2 == 0 ? 2000 : 1);
      if (round % 50 == 0) {
        pool.wake(10);
        std::this_thread::sleep_for(std::chrono::microseconds(5 * ThreadPool::kSpinMicroseconds));
      }
      pool.run([&](unsigned index) { ++calls[index]; });
      for (unsigned i = 0; i < threads; ++i) REQUIRE(calls[i] == round);  // each job ran once per participant
    }
    pool.wake(100000);  // destroyed while its workers poll
  }
}
