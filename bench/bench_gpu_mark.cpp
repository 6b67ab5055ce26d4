// GPU mark benchmarks: Maas et al. Table 1 on today's hardware, plus
// R-MAT graphs and lists at 100x the paper's sizes, every GPU variant side by side
// with the serial CPU marker on the same heap in the same run.
//
//   bench_gpu_mark [--device=auto|cuda|opencl[:N]] [--graphs=a,b,...] [--variants=a,b,...]
//                  [--variant=LABEL:COLLECTOR:OPTION,OPTION,...]... [--repeats=N]
//                  [--instances=M] [--each] [--no-interleave] [--quick]
//
// --variant adds a variant of one's own (a sweep of an option, say
// `--variant=wide1:gpu-bfs:queue=levels,wide=1`); with --variants=, name it there too.
//
// For each graph: the serial marker (median of N), then each variant: one warm-up
// collection (its full mirror upload is reported as `upload ms`), then N timed
// collections of the unchanged heap (median; a variant whose warm-up took over 2 s is
// reported from the warm-up alone). With --instances=M, each variant is measured so by
// M markers made one after another, the variants taking turns (variant A's first
// marker, B's first, A's second, ...); a row then gives the median of the M markers'
// figures and, last, the range of their kernel times: a kernel whose time moves from
// one collection to the next (rmat:24's on the H200: about 5 to 11.7 ms, whatever the
// build) shows it there; --each prints every timed collection's kernel time after its
// row, in the order they ran. --no-interleave leaves out the serial marker's runs
// between the timed collections (its first median is then the speed-up's reference):
// a large heap's serial mark takes seconds of device time per collection.
// Columns: kernel ms (device clock),
// total ms (the whole mark entry point: sync, roots, kernels, CPU tail, download),
// GTEPS (edges traversed / kernel time), floor (the bandwidth floor: bytes of CSR
// touched / measured device copy bandwidth, divided by kernel time — 100% would be
// bandwidth-bound), and speed-up of total time over the serial marker (timed again,
// interleaved with the variant's runs). Every
// variant's marks are compared with the serial marker's; a mismatch aborts.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench/median.hpp"
#include "gc/device/device_registry.hpp"
#include "gc/heap/heap.hpp"
#include "gc/heap/heap_materializer.hpp"
#include "gc/markers/marker_registry.hpp"
#include "gc/markers/serial_marker.hpp"
#include "gc/util/stopwatch.hpp"
#include "heapgraph/graph_spec.hpp"
#include "heapgraph/synthetic_heaps.hpp"

using namespace gcvm;

using gcvm::bench::median;

namespace {

struct Variant {
  std::string label;
  std::string collector;
  std::vector<std::string> options;
};

/// Maas Table 1's columns as gpu-bfs options (the paper's baseline is one compute
/// unit, level-synchronous, histogram offsets, no vector loads, no divergence handling,
/// no fallback), then the two schedules with every other option at its default.
std::vector<Variant> all_variants() {
  const std::vector<std::string> base = {"queue=levels", "sms=1", "vector=off", "wide=off", "fallback=off"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> o = base;
    for (auto& e : extra) {
      const std::string key = e.substr(0, e.find('='));
      std::erase_if(o, [&](const std::string& b) { return b.rfind(key + "=", 0) == 0; });
      o.push_back(e);
    }
    return o;
  };
  return {
      {"bfs GPU", "gpu-bfs", base},
      {"bfs +P", "gpu-bfs", with({"offsets=prefix"})},
      {"bfs +V", "gpu-bfs", with({"vector=on"})},
      {"bfs +F", "gpu-bfs", with({"fallback=20:5"})},
      {"bfs +D", "gpu-bfs", with({"wide=16"})},
      {"bfs +VD", "gpu-bfs", with({"vector=on", "wide=16"})},
      {"bfs all-SM", "gpu-bfs", with({"vector=on", "wide=16", "sms=all"})},
      {"bfs-levels", "gpu-bfs", {"queue=levels"}},
      {"bfs-async", "gpu-bfs", {"queue=async"}},
      {"bfs-async-direct", "gpu-bfs", {"queue=async", "claim=direct"}},
      {"bfs-auto", "gpu-bfs", {}},
  };
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    const auto part = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!part.empty()) parts.push_back(part);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return parts;
}


struct Args {
  std::string device = "auto";
  std::vector<std::string> graphs = {"single", "list:10000", "lists:256x10000", "lists:2560x3000", "wide:1000",
                                     "vp-list", "vp-array", "complete:5000:100", "list:2000000", "list:1000000",
                                     "lists:25600x3000", "rmat:22", "rmat:24"};
  std::vector<std::string> variants;
  std::vector<Variant> extra_variants;
  int repeats = 5;
  int instances = 1;
  bool each = false;        // every timed collection's kernel time
  bool interleave = true;   // the serial marker again before every timed collection
};

