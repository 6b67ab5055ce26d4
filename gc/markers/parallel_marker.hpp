// The CPU-parallel marker (`--gc=parallel --gc-threads=N`): work-stealing depth-first
// marking on a persistent thread pool. It sets exactly the bits of the serial marker
// and reports the same marked and edge counts (DESIGN.md invariant 4).
//
// Work items: a 64-bit item names an object and the first edge to scan (low 32 bits
// the object id, high 32 bits the edge offset inside the object's CSR range). An item
// scans at most `chunk` edges. The item of a wider object (offset 0) first pushes one
// item per further chunk straight to its thread's public deque, so a reference array
// of 4 M elements becomes ~4,000 items that the other threads steal while its first
// chunk is scanned: no thread scans a huge array alone.
//
// Marking: an object is scanned only by the thread whose atomic fetch_or turned its
// mark bit from 0 to 1, so every reachable object is scanned exactly once and
// per-thread counts add up to the serial marker's (a pool of one thread uses plain
// loads and stores: nothing can race with it). A scan reads each target's mark word
// first (most references lead to marked objects); with several threads, an item of
// two or more edges collects the unmarked targets of consecutive edges that share a
// mark word and claims them with one fetch_or per word: an object's children,
// allocated together, and an array chunk's elements often share a block, and each
// locked instruction also stalls the loads behind it.
//
// Work: each thread has a private depth-first stack (plain vector: no fences) and a
// Chase-Lev deque (work_stealing_deque.hpp) that others steal the oldest items from.
// Of the children an item marks, the last one is scanned next without a stack round
// trip (linked lists never touch the stack); the others go on the private stack. When
// a worker has two or more private items, some thread is idle and the worker's deque
// is empty, it moves the oldest half of its private stack to its deque at the end of
// the item it is scanning: work is published only when
// someone needs it, so a busy heap pays no fenced deque operation per object, and
// thieves do not work on the same cache lines as their victims without need.
//
// Small marks: before it wakes the pool, the calling thread marks alone (plain
// test-and-set: no other thread runs yet), root after root, until it has scanned
// kPreludeItems items. A mark that ends within that budget, such as most young
// collections (gc/heap/generations.hpp) or a small heap's, never wakes the pool, whose
// wake-up and termination cost more than the whole mark. Otherwise the pool takes
// over: what the caller had pending is moved to its deque, where the others steal it,
// and the roots it did not reach are taken from one cursor, 256 at a time, by
// whichever threads come.
//
// The team: the pool runs the mark with ThreadPool::run_arriving, so a thread joins
// the mark when it arrives, and one that arrives after the mark is done (its core was
// busy elsewhere) never joins: the mark does not wait for it. (With every thread
// required, a 16-thread mark of GCBench on a 16-core H100 host waited 1.5-1.9 ms for a
// thread that then marked nothing, where the mark took 0.4 ms on another host.)
// Joining, going idle and finishing are operations on one word (idle count, joined
// count, done bit).
//
// Termination: a thread counts itself idle only after its private stack and its deque
// are empty, the root cursor is spent and a steal round found nothing; it leaves the
// idle state (uncounting itself) before it steals again. Only active threads push, and
// only to their own stack and deque (the caller's prelude filled its deque before the
// pool ran, where any steal round sees it), so when every thread that joined is
// counted idle every stack and deque is empty and no item is in flight: marking is
// complete, and the thread that sees it sets the done bit with a compare-and-swap that
// fails if anyone joined or left the idle state meanwhile. A thread that joins later
// finds the bit and leaves. Progress: while a thread is idle, every active thread with
// two or more private items publishes at its next item, and an idle thread leaves the
// idle state as soon as it sees a non-empty deque.
//
// Statistics (MarkStats::details): threads, threads that joined, chunk, the totals of items, chunk splits,
// steals and steal attempts, the prelude's items and whether the pool was woken, the
// per-thread minimum and maximum of objects scanned and edges traversed (balance at a
// glance), and when the last thread began its first item (`first_item_ms_max`: how
// long the mark ran before every thread had work); `thread_stats()` has every
// thread's row.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "gc/markers/gc_options.hpp"
#include "gc/markers/marker.hpp"
#include "gc/markers/work_stealing_deque.hpp"
#include "gc/util/stopwatch.hpp"
#include "gc/util/thread_pool.hpp"

