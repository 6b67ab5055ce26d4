// A persistent pool of worker threads for the CPU-parallel phases of a collection
// (parallel mark, parallel sweep). Threads are created once, when the pool is built,
// and wait between phases: a collection never creates a thread.
//
// States: idle (workers waiting for a new generation) -> running (every worker and
// the calling thread execute the job) -> idle. `run` returns only after every
// participant has returned from the job, so a job may keep its state on the caller's
// stack, and everything the workers wrote is visible to the caller after `run` (each
// worker's release increment of the count of calls that returned, which the caller
// acquires).
//
// Waking: `run` publishes the job by bumping one atomic generation counter and wakes
// every waiting worker with one futex call (std::atomic::notify_all); no mutex is
// taken, so the workers do not queue behind one another on the way out of their
// wait. (With a mutex and condition variable, 15 woken workers re-acquired the mutex
// one after another, and on the 16-core VM the last one started its job up to 3 ms
// late.) A worker that finishes a job spins for kSpinMicroseconds before it blocks,
// so the phase that follows at once (the sweep after the mark) finds it awake.
// `wake` wakes the workers ahead of a job the caller knows is coming (the device
// markers' sweep, woken while the device marks): they poll for up to the given time
// and then sleep again.
//
// Generations: a job's generation number is even, a wake-up's odd. A worker reads the
// generation once per wake-up; for an odd one it only polls, for an even one it
// arrives at the job through the gate (below) and runs the job that `job_` held when
// that generation was published (the next job cannot be published before every
// worker that arrived has returned from this one).
//
// Late workers: a worker whose core is busy elsewhere (another process, another
// guest's thread on a shared host) may wake a millisecond or more after the job was
// published. `run` waits for every worker, so such a job takes that long whatever its
// work. `run_arriving` does not: the job is open to the workers that arrive before the
// caller's own part returns, and a worker that arrives later skips it. Arrival is one
// compare-and-swap on a gate word holding the job's generation, a closed bit and the
// count of workers that arrived (every job has one; `run`'s never closes); the caller
// closes the gate when its part returns and then waits for exactly that many to leave,
// so the job's state may still live on the caller's stack. A worker that read an
// older generation fails the compare-and-swap (the gate names the current job) and
// reads the generation again. `for_each_task` runs this way (any participant may take
// any task, the caller all of them). On the 16-core H100 hosts a parallel mark of
// GCBench waited 1.5-1.9 ms for a worker that marked nothing (woken late), where the
// mark itself took 0.4 ms.
//
// Placement: a worker that polls (after a job, or woken ahead of one) is preempted by
// any thread the kernel places on its core, and waits there until that thread blocks,
// however many cores are idle: on a 2-core container a worker woken 2 ms ahead of a
// job, and polling since, missed every job whose caller had just woken on its core
// (the caller ran the whole job before the worker ran again). A pool made with one
// CPU per worker pins each worker to its own; the threads that publish its jobs (and
// any other that must not wait) are then to be kept off those CPUs, since a pinned
// worker cannot move away from a thread placed on its core either
// (gc/heap/sweep.hpp's SweepPoolPlacement does both). Unpinned workers run on the CPUs
// the process started with (gc/util/thread_placement.hpp), whatever their creator's.
//
// One job at a time: `run` must not be called concurrently or from inside a job.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

namespace gcvm {

class ThreadPool {
 public:
  /// How long a worker keeps polling for the next job before it sleeps.
  static constexpr unsigned kSpinMicroseconds = 50;

  /// `threads` participants in every job, the calling thread included; 0 means every
  /// hardware thread. A pool of 1 runs jobs on the caller and owns no thread.
  /// `worker_cpus`, if not empty, has one CPU for each worker (threads - 1 of them):
  /// worker i runs only on worker_cpus[i - 1] (see "Placement" above).
  explicit ThreadPool(unsigned threads, std::vector<unsigned> worker_cpus = {});
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  unsigned size() const { return size_; }
  /// Calls job(i) once for every participant i in [0, size()), the caller being 0,
  /// and returns when all calls have returned.
  void run(const std::function<void(unsigned)>& job);
  /// Calls task(t) once for every t in [0, tasks), each claimed by whichever
  /// participant is free next (so tasks of uneven cost balance), and returns when all
  /// have returned. The same guarantees as `run`.
  /// Returns the participants that ran (the caller and the workers that arrived).
  unsigned for_each_task(std::uint64_t tasks, const std::function<void(std::uint64_t)>& task);
  /// Calls job(0) on the caller and job(i) on each worker i that arrives before job(0)
  /// returns (see "Late workers"); returns when job(0) and every call made have
  /// returned. The job must be complete with any subset of the workers, the caller
  /// always among them. Returns the participants that ran, the caller included.
  unsigned run_arriving(const std::function<void(unsigned)>& job);

  /// The thread count `threads` stands for (0 = hardware threads, at least 1).
  static unsigned resolve(unsigned threads);

  /// Wakes the workers without a job, so that a job `run` within about `microseconds`
  /// finds them awake; returns at once. Not from inside a job.
  void wake(unsigned microseconds);

 private:
  void work(unsigned index);
  /// Publishes the next generation of the parity of `job` (even for a job, odd for a
  /// wake-up) and wakes every waiting worker; a job's gate opens for `arriving` jobs.
  void publish(bool job, bool arriving = false);
  /// A worker's arrival at the `arriving` job of `generation`: false if that job is
  /// not the open one (closed, or another generation's).
  bool arrive(std::uint64_t generation);
  /// Waits until `count` calls of the current job have returned (left_).
  void wait_for_left(unsigned count);

  static constexpr std::uint64_t kGateClosed = std::uint64_t{1} << 31;
  static constexpr std::uint64_t kGateCount = kGateClosed - 1;
  static std::uint64_t gate_of(std::uint64_t generation) { return (generation >> 1) << 32; }

  unsigned size_;
  std::vector<unsigned> worker_cpus_;
  std::vector<std::thread> workers_;
  const std::function<void(unsigned)>* job_ = nullptr;  // written before generation_ is bumped
  // Set by the destructor before it publishes the last generation. Atomic because a
  // worker woken by an earlier `wake` reads it with nothing ordering that read against
  // the write (`wake` returns at once, so the pool may be destroyed while its workers
  // poll); a worker that sees the last generation (acquire) sees it set.
  std::atomic<bool> stopping_{false};
  std::atomic<unsigned> wake_microseconds_{0};           // the last wake-up's polling time
  alignas(64) std::atomic<std::uint64_t> generation_{0};
  // The current job is run_arriving's. Atomic because a worker reads it after its call
  // returned, when the caller may already be publishing the next job.
  std::atomic<bool> arriving_{false};
  // run_arriving: the job's generation (high 32 bits), closed (bit 31), workers arrived.
  alignas(64) std::atomic<std::uint64_t> gate_{0};
  alignas(64) std::atomic<unsigned> left_{0};  // workers' calls of the current job that returned
};

/// Calls task(t) once for every t in [0, tasks): on the threads of `pool` (as
/// ThreadPool::for_each_task) when there is a pool of more than one thread, else in
/// order on the calling thread.
void for_each_task(ThreadPool* pool, std::uint64_t tasks, const std::function<void(std::uint64_t)>& task);

}  // namespace gcvm
