// Marker scaling benchmark: the serial marker, the parallel marker at 1..N
// threads and Boehm's GC_gcollect (libgc's parallel mark-sweep) on the same graphs in
// one run. Each figure is the median of --runs collections of the same heap; the
// parallel marker gets one warm-up collection per thread count (its pool is created
// with the marker, never during a collection). Boehm builds the same graph in libgc's
// heap; its mark time is libgc's own mark phase (collection events), its pause the
// whole GC_gcollect, and its marker count is fixed per process (--boehm-markers).
// Boehm is timed after warm-up collections that let its mark stack grow (see below).
//
//   bench_markers [--quick] [--graphs rmat:22,lists:2560x3000,list:2000000]
//                 [--threads 1,2,4,8,16] [--runs 5] [--chunk 1024] [--boehm-markers N]
//                 [--boehm-warmups 10]
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/median.hpp"
#include "gc/heap/heap.hpp"
#include "gc/heap/heap_materializer.hpp"
#include "gc/markers/parallel_marker.hpp"
#include "gc/markers/serial_marker.hpp"
#include "gc/util/stopwatch.hpp"
#include "heapgraph/graph_spec.hpp"
#include "heapgraph/synthetic_heaps.hpp"
#if GCVM_HAVE_BOEHM
#include "gc/boehm/boehm_collector.hpp"
#include "gc/boehm/boehm_sink.hpp"
#endif

using namespace gcvm;

using gcvm::bench::median;

