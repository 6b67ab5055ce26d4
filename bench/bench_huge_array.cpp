// Serial vs parallel mark and sweep, side by side, on the heap shape of
// workloads/churn_array.gasm: one reference array of --slots elements, each holding a
// structure of four nodes with four references (a head and three children linked to
// it and to each other), under churn: before every collection --churn percent of the
// slots get a new structure and the old ones become garbage scattered over the heap.
//
// Two twin heaps are built and churned identically (same seed, same allocation
// order); at every collection the serial marker marks the first, the parallel marker
// the second (the bitmaps must be equal), then the first is swept serially and the
// second in parallel on the marker's pool (the heaps must stay equal). Each figure is
// the median of --runs collections, after one warm-up collection per thread count.
//
// --links=next makes the heads a chain in array order (each head's fourth reference
// points to the next slot's head instead of to itself, and a replaced structure is
// relinked from its predecessor): the whole heap is then reachable from the first
// element, so a marker that reaches it first has everything in one depth-first path.
//
//   bench_huge_array [--slots 1048576] [--churn 25] [--links self|next] [--threads 1,2,4,8,16]
//                    [--runs 5] [--chunk 1024] [--seed 7]
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench/median.hpp"
#include "gc/heap/heap.hpp"
#include "gc/heap/sweep.hpp"
#include "gc/markers/parallel_marker.hpp"
#include "gc/markers/serial_marker.hpp"
#include "gc/util/stopwatch.hpp"

using namespace gcvm;

using gcvm::bench::median;

namespace {

/// One heap of the twin pair: the array, its structures, and the churn that replaces them.
class ChurnedHeap {
 public:
  ChurnedHeap(std::uint64_t slots, bool chained, std::uint64_t seed) : random_(seed), chained_(chained) {
    node_ = heap_.shapes().intern(4, 1);
    array_ = heap_.allocate_ref_array(slots);
    for (std::uint64_t i = 0; i < slots; ++i) heap_.store_element(array_, i, structure());
    if (chained_)
      for (std::uint64_t i = 0; i < slots; ++i) link(i);
    roots_.push_back(array_);
  }

  /// Replaces `count` randomly chosen slots with new structures.
  void churn(std::uint64_t count) {
    const std::uint64_t slots = heap_.array_length(array_);
    for (std::uint64_t i = 0; i < count; ++i) {
      const std::uint64_t k = random_() % slots;
      heap_.store_element(array_, k, structure());
      if (chained_) {
        link(k);
        link((k + slots - 1) % slots);
      }
    }
  }

  Heap& heap() { return heap_; }
  MarkRequest request() const { return {heap_.graph(), roots_, heap_.blocks().high_water()}; }

 private:
  /// Points slot i's head at slot i+1's head.
  void link(std::uint64_t i) {
    const std::uint64_t slots = heap_.array_length(array_);
    heap_.store_ref(heap_.load_element(array_, i), 3, heap_.load_element(array_, (i + 1) % slots));
  }
  ObjectId node(ObjectId head) {
    const ObjectId n = heap_.allocate(node_);
    if (n == kNullRef) throw std::runtime_error("bench_huge_array: heap exhausted");
    heap_.store_scalar(n, 0, random_());
    if (head != kNullRef) heap_.store_ref(n, 0, head);
    heap_.store_ref(n, 3, n);
    return n;
  }
  ObjectId structure() {
    const ObjectId head = node(kNullRef);
    const ObjectId c[3] = {node(head), node(head), node(head)};
    for (std::uint32_t i = 0; i < 3; ++i) {
      heap_.store_ref(head, i, c[i]);
      heap_.store_ref(c[i], 1, c[(i + 1) % 3]);
      heap_.store_ref(c[i], 2, c[(i + 2) % 3]);
    }
    return head;
  }

