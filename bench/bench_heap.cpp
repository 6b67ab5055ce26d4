// Heap-core benchmarks: allocation rate, sweep rate, serial mark rate, and
// (with --scale) the 100 M object / 1 G edge footprint. Medians of repeated runs.
//
//   bench_heap [--quick] [--scale] [--allocation]   (--allocation: only the allocation rows)
#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench/median.hpp"
#include "gc/heap/heap.hpp"
#include "gc/heap/heap_materializer.hpp"
#include "gc/markers/serial_marker.hpp"
#include "gc/util/stopwatch.hpp"
#include "gc/heap/sweep.hpp"
#include "heapgraph/synthetic_heaps.hpp"

using namespace gcvm;

using gcvm::bench::median;

namespace {

/// The part of thread_cpu_ms() spent in user mode (the kernel's page faults left out),
/// in milliseconds; as precise as the kernel's accounting (a tick or so).
double thread_user_ms() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec) * 1e3 + static_cast<double>(usage.ru_utime.tv_usec) / 1e3;
}

/// Objects per second of wall time, of the thread's CPU time (what a loaded machine
/// disturbs least: time spent descheduled is not in it) and of its user-mode time (the
/// allocator's own work: the kernel's zero-filling of fresh pages is not in it).
struct Rates {
  std::vector<double> wall, cpu, user;
};

void allocate_all(Heap& heap, ShapeId shape, std::uint64_t objects, Rates& rates) {
  const double cpu_start = thread_cpu_ms(), user_start = thread_user_ms();
  const Stopwatch clock;
  for (std::uint64_t i = 0; i < objects; ++i)
    if (heap.allocate(shape) == kNullRef) std::abort();
  rates.wall.push_back(objects / (clock.elapsed_ms() / 1000));
  rates.cpu.push_back(objects / ((thread_cpu_ms() - cpu_start) / 1000));
  rates.user.push_back(objects / ((thread_user_ms() - user_start) / 1000));
}

void print_allocation(const std::string& name, const Rates& rates) {
  fmt::print("{:<34} {:>14.1f} M objects/s   ({:.1f} M per CPU second, {:.1f} M per user-mode second)\n", name,
             median(rates.wall) / 1e6, median(rates.cpu) / 1e6, median(rates.user) / 1e6);
}

/// Fresh: every block is new memory (page faults included). Reused: the same heap
/// after a sweep freed everything, the steady state of a running mutator.
void bench_allocation(std::uint64_t objects, int repeats) {
  Rates fresh, reused;
  for (int r = 0; r < repeats; ++r) {
    Heap heap;
    const ShapeId node = heap.shapes().intern(1, 1);
    allocate_all(heap, node, objects, fresh);
    MarkBitmap nothing;
    nothing.reset(heap.blocks().high_water());
    sweep(heap, nothing);
    allocate_all(heap, node, objects, reused);
  }
  print_allocation(fmt::format("allocate {}M fresh (1 ref, 1 scalar)", objects / 1000000), fresh);
  print_allocation(fmt::format("allocate {}M reused (1 ref, 1 scalar)", objects / 1000000), reused);
}

void bench_sweep(std::uint64_t objects, int repeats) {
  struct Pattern {
    const char* name;
    double survive;
  };
  for (const auto& p : {Pattern{"all live", 1.0}, Pattern{"half live (random)", 0.5}, Pattern{"all dead", 0.0}}) {
    std::vector<double> rates;
    for (int r = 0; r < repeats; ++r) {
      Heap heap;
      const ShapeId node = heap.shapes().intern(1, 1);
      for (std::uint64_t i = 0; i < objects; ++i) heap.allocate(node);
      MarkBitmap marks;
      marks.reset(heap.blocks().high_water());
      std::mt19937_64 rng(r);
      for (auto& w : marks.words())
        w = p.survive == 1.0 ? ~0ull : p.survive == 0.0 ? 0 : rng();
      const SweepStats stats = sweep(heap, marks);
      rates.push_back(stats.objects_before / (stats.sweep_ms / 1000));
    }
    fmt::print("{:<34} {:>14.1f} M objects/s\n", fmt::format("sweep {}M, {}", objects / 1000000, p.name),
               median(rates) / 1e6);
  }
}

void bench_mark(const std::string& spec, int repeats) {
  Heap heap;
  HeapMaterializer builder(heap);
  build_synthetic_heap(parse_graph_spec(spec), builder);
  SerialMarker marker;
  MarkBitmap marks;
  std::vector<double> ms;
  MarkStats stats;
  for (int r = 0; r < repeats + 1; ++r) {
    stats = marker.mark({heap.graph(), builder.roots(), heap.blocks().high_water()}, marks);
    if (r > 0) ms.push_back(stats.mark_ms);  // first run warms caches and the stack
  }
  const double t = median(ms);
  fmt::print("{:<34} {:>14.1f} M edges/s   ({} marked, {} edges, {:.2f} ms)\n", "serial mark " + spec,
             stats.edges_traversed / (t / 1000) / 1e6, stats.marked_objects, stats.edges_traversed, t);
}

void bench_scale() {
  const std::string spec = "random:100000000:10";
  Heap heap;
  HeapMaterializer builder(heap);
  const Stopwatch build;
  build_synthetic_heap(parse_graph_spec(spec), builder);
  const double build_ms = build.elapsed_ms();
  SerialMarker marker;
  MarkBitmap marks;
  const MarkStats stats = marker.mark({heap.graph(), builder.roots(), heap.blocks().high_water()}, marks);
  const double objects = static_cast<double>(builder.object_count());
  const double edges = static_cast<double>(heap.graph().edges_reserved());
  fmt::print("scale {}: {} objects, {} edge slots, built in {:.1f} s\n", spec, builder.object_count(),
             heap.graph().edges_reserved(), build_ms / 1000);
  fmt::print("  heap blocks {:.2f} GiB ({:.1f} B/object), CSR {:.2f} GiB ({:.1f} B/object + 4 B/edge = {:.1f} B/object)\n",
             heap.used_bytes() / 1073741824.0, heap.used_bytes() / objects, heap.graph().committed_bytes() / 1073741824.0,
             12.0, heap.graph().committed_bytes() / objects);
  fmt::print("  serial mark: {} marked, {} edges, {:.1f} ms ({:.1f} M edges/s); edges per object {:.1f}\n",
             stats.marked_objects, stats.edges_traversed, stats.mark_ms, stats.edges_traversed / stats.mark_ms / 1e3,
             edges / objects);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, scale = false, allocation_only = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    else if (std::strcmp(argv[i], "--scale") == 0) scale = true;
    else if (std::strcmp(argv[i], "--allocation") == 0) allocation_only = true;
    else {
      fmt::print(stderr, "bench_heap: unknown argument '{}' (use --quick, --scale, --allocation)\n", argv[i]);
      return 2;
    }
  }
  const int repeats = quick ? 1 : 5;
  bench_allocation(quick ? 2'000'000 : 50'000'000, repeats);
  if (allocation_only) return 0;
  bench_sweep(quick ? 2'000'000 : 50'000'000, repeats);
  for (const char* spec : {"list:2000000", "lists:256x10000", "lists:2560x3000", "rmat:22"})
    if (!quick || std::string(spec) != "rmat:22") bench_mark(spec, repeats);
  if (scale) bench_scale();
  return 0;
}
