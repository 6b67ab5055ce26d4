#include "gc/device/mirror_refresher.hpp"

#include <charconv>
#include <cstdint>

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

MirrorRefresher::MirrorRefresher(DeviceBackend& backend, GraphMirror& mirror, std::chrono::microseconds interval)
    : backend_(backend), mirror_(mirror), interval_(interval), thread_([this] { run(); }) {}

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

void MirrorRefresher::run() {
  bool made_current = false;
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait_for(lock, interval_, [&] { return quit_ || !refreshing_; });
    if (quit_) return;
    if (!refreshing_) {
      wake_.wait(lock, [&] { return quit_ || refreshing_; });
      continue;
    }
    in_pass_ = true;
    const RefGraph& graph = *graph_;
    GraphChanges& changes = *changes_;
    lock.unlock();
    MirrorRefreshStats pass;
    std::exception_ptr error;
    try {
      if (!made_current) {
        backend_.make_current();
        made_current = true;
      }
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
