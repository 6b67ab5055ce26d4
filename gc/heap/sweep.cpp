#include "gc/heap/sweep.hpp"

#include <atomic>
#include <bit>
#include <vector>

#include "gc/util/stopwatch.hpp"

namespace gcvm {

namespace {

/// Sweeps blocks [first, last), adding to `counts` (objects, and the time taken to
/// block_work_ms); edge releases go to `debt`. The counts are added once: the parallel
/// sweep's tasks lie side by side, and a store per block would bounce their cache lines
/// between threads.
void sweep_blocks(Heap& heap, const MarkBitmap& marks, std::uint32_t first, std::uint32_t last, Heap::SweepDebt& debt,
                  SweepStats& counts) {
  const Stopwatch clock;
  const Heap::SweptRun run = heap.sweep_blocks(first, last, marks.words().data(), debt);
  counts.objects_before += run.objects_before;
  counts.freed_objects += run.freed_objects;
  counts.block_work_ms += clock.elapsed_ms();
}

/// Runs `sweep_all(counts)` between the bookkeeping every sweep shares.
template <typename F>
SweepStats sweep_with(Heap& heap, F&& sweep_all) {
  const Stopwatch clock;
  SweepStats stats;
  const std::uint32_t in_use_before = heap.blocks().blocks_in_use();
  sweep_all(stats);
  heap.reset_allocation_cursors();
  stats.blocks_freed = in_use_before - heap.blocks().blocks_in_use();
  stats.sweep_ms = clock.elapsed_ms();
  return stats;
}

}  // namespace

SweepStats sweep(Heap& heap, const MarkBitmap& marks) {
  return sweep_with(heap, [&](SweepStats& stats) {
    Heap::SweepDebt& debt = heap.sweep_debts(1)[0];
    sweep_blocks(heap, marks, 0, heap.blocks().high_water(), debt, stats);
    const Stopwatch settle_clock;
    heap.settle_sweep(debt);
    stats.settle_ms = settle_clock.elapsed_ms();
  });
}

SweepPoolPlacement sleeping_sweep_pool_placement(unsigned pool_threads, const std::vector<unsigned>& allowed) {
  const unsigned workers = pool_threads - 1;
  if (pool_threads < 2 || allowed.size() < std::size_t{workers} + 2) return {};
  return {{allowed.end() - workers, allowed.end()}, {allowed.begin(), allowed.begin() + 2}};
}

SweepStats sweep(Heap& heap, const MarkBitmap& marks, ThreadPool& pool) {
  return sweep_with(heap, [&](SweepStats& stats) {
    struct alignas(64) Counts {  // a cache line each: tasks run side by side
      SweepStats counts;
    };
    const std::uint32_t blocks = heap.blocks().high_water();
    const std::uint32_t task_count = (blocks + kBlocksPerSweepTask - 1) / kBlocksPerSweepTask;
    const std::span<Heap::SweepDebt> debts = heap.sweep_debts(task_count);
    std::vector<Counts> counts(task_count);
    stats.threads = pool.for_each_task(task_count, [&](std::uint64_t t) {
      const auto first = static_cast<std::uint32_t>(t * kBlocksPerSweepTask);
      const std::uint32_t last = t + 1 == task_count ? blocks : first + kBlocksPerSweepTask;
      sweep_blocks(heap, marks, first, last, debts[t], counts[t].counts);
      Heap::count_edge_ranges(debts[t]);
    });
    const Stopwatch settle_clock;
    for (const Counts& c : counts) {
      stats.objects_before += c.counts.objects_before;
      stats.freed_objects += c.counts.freed_objects;
      stats.block_work_ms += c.counts.block_work_ms;
    }
    heap.settle_sweep(debts, &pool);
    stats.settle_ms = settle_clock.elapsed_ms();
  });
}

}  // namespace gcvm
