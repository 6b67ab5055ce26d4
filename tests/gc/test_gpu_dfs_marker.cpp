// gpu-dfs against the serial marker (DESIGN.md invariant 4) on every device this
// build can use: every OpenCL device (PoCL in CI) and every CUDA device. Where a
// backend has no device the CUDA and OpenCL cases say so and pass without checking.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "gc/plans/collector.hpp"
#include "gc/device/device_registry.hpp"
#include "gc/markers/gpu_dfs_marker.hpp"
#include "gc/markers/serial_marker.hpp"
#include "heap_fixtures.hpp"

using namespace gcvm;

namespace {

/// "--device" strings of the usable devices of one backend.
std::vector<std::string> devices_of(const std::string& backend) {
  std::vector<std::string> found;
  const auto built = built_backends();
  if (std::find(built.begin(), built.end(), backend) == built.end()) {
    MESSAGE("gpu-dfs on " << backend << ": not built into this binary; skipped");
    return found;
  }
  for (const DeviceInfo& d : usable_devices())
    if (d.backend == backend) found.push_back(backend + ":" + std::to_string(d.index));
  if (found.empty()) MESSAGE("gpu-dfs on " << backend << ": no usable device on this machine; skipped");
  return found;
}

std::vector<std::string> all_devices() {
  auto devices = devices_of("opencl");
  for (auto& d : devices_of("cuda")) devices.push_back(d);
  return devices;
}

GcOptions options(std::initializer_list<std::pair<const char*, std::string>> pairs) {
  GcOptions o;
  for (const auto& [k, v] : pairs) o.push_back({k, v});
  return o;
}

/// Every combination of the ablation switches, with the hybrid stack off, tiny (so
/// that it spills and refills all the time) and at its largest.
std::vector<GcOptions> ablation_grid() {
  std::vector<GcOptions> grid;
  for (const char* atomics : {"plain", "checked"})
    for (const char* local : {"off", "2", "32"})
      for (const char* balance : {"off", "on"})
        for (const char* vector : {"off", "on"})
          grid.push_back(options({{"atomics", atomics}, {"local-stack", local}, {"balance", balance}, {"vector", vector}}));
  return grid;
}

/// Grids and pools that stress the balancing paths: more groups than run at once,
/// one slot (most donations fail), tiny wide threshold (every object is wide); short
/// launches with the CPU fallback off, on by default, and on at every check (a
/// threshold above the thread count: the gather then walks many stacks).
std::vector<GcOptions> stress_grid() {
  return {options({{"groups", "1"}, {"steps", "1"}}),
          options({{"groups", "5"}, {"pool", "1"}, {"rounds", "1"}, {"fallback", "off"}}),
          options({{"groups", "3"}, {"wide", "1"}, {"local-stack", "1"}, {"chunk", "3"}}),
          options({{"groups", "2"}, {"launches-per-check", "1"}, {"pool", "3"}, {"wide", "3"}, {"rounds", "2"},
                   {"fallback", "100000:0"}}),
          options({{"groups", "4"}, {"chunk", "off"}, {"rounds", "3"}, {"vector", "off"}})};
}

std::string describe(const GcOptions& o) {
  std::string text;
  for (const auto& opt : o) text += opt.key + "=" + opt.value + " ";
  return text;
}

/// Marks with `marker` and with the serial marker; requires identical bitmaps and counts.
void require_same_as_serial(Marker& marker, const RefGraph& graph, std::span<const ObjectId> roots,
                            std::uint32_t blocks) {
  SerialMarker serial;
  MarkBitmap expected;
  MarkBitmap got;
  const MarkStats want = serial.mark({graph, roots, blocks}, expected);
  const MarkStats have = marker.mark({graph, roots, blocks}, got);
  REQUIRE(got == expected);
  REQUIRE(have.marked_objects == want.marked_objects);
  REQUIRE(have.edges_traversed == want.edges_traversed);
}

double detail(const MarkStats& stats, const std::string& key) {
  for (const auto& [k, v] : stats.details)
    if (k == key) return v;
  FAIL("no statistic " << key);
  return 0;
}

/// A heap of reference arrays with nulls, self-loops, duplicates and a few long
/// chains; roots include nulls and duplicates.
struct OddHeap {
  Heap heap;
  std::vector<ObjectId> objects;
  std::vector<ObjectId> roots;
};

void build_odd_heap(OddHeap& h, std::uint64_t seed, std::uint32_t count) {
  std::mt19937_64 rng(seed);
  for (std::uint32_t i = 0; i < count; ++i) h.objects.push_back(h.heap.allocate_ref_array(rng() % 6));
  for (std::uint32_t i = 0; i < count; ++i) {
    const ObjectId o = h.objects[i];
    const std::uint64_t length = h.heap.graph().degree_data()[o];
    for (std::uint64_t k = 0; k < length; ++k) {
      const auto pick = rng() % 10;
      if (pick == 0) continue;  // null
      h.heap.store_element(o, k, pick == 1 ? o : h.objects[rng() % count]);
    }
  }
  // Two long chains through fresh one-element arrays.
  for (int chain = 0; chain < 2; ++chain) {
    ObjectId head = h.heap.allocate_ref_array(1);
    h.roots.push_back(head);
    for (int i = 0; i < 3000; ++i) {
      const ObjectId next = h.heap.allocate_ref_array(1);
      h.heap.store_element(head, 0, next);
      head = next;
    }
    h.heap.store_element(head, 0, h.objects[rng() % count]);
  }
  for (std::uint32_t i = 0; i < count / 50; ++i) h.roots.push_back(h.objects[rng() % count]);
  h.roots.push_back(kNullRef);
  h.roots.push_back(h.roots.front());
}

}  // namespace

