#include "gc/plans/collector.hpp"

#include <stdexcept>

#include "gc/device/device_backend.hpp"
#include "gc/markers/mark_checker.hpp"
#include "gc/markers/serial_marker.hpp"
#include "gc/util/stopwatch.hpp"
#include "gc/util/thread_placement.hpp"
#include "gc/util/thread_pool.hpp"

namespace gcvm {

namespace {

/// Empty if every bit of `reachable` is set in `kept`; else the first object missing.
std::string first_lost(const MarkBitmap& reachable, const MarkBitmap& kept) {
  for (std::uint32_t b = 0; b < reachable.block_count(); ++b)
    if (const std::uint64_t lost = reachable.words()[b] & ~kept.words()[b]; lost != 0)
      return object_id_text(make_object_id(b, static_cast<std::uint32_t>(__builtin_ctzll(lost))));
  return {};
}

}  // namespace

void prepare_graph(Heap& heap, bool verify, const std::string& what, CollectionStats& stats) {
  if (heap.graph_mode() == RefGraphMode::Rebuild) {
    const Stopwatch rebuild;
    heap.rebuild_graph();
    stats.rebuild_ms = rebuild.elapsed_ms();
  }
  if (!verify) return;
  const Stopwatch check;
  if (const std::string report = heap.verify_graph(); !report.empty())
    throw VerifyError(what + ": reference graph differs from the heap:\n" + report);
  stats.verify_ms += check.elapsed_ms();
}

void check_mark(const MarkRequest& request, const BlockAllocator& blocks, const MarkBitmap& marks,
                const CollectionStats& stats, Marker& serial, MarkBitmap& scratch, const std::string& what) {
  if (const std::string problem = check_marks(request.graph, blocks, request.roots, marks, request.premarked);
      !problem.empty())
    throw VerifyError(what + ": " + stats.collector + " marks are wrong: " + problem);
  const MarkStats reference = serial.mark(request, scratch);
  if (!(scratch == marks)) throw VerifyError(what + ": " + stats.collector + " marks differ from the serial marker's");
  if (reference.marked_objects != stats.mark.marked_objects || reference.edges_traversed != stats.mark.edges_traversed)
    throw VerifyError(what + ": " + stats.collector + " reports " + std::to_string(stats.mark.marked_objects) +
                      " marked / " + std::to_string(stats.mark.edges_traversed) + " edges, serial " +
                      std::to_string(reference.marked_objects) + " / " + std::to_string(reference.edges_traversed));
}

const char* kind_name(CollectionKind kind) {
  switch (kind) {
    case CollectionKind::Young: return "young";
    case CollectionKind::Concurrent: return "concurrent";
    case CollectionKind::Fallback: return "fallback";
    case CollectionKind::Full: break;
  }
  return "full";
}

const char* pause_kind_name(PauseKind kind) {
  switch (kind) {
    case PauseKind::Stall: return "stall";
    case PauseKind::Final: return "final";
    case PauseKind::Fallback: return "fallback";
    case PauseKind::Initial: break;
  }
  return "initial";
}

Collector::Collector(Heap& heap, std::unique_ptr<Marker> marker, bool verify, DeviceFallback fallback)
    : heap_(heap), marker_(std::move(marker)), verify_(verify), fallback_(fallback) {
  if (verify_) reference_ = std::make_unique<SerialMarker>();
  marker_->watch(heap_.graph(), &heap_.graph().changes());
  // The device markers' sweep pool is made now: a collection never creates a thread.
  // It is sized by the CPUs this thread may run on (`taskset` narrows them), not by the
  // machine's.
  const std::vector<unsigned> cpus = allowed_cpus();
  const unsigned hardware = cpus.empty() ? ThreadPool::resolve(0) : static_cast<unsigned>(cpus.size());
  if (!marker_->constraints().needs_device || hardware < 2) return;
  const unsigned threads = sleeping_sweep_pool_threads(hardware);
  const SweepPoolPlacement placement = sleeping_sweep_pool_placement(threads, cpus);
  sweep_pool_ = std::make_unique<ThreadPool>(threads, placement.workers);
  if (placement.empty()) return;
  pause_placement_ = std::make_unique<ScopedThreadPlacement>(placement.pause);
  marker_->place_host_threads(placement.pause);
  // The workers poll ahead of a pause only where each has a core of its own, apart
  // from the mutator's and the refresher's.
  waker_ = std::make_unique<SweepPoolWaker>(heap_, *sweep_pool_, process_ms);
}

Collector::~Collector() = default;

ThreadPool* Collector::device_sweep_pool(std::uint32_t blocks) {
  if (!marker_->constraints().needs_device || blocks < kParallelSweepMinBlocks) return nullptr;
  return sweep_pool_.get();
}

CollectionStats Collector::collect(std::span<const ObjectId> roots, std::string reason, CollectionKind kind) {
  // The process's CPU clock is read before the pause's clock starts, as it is read after
  // that clock stops (and as the concurrent collector reads it): it is the report's, not
  // the collection's, and a reading sums the CPU time of every thread of the process:
  // 8-9 µs with a device marker's sweep pool or a parallel marker's threads on the
  // 16-core H200 host.
  const double cpu_at_start = process_cpu_ms();
  const Stopwatch pause;
  Generations* generations = heap_.generations();
  if (kind == CollectionKind::Young && generations == nullptr)
    throw std::logic_error("a young collection needs a generational heap");
  if (kind == CollectionKind::Concurrent || kind == CollectionKind::Fallback)
    throw std::logic_error("a concurrent cycle is ConcurrentCollector's");
  heap_.finish_lazy_sweep();
  CollectionStats stats;
  stats.start_ms = process_ms() - pause.elapsed_ms();
  stats.index = ++collections_;
  stats.kind = kind;
  stats.generational = generations != nullptr;
  stats.reason = std::move(reason);
  stats.collector = std::string(marker_->name());
  stats.heap_before_bytes = heap_.used_bytes();
  if (waker_) stats.sweep_pool_lead_ms = waker_->pause_started(stats.start_ms, stats.heap_before_bytes);
  auto what = [&] {  // names the collection in a VerifyError
    return "collection " + std::to_string(stats.index) +
           (stats.generational ? std::string(" (") + kind_name(kind) + ")" : std::string());
  };

  prepare_graph(heap_, verify_, what(), stats);
  if (verify_) {
    const Stopwatch check;
    if (generations != nullptr)
      if (const std::string report = generations->check_remembered_set(heap_.graph(), heap_.blocks()); !report.empty())
        throw VerifyError(what() + ": " + report);
    stats.verify_ms += check.elapsed_ms();
  }

  std::span<const ObjectId> mark_roots = roots;
  std::span<const std::uint64_t> premarked;
  if (kind == CollectionKind::Young) {
    generations->young_roots(heap_.graph(), roots, young_roots_);
    mark_roots = young_roots_;
    premarked = generations->mature_words();
    stats.remembered_objects = generations->remembered_count();
    stats.remembered_roots = young_roots_.size() - roots.size();
  }
  MarkRequest request{heap_.graph(), mark_roots, heap_.blocks().high_water(), &heap_.graph().changes(), premarked};
  request.details_after_pause = true;
  ThreadPool* device_pool = device_sweep_pool(request.block_count);
  if (device_pool != nullptr)
    request.on_device_busy = [device_pool, microseconds = sweep_pool_wake_microseconds(last_mark_ms_)] {
      device_pool->wake(microseconds);
    };
  request.host_pool = sweep_pool_.get();
  try {
    stats.mark = marker_->mark(request, marks_);
  } catch (const DeviceError& e) {
    if (!fallback_.enabled(false)) throw;
    fallback_.warn(marker_->name(), what(), e.what());
    stats.device_error = "the mark of " + stats.collector + ": " + e.what();
    marker_ = fallback_.cpu_marker();
    stats.collector = std::string(marker_->name());
    stats.mark = marker_->mark(request, marks_);
  }

  if (verify_) {
    const Stopwatch check;
    check_mark(request, heap_.blocks(), marks_, stats, *reference_, reference_marks_, what());
    if (kind == CollectionKind::Young) {
      reference_->mark({heap_.graph(), roots, heap_.blocks().high_water()}, full_marks_);
      if (const std::string lost = first_lost(full_marks_, marks_); !lost.empty())
        throw VerifyError(what() + ": object " + lost +
                          " is reachable (full serial mark) but the young collection would free it");
    }
    stats.verify_ms += check.elapsed_ms();
  }

  last_mark_ms_ = stats.mark.mark_ms;
  // A small heap is swept faster than a pool wakes up (young collections of a small
  // nursery, gc/heap/generations.hpp); both sweeps leave the same heap. After a device
  // error the CPU marker's own pool sweeps.
  ThreadPool* pool = marker_->thread_pool();
  const bool parallel_marker_sweeps =
      pool != nullptr && pool->size() > 1 && request.block_count >= kParallelSweepMinBlocks;
  if (!parallel_marker_sweeps) pool = device_pool;
  stats.sweep = pool != nullptr ? sweep(heap_, marks_, *pool) : sweep(heap_, marks_);
  if (generations != nullptr) {
    const Generations::Outcome outcome = generations->after_collection(heap_.graph(), marks_);
    stats.survivors = outcome.survivors;
    stats.promoted_objects = outcome.promoted;
    stats.mature_objects = outcome.mature;
  }
  stats.heap_after_bytes = heap_.used_bytes();
  if (waker_)
    waker_->pause_ended(process_ms(), stats.heap_before_bytes, stats.heap_after_bytes, last_mark_ms_,
                        device_pool != nullptr && pool == device_pool);
  stats.pause_ms = pause.elapsed_ms() - stats.verify_ms;
  stats.mark.finish_details();
  stats.cpu_ms = process_cpu_ms() - cpu_at_start;
  marker_->after_pause();
  return stats;
}

}  // namespace gcvm
