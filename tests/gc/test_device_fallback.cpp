// A device that fails in the middle of a collection (gc/plans/device_fallback.hpp): a
// concurrent cycle is abandoned and the heap collected stop-the-world on the CPU; a
// stop-the-world collection with device-error=cpu marks again on the CPU; with
// device-error=fail the error propagates. The device is a real one (PoCL in CI) behind
// a FaultyBackend (fault_injection.hpp) that fails one chosen call of a cycle: the
// snapshot's upload (sync, roots), a kernel launch, a state read, the marks' download.
// Every collection runs with verify (its marks against the serial marker's, and no
// snapshot mark freeing what is reachable now); the tests also check, after each one
// and its lazy sweep, that everything reachable from the roots is still allocated.
// Also here: the refresher's figures in a concurrent cycle's snapshot details.
#include <doctest/doctest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "device_fixtures.hpp"
#include "fault_injection.hpp"
#include "gc/markers/gpu_bfs_marker.hpp"
#include "gc/markers/gpu_dfs_marker.hpp"
#include "gc/markers/serial_marker.hpp"
#include "gc/plans/concurrent_collector.hpp"
#include "gc/plans/device_fallback.hpp"
#include "heap_mutator.hpp"

namespace gcvm {

namespace {

constexpr unsigned kCpuThreads = 2;

/// `marker` (gpu-bfs or gpu-dfs with `options`) on `device` behind a FaultyBackend
/// that fails at `fault`, once armed. A fallback releases the marker and its backend:
/// `backend` is valid only until then.
struct FaultyMarker {
  std::unique_ptr<Marker> marker;
  test::FaultyBackend* backend = nullptr;
};

FaultyMarker faulty_marker(const std::string& name, const std::string& device, const GcOptions& options,
                           test::Fault fault) {
  auto backend = std::make_unique<test::FaultyBackend>(open_device(parse_device_selector(device)), std::move(fault));
  FaultyMarker out;
  out.backend = backend.get();
  if (name == "gpu-bfs")
    out.marker = std::make_unique<GpuBfsMarker>(GpuBfsMarkerOptions::parse(options, device), std::move(backend));
  else
    out.marker = std::make_unique<GpuDfsMarker>(GpuDfsMarkerOptions::parse(options, device), std::move(backend));
  return out;
}

MarkBitmap reachable(const Heap& heap, const std::vector<ObjectId>& roots) {
  MarkBitmap marks;
  SerialMarker().mark({heap.graph(), roots, heap.blocks().high_water()}, marks);
  return marks;
}

/// Nothing reachable from `roots` is free, and the mutator forgets what is not (its
/// registers are no roots: what the roots do not reach, the next collection may free).
void check_nothing_reachable_freed(Heap& heap, test::RandomMutator& mutator) {
  const MarkBitmap now = reachable(heap, mutator.roots);
  for (std::uint32_t b = 0; b < heap.blocks().high_water(); ++b)
    REQUIRE((now.words()[b] & ~heap.blocks().alloc_word(b)) == 0);
  std::erase_if(mutator.live, [&](ObjectId o) { return !now.test(o); });
  REQUIRE(heap.blocks().check().empty());
}

struct FaultCase {
  std::string marker;
  GcOptions options;
  std::string method;
};

std::vector<FaultCase> fault_cases(const std::string& device) {
  // Levels a launch at a time (the launches' own faults), and, where the device has a
  // grid-wide barrier (CUDA), every level in one launch, which also takes the pause's
  // setup (the roots, the patch held back) into itself.
  const GcOptions levels{{"queue", "levels"}, {"level-barrier", "launch"}, {"refresh", "off"}};
  const GcOptions together{{"queue", "levels"}, {"level-barrier", "grid"}, {"refresh", "off"}};
  const GcOptions async{{"queue", "async"}, {"refresh", "off"}};
  const GcOptions dfs{{"refresh", "off"}};
  std::vector<FaultCase> cases;
  // The initial pause: the mirror's sync (patch, direct copies, the wait) and the roots.
  for (const char* method : {"apply_patch", "upload_ranges", "finish_sync", "begin_mark"})
    cases.push_back({"gpu-bfs", levels, method});
  // The concurrent mark: launches, state reads, the timer, the marks' download.
  for (const char* method : {"launch_bfs_seed", "launch_bfs_level", "read_state", "timer_stop_ms", "read_marks"})
    cases.push_back({"gpu-bfs", levels, method});
  if (device.starts_with("cuda"))
    for (const char* method : {"apply_patch", "launch_bfs_levels_together", "read_state", "read_marks"})
      cases.push_back({"gpu-bfs", together, method});
  cases.push_back({"gpu-bfs", async, "launch_bfs_async"});
  for (const char* method : {"begin_mark", "launch_dfs_seed", "launch_dfs_run", "read_dfs_state", "read_marks"})
    cases.push_back({"gpu-dfs", dfs, method});
  return cases;
}

}  // namespace

TEST_CASE("a device error in a concurrent cycle: the cycle is abandoned, the heap collected stop-the-world on the "
          "CPU, and later cycles mark on the CPU; nothing reachable is freed") {
  for (const std::string& device : test::test_devices()) {
    for (const FaultCase& fault : fault_cases(device)) {
      CAPTURE(device);
      CAPTURE(fault.marker);
      CAPTURE(fault.method);
      Heap heap(HeapConfig{.limit_bytes = 64u << 20});
      test::MutationMix mix;
      mix.alloc_in_10 = 5;
      mix.root_one_in = 16;
      test::RandomMutator mutator(heap, 91, 64, mix);
      FaultyMarker faulty = faulty_marker(fault.marker, device, fault.options, {fault.method, 1});
      ConcurrentCollector collector(heap, std::move(faulty.marker), /*verify=*/true,
                                    DeviceFallback{.threads = kCpuThreads});
      std::vector<CollectionStats> cycles;
      for (int cycle = 0; cycle < 5; ++cycle) {
        CAPTURE(cycle);
        mutator.run(2500);
        check_nothing_reachable_freed(heap, mutator);  // the snapshot's roots reach all the mutator holds
        if (cycle == 1) {  // the first cycle puts the graph on the device
          faulty.backend->arm();
          // A run of stores long enough to go by DMA, so that the snapshot's sync makes
          // direct copies (which may fail) as well as a patch; the array is garbage.
          const ObjectId burst = heap.allocate_ref_array(32768);
          for (std::uint64_t i = 0; i < 32768; ++i) heap.store_element(burst, i, burst);
        }
        std::optional<CollectionStats> stats = collector.start(mutator.roots, "test");
        if (!stats) {
          for (int round = 0; round < 3; ++round) mutator.run(200);
          stats = collector.finish(mutator.roots);
        }
        heap.finish_lazy_sweep();
        check_nothing_reachable_freed(heap, mutator);
        cycles.push_back(std::move(*stats));
      }
      int fallbacks = 0;  // the injected error's text in it shows that the fault fired
      bool after = false;
      for (const CollectionStats& s : cycles) {
        if (s.kind == CollectionKind::Fallback) {
          ++fallbacks;
          after = true;
          CHECK(s.device_error.find("injected fault: call 1 of " + fault.method) != std::string::npos);
          CHECK(s.device_error.find(fault.marker) != std::string::npos);
          CHECK(s.collector == "parallel");
          CHECK(s.pauses.front().kind == PauseKind::Initial);
          CHECK(s.pauses.back().kind == PauseKind::Fallback);
          CHECK(s.sweep.freed_objects > 0);
          continue;
        }
        CHECK(s.kind == CollectionKind::Concurrent);
        CHECK_FALSE(s.device_fallback());
        CHECK(s.collector == (after ? std::string("parallel") : fault.marker));
      }
      CHECK(fallbacks == 1);
      CHECK(collector.marker().name() == "parallel");
    }
  }
}

TEST_CASE("device-error=fail: a device error in a concurrent cycle propagates") {
  for (const std::string& device : test::test_devices()) {
    for (const std::string method : {"apply_patch", "read_marks"}) {
      CAPTURE(device);
      CAPTURE(method);
      Heap heap(HeapConfig{.limit_bytes = 16u << 20});
      test::RandomMutator mutator(heap, 5, 16);
      FaultyMarker faulty = faulty_marker("gpu-bfs", device, {{"refresh", "off"}}, {method, 1});
      ConcurrentCollector collector(heap, std::move(faulty.marker), /*verify=*/true,
                                    DeviceFallback{.policy = DeviceFallback::Policy::Fail});
      const auto cycle = [&] {
        mutator.run(2000);
        if (!collector.start(mutator.roots, "test")) collector.finish(mutator.roots);
        heap.finish_lazy_sweep();
        check_nothing_reachable_freed(heap, mutator);
      };
      cycle();
      faulty.backend->arm();
      CHECK_THROWS_AS(cycle(), DeviceError);
      REQUIRE(faulty.backend->fired());
      CHECK(collector.marker().name() == "gpu-bfs");
    }
  }
}

TEST_CASE("stop-the-world: device-error=cpu marks the collection again on the CPU; the default fails") {
  // With the refresher on, the mark's device side runs on its thread
  // (MirrorRefresher::stop_and_run): the error comes back to the pause all the same.
  for (const std::string& device : test::test_devices()) {
    for (const auto& [fall_back, refresh] : {std::pair{true, "off"}, std::pair{false, "off"}, std::pair{true, "on"},
                                             std::pair{false, "on"}}) {
      CAPTURE(device);
      CAPTURE(fall_back);
      CAPTURE(refresh);
      Heap heap(HeapConfig{.limit_bytes = 16u << 20});
      test::RandomMutator mutator(heap, 17, 16);
      FaultyMarker faulty = faulty_marker("gpu-bfs", device, {{"refresh", refresh}}, {"read_marks", 1});
      DeviceFallback fallback{.threads = kCpuThreads};
      if (fall_back) fallback.policy = DeviceFallback::Policy::Cpu;
      Collector collector(heap, std::move(faulty.marker), /*verify=*/true, fallback);
      mutator.run(2000);
      collector.collect(mutator.roots, "first");
      check_nothing_reachable_freed(heap, mutator);
      mutator.run(2000);
      faulty.backend->arm();
      if (!fall_back) {
        CHECK_THROWS_AS(collector.collect(mutator.roots, "failing"), DeviceError);
        continue;
      }
      const CollectionStats failed = collector.collect(mutator.roots, "failing");
      check_nothing_reachable_freed(heap, mutator);
      CHECK(failed.device_error == "the mark of gpu-bfs: injected fault: call 1 of read_marks");
      CHECK(failed.kind == CollectionKind::Full);
      CHECK(failed.collector == "parallel");
      mutator.run(2000);
      const CollectionStats next = collector.collect(mutator.roots, "after");
      check_nothing_reachable_freed(heap, mutator);
      CHECK_FALSE(next.device_fallback());
      CHECK(next.collector == "parallel");
    }
  }
}

TEST_CASE("device-error is the plan's option: taken out of the marker's options, GPU markers only") {
  CollectorChoice gpu{.name = "gpu-bfs", .options = {{"queue", "levels"}, {"device-error", "cpu"}}, .threads = 3};
  const DeviceFallback taken = DeviceFallback::take_from(gpu);
  CHECK(taken.policy == DeviceFallback::Policy::Cpu);
  CHECK(taken.threads == 3);
  REQUIRE(gpu.options.size() == 1);
  CHECK(gpu.options[0].key == "queue");
  CHECK(taken.enabled(false));
  CHECK(DeviceFallback{}.enabled(true));
  CHECK_FALSE(DeviceFallback{}.enabled(false));
  CHECK_FALSE(DeviceFallback{.policy = DeviceFallback::Policy::Fail}.enabled(true));

  CollectorChoice bad_value{.name = "gpu-dfs", .options = {{"device-error", "retry"}}};
  CHECK_THROWS_AS(DeviceFallback::take_from(bad_value), ConfigError);
  CollectorChoice cpu{.name = "parallel", .options = {{"device-error", "cpu"}}};
  CHECK_THROWS_AS(DeviceFallback::take_from(cpu), ConfigError);
}

TEST_CASE("a concurrent cycle's snapshot reports what the refresher sent since the last mark ended") {
  for (const std::string& device : test::test_devices()) {
    CAPTURE(device);
    Heap heap(HeapConfig{.limit_bytes = 16u << 20});
    test::RandomMutator mutator(heap, 23, 32);
    auto marker = std::make_unique<GpuBfsMarker>(GpuBfsMarkerOptions::parse({}, device));
    ConcurrentCollector collector(heap, std::move(marker), /*verify=*/true);
    mutator.run(3000);
    REQUIRE_FALSE(collector.start(mutator.roots, "first"));
    while (!collector.mark_done()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const CollectionStats first = collector.finish(mutator.roots);
    heap.finish_lazy_sweep();
    check_nothing_reachable_freed(heap, mutator);
    // The mark is done, so the refresher runs: stores into entries the device holds
    // are sent while the mutator goes on.
    std::uint64_t sent = 0;
    CollectionStats second;
    for (int attempt = 0; attempt < 20 && sent == 0; ++attempt) {
      mutator.run(1000);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      REQUIRE_FALSE(collector.start(mutator.roots, "second"));
      second = collector.finish(mutator.roots);
      heap.finish_lazy_sweep();
      check_nothing_reachable_freed(heap, mutator);
      const auto& details = second.snapshot_details;
      const auto bytes = std::find_if(details.begin(), details.end(),
                                      [](const auto& d) { return d.first == "sync_refresh_bytes"; });
      REQUIRE(bytes != details.end());
      sent = static_cast<std::uint64_t>(bytes->second);
    }
    CHECK(sent > 0);
    const auto has = [&](const char* key) {
      return std::any_of(second.snapshot_details.begin(), second.snapshot_details.end(),
                         [&](const auto& d) { return d.first == key; });
    };
    CHECK(has("sync_refresh_passes"));
    CHECK(has("sync_refresh_changed_bytes"));
    CHECK(second.kind == CollectionKind::Concurrent);
    CHECK(first.kind == CollectionKind::Concurrent);
  }
}

}  // namespace gcvm