TEST_CASE("gpu-dfs option parsing rejects what it does not know") {
  CHECK_THROWS_AS(GpuDfsMarkerOptions::parse(options({{"atomics", "fast"}}), "auto"), ConfigError);
  CHECK_THROWS_AS(GpuDfsMarkerOptions::parse(options({{"local-stack", "33"}}), "auto"), ConfigError);
  CHECK_THROWS_AS(GpuDfsMarkerOptions::parse(options({{"local-stack", "0"}}), "auto"), ConfigError);
  CHECK_THROWS_AS(GpuDfsMarkerOptions::parse(options({{"balance", "yes"}}), "auto"), ConfigError);
  CHECK_THROWS_AS(GpuDfsMarkerOptions::parse(options({{"refresh", "5"}}), "auto"), ConfigError);
  CHECK(GpuDfsMarkerOptions::parse(options({{"refresh", "100"}}), "auto").refresh == std::chrono::microseconds{100});
  CHECK(GpuDfsMarkerOptions::parse(options({{"refresh-wait", "sleep"}}), "auto").refresh_wait == RefreshWait::Sleep);
  CHECK_THROWS_AS(GpuDfsMarkerOptions::parse(options({{"refresh-wait", "often"}}), "auto"), ConfigError);
  CHECK_THROWS_AS(GpuDfsMarkerOptions::parse(options({{"pool", "0"}}), "auto"), ConfigError);
  CHECK_THROWS_AS(GpuDfsMarkerOptions::parse(options({{"rounds", "0"}}), "auto"), ConfigError);
  CHECK_THROWS_AS(GpuDfsMarkerOptions::parse(options({{"steps", "0"}}), "auto"), ConfigError);
  CHECK_THROWS_AS(GpuDfsMarkerOptions::parse(options({{"chunk", "-1"}}), "auto"), ConfigError);
  CHECK_THROWS_AS(GpuDfsMarkerOptions::parse(options({{"launches-per-check", "65"}}), "auto"), ConfigError);
  CHECK_THROWS_AS(GpuDfsMarkerOptions::parse(options({{"offsets", "prefix"}}), "auto"), ConfigError);
  CHECK_THROWS_AS(GpuDfsMarkerOptions::parse(options({{"fallback", "20"}}), "auto"), ConfigError);
  CHECK_THROWS_AS(GpuDfsMarkerOptions::parse(options({{"fallback", "0:1"}}), "auto"), ConfigError);
  CHECK_THROWS_AS(GpuDfsMarkerOptions::parse(options({{"fallback", "20:"}}), "auto"), ConfigError);
  CHECK_THROWS_AS(GpuDfsMarkerOptions::parse(options({{"fallback", "on"}}), "auto"), ConfigError);
  CHECK(GpuDfsMarkerOptions::parse(options({{"fallback", "off"}}), "auto").fallback_threshold == 0);
  const auto fb = GpuDfsMarkerOptions::parse(options({{"fallback", "7:3"}}), "auto");
  CHECK(fb.fallback_threshold == 7);
  CHECK(fb.fallback_min_launches == 3);
  CHECK_THROWS_AS(GpuDfsMarkerOptions::parse({}, "vulkan"), ConfigError);
  const auto o = GpuDfsMarkerOptions::parse(
      options({{"atomics", "plain"}, {"local-stack", "off"}, {"balance", "off"}, {"vector", "off"}, {"groups", "7"}}),
      "opencl:0");
  CHECK(!o.checked_atomics);
  CHECK(o.local_stack == 0);
  CHECK(!o.balance);
  CHECK(!o.vector_loads);
  CHECK(o.groups == 7);
  CHECK(o.device.backend == "opencl");
}

