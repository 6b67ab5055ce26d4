// FastCollect Table 1 on today's GPUs: the gpu-dfs variants GPU, +A,
// +H, +D, +V, +O side by side with gpu-bfs and the CPU markers (serial, and
// parallel on every core of the host), on the paper's microbenchmarks and on
// R-MAT heaps, in one run. Each marker keeps its device mirror between repeats
// (only the first repeat uploads the graph); every result is checked against
// the serial marker's bitmap and counts. Medians of `--repeats` runs.
//
//   bench_gpu_dfs [--device=cuda|opencl[:N]] [--repeats=N] [--quick]
//   [--graphs=SPEC,SPEC,...]
//
// The default device is cuda; --quick runs scaled-down graphs (a smoke test on
// PoCL).
//
// Columns: kernel ms (device clock), mark ms (wall, whole mark entry point:
// sync, roots, kernels, download), GTEPS (references traversed / kernel time),
// device MiB (everything the marker holds on the device), stack MiB (gpu-dfs
// stack storage, tops and pool; gpu-bfs: its two frontier queues are in device
// MiB).
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bench/median.hpp"
#include "gc/heap/heap.hpp"
#include "gc/heap/heap_materializer.hpp"
#include "gc/markers/marker_registry.hpp"
#include "gc/markers/gpu_bfs_marker.hpp"
#include "gc/markers/gpu_dfs_marker.hpp"
#include "gc/markers/serial_marker.hpp"
#include "heapgraph/graph_spec.hpp"
#include "heapgraph/synthetic_heaps.hpp"

using namespace gcvm;

using gcvm::bench::median;

namespace {

struct Variant {
  const char *label;
  const char *collector;
  GcOptions options;
};

/// The paper's columns: GPU is the unoptimized algorithm, each +X turns one
/// piece on, +O is everything. On list-shaped heaps also both GPU markers
/// without the CPU hand-off (fallback=off), as in the papers, where the narrow
/// tail stays on the GPU.
std::vector<Variant> variants(const std::string &spec) {
  const GcOptions off = {{"atomics", "plain"},
                         {"local-stack", "off"},
                         {"balance", "off"},
                         {"vector", "off"}};
  auto with = [&](const char *key, const char *value) {
    GcOptions o = off;
    for (auto &opt : o)
      if (opt.key == key)
        opt.value = value;
    return o;
  };
  std::vector<Variant> all = {{"serial", "serial", {}},
                              {"parallel", "parallel", {}},
                              {"gpu-bfs", "gpu-bfs", {}},
                              {"dfs GPU", "gpu-dfs", off},
                              {"dfs +A", "gpu-dfs", with("atomics", "checked")},
                              {"dfs +H", "gpu-dfs", with("local-stack", "32")},
                              {"dfs +D", "gpu-dfs", with("balance", "on")},
                              {"dfs +V", "gpu-dfs", with("vector", "on")},
                              {"dfs +O", "gpu-dfs", {}}};
  if (spec.rfind("list", 0) == 0) {
    all.push_back({"bfs no-fb", "gpu-bfs", {{"fallback", "off"}}});
    all.push_back({"dfs no-fb", "gpu-dfs", {{"fallback", "off"}}});
  }
  return all;
}

double detail(const MarkStats &stats, const char *key) {
  for (const auto &[k, v] : stats.details)
    if (k == key)
      return v;
  return 0;
}

void bench_graph(const std::string &spec, const std::string &device,
                 int repeats) {
  Heap heap;
  HeapMaterializer builder(heap);
  build_synthetic_heap(parse_graph_spec(spec), builder, kDefaultGraphSeed);
  const auto &roots = builder.roots();
  const std::uint32_t blocks = heap.blocks().high_water();
  SerialMarker reference;
  MarkBitmap expected;
  const MarkStats want =
      reference.mark({heap.graph(), roots, blocks}, expected);
  fmt::print("\n{}: {} objects, {} reachable, {} references traversed\n", spec,
             heap.graph().vertex_count(), want.marked_objects,
             want.edges_traversed);
  fmt::print("  {:<9} {:>11} {:>11} {:>8} {:>11} {:>10}  {}\n", "marker",
             "kernel ms", "mark ms", "GTEPS", "device MiB", "stack MiB",
             "check");
  for (const Variant &v : variants(spec)) {
    std::unique_ptr<Marker> marker;
    try {
      marker = make_marker(
          {.name = v.collector, .options = v.options, .device = device});
    } catch (const std::exception &e) {
      fmt::print("  {:<9} not run: {}\n", v.label, e.what());
      continue;
    }
    std::vector<double> kernel, wall;
    MarkStats last;
    bool same = true;
    for (int r = 0; r < repeats; ++r) {
      MarkBitmap marks;
      last = marker->mark({heap.graph(), roots, blocks, &heap.graph().changes()},
                          marks);
      same = same && marks == expected &&
             last.marked_objects == want.marked_objects &&
             last.edges_traversed == want.edges_traversed;
      kernel.push_back(detail(last, "kernel_ms"));
      wall.push_back(last.mark_ms);
    }
    const double k = median(kernel);
    const bool on_device = std::string(v.collector).rfind("gpu-", 0) == 0;
    fmt::print("  {:<9} {:>11.3f} {:>11.3f} {:>8.3f} {:>11.1f} {:>10.1f}  {}\n",
               v.label, on_device ? k : 0.0, median(wall),
               on_device && k > 0 ? want.edges_traversed / (k * 1e6)
                                  : want.edges_traversed / (median(wall) * 1e6),
               detail(last, "device_bytes") / 1048576.0,
               detail(last, "stack_peak_bytes") / 1048576.0,
               same ? "ok" : "MISMATCH");
  }
}

} // namespace

int main(int argc, char **argv) {
  std::string device = "cuda"; // not auto: a silent CPU fallback would fill the
                               // table with CPU times
  int repeats = 5;
  std::vector<std::string> graphs = {"list:2000000",    "lists:256x10000",
                                     "lists:2560x1000", "complete:5000:100",
                                     "rmat:22",         "rmat:24"};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--device=", 0) == 0) {
      device = arg.substr(9);
    } else if (arg.rfind("--repeats=", 0) == 0) {
      repeats = std::max(1, std::atoi(arg.c_str() + 10));
    } else if (arg == "--quick") {
      graphs = {"list:20000", "lists:64x1000", "lists:256x100",
                "complete:500:10", "rmat:14"};
    } else if (arg.rfind("--graphs=", 0) == 0) {
      graphs.clear();
      std::string list = arg.substr(9);
      for (std::size_t start = 0; start <= list.size();) {
        const std::size_t comma = std::min(list.find(',', start), list.size());
        if (comma > start)
          graphs.push_back(list.substr(start, comma - start));
        start = comma + 1;
      }
    } else {
      fmt::print(stderr,
                 "bench_gpu_dfs: unknown argument '{}' (use --device=SPEC, "
                 "--repeats=N, --quick, --graphs=A,B)\n",
                 arg);
      return 2;
    }
  }
  fmt::print("bench_gpu_dfs: device {}, median of {} repeats (GTEPS of the CPU "
             "markers: wall time)\n",
             device, repeats);
  try {
    for (const std::string &g : graphs)
      bench_graph(g, device, repeats);
  } catch (const std::exception &e) {
    fmt::print(stderr, "bench_gpu_dfs: {}\n", e.what());
    return 1;
  }
  return 0;
}
