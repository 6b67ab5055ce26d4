// Returns the out-of-line storage of swept arrays to the C allocator on a thread of
// its own, after the pause that swept them.
//
// Why: a heap of real programs holds millions of small arrays (a Java heap's strings
// are byte arrays), and freeing them one by one costs the sweep more than marking the
// whole heap: glibc's free, consolidating its bins, took 10% of a replayed Java heap's
// run against 4% for the serial marker, and in a parallel sweep the threads contend
// for the allocator's lock. The memory is already dead (nothing can reach the arrays
// that held it), so when it goes back to malloc does not matter to the guest: the
// heap's accounting (Heap::used_bytes) counts it freed at the sweep.
//
// Invariants:
// - Every pointer handed over is freed exactly once: by the releaser thread, or by the
//   destructor, which frees what is still pending and joins the thread.
// - `release` never waits for frees; `drain` returns when everything handed over
//   before it has been freed. Hand-overs may come from any one thread at a time.
// - The thread starts with the first batch handed over, so heaps that never sweep an
//   array own no thread.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>
#include <vector>

namespace gcvm {

class StorageReleaser {
 public:
  StorageReleaser() = default;
  ~StorageReleaser();
  StorageReleaser(const StorageReleaser&) = delete;
  StorageReleaser& operator=(const StorageReleaser&) = delete;

  /// Frees every pointer of `batch` (std::free) on the releaser thread; `batch` is
  /// left empty.
  void release(std::vector<void*>& batch);
  /// Waits until every batch handed over so far has been freed.
  void drain();

 private:
  void run();

  std::mutex mutex_;
  std::condition_variable wake_;  // pending work, or stopping
  std::condition_variable idle_;  // nothing pending and nothing being freed
  std::vector<std::vector<void*>> pending_;
  bool freeing_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace gcvm
