#include "gc/plans/concurrent_collector.hpp"

#include <fmt/format.h>

#include <bit>
#include <stdexcept>

#include "gc/markers/serial_marker.hpp"
#include "gc/util/stopwatch.hpp"

namespace gcvm {

ConcurrentCollector::ConcurrentCollector(Heap& heap, std::unique_ptr<Marker> marker, bool verify,
                                         DeviceFallback fallback)
    : heap_(heap), marker_(std::move(marker)), verify_(verify), fallback_(fallback) {
  if (heap_.generations() != nullptr) throw std::logic_error("the concurrent plan keeps no generations");
  if (verify_) reference_ = std::make_unique<SerialMarker>();
  marker_->watch(heap_.graph(), &heap_.graph().changes());
  thread_ = std::thread([this] { marking_thread(); });
}

ConcurrentCollector::~ConcurrentCollector() {
  {
    const std::lock_guard lock(mutex_);
    quit_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void ConcurrentCollector::marking_thread() {
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return work_ || quit_; });
      if (!work_) return;
      work_ = false;
    }
    try {
      mark_stats_ = snapshot_->mark(marks_);
      doomed_.compute(alloc_at_snapshot_, marks_);
      active().after_pause();
    } catch (...) {
      error_ = std::current_exception();
    }
    {
      const std::lock_guard lock(mutex_);
      done_.store(true, std::memory_order_release);
    }
    finished_.notify_one();
  }
}

std::optional<CollectionStats> ConcurrentCollector::start(std::span<const ObjectId> roots, std::string reason) {
  if (in_flight()) throw std::logic_error("a concurrent cycle started while one is in flight");
  const double start = process_ms();
  cycle_process_cpu_ = process_cpu_ms();
  cycle_thread_cpu_ = thread_cpu_ms();
  const Stopwatch pause;
  last_fell_back_ = false;
  cycle_ = {};
  cycle_.index = ++cycles_;
  cycle_.kind = CollectionKind::Concurrent;
  cycle_.reason = std::move(reason);
  cycle_.collector = std::string(active().name());
  cycle_.start_ms = start;
  auto what = [&] { return "cycle " + std::to_string(cycle_.index) + " (concurrent)"; };

  heap_.finish_lazy_sweep();
  cycle_.previous_lazy_sweep = heap_.take_lazy_sweep_totals();
  prepare_graph(heap_, verify_, what(), cycle_);
  cycle_.heap_before_bytes = heap_.used_bytes();
  const BlockAllocator& blocks = heap_.blocks();
  alloc_at_snapshot_.assign(blocks.alloc_words(), blocks.alloc_words() + blocks.high_water());
  const MarkRequest request{heap_.graph(), roots, blocks.high_water(), &heap_.graph().changes()};
  try {
    snapshot_ = active().snapshot(request);
  } catch (const DeviceError& e) {
    if (!fallback_.enabled(true)) throw;
    const double failed_thread_cpu = thread_cpu_ms();
    initial_thread_cpu_ = failed_thread_cpu - cycle_thread_cpu_;
    cycle_.pauses.push_back({PauseKind::Initial, start, pause.elapsed_ms() - cycle_.verify_ms});
    return fall_back(e, roots, "the initial pause", failed_thread_cpu);
  }
  cycle_.snapshot_details = snapshot_->pause_details;
  if (verify_) {
    const Stopwatch check;
    snapshot_roots_.assign(roots.begin(), roots.end());
    if (snapshot_->host_graph() == nullptr) {
      const RefGraph& live = heap_.graph();
      if (!verify_copy_) verify_copy_ = std::make_unique<RefGraph>(live.max_vertices(), live.max_edges());
      if (!verify_copy_->copy_from(heap_.graph())) throw VerifyError(what() + ": no memory for the verifying copy");
    }
    cycle_.verify_ms += check.elapsed_ms();
  }

  error_ = nullptr;
  {
    const std::lock_guard lock(mutex_);
    done_.store(false, std::memory_order_relaxed);
    work_ = true;
  }
  wake_.notify_one();
  in_flight_ = true;
  initial_thread_cpu_ = thread_cpu_ms() - cycle_thread_cpu_;
  cycle_.pauses.push_back({PauseKind::Initial, start, pause.elapsed_ms() - cycle_.verify_ms});
  return std::nullopt;
}