TEST_CASE("gpu-dfs matches the serial marker on every synthetic spec, for every option combination") {
  const char* specs[] = {"single",   "list:3000",         "lists:64x100", "wide:2000", "vp-list",
                         "vp-array", "complete:300:10",   "rmat:12",      "random:4000:3", "tree:10"};
  std::vector<test::BuiltHeap> heaps;
  for (const char* spec : specs) heaps.push_back(test::build(spec));
  auto grid = ablation_grid();
  for (auto& extra : stress_grid()) grid.push_back(extra);
  for (const std::string& device : all_devices()) {
    for (const GcOptions& opts : grid) {
      CAPTURE(device);
      CAPTURE(describe(opts));
      GpuDfsMarker marker(GpuDfsMarkerOptions::parse(opts, device));
      for (std::size_t i = 0; i < heaps.size(); ++i) {
        CAPTURE(specs[i]);
        const auto& h = heaps[i];
        require_same_as_serial(marker, h.heap->graph(), h.builder->roots(), h.heap->blocks().high_water());
      }
    }
  }
}

TEST_CASE("gpu-dfs on random graphs with nulls, self-loops, long chains and a 100,000-reference object") {
  for (const std::string& device : all_devices()) {
    CAPTURE(device);
    for (std::uint64_t seed : {1ull, 2ull}) {
      CAPTURE(seed);
      OddHeap h;
      build_odd_heap(h, seed, 6000);
      // One huge array reaching a slice of everything, rooted.
      const ObjectId huge = h.heap.allocate_ref_array(100000);
      for (std::uint64_t k = 0; k < 100000; k += 1 + k % 3) h.heap.store_element(huge, k, h.objects[k % h.objects.size()]);
      h.roots.push_back(huge);
      for (const GcOptions& opts : {GcOptions{}, options({{"balance", "off"}, {"local-stack", "off"}}),
                                    options({{"groups", "3"}, {"wide", "8"}, {"pool", "2"}, {"chunk", "off"}}),
                                    options({{"groups", "5"}, {"chunk", "50"}, {"rounds", "2"}})}) {
        CAPTURE(describe(opts));
        GpuDfsMarker marker(GpuDfsMarkerOptions::parse(opts, device));
        require_same_as_serial(marker, h.heap.graph(), h.roots, h.heap.blocks().high_water());
        const std::vector<ObjectId> no_roots;
        require_same_as_serial(marker, h.heap.graph(), no_roots, h.heap.blocks().high_water());
        const std::vector<ObjectId> null_roots = {kNullRef, kNullRef};
        require_same_as_serial(marker, h.heap.graph(), null_roots, h.heap.blocks().high_water());
      }
    }
  }
}

TEST_CASE("gpu-dfs reports its statistics; stack storage is one word per object whatever the grid") {
  auto built = test::build("rmat:12");
  const auto& roots = built.builder->roots();
  const std::uint32_t blocks = built.heap->blocks().high_water();
  for (const std::string& device : all_devices()) {
    CAPTURE(device);
    double stack_bytes[2] = {0, 0};
    int i = 0;
    for (const char* groups : {"1", "6"}) {
      GpuDfsMarker marker(
          GpuDfsMarkerOptions::parse(options({{"groups", groups}, {"pool", "16"}, {"fallback", "off"}}), device));
      MarkBitmap marks;
      const MarkStats stats = marker.mark({built.heap->graph(), roots, blocks}, marks);
      CHECK(detail(stats, "kernel_ms") >= 0);
      CHECK(detail(stats, "gpu_edges") == static_cast<double>(stats.edges_traversed));
      CHECK(detail(stats, "sync_full") == 1);
      CHECK(detail(stats, "device_bytes") >= detail(stats, "stack_peak_bytes"));
      CHECK(detail(stats, "launches") >= 1);
      CHECK(detail(stats, "fallback_launch") == -1);
      stack_bytes[i++] = detail(stats, "stack_peak_bytes");
    }
    // The ablation switches show in the statistics.
    GpuDfsMarker plain(GpuDfsMarkerOptions::parse(options({{"balance", "off"}, {"local-stack", "off"}}), device));
    MarkBitmap marks;
    const MarkStats off = plain.mark({built.heap->graph(), roots, blocks}, marks);
    CHECK(detail(off, "donations") == 0);
    CHECK(detail(off, "steals") == 0);
    CHECK(detail(off, "wide_objects") == 0);
    CHECK(detail(off, "chunks") == 0);
    CHECK(detail(off, "local_stack_bytes") == 0);
    GpuDfsMarker chunked(GpuDfsMarkerOptions::parse(options({{"wide", "4"}, {"chunk", "8"}}), device));
    const MarkStats on = chunked.mark({built.heap->graph(), roots, blocks}, marks);
    CHECK(detail(on, "wide_objects") + detail(on, "chunks") > 0);
    CHECK(detail(on, "local_stack_bytes") > 0);
    // V words of storage plus one word per thread for the saved tops and the pool.
    const double vertices = static_cast<double>(built.heap->graph().vertex_count());
    CHECK(stack_bytes[0] >= vertices * 4);
    CHECK(stack_bytes[1] - stack_bytes[0] <= 5 * 256 * 4 + 64);
  }
}

