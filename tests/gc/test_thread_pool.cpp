#include <doctest/doctest.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "gc/util/thread_placement.hpp"
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

TEST_CASE("thread pool: run_arriving runs the caller and the workers that arrive in time, never one after it "
          "returned; run jobs after it still reach every worker once") {
  for (unsigned threads : {1u, 2u, 5u, 2 * std::max(2u, std::thread::hardware_concurrency()) + 1}) {
    CAPTURE(threads);
    ThreadPool pool(threads);
    std::vector<std::uint64_t> run_calls(threads, 0);
    std::atomic<std::uint64_t> late_calls{0}, arriving_rounds{0};
    std::uint64_t runs = 0;
    for (std::uint64_t round = 1; round <= 400; ++round) {
      if (round % 97 == 0)  // the workers fall asleep: most of the next job's arrivals come late
        std::this_thread::sleep_for(std::chrono::microseconds(5 * ThreadPool::kSpinMicroseconds));
      std::vector<std::uint64_t> calls(threads, 0);  // on the caller's stack, as a job's state may be
      std::atomic<bool> returned{false};
      const unsigned ran = pool.run_arriving([&](unsigned index) {
        if (returned.load()) late_calls.fetch_add(1);
        ++calls[index];
        if (index == 0 && round % 3 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
      });
      returned.store(true);
      REQUIRE(ran == static_cast<unsigned>(std::count(calls.begin(), calls.end(), 1u)));
      REQUIRE(calls[0] == 1);  // the caller always runs its part
      for (unsigned i = 1; i < threads; ++i) REQUIRE(calls[i] <= 1);
      if (std::count(calls.begin(), calls.end(), 1u) == threads) arriving_rounds.fetch_add(1);
      // A run job right after: workers that skipped the last job, or read its
      // generation and lost the race to its close, still run this one exactly once.
      if (round % 2 == 0) {
        ++runs;
        pool.run([&](unsigned index) { ++run_calls[index]; });
        for (unsigned i = 0; i < threads; ++i) REQUIRE(run_calls[i] == runs);
      }
    }
    CHECK(late_calls.load() == 0);
    // for_each_task: every task once, whoever takes it.
    for (std::uint64_t tasks : {0u, 1u, 7u, 1000u}) {
      std::vector<std::atomic<unsigned>> done(tasks);
      pool.for_each_task(tasks, [&](std::uint64_t t) { done[t].fetch_add(1); });
      for (std::uint64_t t = 0; t < tasks; ++t) REQUIRE(done[t].load() == 1);
    }
  }
}

TEST_CASE("thread pool: pinned workers run on their CPUs; unpinned ones on the process's, whatever their creator's") {
  const std::vector<unsigned> cpus = process_cpus();
  REQUIRE(!cpus.empty());
  SUBCASE("pinned") {
    if (cpus.size() < 2) return;
    ThreadPool pool(2, {cpus.back()});
    std::vector<unsigned> worker_cpus;
    int where = -1;
    pool.run([&](unsigned index) {
      if (index != 1) return;
      worker_cpus = allowed_cpus();
      where = sched_getcpu();
    });
    CHECK(worker_cpus == std::vector<unsigned>{cpus.back()});
    CHECK(where == static_cast<int>(cpus.back()));
    CHECK_THROWS_AS(ThreadPool(3, {cpus.back()}), std::invalid_argument);
  }
  SUBCASE("made by a thread kept to one CPU") {
    std::vector<std::vector<unsigned>> seen(3);
    {
      const ScopedThreadPlacement kept({cpus.front()});
      CHECK(allowed_cpus() == std::vector<unsigned>{cpus.front()});
      ThreadPool pool(3);
      pool.run([&](unsigned index) { seen[index] = allowed_cpus(); });
    }
    CHECK(allowed_cpus() == cpus);  // the scope gave the thread its CPUs back
    CHECK(seen[0] == std::vector<unsigned>{cpus.front()});
    CHECK(seen[1] == cpus);
    CHECK(seen[2] == cpus);
  }
}