namespace {

struct Row {
  std::string collector;
  unsigned threads = 0;
  double mark_ms = 0;
  double pause_ms = 0;  // Boehm only: the whole GC_gcollect
  int warmups = 0;      // Boehm only: collections before the timed ones
  std::uint64_t marked = 0;
  std::uint64_t edges = 0;
};

/// Median mark time of `runs` collections (after `warmup` unrecorded ones).
Row time_marker(Marker& marker, const MarkRequest& request, int runs, int warmup) {
  MarkBitmap marks;
  Row row;
  std::vector<double> times;
  for (int r = 0; r < warmup + runs; ++r) {
    const MarkStats stats = marker.mark(request, marks);
    if (r >= warmup) times.push_back(stats.mark_ms);
    row.marked = stats.marked_objects;
    row.edges = stats.edges_traversed;
  }
  row.mark_ms = median(times);
  return row;
}

#if GCVM_HAVE_BOEHM
Row time_boehm(const GraphSpec& spec, std::uint64_t seed, unsigned markers, int runs, int warmups) {
  BoehmHeap heap(markers);
  BoehmHeap::set_automatic(false);
  BoehmSink sink(heap);
  heap.build_on_scratch_thread([&] { build_synthetic_heap(spec, sink, seed); });
  sink.forget_handles();
  BoehmHeap::set_automatic(true);
  BoehmCollector collector(heap);
  // libgc's mark stack starts at 4,096 entries and doubles after each collection that
  // overflowed it (an overflowing collection rescans the heap): a heap built without
  // collections needs several before libgc marks at its steady speed, as it would in a
  // running program. Timing noise makes "until it stops improving" unreliable, so a
  // fixed number of warm-ups: 10 let the stack grow to 4M entries.
  for (int w = 0; w < warmups; ++w) collector.collect("warm-up");
  Row row{"boehm", BoehmHeap::markers()};
  row.warmups = warmups;
  std::vector<double> mark, pause;
  for (int r = 0; r < runs; ++r) {
    const CollectionStats stats = collector.collect("bench");
    mark.push_back(stats.mark.mark_ms);
    pause.push_back(stats.pause_ms);
    row.marked = stats.mark.marked_objects;
    row.edges = stats.mark.edges_traversed;
  }
  row.mark_ms = median(mark);
  row.pause_ms = median(pause);
  heap.clear_roots();
  collector.collect("release");
  return row;
}
#endif

void bench_graph(const std::string& text, std::uint64_t seed, const std::vector<unsigned>& threads, int runs,
                 std::uint32_t chunk, unsigned boehm_markers, int boehm_warmups) {
  const GraphSpec spec = parse_graph_spec(text);
  std::vector<Row> rows;
  {
    Heap heap;
    HeapMaterializer builder(heap);
    const Stopwatch build;
    build_synthetic_heap(spec, builder, seed);
    fmt::print("\n{}: {} objects, {} references, {} roots (built in {:.0f} ms)\n", text, builder.object_count(),
               heap.graph().edges_reserved(), builder.roots().size(), build.elapsed_ms());
    const MarkRequest request{heap.graph(), builder.roots(), heap.blocks().high_water()};
    SerialMarker serial;
    rows.push_back(time_marker(serial, request, runs, 1));
    rows.back().collector = "serial";
    rows.back().threads = 1;
    for (unsigned t : threads) {
      ParallelMarker parallel({.threads = t, .chunk = chunk});
      rows.push_back(time_marker(parallel, request, runs, 1));
      rows.back().collector = "parallel";
      rows.back().threads = t;
    }
  }
#if GCVM_HAVE_BOEHM
  rows.push_back(time_boehm(spec, seed, boehm_markers, runs, boehm_warmups));
#else
  (void)boehm_markers;
  (void)boehm_warmups;
#endif
  const double serial_ms = rows.front().mark_ms;
  fmt::print("{:<10} {:>7} {:>11} {:>12} {:>10} {:>11} {:>12}\n", "collector", "threads", "mark ms", "M edges/s",
             "vs serial", "pause ms", "marked");
  for (const Row& r : rows)
    fmt::print("{:<10} {:>7} {:>11.2f} {:>12.1f} {:>9.2f}x {:>11} {:>12}\n", r.collector, r.threads, r.mark_ms,
               r.mark_ms > 0 ? r.edges / r.mark_ms / 1e3 : 0.0, r.mark_ms > 0 ? serial_ms / r.mark_ms : 0.0,
               r.pause_ms > 0 ? fmt::format("{:.2f}", r.pause_ms) : std::string("-"), r.marked);
  for (const Row& r : rows)
    if (r.warmups > 0) fmt::print("  {}: {} warm-up collections before the timed ones\n", r.collector, r.warmups);
  for (const Row& r : rows)
    if (r.marked != rows.front().marked)
      fmt::print("  note: {} marked {} objects, serial {}\n", r.collector, r.marked, rows.front().marked);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Serial vs parallel marker scaling vs Boehm GC_gcollect on synthetic heaps");
  bool quick = false;
  std::vector<std::string> graphs;
  std::vector<unsigned> threads;
  int runs = 5;
  std::uint32_t chunk = ParallelMarkerOptions{}.chunk;
  unsigned boehm_markers = 0;
  int boehm_warmups = 10;
  std::uint64_t seed = kDefaultGraphSeed;
  app.add_flag("--quick", quick, "Small graphs (rmat:16, lists:256x3000, list:200000), 3 runs, threads 1,2,4");
  app.add_option("--graphs", graphs, "Graph specs (default rmat:22 lists:2560x3000 list:2000000)")->delimiter(',');
  app.add_option("--threads", threads, "Parallel marker thread counts (default 1,2,4,8,16)")->delimiter(',');
  app.add_option("--runs", runs, "Timed collections per figure (median)")->check(CLI::Range(1, 1000));
  app.add_option("--chunk", chunk, "Edges per parallel work item")->check(CLI::Range(1u, 0xFFFFFFFFu));
  app.add_option("--boehm-markers", boehm_markers, "libgc marker threads (default: the largest --threads)");
  app.add_option("--boehm-warmups", boehm_warmups, "Untimed libgc collections before the timed ones")
      ->check(CLI::Range(1, 100));
  app.add_option("--seed", seed, "Seed for random graphs");
  CLI11_PARSE(app, argc, argv);
  if (graphs.empty())
    graphs = quick ? std::vector<std::string>{"rmat:16", "lists:256x3000", "list:200000"}
                   : std::vector<std::string>{"rmat:22", "lists:2560x3000", "list:2000000"};
  if (threads.empty()) threads = quick ? std::vector<unsigned>{1, 2, 4} : std::vector<unsigned>{1, 2, 4, 8, 16};
  if (quick && app.count("--runs") == 0) runs = 3;
  if (boehm_markers == 0) boehm_markers = *std::max_element(threads.begin(), threads.end());
  fmt::print("bench_markers: {} hardware threads; median of {} runs; parallel chunk {} edges; boehm markers {}\n",
             std::thread::hardware_concurrency(), runs, chunk, boehm_markers);
  try {
    for (const std::string& g : graphs) bench_graph(g, seed, threads, runs, chunk, boehm_markers, boehm_warmups);
  } catch (const InputError& e) {
    fmt::print(stderr, "bench_markers: {}\n", e.what());
    return 2;
  }
  return 0;
}
