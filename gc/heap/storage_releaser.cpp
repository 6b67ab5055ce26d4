#include "gc/heap/storage_releaser.hpp"

#include <cstdlib>

namespace gcvm {

namespace {

void free_all(const std::vector<void*>& batch) {
  for (void* p : batch) std::free(p);
}

}  // namespace

StorageReleaser::~StorageReleaser() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
  for (const auto& batch : pending_) free_all(batch);
}

void StorageReleaser::release(std::vector<void*>& batch) {
  if (batch.empty()) return;
  bool waiting = false;  // the thread sleeps: nothing pending, nothing being freed
  {
    const std::lock_guard lock(mutex_);
    waiting = pending_.empty() && !freeing_;
    pending_.push_back(std::move(batch));
    if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  }
  batch.clear();
  if (waiting) wake_.notify_one();  // a busy thread looks at pending_ again before it sleeps
}

void StorageReleaser::drain() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [this] { return pending_.empty() && !freeing_; });
}

void StorageReleaser::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !pending_.empty(); });
    if (pending_.empty()) return;  // stopping, nothing left
    std::vector<std::vector<void*>> batches;
    batches.swap(pending_);
    freeing_ = true;
    lock.unlock();
    for (const auto& batch : batches) free_all(batch);
    lock.lock();
    freeing_ = false;
    if (pending_.empty()) idle_.notify_all();
  }
}

}  // namespace gcvm
