// Device errors in the middle of a partitioned mark (gc/markers/partitioned_bfs_marker.hpp):
// one partition's backend, or the communicator, fails at a chosen call (fault_injection.hpp).
// The mark must throw MarkError and hand back no bitmap, and the next collection must
// upload every partition anew and mark exactly what the serial marker marks.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "device_fixtures.hpp"
#include "fault_injection.hpp"
#include "gc/device/device_list.hpp"
#include "gc/markers/partitioned_bfs_marker.hpp"
#include "gc/markers/serial_marker.hpp"
#include "heap_fixtures.hpp"
#include "heap_mutator.hpp"

using namespace gcvm;

namespace {

constexpr unsigned kPartitions = 3;
constexpr unsigned kFaultyPartition = 1;

/// A 3-partition marker on `device` whose partition 1 fails at `backend_fault` (an
/// empty method: never) and whose communicator fails at `communicator_fault`.
struct FaultyMarker {
  std::unique_ptr<PartitionedBfsMarker> marker;
  test::FaultyBackend* backend = nullptr;
  test::FaultyCommunicator* communicator = nullptr;
  void arm() {
    backend->arm();
    communicator->arm();
  }
  bool fired() const { return backend->fired() || communicator->fired(); }
};

FaultyMarker faulty_marker(const std::string& device, test::Fault backend_fault, test::Fault communicator_fault) {
  FaultyMarker out;
  std::vector<std::unique_ptr<DeviceBackend>> backends;
  for (unsigned p = 0; p < kPartitions; ++p) {
    auto real = open_device(parse_device_selector(device));
    if (p != kFaultyPartition) {
      backends.push_back(std::move(real));
      continue;
    }
    auto faulty = std::make_unique<test::FaultyBackend>(std::move(real), std::move(backend_fault));
    out.backend = faulty.get();
    backends.push_back(std::move(faulty));
  }
  auto communicator =
      std::make_unique<test::FaultyCommunicator>(make_in_process_communicator(kPartitions), std::move(communicator_fault));
  out.communicator = communicator.get();
  out.marker = std::make_unique<PartitionedBfsMarker>(std::move(backends), std::move(communicator));
  return out;
}

/// Marks a heap, mutates it, fails the next mark at the fault (calls counted from
/// there), and checks the failure and the collection after it.
void check_recovers(const std::string& device, const test::Fault& backend_fault, const test::Fault& communicator_fault) {
  auto built = test::build("rmat:12");
  Heap& heap = *built.heap;
  test::RandomMutator mutator(heap, 5, 24);
  FaultyMarker faulty = faulty_marker(device, backend_fault, communicator_fault);
  auto request = [&](const std::vector<ObjectId>& roots) {
    return MarkRequest{heap.graph(), roots, heap.blocks().high_water(), &heap.graph().changes()};
  };
  std::vector<ObjectId> roots = built.builder->roots();
  MarkBitmap marks;
  faulty.marker->mark(request(roots), marks);  // the mirror is on the devices
  faulty.arm();

  mutator.run(3000);
  roots.insert(roots.end(), mutator.roots.begin(), mutator.roots.end());
  marks.reset(heap.blocks().high_water());
  CHECK_THROWS_AS(faulty.marker->mark(request(roots), marks), MarkError);
  REQUIRE(faulty.fired());
  CHECK(marks.block_count() == 0);  // no partial bitmap

  mutator.run(500);  // the heap goes on changing between the failure and the next collection
  roots.insert(roots.end(), mutator.roots.begin(), mutator.roots.end());
  MarkBitmap expected;
  const MarkStats want = SerialMarker().mark(request(roots), expected);
  const MarkStats got = faulty.marker->mark(request(roots), marks);
  CHECK(got.detail("sync_full") == 1.0);
  CHECK(got.detail("sync_cut") == 1.0);
  CHECK(got.detail("sync_rebuilt_partitions") == static_cast<double>(kPartitions));
  CHECK(marks == expected);
  CHECK(got.marked_objects == want.marked_objects);
  CHECK(got.edges_traversed == want.edges_traversed);
}

}  // namespace

TEST_CASE("a device error in one partition mid-mark is a MarkError, and the next collection re-uploads and marks right") {
  for (const std::string& device : test::test_devices()) {
    CAPTURE(device);
    // Setup, the rounds (scan, state, exchange writes, claims), the download of the
    // marks, and the mirror sync of the mark that fails.
    const std::vector<test::Fault> faults = {
        {"begin_partition_mark", 1}, {"launch_partition_scan", 3},  {"timer_stop_ms", 2},
        {"read_partition_state", 3}, {"write_partition_inbox", 2}, {"launch_partition_claim", 3},
        {"read_partition_outbox", 1}, {"read_marks", 1},           {"finish_sync", 1},
    };
    for (const test::Fault& fault : faults) {
      CAPTURE(fault.method);
      CAPTURE(fault.nth);
      check_recovers(device, fault, {});
    }
  }
}

TEST_CASE("a communicator failure mid-mark is a MarkError, and the next collection re-uploads and marks right") {
  for (const std::string& device : test::test_devices()) {
    CAPTURE(device);
    for (const test::Fault& fault : {test::Fault{"exchange", 1}, test::Fault{"exchange", 3},
                                     test::Fault{"all_reduce_sum", 2}}) {
      CAPTURE(fault.method);
      CAPTURE(fault.nth);
      check_recovers(device, {}, fault);
    }
  }
}
