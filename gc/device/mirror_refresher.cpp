#include "gc/device/mirror_refresher.hpp"

#include <charconv>
#include <cstdint>
#include <utility>

#include "gc/util/spin.hpp"

namespace gcvm {

std::optional<std::chrono::microseconds> MirrorRefresher::parse_interval(std::string_view value) {
  if (value == "on") return kDefaultInterval;
  if (value == "off") return std::chrono::microseconds{0};
  std::int64_t microseconds = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), microseconds);
  if (error != std::errc{} || end != value.data() + value.size() || microseconds < kMinInterval.count() ||
      microseconds > kMaxInterval.count())
    return std::nullopt;
  return std::chrono::microseconds{microseconds};
}

std::optional<RefreshWait> MirrorRefresher::parse_wait(std::string_view value) {
  if (value == "auto") return RefreshWait::Auto;
  if (value == "poll") return RefreshWait::Poll;
  if (value == "sleep") return RefreshWait::Sleep;
  return std::nullopt;
}

MirrorRefresher::MirrorRefresher(DeviceBackend& backend, GraphMirror& mirror, std::chrono::microseconds interval,
                                 RefreshWait wait)
    : backend_(backend),
      mirror_(mirror),
      interval_(interval),
      polls_(polls(wait, std::thread::hardware_concurrency())),
      thread_([this] { run(); }) {}

MirrorRefresher::~MirrorRefresher() {
  {
    const std::lock_guard lock(mutex_);
    quit_ = true;
    stopping_.store(true, std::memory_order_release);
  }
  wake_.notify_one();
  thread_.join();
}

void MirrorRefresher::resume(const RefGraph& graph, GraphChanges& changes) {
  {
    const std::lock_guard lock(mutex_);
    if (error_) return;  // `stop` reports it
    graph_ = &graph;
    changes_ = &changes;
    refreshing_ = true;
    stopping_.store(false, std::memory_order_release);
  }
  wake_.notify_one();
}

MirrorRefreshStats MirrorRefresher::stop() {
  std::unique_lock lock(mutex_);
  stopping_.store(true, std::memory_order_release);
  refreshing_ = false;
  wake_.notify_one();
  idle_.wait(lock, [&] { return !in_pass_; });
  const MirrorRefreshStats stats = stats_;
  stats_ = {};
  if (error_) {
    const std::exception_ptr error = error_;
    error_ = nullptr;
    std::rethrow_exception(error);
  }
  return stats;
}

MirrorRefreshStats MirrorRefresher::stop_and_run(const std::function<void()>& job,
                                                  const std::function<void()>& alongside) {
  {
    std::unique_lock lock(mutex_);
    stopping_.store(true, std::memory_order_release);
    refreshing_ = false;
    if (error_) {  // the thread stopped refreshing at it: report it as `stop` does
      lock.unlock();
      return stop();
    }
    job_ = &job;
    job_done_.store(false, std::memory_order_relaxed);
  }
  wake_.notify_one();
  if (alongside) alongside();
  // The pause's critical path: a wait on the condition variable (or for the mutex,
  // which the thread holds until it sleeps again) would add the caller's own wake-up
  // to it. What the thread hands back it wrote before its release of job_done_, and it
  // touches neither until the next job.
  while (!job_done_.load(std::memory_order_acquire)) std::this_thread::yield();
  if (job_error_) std::rethrow_exception(std::exchange(job_error_, nullptr));
  return std::exchange(job_stats_, {});
}

void MirrorRefresher::make_current() {
  if (made_current_) return;
  backend_.make_current();
  made_current_ = true;
}

void MirrorRefresher::run_job(std::unique_lock<std::mutex>& lock) {
  const std::function<void()>& job = *std::exchange(job_, nullptr);
  // The passes' figures and error up to here go back with the job's end; a pass that
  // failed since the job was posted stands for the job's own error.
  job_stats_ = std::exchange(stats_, {});
  job_error_ = std::exchange(error_, nullptr);
  lock.unlock();
  if (!job_error_) {
    try {
      make_current();
      job();
    } catch (...) {
      job_error_ = std::current_exception();
    }
  }
  job_done_.store(true, std::memory_order_release);
  lock.lock();
}

void MirrorRefresher::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (polls_ && refreshing_) {
      lock.unlock();
      spin_until([&] { return stopping_.load(std::memory_order_acquire); }, interval_);
      lock.lock();
    } else {
      wake_.wait_for(lock, interval_, [&] { return quit_ || !refreshing_ || job_ != nullptr; });
    }
    if (quit_) return;
    if (job_ != nullptr) {
      run_job(lock);
      continue;
    }
    if (!refreshing_) {
      wake_.wait(lock, [&] { return quit_ || refreshing_ || job_ != nullptr; });
      continue;
    }
    in_pass_ = true;
    const RefGraph& graph = *graph_;
    GraphChanges& changes = *changes_;
    lock.unlock();
    MirrorRefreshStats pass;
    std::exception_ptr error;
    try {
      make_current();
      pass = mirror_.refresh(graph, changes, stopping_);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    stats_ += pass;
    if (error) {
      error_ = error;
      refreshing_ = false;
    }
    in_pass_ = false;
    idle_.notify_all();
  }
}

}  // namespace gcvm