TEST_CASE("gpu-dfs through the Collector stays exact while the heap mutates between collections") {
  for (const std::string& device : all_devices()) {
    for (const GcOptions& opts :
         {GcOptions{}, options({{"groups", "3"}, {"local-stack", "2"}, {"wide", "4"}, {"chunk", "2"}, {"rounds", "4"}}),
          options({{"groups", "2"}, {"rounds", "2"}, {"fallback", "off"}})}) {
      CAPTURE(device);
      CAPTURE(describe(opts));
      OddHeap h;
      build_odd_heap(h, 7, 5000);
      Collector collector(h.heap, std::make_unique<GpuDfsMarker>(GpuDfsMarkerOptions::parse(opts, device)), true);
      std::mt19937_64 rng(11);
      for (int round = 0; round < 5; ++round) {
        CAPTURE(round);
        // verify=true: the collector compares graph, marks and counts with the serial marker.
        const CollectionStats stats = collector.collect(h.roots, "test");
        CHECK(stats.mark.marked_objects == collector.last_marks().count());
        std::vector<ObjectId> live;
        for (ObjectId o : h.objects)
          if (h.heap.is_live(o)) live.push_back(o);
        REQUIRE(!live.empty());
        h.objects = live;
        // Rewire some references, allocate new objects hanging off live ones, drop a root.
        for (int k = 0; k < 300; ++k) {
          const ObjectId o = live[rng() % live.size()];
          const std::uint64_t length = h.heap.graph().degree_data()[o];
          if (length != 0) h.heap.store_element(o, rng() % length, rng() % 4 == 0 ? kNullRef : live[rng() % live.size()]);
        }
        for (int k = 0; k < 200; ++k) {
          const ObjectId fresh = h.heap.allocate_ref_array(1 + rng() % 3);
          h.heap.store_element(fresh, 0, live[rng() % live.size()]);
          const ObjectId holder = live[rng() % live.size()];
          if (h.heap.graph().degree_data()[holder] != 0) h.heap.store_element(holder, 0, fresh);
          h.objects.push_back(fresh);
        }
        std::vector<ObjectId> kept_roots;
        for (ObjectId r : h.roots)
          if (r == kNullRef || h.heap.is_live(r)) kept_roots.push_back(r);
        if (kept_roots.size() > 2) kept_roots.erase(kept_roots.begin() + 1);
        kept_roots.push_back(live[rng() % live.size()]);
        h.roots = kept_roots;
      }
    }
  }
}

TEST_CASE("gpu-dfs hands narrow work to the CPU; marks and counts stay exact with the fallback on and off") {
  const char* specs[] = {"list:20000", "lists:4x5000", "vp-list", "random:3000:3"};
  std::vector<test::BuiltHeap> heaps;
  for (const char* spec : specs) heaps.push_back(test::build(spec));
  for (const std::string& device : all_devices()) {
    CAPTURE(device);
    // Short launches (4 rounds of 32 pops), so that a chain outlasts the first launch.
    for (const char* fallback : {"off", "20:1", "4:3"}) {
      CAPTURE(fallback);
      GpuDfsMarker marker(GpuDfsMarkerOptions::parse(options({{"rounds", "4"}, {"fallback", fallback}}), device));
      for (std::size_t i = 0; i < heaps.size(); ++i) {
        CAPTURE(specs[i]);
        const auto& h = heaps[i];
        require_same_as_serial(marker, h.heap->graph(), h.builder->roots(), h.heap->blocks().high_water());
      }
      MarkBitmap marks;
      const auto& list = heaps[0];
      const MarkStats stats = marker.mark({list.heap->graph(), list.builder->roots(), list.heap->blocks().high_water()}, marks);
      const double launch = detail(stats, "fallback_launch");
      if (std::string(fallback) == "off") {
        CHECK(launch == -1);
        CHECK(detail(stats, "gpu_edges") == static_cast<double>(stats.edges_traversed));
      } else {
        // The list's one pending stack goes to the CPU after the minimum launches.
        CHECK(launch == (std::string(fallback) == "4:3" ? 2 : 0));
        CHECK(detail(stats, "fallback_objects") >= 1);
        CHECK(detail(stats, "gpu_edges") < static_cast<double>(stats.edges_traversed));
      }
    }
  }
}

