// Which CPUs a thread may run on (its scheduling affinity), for the pools and threads
// of a pause that must not share cores (gc/heap/sweep.hpp says which go where).
//
// Invariants:
// - process_cpus() is the set the process started with (read before main), so a pool
//   made by a thread that was later kept to a few CPUs still spreads over all of them
//   (ThreadPool's unpinned workers take it).
// - A placement the system refuses (a CPU outside the process's set, a platform
//   without affinity) leaves the thread where it may run: placement changes where
//   threads run, never what they compute.
// - ScopedThreadPlacement gives the thread that made it back the set it had before,
//   when it ends, whichever thread ends it.
#pragma once

#include <pthread.h>

#include <vector>

namespace gcvm {

/// The CPUs the calling thread may run on, in increasing order (empty if unknown).
std::vector<unsigned> allowed_cpus();
/// The CPUs the process could run on when it started (empty if unknown).
const std::vector<unsigned>& process_cpus();
/// Lets `thread` run only on `cpus` (nothing if `cpus` is empty).
void place_thread(pthread_t thread, const std::vector<unsigned>& cpus);

/// Keeps the calling thread on `cpus` for its lifetime.
class ScopedThreadPlacement {
 public:
  explicit ScopedThreadPlacement(const std::vector<unsigned>& cpus);
  ~ScopedThreadPlacement();
  ScopedThreadPlacement(const ScopedThreadPlacement&) = delete;
  ScopedThreadPlacement& operator=(const ScopedThreadPlacement&) = delete;

 private:
  pthread_t thread_;
  std::vector<unsigned> before_;
};

}  // namespace gcvm
