// --gc-opt device-start=overlap (gc/plans/device_start.hpp): the device marker is built
// on a thread of its own while the program runs; collections before it is open mark on
// the CPU, a concurrent cycle then marks in its initial pause, and the first pause that
// finds it open switches to it for good. The "device" of the first cases is a test
// marker whose construction waits for the test to open a gate, so that every state is
// reached on purpose; the last case runs the real GPU markers (PoCL in CI) under
// random mutation. Every collection runs with verify (its marks against the serial
// marker's).
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "device_fixtures.hpp"
#include "gc/device/device_backend.hpp"
#include "gc/heap/heap.hpp"
#include "gc/markers/serial_marker.hpp"
#include "gc/plans/collector.hpp"
#include "gc/plans/concurrent_collector.hpp"
#include "gc/plans/device_start.hpp"
#include "heap_mutator.hpp"

namespace gcvm {

namespace {

/// What the test "device" saw: its marks, and the watch and placement the plan asked for
/// (the placement read once the device is open: its release orders it).
struct DeviceLog {
  std::atomic<int> marks{0};
  std::atomic<const RefGraph*> watched{nullptr};
  std::atomic<bool> watched_off_the_caller{false};
  std::vector<unsigned> placed;
  int placements = 0;
};

/// The serial marker, counting its marks and recording `watch`.
class TestDevice final : public Marker {
 public:
  explicit TestDevice(DeviceLog& log) : log_(log) {}
  std::string_view name() const override { return "test-device"; }
  MarkerConstraints constraints() const override { return {.needs_device = true}; }
  MarkStats mark(const MarkRequest& request, MarkBitmap& out) override {
    ++log_.marks;
    return SerialMarker().mark(request, out);
  }
  void watch(const RefGraph& graph, GraphChanges* /*changes*/) override {
    log_.watched_off_the_caller = std::this_thread::get_id() != caller_;
    log_.watched = &graph;
  }
  void place_host_threads(const std::vector<unsigned>& cpus) override {
    log_.placed = cpus;
    ++log_.placements;
  }
  static inline std::thread::id caller_;