TEST_CASE("gpu-dfs tells the plan once per mark that the device is busy, with and without the fallback") {
  auto list = test::build("list:20000");
  for (const std::string& device : all_devices()) {
    CAPTURE(device);
    for (const char* fallback : {"off", "20:1"}) {
      CAPTURE(fallback);
      GpuDfsMarker marker(GpuDfsMarkerOptions::parse(options({{"rounds", "4"}, {"fallback", fallback}}), device));
      int told = 0;
      MarkRequest request{list.heap->graph(), list.builder->roots(), list.heap->blocks().high_water()};
      request.on_device_busy = [&] { ++told; };
      for (int collection = 1; collection <= 2; ++collection) {
        require_same_as_serial(marker, request.graph, request.roots, request.block_count);
        MarkBitmap marks;
        marker.mark(request, marks);
        CHECK(told == collection);
      }
    }
  }
}

TEST_CASE("gpu-dfs keeps launching while the narrow stacks hold more than the gather can take") {
  // One thread (balance=off) pushes all 100,000 targets of one array at once: its
  // stack overflows the gather (GCVM_DFS_GATHER_CAPACITY entries) until enough
  // launches of 64 rounds have popped it below that.
  static_assert(GCVM_DFS_GATHER_CAPACITY < 100000, "the stack must start deeper than the gather's capacity");
  auto built = test::build("wide:100000");
  for (const std::string& device : all_devices()) {
    CAPTURE(device);
    GpuDfsMarker marker(
        GpuDfsMarkerOptions::parse(options({{"balance", "off"}, {"groups", "1"}, {"rounds", "64"}}), device));
    require_same_as_serial(marker, built.heap->graph(), built.builder->roots(), built.heap->blocks().high_water());
    MarkBitmap marks;
    const MarkStats stats =
        marker.mark({built.heap->graph(), built.builder->roots(), built.heap->blocks().high_water()}, marks);
    CHECK(detail(stats, "fallback_gathers") >= 2);
    CHECK(detail(stats, "fallback_launch") > 0);
    CHECK(detail(stats, "fallback_objects") <= GCVM_DFS_GATHER_CAPACITY);
  }
}

TEST_CASE("gpu-dfs: a named device that does not exist is an error, auto without a GPU falls back to the CPU") {
  CHECK_THROWS_AS(GpuDfsMarker(GpuDfsMarkerOptions::parse({}, "opencl:99")), DeviceError);
  bool has_gpu = false;
  for (const DeviceInfo& d : usable_devices()) has_gpu = has_gpu || d.type != "cpu";
  if (has_gpu) return;
  GpuDfsMarker marker(GpuDfsMarkerOptions::parse({}, "auto"));
  CHECK(marker.device() == nullptr);
  auto built = test::build("rmat:10");
  require_same_as_serial(marker, built.heap->graph(), built.builder->roots(), built.heap->blocks().high_water());
}

TEST_CASE("gpu-dfs: a fallback that leaves many chains finishes them on every hardware thread, exactly") {
  auto built = test::build("lists:256x300");
  for (const std::string& device : all_devices()) {
    CAPTURE(device);
    GpuDfsMarker marker(GpuDfsMarkerOptions::parse(options({{"rounds", "4"}, {"fallback", "1000:1"}}), device));
    require_same_as_serial(marker, built.heap->graph(), built.builder->roots(), built.heap->blocks().high_water());
    MarkBitmap marks;
    const MarkStats stats =
        marker.mark({built.heap->graph(), built.builder->roots(), built.heap->blocks().high_water()}, marks);
    CHECK(detail(stats, "fallback_objects") >= static_cast<double>(CpuFinish::kParallelObjects));
    CHECK(detail(stats, "fallback_threads") >= 1.0);
  }
}
