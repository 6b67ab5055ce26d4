// gpu-bfs on a device list (gc/markers/partitioned_bfs_marker.hpp) against the serial
// marker (DESIGN.md invariant 4) with 1 to 4 partitions, several of them sharing one
// device (PoCL in CI), and the partitioned mirror's rows against the heap (invariant 5).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "device_fixtures.hpp"
#include "gc/device/device_list.hpp"
#include "gc/markers/partitioned_bfs_marker.hpp"
#include "gc/markers/serial_marker.hpp"
#include "gc/plans/collector.hpp"
#include "heap_fixtures.hpp"
#include "heap_mutator.hpp"
#include "heapgraph/change_bitmap.hpp"

using namespace gcvm;

namespace {

/// `device` repeated `partitions` times as a device list ("opencl:0,0,0").
std::string device_list(const std::string& device, unsigned partitions) {
  std::string list = device;
  for (unsigned p = 1; p < partitions; ++p) list += "," + device.substr(device.find(':') + 1);
  return list;
}

/// One marker per partition count, for one test device (K = 1 is a one-entry list
/// made by hand: `opencl:0` alone selects the single-device marker).
std::vector<std::unique_ptr<PartitionedBfsMarker>> markers_for(const std::string& device) {
  std::vector<std::unique_ptr<PartitionedBfsMarker>> markers;
  for (unsigned k = 1; k <= 4; ++k) {
    PartitionedBfsMarkerOptions options = PartitionedBfsMarkerOptions::parse({}, device_list(device, std::max(k, 2u)));
    options.devices.resize(k);
    markers.push_back(std::make_unique<PartitionedBfsMarker>(std::move(options)));
  }
  return markers;
}

void check_same_as_serial(const MarkRequest& request, Marker& marker) {
  MarkBitmap expected, actual;
  SerialMarker serial;
  const MarkStats want = serial.mark(request, expected);
  const MarkStats got = marker.mark(request, actual);
  CHECK(actual == expected);
  CHECK(got.marked_objects == want.marked_objects);
  CHECK(got.edges_traversed == want.edges_traversed);
}

/// `partitions` backends on `device`, for a PartitionedMirror of its own.
struct MirrorBackends {
  MirrorBackends(const std::string& device, unsigned partitions) {
    for (unsigned p = 0; p < partitions; ++p) {
      owned.push_back(open_device(parse_device_selector(device)));
      pointers.push_back(owned.back().get());
    }
  }
  std::vector<std::unique_ptr<DeviceBackend>> owned;
  std::vector<DeviceBackend*> pointers;
};

/// Every partition's rows equal the heap's rows of its objects (invariant 5, host side).
void check_rows(const PartitionedMirror& mirror, const RefGraph& graph) {
  const auto bounds = mirror.bounds();
  REQUIRE(bounds.back() == graph.vertex_count());
  for (unsigned p = 0; p < mirror.partitions(); ++p) {
    const RefGraph& rows = mirror.rows(p);
    for (std::uint32_t v = bounds[p]; v < bounds[p + 1]; ++v) {
      const std::uint32_t degree = graph.degree(v);
      REQUIRE(rows.degree(v - bounds[p]) == degree);
      if (degree == 0) continue;
      const auto local = rows.out_edges(v - bounds[p]);
      const auto global = graph.out_edges(v);
      REQUIRE(std::equal(local.begin(), local.end(), global.begin(), global.end()));
    }
  }
}

}  // namespace

TEST_CASE("device lists: parsing, repeats, and one clear error for anything else") {
  CHECK(is_device_list("cuda:0,1"));
  CHECK(is_device_list("cuda:all"));
  CHECK_FALSE(is_device_list("cuda:1"));
  CHECK_FALSE(is_device_list("auto"));
  const auto list = parse_device_list("opencl:0,0,2");
  REQUIRE(list.size() == 3);
  CHECK(list[2].backend == "opencl");
  CHECK(list[2].index == 2u);
  for (const char* bad : {"opencl:0,", "opencl:,1", "auto:0,1", "vulkan:0,1", "opencl:0,x", "opencl"})
    CHECK_THROWS_AS(parse_device_list(bad), ConfigError);
  CHECK_THROWS_WITH_AS(PartitionedBfsMarkerOptions::parse({parse_gc_option("queue=async")}, "opencl:0,0"),
                       doctest::Contains("exchange=auto|host|nccl"), ConfigError);
  CHECK_THROWS_AS(make_marker({.name = "gpu-dfs", .options = {}, .threads = 0, .device = "opencl:0,0"}), ConfigError);
}

