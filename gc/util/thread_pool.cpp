#include "gc/util/thread_pool.hpp"

namespace gcvm {

unsigned ThreadPool::resolve(unsigned threads) {
  if (threads != 0) return threads;
  const unsigned hardware = std::thread::hardware_concurrency();
  return hardware == 0 ? 1 : hardware;
}

ThreadPool::ThreadPool(unsigned threads) : size_(resolve(threads)) {
  workers_.reserve(size_ - 1);
  for (unsigned i = 1; i < size_; ++i) workers_.emplace_back([this, i] { work(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::run(const std::function<void(unsigned)>& job) {
  if (size_ == 1) {
    job(0);
    return;
  }
  {
    std::lock_guard lock(mutex_);
    job_ = &job;
    running_ = size_ - 1;
    ++generation_;
  }
  wake_.notify_all();
  job(0);
  std::unique_lock lock(mutex_);
  done_.wait(lock, [this] { return running_ == 0; });
  job_ = nullptr;
}

void ThreadPool::work(unsigned index) {
  std::uint64_t seen = 0;
  for (;;) {
    const std::function<void(unsigned)>* job = nullptr;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
      job = job_;
    }
    (*job)(index);
    bool last = false;
    {
      std::lock_guard lock(mutex_);
      last = --running_ == 0;
    }
    if (last) done_.notify_one();
  }
}

}  // namespace gcvm