CollectionStats ConcurrentCollector::finish(std::span<const ObjectId> roots) {
  if (!in_flight()) throw std::logic_error("no concurrent cycle is in flight");
  const double final_thread_cpu = thread_cpu_ms();
  if (!mark_done()) {
    const double start = process_ms();
    const Stopwatch stall;
    std::unique_lock lock(mutex_);
    finished_.wait(lock, [&] { return done_.load(std::memory_order_relaxed); });
    cycle_.stall_ms = stall.elapsed_ms();
    cycle_.pauses.push_back({PauseKind::Stall, start, cycle_.stall_ms});
  }
  in_flight_ = false;
  const double start = process_ms();
  const Stopwatch pause;
  auto what = [&] { return "cycle " + std::to_string(cycle_.index) + " (concurrent)"; };
  std::unique_ptr<SnapshotMark> snapshot = std::move(snapshot_);
  if (error_) {
    try {
      std::rethrow_exception(std::exchange(error_, nullptr));
    } catch (const DeviceError& e) {
      if (!fallback_.enabled(true)) throw;
      snapshot.reset();  // it holds the device marker's backend and mirror
      return fall_back(e, roots, "the concurrent mark", final_thread_cpu);
    }
  }
  cycle_.mark = mark_stats_;
  cycle_.concurrent_mark_ms = mark_stats_.mark_ms;

  double verify_ms = 0;
  if (verify_) {
    const Stopwatch check;
    const RefGraph& graph = snapshot->host_graph() != nullptr ? *snapshot->host_graph() : *verify_copy_;
    // The checker wants the bitmap to cover today's heap: blocks made since the snapshot
    // hold nothing the snapshot could mark.
    const std::uint32_t blocks = heap_.blocks().high_water();
    marks_.words().resize(blocks, 0);
    const MarkRequest request{graph, snapshot_roots_, blocks};
    check_mark(request, heap_.blocks(), marks_, cycle_, *reference_, reference_marks_, what() + " (its snapshot)");
    // Safety now: nothing reachable in the live graph from today's roots may be doomed.
    if (heap_.graph_mode() == RefGraphMode::Rebuild) heap_.rebuild_graph();
    reference_->mark({heap_.graph(), roots, heap_.blocks().high_water()}, reference_marks_);
    for (std::size_t b = 0; b < alloc_at_snapshot_.size(); ++b)
      if (const std::uint64_t lost = reference_marks_.words()[b] & alloc_at_snapshot_[b] & ~marks_.words()[b];
          lost != 0)
        throw VerifyError(what() + ": object " +
                          object_id_text(make_object_id(static_cast<std::uint32_t>(b),
                                                        static_cast<std::uint32_t>(std::countr_zero(lost)))) +
                          " is reachable now but the snapshot's mark would free it");
    verify_ms = check.elapsed_ms();
    cycle_.verify_ms += verify_ms;
  }

  const Stopwatch sweep;
  cycle_.sweep.objects_before = doomed_.allocated_objects();
  cycle_.sweep.freed_objects = heap_.defer_sweep(doomed_);
  cycle_.sweep.sweep_ms = sweep.elapsed_ms();
  cycle_.heap_after_bytes = heap_.used_bytes();
  cycle_.pauses.push_back({PauseKind::Final, start, pause.elapsed_ms() - verify_ms});

  cycle_.pause_ms = 0;
  for (const PauseRecord& p : cycle_.pauses) cycle_.pause_ms += p.ms;
  cycle_.cycle_ms = process_ms() - cycle_.start_ms;
  cycle_.cpu_ms = cycle_cpu_ms(final_thread_cpu);
  return cycle_;
}

double ConcurrentCollector::cycle_cpu_ms(double final_thread_cpu) const {
  const double end_thread_cpu = thread_cpu_ms();
  return (process_cpu_ms() - cycle_process_cpu_) - (end_thread_cpu - cycle_thread_cpu_) + initial_thread_cpu_ +
         (end_thread_cpu - final_thread_cpu);
}

CollectionStats ConcurrentCollector::fall_back(const DeviceError& error, std::span<const ObjectId> roots,
                                               std::string_view where, double final_thread_cpu) {
  snapshot_.reset();
  in_flight_ = false;
  fallback_.warn(marker_->name(), fmt::format("cycle {} (concurrent), {}", cycle_.index, where), error.what());
  marker_.reset();  // the device, its mirror and its refresher (stopped since the snapshot)
  cpu_ = std::make_unique<Collector>(heap_, fallback_.cpu_marker(), verify_);
  last_fell_back_ = true;
  const double start = process_ms();
  CollectionStats stats = cpu_->collect(roots, cycle_.reason);
  stats.index = cycle_.index;
  stats.kind = CollectionKind::Fallback;
  stats.device_error = fmt::format("{} of {}: {}", where, cycle_.collector, error.what());
  stats.start_ms = cycle_.start_ms;
  stats.pauses = std::move(cycle_.pauses);
  stats.pauses.push_back({PauseKind::Fallback, start, stats.pause_ms});
  stats.pause_ms = 0;
  for (const PauseRecord& p : stats.pauses) stats.pause_ms += p.ms;
  stats.stall_ms = cycle_.stall_ms;
  stats.rebuild_ms += cycle_.rebuild_ms;
  stats.verify_ms += cycle_.verify_ms;
  stats.previous_lazy_sweep = cycle_.previous_lazy_sweep;
  stats.snapshot_details = std::move(cycle_.snapshot_details);
  stats.cycle_ms = process_ms() - cycle_.start_ms;
  stats.cpu_ms = cycle_cpu_ms(final_thread_cpu);
  return stats;
}

}  // namespace gcvm