TEST_CASE("the partitioned mark equals the serial marker's on every synthetic heap and random graphs, 1-4 partitions") {
  for (const std::string& device : test::test_devices()) {
    CAPTURE(device);
    auto markers = markers_for(device);
    for (const char* spec : {"single", "list:3000", "lists:64x100", "wide:1000", "vp-list", "vp-array",
                             "complete:150:4", "rmat:12", "rmat:10:40", "random:20000:0", "random:20000:1",
                             "random:3000:40", "lists:7x3"}) {
      CAPTURE(std::string(spec));
      auto built = test::build(spec);
      const MarkRequest request{built.heap->graph(), built.builder->roots(), built.heap->blocks().high_water()};
      for (auto& marker : markers) {
        CAPTURE(marker->partitions());
        check_same_as_serial(request, *marker);
      }
    }
  }
}

TEST_CASE("markers open on one device at once keep marking right as the others close, in either order") {
  // Ten backends on one device (OpenCL ones share its queue): each closing one leaves
  // the others' queue, context and buffers as they were.
  auto built = test::build("rmat:12");
  const MarkRequest request{built.heap->graph(), built.builder->roots(), built.heap->blocks().high_water()};
  for (const std::string& device : test::test_devices()) {
    CAPTURE(device);
    for (const bool oldest_first : {true, false}) {
      CAPTURE(oldest_first);
      auto markers = markers_for(device);
      while (!markers.empty()) {
        for (auto& marker : markers) check_same_as_serial(request, *marker);
        markers.erase(oldest_first ? markers.begin() : markers.end() - 1);
      }
    }
  }
}

TEST_CASE("the partitioned mark tells the plan once per mark that the devices are busy") {
  auto built = test::build("lists:64x100");
  for (const std::string& device : test::test_devices()) {
    CAPTURE(device);
    for (auto& marker : markers_for(device)) {
      CAPTURE(marker->partitions());
      int told = 0;
      MarkRequest request{built.heap->graph(), built.builder->roots(), built.heap->blocks().high_water()};
      request.on_device_busy = [&] { ++told; };
      check_same_as_serial(request, *marker);
      CHECK(told == 1);
    }
  }
}

TEST_CASE("partitioned mark edge cases: empty partitions, all roots in one, a chain crossing every round, premarked") {
  for (const std::string& device : test::test_devices()) {
    CAPTURE(device);
    auto markers = markers_for(device);
    // A heap of one block: partitions 1..3 are empty.
    {
      Heap heap;
      const ShapeId node = heap.shapes().intern(2, 0);
      std::vector<ObjectId> roots;
      for (int i = 0; i < 10; ++i) roots.push_back(heap.allocate(node));
      for (int i = 0; i + 1 < 10; ++i) heap.store_ref(roots[i], 0, roots[i + 1]);
      const std::vector<ObjectId> one{roots[0], kNullRef};
      const MarkRequest request{heap.graph(), one, heap.blocks().high_water()};
      const MarkRequest none{heap.graph(), {}, heap.blocks().high_water()};
      for (auto& marker : markers) {
        check_same_as_serial(request, *marker);
        check_same_as_serial(none, *marker);
      }
    }
    // Two regions of blocks, a chain alternating between them (every round crosses),
    // the only root in the first region, and a big array of wide references.
    Heap heap;
    const ShapeId node = heap.shapes().intern(2, 0);
    std::vector<ObjectId> left, right;
    for (int i = 0; i < 2000; ++i) left.push_back(heap.allocate(node));
    const ObjectId huge = heap.allocate_ref_array(5000);
    for (int i = 0; i < 2000; ++i) right.push_back(heap.allocate(node));
    for (int i = 0; i + 1 < 2000; ++i) {
      heap.store_ref(left[i], 0, right[i]);
      heap.store_ref(right[i], 0, left[i + 1]);
    }
    for (std::uint64_t i = 0; i < 5000; i += 3) heap.store_element(huge, i, right[(i * 7) % 2000]);
    heap.store_ref(left[1000], 1, huge);
    const std::vector<ObjectId> roots{left[0], left[0]};
    const MarkRequest request{heap.graph(), roots, heap.blocks().high_water()};
    for (auto& marker : markers) {
      CAPTURE(marker->partitions());
      check_same_as_serial(request, *marker);
      MarkBitmap marks;
      const MarkStats stats = marker->mark(request, marks);
      if (marker->partitions() > 1) {
        CHECK(stats.detail("exchange_rounds").value_or(0) >= 2000);  // one crossing per round at most
        CHECK(stats.detail("exchange_bytes").value_or(0) > 0);
        // Every link of the chain crosses; each id is sent at most once per sender.
        const double remote = stats.detail("remote_references").value_or(0);
        CHECK(remote >= 2 * 1999);
        CHECK(stats.detail("exchange_bytes").value_or(0) <= 4 * remote);
        CHECK(stats.detail("exchange_bytes_per_remote_reference").value_or(0) <= 4.0);
      } else {
        CHECK(stats.detail("remote_references") == 0.0);
      }
      CHECK(stats.detail("exchange_fraction").value_or(-1) >= 0.0);
      CHECK(stats.detail("exchange_fraction").value_or(2) <= 1.0);
      CHECK(stats.detail("load_imbalance").value_or(0) >= 1.0);
    }
    // Premarked: the right region is mature; the chain stops at its first crossing.
    MarkBitmap premarked_bits;
    premarked_bits.reset(heap.blocks().high_water());
    for (const ObjectId o : right) premarked_bits.words()[o / kSlotsPerBlock] |= std::uint64_t{1} << slot_of(o);
    const std::vector<std::uint64_t> premarked(premarked_bits.words().begin(), premarked_bits.words().end());
    const MarkRequest young{heap.graph(), roots, heap.blocks().high_water(), nullptr, premarked};
    for (auto& marker : markers) check_same_as_serial(young, *marker);
  }
}

