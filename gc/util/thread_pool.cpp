#include "gc/util/thread_pool.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <utility>

#include "gc/util/spin.hpp"
#include "gc/util/thread_placement.hpp"

namespace gcvm {

namespace {

/// A thread's first allocation sets up its malloc arena (a fresh mapping) and touches
/// its first pages. Workers make one when the pool is built, so that it is not made in
/// the first job, a collection's pause: on the H100 hosts a device marker's first
/// sweep, whose workers first allocate there (their edge-range records), summed
/// 3.0-14.6 ms of block work on 8 and 16 threads without it and 0.9-1.6 ms with it.
void warm_allocator() {
  constexpr std::size_t kBytes = std::size_t{64} << 10;
  auto* bytes = static_cast<volatile unsigned char*>(std::malloc(kBytes));
  if (bytes == nullptr) return;
  for (std::size_t i = 0; i < kBytes; i += 4096) bytes[i] = 0;
  std::free(const_cast<unsigned char*>(bytes));
}

}  // namespace

unsigned ThreadPool::resolve(unsigned threads) {
  if (threads != 0) return threads;
  const unsigned hardware = std::thread::hardware_concurrency();
  return hardware == 0 ? 1 : hardware;
}

ThreadPool::ThreadPool(unsigned threads, std::vector<unsigned> worker_cpus)
    : size_(resolve(threads)), worker_cpus_(std::move(worker_cpus)) {
  if (!worker_cpus_.empty() && worker_cpus_.size() != size_ - 1)
    throw std::invalid_argument("a thread pool's worker CPUs: one for each worker");
  workers_.reserve(size_ - 1);
  for (unsigned i = 1; i < size_; ++i) workers_.emplace_back([this, i] { work(i); });
}

ThreadPool::~ThreadPool() {
  stopping_.store(true, std::memory_order_relaxed);  // ordered by publish's release store
  publish(false);
  for (auto& t : workers_) t.join();
}

void ThreadPool::publish(bool job, bool arriving) {
  const std::uint64_t now = generation_.load(std::memory_order_relaxed);
  const bool odd = (now & 1) != 0;
  const std::uint64_t next = now + (odd == job ? 1 : 2);
  if (job) {
    arriving_.store(arriving, std::memory_order_relaxed);
    left_.store(0, std::memory_order_relaxed);
    gate_.store(gate_of(next), std::memory_order_relaxed);
  }
  generation_.store(next, std::memory_order_release);
  generation_.notify_all();
}

bool ThreadPool::arrive(std::uint64_t generation) {
  std::uint64_t gate = gate_.load(std::memory_order_acquire);
  for (;;) {
    if ((gate & ~(kGateClosed | kGateCount)) != gate_of(generation) || (gate & kGateClosed) != 0) return false;
    if (gate_.compare_exchange_weak(gate, gate + 1, std::memory_order_acq_rel, std::memory_order_acquire)) return true;
  }
}

void ThreadPool::wait_for_left(unsigned count) {
  auto finished = [&] { return left_.load(std::memory_order_acquire) == count; };
  if (spin_until(finished, std::chrono::microseconds{kSpinMicroseconds})) return;
  for (unsigned left; (left = left_.load(std::memory_order_acquire)) != count;)
    left_.wait(left, std::memory_order_acquire);
}

void ThreadPool::wake(unsigned microseconds) {
  if (size_ == 1) return;
  wake_microseconds_.store(microseconds, std::memory_order_relaxed);
  publish(false);
}

void ThreadPool::run(const std::function<void(unsigned)>& job) {
  if (size_ == 1) {
    job(0);
    return;
  }
  job_ = &job;
  publish(true);
  job(0);
  wait_for_left(size_ - 1);
}

unsigned ThreadPool::run_arriving(const std::function<void(unsigned)>& job) {
  if (size_ == 1) {
    job(0);
    return 1;
  }
  job_ = &job;
  publish(true, true);
  job(0);
  const auto arrived = static_cast<unsigned>(gate_.fetch_or(kGateClosed, std::memory_order_acq_rel) & kGateCount);
  wait_for_left(arrived);
  return arrived + 1;
}

unsigned ThreadPool::for_each_task(std::uint64_t tasks, const std::function<void(std::uint64_t)>& task) {
  std::atomic<std::uint64_t> next{0};
  return run_arriving([&](unsigned) {
    for (std::uint64_t t; (t = next.fetch_add(1, std::memory_order_relaxed)) < tasks;) task(t);
  });
}

void ThreadPool::work(unsigned index) {
  // An unpinned worker spreads over the process's CPUs whatever its creator's placement.
  place_thread(pthread_self(), worker_cpus_.empty() ? process_cpus() : std::vector<unsigned>{worker_cpus_[index - 1]});
  warm_allocator();
  std::uint64_t seen = 0;
  unsigned poll = kSpinMicroseconds;
  for (;;) {
    auto published = [&] { return generation_.load(std::memory_order_acquire) != seen; };
    if (!spin_until(published, std::chrono::microseconds{poll}))
      while (!published()) generation_.wait(seen, std::memory_order_acquire);
    seen = generation_.load(std::memory_order_acquire);
    if (stopping_.load(std::memory_order_relaxed)) return;
    if ((seen & 1) != 0) {  // a wake-up: poll for the job it announces
      poll = std::max(kSpinMicroseconds, wake_microseconds_.load(std::memory_order_relaxed));
      continue;
    }
    poll = kSpinMicroseconds;
    // A job this worker reached too late (closed), or one whose generation it read
    // before the caller went on to the next job, is skipped; the loop then reads the
    // generation again.
    if (!arrive(seen)) continue;
    (*job_)(index);
    // The caller waits for as many leaves as workers arrived (run_arriving, known once
    // it closed the gate) or as it has workers (run): whoever leaves last wakes it.
    const unsigned left = left_.fetch_add(1, std::memory_order_acq_rel) + 1;
    const std::uint64_t gate = gate_.load(std::memory_order_acquire);
    unsigned expected = size_ - 1;
    if (arriving_.load(std::memory_order_relaxed))
      expected = (gate & kGateClosed) != 0 ? static_cast<unsigned>(gate & kGateCount) : 0;
    if (left == expected) left_.notify_one();
  }
}

void for_each_task(ThreadPool* pool, std::uint64_t tasks, const std::function<void(std::uint64_t)>& task) {
  if (pool != nullptr && pool->size() > 1) {
    pool->for_each_task(tasks, task);
  } else {
    for (std::uint64_t t = 0; t < tasks; ++t) task(t);
  }
}

}  // namespace gcvm