 private:
  DeviceLog& log_;
};

/// A factory that builds a TestDevice once `gate` is opened (or throws, if set so).
MarkerFactory gated(DeviceLog& log, std::shared_future<void> gate, bool fails = false) {
  return [&log, gate, fails]() -> std::unique_ptr<Marker> {
    gate.wait();
    if (fails) throw DeviceError("the test device is unplugged");
    return std::make_unique<TestDevice>(log);
  };
}

std::unique_ptr<OverlappedStartMarker> overlapped(DeviceLog& log, std::shared_future<void> gate, bool fails = false) {
  return std::make_unique<OverlappedStartMarker>("gpu-test", gated(log, std::move(gate), fails),
                                                 std::make_unique<SerialMarker>());
}

/// Opens the gate the test device waits for: by `open`, or on the way out of a test
/// that failed first (the marker's destructor waits for its starting thread).
struct Gate {
  std::promise<void> promise;
  std::shared_future<void> future = promise.get_future().share();
  bool opened = false;
  void open() {
    if (!std::exchange(opened, true)) promise.set_value();
  }
};
struct OpenOnExit {
  Gate& gate;
  ~OpenOnExit() { gate.open(); }
};

/// Before a snapshot: the mutator forgets what the roots no longer reach (its `live`
/// list plays its registers, which are no roots), as a real mutator cannot reach it
/// again; a concurrent cycle may free it.
void forget_unreachable(const Heap& heap, test::RandomMutator& mutator) {
  MarkBitmap reachable;
  SerialMarker().mark({heap.graph(), mutator.roots, heap.blocks().high_water()}, reachable);
  std::erase_if(mutator.live, [&](ObjectId o) { return !reachable.test(o); });
}

void wait_open(const OverlappedStartMarker& marker) {
  for (int i = 0; i < 5000 && !marker.device_open(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  REQUIRE(marker.device_open());
}

}  // namespace

TEST_CASE("figures left for after the pause keep their order with the figures added after them") {
  MarkStats stats;
  stats.add_details([](MarkDetails& d) { d.emplace_back("first", 1.0); }, false);
  CHECK(stats.details.size() == 1);  // named at once
  stats.add_details([](MarkDetails& d) { d.emplace_back("second", 2.0); }, true);
  stats.add_details([](MarkDetails& d) { d.emplace_back("third", 3.0); }, false);  // after the second, so also later
  CHECK(stats.details.size() == 1);
  CHECK_FALSE(stats.detail("third"));
  stats.finish_details();
  REQUIRE(stats.details.size() == 3);
  CHECK(stats.details[1].first == "second");
  CHECK(stats.details[2].first == "third");
  CHECK(stats.detail("third") == 3.0);
  stats.finish_details();  // nothing left
  CHECK(stats.details.size() == 3);
}

TEST_CASE("device-start=overlap: collections mark on the CPU until the device is open, then on the device") {
  Heap heap(HeapConfig{.limit_bytes = 16u << 20});
  test::RandomMutator mutator(heap, 5, 32);
  DeviceLog log;
  Gate gate;
  TestDevice::caller_ = std::this_thread::get_id();
  auto owned = overlapped(log, gate.future);
  OverlappedStartMarker& marker = *owned;
  Collector collector(heap, std::move(owned), true);  // asks for watch now, while the device starts
  const OpenOnExit open_on_exit{gate};
  CHECK(marker.name() == "gpu-test");
  CHECK(marker.constraints().needs_device);

  for (int i = 0; i < 2; ++i) {
    mutator.run(2000);
    const CollectionStats s = collector.collect(mutator.roots, "starting");  // verified against serial
    mutator.forget_dead();
    CHECK(s.collector == "gpu-test");
    CHECK(s.mark.detail("device_starting") == 1.0);
    CHECK_FALSE(s.mark.detail("device_ready_ms"));
  }
  CHECK(log.marks == 0);
  CHECK_FALSE(marker.device_open());

  marker.place_host_threads({3, 5});  // as a plan whose sweep pool is placed asks, while the device starts
  gate.open();
  wait_open(marker);
  CHECK(log.watched == &heap.graph());  // handed over by the starting thread
  CHECK(log.watched_off_the_caller);
  CHECK(log.placed == std::vector<unsigned>{3, 5});
  CHECK(log.placements == 1);

  mutator.run(2000);
  CollectionStats s = collector.collect(mutator.roots, "open");
  mutator.forget_dead();
  CHECK(log.marks == 1);
  CHECK_FALSE(s.mark.detail("device_starting"));
  REQUIRE(s.mark.detail("device_ready_ms"));
  CHECK(*s.mark.detail("device_ready_ms") > 0);
  CHECK(s.mark.detail("device_start_cpu_marks") == 2.0);

  mutator.run(2000);
  s = collector.collect(mutator.roots, "open again");
  CHECK(log.marks == 2);
  CHECK_FALSE(s.mark.detail("device_ready_ms"));  // only the first device pause says it
  CHECK_FALSE(s.mark.detail("device_starting"));
}

TEST_CASE("device-start=overlap: watch or placement asked after the device opened reaches the device itself") {
  DeviceLog log;
  Gate gate;
  gate.open();
  auto marker = overlapped(log, gate.future);
  wait_open(*marker);
  Heap heap(HeapConfig{.limit_bytes = 4u << 20});
  TestDevice::caller_ = std::this_thread::get_id();
  marker->watch(heap.graph(), &heap.graph().changes());
  CHECK(log.watched == &heap.graph());
  CHECK_FALSE(log.watched_off_the_caller);
  CHECK(log.placements == 0);
  marker->place_host_threads({0, 1});
  CHECK(log.placed == std::vector<unsigned>{0, 1});
}

TEST_CASE("device-start=overlap: a concurrent cycle that starts while the device starts marks in its initial pause") {
  Heap heap(HeapConfig{.limit_bytes = 16u << 20});
  test::RandomMutator mutator(heap, 9, 32);
  DeviceLog log;
  Gate gate;
  auto owned = overlapped(log, gate.future);
  OverlappedStartMarker& marker = *owned;
  ConcurrentCollector collector(heap, std::move(owned), true);
  const OpenOnExit open_on_exit{gate};

  mutator.run(3000);
  forget_unreachable(heap, mutator);
  collector.start(mutator.roots, "starting");
  mutator.run(500);
  CollectionStats s = collector.finish(mutator.roots);  // verified: the snapshot's marks and nothing reachable lost
  heap.finish_lazy_sweep();
  mutator.forget_dead();
  CHECK(s.mark.detail("device_starting") == 1.0);
  bool marked_in_pause = false;
  for (const auto& [key, value] : s.snapshot_details) marked_in_pause = marked_in_pause || key == "mark_in_pause_ms";
  CHECK(marked_in_pause);
  CHECK(log.marks == 0);

  gate.open();
  wait_open(marker);
  mutator.run(3000);
  forget_unreachable(heap, mutator);
  collector.start(mutator.roots, "open");
  mutator.run(500);
  s = collector.finish(mutator.roots);
  heap.finish_lazy_sweep();
  CHECK(log.marks == 1);  // the test device's snapshot is Marker's host copy, marked by its `mark`
  double cpu_marks = -1;
  for (const auto& [key, value] : s.snapshot_details)
    if (key == "device_start_cpu_marks") cpu_marks = value;
  CHECK(cpu_marks == 1.0);
}

TEST_CASE("device-start=overlap: a device that fails to open is a DeviceError at the next pause, once") {
  Heap heap(HeapConfig{.limit_bytes = 4u << 20});
  const ShapeId node = heap.shapes().intern(1, 0);
  const std::vector<ObjectId> roots{heap.allocate(node)};
  heap.allocate(node);
  DeviceLog log;
  Gate gate;
  gate.open();
  auto marker = overlapped(log, gate.future, true);
  wait_open(*marker);
  const MarkRequest request{heap.graph(), roots, heap.blocks().high_water(), &heap.graph().changes()};
  MarkBitmap marks;
  CHECK_THROWS_AS(marker->mark(request, marks), DeviceError);
  const MarkStats stats = marker->mark(request, marks);  // a plan that kept the marker: the CPU goes on
  CHECK(stats.marked_objects == 1);
}

TEST_CASE("device-start takes its option out of the marker's, and only for GPU markers") {
  CollectorChoice gpu{.name = "gpu-bfs", .options = {{"device-start", "overlap"}, {"queue", "levels"}}, .threads = 3};
  const DeviceStart start = DeviceStart::take_from(gpu);
  CHECK(start.policy == DeviceStart::Policy::Overlap);
  CHECK(start.threads == 3);
  REQUIRE(gpu.options.size() == 1);
  CHECK(gpu.options[0].key == "queue");
  CollectorChoice plain{.name = "gpu-dfs", .options = {}};
  CHECK(DeviceStart::take_from(plain).policy == DeviceStart::Policy::Open);
  CollectorChoice serial{.name = "serial", .options = {{"device-start", "overlap"}}};
  CHECK_THROWS_AS(DeviceStart::take_from(serial), ConfigError);
  CollectorChoice bad{.name = "gpu-bfs", .options = {{"device-start", "later"}}};
  CHECK_THROWS_AS(DeviceStart::take_from(bad), ConfigError);
  // A bad marker option is a ConfigError at once, not on the starting thread.
  CollectorChoice rejected{.name = "gpu-bfs", .options = {{"queue", "sideways"}}, .device = "auto"};
  CHECK_THROWS_AS((DeviceStart{.policy = DeviceStart::Policy::Overlap}.make_marker(rejected)), ConfigError);
}

TEST_CASE("property: device-start=overlap with the GPU markers marks like the serial marker under random mutation") {
  for (CollectorChoice choice : test::every_marker()) {
    if (!choice.name.starts_with("gpu-")) continue;
    CAPTURE(choice.name);
    CAPTURE(choice.device);
    for (bool concurrent : {false, true}) {
      CAPTURE(concurrent);
      Heap heap(HeapConfig{.limit_bytes = 32u << 20});
      test::RandomMutator mutator(heap, 13, 48);
      auto marker = DeviceStart{.policy = DeviceStart::Policy::Overlap, .threads = 2}.make_marker(choice);
      const auto* started = dynamic_cast<const OverlappedStartMarker*>(marker.get());
      REQUIRE(started != nullptr);
      int on_device = 0;  // collections that said they were the first on the device
      auto note = [&](const CollectionStats& s) {
        bool first = s.mark.detail("device_ready_ms").has_value();
        for (const auto& [key, value] : s.snapshot_details) first = first || key == "device_ready_ms";
        on_device += first ? 1 : 0;
      };
      if (concurrent) {
        ConcurrentCollector collector(heap, std::move(marker), true);
        for (int cycle = 0; cycle < 6; ++cycle) {
          mutator.run(3000);
          forget_unreachable(heap, mutator);
          collector.start(mutator.roots, "property");
          mutator.run(300);
          note(collector.finish(mutator.roots));
          heap.finish_lazy_sweep();
          mutator.forget_dead();
          if (cycle == 2) wait_open(*started);
        }
      } else {
        Collector collector(heap, std::move(marker), true);
        for (int i = 0; i < 6; ++i) {
          mutator.run(3000);
          note(collector.collect(mutator.roots, "property"));
          mutator.forget_dead();
          if (i == 2) wait_open(*started);
        }
      }
      CHECK(on_device == 1);  // one collection switched (the first, if the device opened at once)
    }
  }
}

}  // namespace gcvm