TEST_CASE("the partitioned mirror stays exact across mutations and sweeps, patched per partition") {
  for (const std::string& device : test::test_devices()) {
    for (auto mode : {RefGraphMode::Barrier, RefGraphMode::Rebuild}) {
      CAPTURE(device);
      auto built = test::build("rmat:13", 5, HeapConfig{.graph_mode = mode});
      Heap& heap = *built.heap;
      test::RandomMutator mutator(heap, 21, 32);
      auto marker = std::make_unique<PartitionedBfsMarker>(PartitionedBfsMarkerOptions::parse({}, device_list(device, 3)));
      Collector collector(heap, std::move(marker), /*verify=*/true);
      std::uint64_t partial_syncs = 0;
      for (int cycle = 0; cycle < 8; ++cycle) {
        mutator.run(cycle % 3 == 2 ? 200 : 3000);
        std::vector<ObjectId> roots = built.builder->roots();
        roots.insert(roots.end(), mutator.roots.begin(), mutator.roots.end());
        const auto stats = collector.collect(roots, "cycle");  // throws VerifyError on any difference
        mutator.forget_dead();
        if (stats.mark.detail("sync_full") == 0.0) ++partial_syncs;
      }
      CHECK(partial_syncs > 0);
    }
  }
}

TEST_CASE("the partitioned mirror's rows equal the heap's after every sync") {
  for (const std::string& device : test::test_devices()) {
    CAPTURE(device);
    auto built = test::build("random:6000:3");
    Heap& heap = *built.heap;
    test::RandomMutator mutator(heap, 7, 16);
    MirrorBackends backends(device, 3);
    PartitionedMirror mirror(backends.pointers);
    for (int cycle = 0; cycle < 5; ++cycle) {
      mirror.sync(heap.graph(), &heap.graph().changes());
      check_rows(mirror, heap.graph());
      mutator.run(2000);
    }
  }
}

TEST_CASE("a cut of partitions holding many change-record words of rows is copied in parallel pieces, exactly") {
  for (const std::string& device : test::test_devices()) {
    CAPTURE(device);
    auto built = test::build("bulk:200000:8");  // 800 000 window slots per partition: 4 pieces each
    MirrorBackends backends(device, 2);
    PartitionedMirror mirror(backends.pointers);
    const PartitionedSyncStats stats = mirror.sync(built.heap->graph(), &built.heap->graph().changes());
    CHECK(stats.cut);
    CHECK(stats.rebuilt == 2);
    check_rows(mirror, built.heap->graph());
    for (unsigned p = 0; p < 2; ++p) CHECK(mirror.edges_covered(p) > 2 * ChangeBitmap::kIndicesPerChunk * 64);
    PartitionedBfsMarkerOptions options = PartitionedBfsMarkerOptions::parse({}, device_list(device, 2));
    PartitionedBfsMarker marker(std::move(options));
    check_same_as_serial({built.heap->graph(), built.builder->roots(), built.heap->blocks().high_water()}, marker);
  }
}
