// A persistent pool of worker threads for the CPU-parallel phases of a collection
// (parallel mark, parallel sweep). Threads are created once, when the pool is built,
// and sleep on a condition variable between phases: a collection never creates a
// thread.
//
// States: idle (workers blocked, waiting for a new generation) -> running (every
// worker and the calling thread execute the job) -> idle. `run` returns only after
// every participant has returned from the job, so a job may keep its state on the
// caller's stack and everything the workers wrote is visible to the caller after
// `run` (each worker signals completion under the pool mutex, which the caller then takes).
//
// One job at a time: `run` must not be called concurrently or from inside a job.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace gcvm {

class ThreadPool {
 public:
  /// `threads` participants in every job, the calling thread included; 0 means every
  /// hardware thread. A pool of 1 runs jobs on the caller and owns no thread.
  explicit ThreadPool(unsigned threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  unsigned size() const { return size_; }
  /// Calls job(i) once for every participant i in [0, size()), the caller being 0,
  /// and returns when all calls have returned.
  void run(const std::function<void(unsigned)>& job);

  /// The thread count `threads` stands for (0 = hardware threads, at least 1).
  static unsigned resolve(unsigned threads);

 private:
  void work(unsigned index);

  unsigned size_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const std::function<void(unsigned)>* job_ = nullptr;
  std::uint64_t generation_ = 0;
  unsigned running_ = 0;
  bool stopping_ = false;
};

}  // namespace gcvm
