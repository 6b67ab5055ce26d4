#include "gc/sweep.hpp"

#include <bit>

#include "gc/stopwatch.hpp"

namespace gcvm {

SweepStats sweep(Heap& heap, const MarkBitmap& marks) {
  const Stopwatch clock;
  SweepStats stats;
  const std::uint32_t blocks = heap.blocks().high_water();
  const std::uint64_t* alloc = heap.blocks().alloc_words();
  const std::uint64_t* mark = marks.words().data();
  const std::uint32_t in_use_before = heap.blocks().blocks_in_use();
  for (std::uint32_t b = 0; b < blocks; ++b) {
    const std::uint64_t live = alloc[b];
    if (live == 0) continue;
    stats.objects_before += static_cast<std::uint64_t>(std::popcount(live));
    if ((live & ~mark[b]) == 0) continue;
    stats.freed_objects += heap.sweep_block(b, mark[b]);
  }
  heap.reset_allocation_cursors();
  stats.blocks_freed = in_use_before - heap.blocks().blocks_in_use();
  stats.sweep_ms = clock.elapsed_ms();
  return stats;
}

}  // namespace gcvm