Args parse_args(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* name) { return a.substr(std::string(name).size()); };
    if (a.rfind("--device=", 0) == 0) {
      args.device = value("--device=");
    } else if (a.rfind("--graphs=", 0) == 0) {
      args.graphs = split(value("--graphs="));
    } else if (a.rfind("--variants=", 0) == 0) {
      args.variants = split(value("--variants="));
    } else if (a.rfind("--variant=", 0) == 0) {
      const std::string text = value("--variant=");
      const auto first = text.find(':');
      const auto second = first == std::string::npos ? first : text.find(':', first + 1);
      if (second == std::string::npos) {
        fmt::print(stderr, "bench_gpu_mark: --variant={} is not LABEL:COLLECTOR:OPTIONS\n", text);
        std::exit(2);
      }
      args.extra_variants.push_back(
          {text.substr(0, first), text.substr(first + 1, second - first - 1), split(text.substr(second + 1))});
    } else if (a.rfind("--repeats=", 0) == 0) {
      args.repeats = std::max(1, std::atoi(value("--repeats=").c_str()));
    } else if (a.rfind("--instances=", 0) == 0) {
      args.instances = std::max(1, std::atoi(value("--instances=").c_str()));
    } else if (a == "--each") {
      args.each = true;
    } else if (a == "--no-interleave") {
      args.interleave = false;
    } else if (a == "--quick") {
      args.graphs = {"single", "list:10000", "lists:256x10000", "wide:1000", "vp-list", "vp-array", "complete:2000:20",
                     "list:2000000", "rmat:20"};
      args.repeats = 3;
    } else {
      fmt::print(stderr, "bench_gpu_mark: unknown argument {}\n", a);
      std::exit(2);
    }
  }
  return args;
}

/// One marker's figures for one graph: medians of its timed collections.
struct Sample {
  double upload_ms = 0;
  double kernel_ms = 0;
  double total_ms = 0;
  double gpu_edges = 0;
  double speedup = 0;  // the serial marker's time over the variant's total
  double levels = 0;
  std::vector<double> kernels;  // every timed collection's kernel time
};

/// Makes a marker of variant `v`, runs its warm-up collection and the timed ones;
/// nothing when its marks differ from the serial marker's.
std::optional<Sample> measure(const Variant& v, const MarkRequest& request, const MarkBitmap& expected,
                              const MarkStats& reference, SerialMarker& serial, double serial_ms, const Args& args) {
  CollectorChoice choice{v.collector, {}, 0, args.device};
  for (const auto& o : v.options) choice.options.push_back(parse_gc_option(o));
  auto marker = make_marker(choice);
  MarkBitmap marks;
  const MarkStats warm = marker->mark(request, marks);
  if (!(marks == expected) || warm.edges_traversed != reference.edges_traversed) return std::nullopt;
  std::vector<double> kernel = {warm.detail("kernel_ms").value_or(0)}, total = {warm.mark_ms},
                      levels = {warm.detail("iterations").value_or(0)};
  // A variant that takes seconds (a list without fallback: one launch per level)
  // is reported from its first run only; its order of magnitude is the point.
  const int repeats = warm.mark_ms > 2000 ? 0 : args.repeats;
  if (repeats > 0) kernel.clear(), total.clear(), levels.clear();
  // The serial marker runs again before every timed GPU run, so the speed-up is a
  // ratio of interleaved samples that saw the same machine state.
  std::vector<double> serial_again;
  MarkBitmap serial_marks;
  for (int r = 0; r < repeats; ++r) {
    if (args.interleave) serial_again.push_back(serial.mark(request, serial_marks).mark_ms);
    const MarkStats s = marker->mark(request, marks);
    kernel.push_back(s.detail("kernel_ms").value_or(0));
    total.push_back(s.mark_ms);
    levels.push_back(s.detail("iterations").value_or(0));
  }
  const double cpu_ms = serial_again.empty() ? serial_ms : median(serial_again);
  Sample sample;
  sample.upload_ms = warm.detail("sync_ms").value_or(0);
  sample.kernel_ms = median(kernel);
  sample.total_ms = median(total);
  sample.gpu_edges = warm.detail("gpu_edges").value_or(0);
  sample.speedup = cpu_ms / sample.total_ms;
  sample.levels = median(levels);
  sample.kernels = kernel;
  return sample;
}

}  // namespace

