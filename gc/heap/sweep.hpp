// Sweep (DESIGN.md invariant 2): per block, `alloc &= mark`, then the block-state
// transitions of BlockAllocator (full -> active, emptied -> free), releasing the
// array storage and CSR edge ranges of what died. Work is word-wise per block;
// blocks whose allocation word is 0 (free) or unchanged cost one load and a compare.
//
// The parallel sweep cuts the blocks below the high-water mark into runs of
// kBlocksPerSweepTask blocks, which the threads of a ThreadPool claim from one atomic
// counter (dynamic balance: a run of full blocks costs more than a run of free ones).
// A run is Heap::sweep_blocks, which changes the block-state bitmaps a word of 64
// blocks at a time, its own words with plain operations, and their summaries once when
// it ends (BlockAllocator::sweep_blocks). What the runs share, the edge space's free lists, the
// heap's storage releaser (which returns freed arrays' storage to malloc after the
// pause, gc/heap/storage_releaser.hpp) and the count of emptied blocks, is recorded
// per run (Heap::SweepDebt) and settled after the parallel phase exactly as the serial
// sweep releases them (edge ranges last found first, Heap::settle_sweep): the edge
// ranges on the pool too (EdgeSpace::release_in_order places each run's ranges at
// their own offsets in the free lists; each run counts its ranges' size classes when it
// ends, on its own thread, so that settling only places them), the storage and the
// counters on one thread.
// Each run's counts stay in registers and each run's record has its own cache lines:
// runs that threads sweep side by side share no written line. So the heap after a parallel
// sweep is identical to the one the serial sweep leaves (allocation words, block
// states and every hierarchical bitmap, edge-space free lists, array bytes, cursors),
// and later allocations return the same ids.
#pragma once

#include <cstdint>
#include <vector>

#include "gc/heap/heap.hpp"
#include "gc/heap/mark_bitmap.hpp"
#include "gc/util/thread_pool.hpp"

namespace gcvm {

struct SweepStats {
  std::uint64_t objects_before = 0;  // live objects entering the sweep
  std::uint64_t freed_objects = 0;
  std::uint64_t blocks_freed = 0;
  double sweep_ms = 0;
  double settle_ms = 0;  // of it, settling the block sweeps' debts
  std::uint32_t threads = 1;  // threads that swept the blocks (those of the pool that arrived in time)
  /// The blocks' sweep summed over the runs that threads swept (a serial sweep's time
  /// for the same blocks, about): against sweep_ms, what the threads gained.
  double block_work_ms = 0;
};

/// Blocks one parallel sweep task covers (one claim of the shared counter).
inline constexpr std::uint32_t kBlocksPerSweepTask = 1024;
static_assert(kBlocksPerSweepTask % 512 == 0,
              "a run's block-state bits are whole cache lines of the hierarchical bitmaps (64 bytes = 512 blocks)");
/// The Collector sweeps heaps of fewer blocks serially even when the marker has a pool
/// whose threads are awake (the parallel marker's, which spin a while after the mark):
/// waking them costs more than sweeping so few blocks (16 tasks: 32 MiB of the default
/// 2 KiB blocks). On the 16-core H200 host the serial sweep costs about 11 ns a block
/// of a heap full of garbage (GCBench: 0.35 ms for 32,000 blocks) and 16 awake threads
/// sweep the same heap in 0.1 ms.
inline constexpr std::uint32_t kParallelSweepMinBlocks = 16 * kBlocksPerSweepTask;
/// A pool that sleeps when the sweep begins (the device markers' host threads are idle
/// through the device mark) must be woken first: waking 15 sleeping threads took
/// 0.1-2 ms on the H200 host, as much as the serial sweep of 10,000-180,000 blocks of
/// GCBench's kind. So the Collector has it woken once the device has the mark's
/// kernels (MarkRequest::on_device_busy), to poll for the sweep while the device
/// marks: for about twice the last mark's time plus 1 ms (20 ms before the first mark,
/// and at most), after which the threads sleep again and the sweep wakes them as any
/// job does.
constexpr unsigned sweep_pool_wake_microseconds(double last_mark_ms) {
  constexpr double kMaxMs = 20;
  const double ms = last_mark_ms < 0 ? kMaxMs : 2 * last_mark_ms + 1;
  return static_cast<unsigned>((ms < kMaxMs ? ms : kMaxMs) * 1000);
}
/// Threads of such a pool: every hardware thread but one, which the device marker's
/// host thread keeps (it runs the mark's device side while the pool's workers poll,
/// MirrorRefresher::stop_and_run, and the pause's thread waits beside it). With every
/// hardware thread in the pool, a worker polling on that thread's core held it back by
/// a scheduler time slice: on the H100 host GCBench's warm gpu-bfs pauses took 2.6-2.7
/// ms in one benchmark run instead of 0.41-0.46, and each long mark made the next
/// wake-up's polling longer. The sweep runs with the threads that arrive
/// (ThreadPool::run_arriving), so a thread woken late does not hold it back, which
/// made half the hardware threads the faster pool before (on the H200 host, warm
/// pauses of jshell and order-service with 64 MiB of garbage a round swept in
/// 0.85-1.9 ms on 8 threads and 1.0-2.2 on 16, when every thread was waited for; on the
/// H100 hosts GCBench's and binary-trees' warm sweeps took 0.15-0.23 ms on 8 threads
/// and 0.11-0.18 on 16 since, the first collections' sweeps no slower with the
/// workers' first allocation made when the pool is built).
constexpr unsigned sleeping_sweep_pool_threads(unsigned hardware_threads) {
  return hardware_threads > 3 ? hardware_threads - 1 : 2;
}
/// Where such a pool's threads and the pause's own run (gc/util/thread_placement.hpp).
/// A polling worker is preempted by any thread the kernel places on its core, and
/// waits there whatever cores are idle: on the H200 hosts 6-11 of the pool's 15
/// threads reached a warm pause's sweep, even with the pool woken 2 ms ahead, and a
/// worker pinned alone to its core held the unpinned pause's thread or the mirror's
/// refresher, when they came to share it, for milliseconds (first pauses 2-4x longer).
/// So the pool's workers get a CPU each and the pause's thread (the mutator's) and the
/// device marker's host threads (Marker::place_host_threads) the two CPUs left: the
/// two lowest the process may run on (`allowed`, increasing). Empty (nothing placed)
/// when `allowed` has fewer CPUs than the pool's workers and those two.
struct SweepPoolPlacement {
  std::vector<unsigned> workers;  // one CPU for each worker
  std::vector<unsigned> pause;    // the pause's thread and the device's host threads
  bool empty() const { return workers.empty(); }
};
SweepPoolPlacement sleeping_sweep_pool_placement(unsigned pool_threads, const std::vector<unsigned>& allowed);

/// Frees every allocated object whose mark bit is clear. `marks` covers the heap.
SweepStats sweep(Heap& heap, const MarkBitmap& marks);
/// The same on every thread of `pool`; leaves exactly the heap `sweep` leaves.
SweepStats sweep(Heap& heap, const MarkBitmap& marks, ThreadPool& pool);

}  // namespace gcvm