  Heap heap_;
  std::mt19937_64 random_;
  bool chained_;
  ShapeId node_ = 0;
  ObjectId array_ = kNullRef;
  std::vector<ObjectId> roots_;
};

/// Median over `runs` of the time from ThreadPool::run until the last participant has
/// started its job (an empty job): what waking the pool costs every parallel phase.
double pool_wake_ms(ThreadPool& pool, int runs) {
  std::vector<double> times;
  std::vector<double> started(pool.size());
  for (int r = 0; r < runs; ++r) {
    const Stopwatch clock;
    pool.run([&](unsigned index) { started[index] = clock.elapsed_ms(); });
    times.push_back(*std::max_element(started.begin(), started.end()));
  }
  return median(times);
}

struct Row {
  unsigned threads = 0;
  double serial_mark = 0, parallel_mark = 0, serial_sweep = 0, parallel_sweep = 0;
  double first_item_max = 0;  // ms until the last thread began its first item
  double pool_wake = 0;       // ms until the last thread of an empty job started
  std::uint64_t objects_min = 0, objects_max = 0, steals = 0;
};

Row bench_threads(ChurnedHeap& a, ChurnedHeap& b, unsigned threads, std::uint64_t churn, int runs,
                  std::uint32_t chunk, bool per_thread) {
  SerialMarker serial;
  ParallelMarker parallel({.threads = threads, .chunk = chunk});
  MarkBitmap serial_marks, parallel_marks;
  std::vector<double> sm, pm, ss, ps, first;
  Row row{parallel.threads()};
  for (int r = 0; r <= runs; ++r) {
    a.churn(churn);
    b.churn(churn);
    const MarkStats s = serial.mark(a.request(), serial_marks);
    const MarkStats p = parallel.mark(b.request(), parallel_marks);
    if (!(serial_marks == parallel_marks) || s.edges_traversed != p.edges_traversed)
      throw std::runtime_error("bench_huge_array: parallel marks differ from the serial marker's");
    const SweepStats sweep_a = sweep(a.heap(), serial_marks);
    const SweepStats sweep_b = sweep(b.heap(), parallel_marks, *parallel.thread_pool());
    if (sweep_a.freed_objects != sweep_b.freed_objects || a.heap().used_bytes() != b.heap().used_bytes())
      throw std::runtime_error("bench_huge_array: the parallel sweep left another heap than the serial one");
    if (r == 0) continue;  // warm-up
    sm.push_back(s.mark_ms);
    pm.push_back(p.mark_ms);
    ss.push_back(sweep_a.sweep_ms);
    ps.push_back(sweep_b.sweep_ms);
    double latest = 0;
    std::uint64_t lo = ~0ull, hi = 0, steals = 0;
    for (const MarkThreadStats& t : parallel.thread_stats()) {
      latest = std::max(latest, t.first_item_ms);
      lo = std::min(lo, t.objects);
      hi = std::max(hi, t.objects);
      steals += t.steals;
    }
    first.push_back(latest);
    row.objects_min = lo;
    row.objects_max = hi;
    row.steals = steals;
  }
  row.serial_mark = median(sm);
  row.parallel_mark = median(pm);
  row.serial_sweep = median(ss);
  row.parallel_sweep = median(ps);
  row.first_item_max = median(first);
  row.pool_wake = pool_wake_ms(*parallel.thread_pool(), 9);
  if (per_thread) {
    fmt::print("  last collection, per thread: first item ms, objects, edges, items, steals\n");
    const auto& rows = parallel.thread_stats();
    for (std::size_t i = 0; i < rows.size(); ++i)
      fmt::print("  {:>3} {:>8.3f} {:>9} {:>9} {:>9} {:>7}\n", i, rows[i].first_item_ms, rows[i].objects,
                 rows[i].edges, rows[i].items, rows[i].steals);
  }
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Serial vs parallel mark and sweep on a churned heap hanging off one huge array");
  std::uint64_t slots = 1 << 20;
  unsigned churn_percent = 25;
  std::string links = "self";
  std::vector<unsigned> threads;
  int runs = 5;
  std::uint32_t chunk = ParallelMarkerOptions{}.chunk;
  std::uint64_t seed = 7;
  bool per_thread = false;
  app.add_option("--slots", slots, "Array elements, one 4-node structure each")->check(CLI::Range(1ull, 1ull << 28));
  app.add_option("--churn", churn_percent, "Percent of the slots replaced before each collection")
      ->check(CLI::Range(0u, 1000u));
  app.add_option("--links", links, "A head's fourth reference: itself, or the next slot's head")
      ->check(CLI::IsMember({"self", "next"}));
  app.add_option("--threads", threads, "Parallel thread counts (default 1,2,4,8,16)")->delimiter(',');
  app.add_option("--runs", runs, "Timed collections per thread count (median)")->check(CLI::Range(1, 1000));
  app.add_option("--chunk", chunk, "Edges per parallel work item")->check(CLI::Range(1u, 0xFFFFFFFFu));
  app.add_option("--seed", seed, "Seed of the churn");
  app.add_flag("--per-thread", per_thread, "Print every marking thread's figures of the last collection");
  CLI11_PARSE(app, argc, argv);
  if (threads.empty()) threads = {1, 2, 4, 8, 16};
  const std::uint64_t churn = slots * churn_percent / 100;

  const Stopwatch build;
  ChurnedHeap a(slots, links == "next", seed), b(slots, links == "next", seed);
  fmt::print(
      "bench_huge_array: {} hardware threads; {} slots, {} live nodes, links {}, {}% churn ({} structures) per "
      "collection; median of {} collections; chunk {} (built in {:.0f} ms)\n",
      std::thread::hardware_concurrency(), slots, slots * 4, links, churn_percent, churn, runs, chunk,
      build.elapsed_ms());
  fmt::print("{:>7} {:>12} {:>12} {:>8} {:>12} {:>12} {:>8} {:>11} {:>19} {:>8} {:>10}\n", "threads", "serial mark",
             "par. mark", "speedup", "serial sweep", "par. sweep", "speedup", "1st item", "objects/thread", "steals",
             "pool wake");
  for (unsigned t : threads) {
    const Row r = bench_threads(a, b, t, churn, runs, chunk, per_thread);
    fmt::print(
        "{:>7} {:>9.2f} ms {:>9.2f} ms {:>7.2f}x {:>9.2f} ms {:>9.2f} ms {:>7.2f}x {:>8.3f} ms {:>9}..{:<9} {:>8} {:>7.3f} ms\n",
               r.threads, r.serial_mark, r.parallel_mark, r.serial_mark / r.parallel_mark, r.serial_sweep,
               r.parallel_sweep, r.serial_sweep / r.parallel_sweep, r.first_item_max, r.objects_min, r.objects_max,
               r.steals, r.pool_wake);
    std::fflush(stdout);
  }
  return 0;
}