int run(const Args& args) {
  auto probe = open_device(parse_device_selector(args.device));
  if (!probe) {
    fmt::print("bench_gpu_mark: no usable GPU (--device={}); nothing to measure\n", args.device);
    return 0;
  }
  const DeviceInfo info = probe->info();
  const double bandwidth = probe->copy_bandwidth(std::uint64_t{1} << 30);
  probe.reset();
  fmt::print("device: {}:{} {} ({}), {} compute units, {:.1f} GiB; copy bandwidth {:.0f} GB/s\n", info.backend,
             info.index, info.name, info.platform, info.compute_units, info.memory_bytes / 1073741824.0,
             bandwidth / 1e9);
  std::vector<Variant> variants = all_variants();
  variants.insert(variants.end(), args.extra_variants.begin(), args.extra_variants.end());
  if (!args.variants.empty())
    std::erase_if(variants, [&](const Variant& v) {
      return std::find(args.variants.begin(), args.variants.end(), v.label) == args.variants.end();
    });

  fmt::print("{:<18} {:<12} {:>10} {:>10} {:>10} {:>8} {:>7} {:>8} {:>8}\n", "graph", "marker", "upload ms",
             "kernel ms", "total ms", "GTEPS", "floor", "vs CPU", "levels");
  for (const std::string& spec_text : args.graphs) {
    const GraphSpec spec = parse_graph_spec(spec_text);
    Heap heap;
    HeapMaterializer builder(heap);
    build_synthetic_heap(spec, builder);
    const MarkRequest request{heap.graph(), builder.roots(), heap.blocks().high_water(), &heap.graph().changes()};

    SerialMarker serial;
    MarkBitmap expected;
    std::vector<double> cpu_ms;
    MarkStats reference;
    for (int r = 0; r < args.repeats; ++r) {
      reference = serial.mark(request, expected);
      cpu_ms.push_back(reference.mark_ms);
    }
    const double serial_ms = median(cpu_ms);
    // Bytes a mark must touch at least: begin + degree of every reachable object,
    // every traversed reference, and the queue write + read of every reachable object.
    const double floor_bytes = reference.marked_objects * (12.0 + 8.0) + reference.edges_traversed * 4.0;
    const double floor_ms = floor_bytes / bandwidth * 1000;
    fmt::print("{:<18} {:<12} {:>10} {:>10} {:>10.3f} {:>8.3f} {:>7} {:>8} {:>8}   ({} objects reachable, {} edges)\n",
               spec_text, "serial", "", "", serial_ms, reference.edges_traversed / (serial_ms * 1e6), "", "1.00x", "",
               reference.marked_objects, reference.edges_traversed);

    std::vector<std::vector<Sample>> samples(variants.size());
    for (int instance = 0; instance < args.instances; ++instance)
      for (std::size_t i = 0; i < variants.size(); ++i) {
        const std::optional<Sample> sample = measure(variants[i], request, expected, reference, serial, serial_ms, args);
        if (!sample) {
          fmt::print(stderr, "MISMATCH: {} on {} differs from the serial marker\n", variants[i].label, spec_text);
          return 1;
        }
        samples[i].push_back(*sample);
      }
    for (std::size_t i = 0; i < variants.size(); ++i) {
      auto of = [&](double Sample::*field) {
        std::vector<double> values;
        for (const Sample& sample : samples[i]) values.push_back(sample.*field);
        return values;
      };
      const std::vector<double> kernels = of(&Sample::kernel_ms);
      const double kernel_ms = median(kernels);
      const auto [fastest, slowest] = std::minmax_element(kernels.begin(), kernels.end());
      const std::string range = args.instances > 1 ? fmt::format("  {:.3f}-{:.3f}", *fastest, *slowest) : "";
      fmt::print("{:<18} {:<12} {:>10.3f} {:>10.3f} {:>10.3f} {:>8.3f} {:>6.1f}% {:>7.2f}x {:>8.0f}{}\n", spec_text,
                 variants[i].label, median(of(&Sample::upload_ms)), kernel_ms, median(of(&Sample::total_ms)),
                 median(of(&Sample::gpu_edges)) / (kernel_ms * 1e6), 100.0 * floor_ms / kernel_ms,
                 median(of(&Sample::speedup)), median(of(&Sample::levels)), range);
      if (args.each) {
        std::string times;
        for (const Sample& sample : samples[i])
          for (double ms : sample.kernels) times += fmt::format(" {:.2f}", ms);
        fmt::print("{:<18} {:<12} every collection's kernel ms:{}\n", spec_text, variants[i].label, times);
      }
    }
    std::fflush(stdout);
  }
  return 0;
}

int main(int argc, char** argv) {
  const Args args = parse_args(argc, argv);
  try {
    return run(args);
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_gpu_mark: {}\n", e.what());
    return 2;
  }
}
