#include "gc/plans/device_start.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <stdexcept>

#include "gc/markers/parallel_marker.hpp"
#include "gc/markers/snapshot_mark.hpp"
#include "gc/plans/device_plan_option.hpp"

namespace gcvm {

DeviceStart DeviceStart::take_from(CollectorChoice& choice) {
  DeviceStart start;
  start.threads = choice.threads;
  if (const auto value = take_device_plan_option(choice, "device-start", {"open", "overlap"}))
    start.policy = *value == "open" ? Policy::Open : Policy::Overlap;
  return start;
}

std::unique_ptr<Marker> DeviceStart::make_marker(const CollectorChoice& choice) const {
  MarkerFactory open = prepare_marker(choice);
  if (policy == Policy::Open) return open();
  return std::make_unique<OverlappedStartMarker>(choice.name, std::move(open),
                                                 std::make_unique<ParallelMarker>(ParallelMarkerOptions{.threads = threads}));
}

OverlappedStartMarker::OverlappedStartMarker(std::string name, MarkerFactory open, std::unique_ptr<Marker> interim)
    : name_(std::move(name)), interim_(std::move(interim)) {
  thread_ = std::thread([this, open = std::move(open)]() mutable { start(std::move(open)); });
}

OverlappedStartMarker::~OverlappedStartMarker() {
  if (thread_.joinable()) thread_.join();
  if (!error_) return;
  std::string why = "an unknown error";
  try {
    std::rethrow_exception(error_);
  } catch (const std::exception& e) {
    why = e.what();
  } catch (...) {
  }
  fmt::print(stderr, "gcvm: warning: {}: the device did not open ({}); no collection needed it\n", name_, why);
}

void OverlappedStartMarker::start(MarkerFactory open) {
  std::unique_ptr<Marker> marker;
  std::exception_ptr error;
  try {
    marker = open();
    // Hands the device marker what the plan asked before its first pause; the plan may
    // ask while this thread is at it, so the hand-over ends only when nothing new came.
    Asked applied;
    for (;;) {
      Asked wanted;
      {
        const std::lock_guard lock(mutex_);
        if (asked_ == applied) {
          device_ = std::move(marker);
          ready_ms_ = process_ms();
          open_.store(true, std::memory_order_release);
          return;
        }
        wanted = asked_;
      }
      if (wanted.graph != applied.graph || wanted.changes != applied.changes)
        marker->watch(*wanted.graph, wanted.changes);
      if (wanted.host_cpus != applied.host_cpus) marker->place_host_threads(wanted.host_cpus);
      applied = std::move(wanted);
    }
  } catch (...) {
    error = std::current_exception();
  }
  const std::lock_guard lock(mutex_);
  error_ = error;
  ready_ms_ = process_ms();
  open_.store(true, std::memory_order_release);
}

Marker* OverlappedStartMarker::device_in_pause() {
  if (switched_) return device_.get();
  if (!open_.load(std::memory_order_acquire)) return nullptr;
  if (thread_.joinable()) thread_.join();
  if (error_) {
    // Thrown once; should the plan keep this marker, the CPU marker goes on.
    std::rethrow_exception(std::exchange(error_, nullptr));
  }
  if (!device_) return nullptr;
  switched_ = true;
  return device_.get();
}

std::vector<std::pair<std::string, double>> OverlappedStartMarker::notes(bool on_device) {
  if (!on_device) return {{"device_starting", 1.0}};
  if (std::exchange(reported_switch_, true)) return {};
  return {{"device_ready_ms", ready_ms_}, {"device_start_cpu_marks", static_cast<double>(cpu_marks_)}};
}

MarkStats OverlappedStartMarker::mark(const MarkRequest& request, MarkBitmap& out) {
  Marker* device = device_in_pause();
  device_paused_ = device != nullptr;
  MarkStats stats = device != nullptr ? device->mark(request, out) : interim_->mark(request, out);
  if (device == nullptr) ++cpu_marks_;
  stats.add_details([notes = notes(device != nullptr)](MarkDetails& details) mutable {
    append_details(details, std::move(notes));
  }, false);
  return stats;
}

std::unique_ptr<SnapshotMark> OverlappedStartMarker::snapshot(const MarkRequest& request) {
  Marker* device = device_in_pause();
  device_paused_ = device != nullptr;
  if (device != nullptr) {
    std::unique_ptr<SnapshotMark> snapshot = device->snapshot(request);
    append_details(snapshot->pause_details, notes(true));
    return snapshot;
  }
  if (!request.premarked.empty()) throw std::logic_error("a snapshot mark takes no pre-marked objects");
  MarkBitmap marks;
  MarkStats stats = interim_->mark(request, marks);
  ++cpu_marks_;
  append_details(stats.details, notes(false));
  const double mark_ms = stats.mark_ms;
  auto snapshot = std::make_unique<CompletedMark>(std::move(marks), std::move(stats));
  snapshot->pause_details.emplace_back("mark_in_pause_ms", mark_ms);
  return snapshot;
}

ThreadPool* OverlappedStartMarker::thread_pool() { return switched_ ? device_->thread_pool() : interim_->thread_pool(); }

void OverlappedStartMarker::after_pause() {
  if (device_paused_)
    device_->after_pause();
  else
    interim_->after_pause();
}

Marker* OverlappedStartMarker::device_or_ask(const std::function<void(Asked&)>& ask) {
  const std::lock_guard lock(mutex_);
  if (open_.load(std::memory_order_acquire)) return device_.get();
  ask(asked_);
  return nullptr;
}

void OverlappedStartMarker::watch(const RefGraph& graph, GraphChanges* changes) {
  if (Marker* device = device_or_ask([&](Asked& asked) {
        asked.graph = &graph;
        asked.changes = changes;
      }))
    device->watch(graph, changes);
}

void OverlappedStartMarker::place_host_threads(const std::vector<unsigned>& cpus) {
  if (Marker* device = device_or_ask([&](Asked& asked) { asked.host_cpus = cpus; })) device->place_host_threads(cpus);
}

}  // namespace gcvm