namespace gcvm {

struct ParallelMarkerOptions {
  /// Participating threads (the caller included); 0 = every hardware thread.
  unsigned threads = 0;
  /// Edges per work item; wider objects are split into items of this many edges.
  std::uint32_t chunk = 1024;

  /// Accepts `chunk=<edges>` (>= 1); `threads` comes from --gc-threads.
  static ParallelMarkerOptions parse(const GcOptions& options, unsigned threads);
};

/// What one marking thread did in the last collection.
struct MarkThreadStats {
  std::uint64_t objects = 0;         // objects this thread marked (and therefore scanned)
  std::uint64_t edges = 0;           // non-null references it read
  std::uint64_t items = 0;           // work items it scanned (objects and chunks)
  std::uint64_t splits = 0;          // wide objects it split into chunks
  std::uint64_t steals = 0;          // items it took from other threads' deques
  std::uint64_t steal_attempts = 0;  // steal calls, successful or not
  double first_item_ms = 0;          // from the start of mark() to this thread's first item
};

class ParallelMarker final : public Marker {
 public:
  /// Items the caller scans alone before it wakes the pool.
  static constexpr std::uint64_t kPreludeItems = 4096;

  explicit ParallelMarker(ParallelMarkerOptions options = {});
  ~ParallelMarker() override;
  std::string_view name() const override { return "parallel"; }
  MarkerConstraints constraints() const override { return {.needs_device = false, .uses_threads = true}; }
  MarkStats mark(const MarkRequest& request, MarkBitmap& out) override;
  /// The same mark on the threads of `pool` instead of the marker's own: a pool another
  /// phase of the pause keeps awake (a device marker's CPU end runs on the Collector's
  /// sweep pool, whose threads poll while the device marks; a pool of the marker's own
  /// beside it would share the cores with those polling threads). The first mark on a
  /// larger pool than the marker's makes its per-thread work queues.
  MarkStats mark_on(ThreadPool& pool, const MarkRequest& request, MarkBitmap& out);
  ThreadPool* thread_pool() override { return &pool_; }

  unsigned threads() const { return pool_.size(); }
  const std::vector<MarkThreadStats>& thread_stats() const { return stats_; }

 private:
  struct Worker;
  template <bool kConcurrent>
  void run_worker(unsigned index, const MarkRequest& request, MarkBitmap& out);
  /// Scans `item`, then the last child it marked, and so on down the chain, and when a
  /// scan marks nothing new the worker's newest pending item, until the worker has none
  /// or `stats.items` reaches `item_limit` (the rest of the chain is then pushed).
  template <bool kConcurrent>
  void drain(WorkStealingDeque::Item item, const MarkRequest& request, Worker& worker, MarkThreadStats& stats,
             MarkBitmap& out, std::uint64_t item_limit);
  /// The serial prelude on the caller (participant 0), into prelude_ (which mark()
  /// resets); true if it finished the mark.
  bool mark_alone(const MarkRequest& request, MarkBitmap& out);
  bool steal_round(unsigned index, std::uint64_t& rng, MarkThreadStats& stats, WorkStealingDeque::Item& item);
  bool others_have_work(unsigned index) const;

  ParallelMarkerOptions options_;
  ThreadPool pool_;
  ThreadPool* team_pool_ = &pool_;  // the pool of the mark in progress (mark_on's, or pool_)
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<MarkThreadStats> stats_;
  MarkThreadStats prelude_;  // what the caller did alone before the pool ran
  Stopwatch clock_;          // restarted by mark()
  // The team of a parallel mark: threads idle (bits 0-31), threads that joined (bits
  // 32-62), done (bit 63). One word, so that "every member is idle" and "nobody joined
  // meanwhile" are one compare-and-swap.
  static constexpr std::uint64_t kTeamIdle = 0xFFFFFFFFull;
  static constexpr unsigned kTeamJoinedShift = 32;
  static constexpr std::uint64_t kTeamJoinedOne = std::uint64_t{1} << kTeamJoinedShift;
  static constexpr std::uint64_t kTeamDone = std::uint64_t{1} << 63;
  static constexpr std::uint64_t team_joined(std::uint64_t team) { return (team & ~kTeamDone) >> kTeamJoinedShift; }
  /// Roots a thread takes from the shared cursor at a time.
  static constexpr std::size_t kRootsPerClaim = 256;
  alignas(64) std::atomic<std::uint64_t> team_{0};
  alignas(64) std::atomic<std::size_t> next_root_{0};  // the first root no thread has taken
};

}  // namespace gcvm
