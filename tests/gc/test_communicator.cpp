// The communicator of the partitioned mark (gc/device/communicator.hpp) and the
// edge-balanced cut (gc/device/edge_partition.hpp), on the host alone.
#include <doctest/doctest.h>

#include <numeric>
#include <vector>

#include "gc/device/communicator.hpp"
#include "gc/device/edge_partition.hpp"

using namespace gcvm;

namespace {

/// A partition whose outbox and inbox are host vectors.
class HostEndpoint final : public PartitionEndpoint {
 public:
  std::vector<ObjectId> outbox;
  std::vector<ObjectId> inbox;
  std::vector<ObjectId> read_outbox(std::uint64_t offset, std::uint64_t count) override {
    return {outbox.begin() + static_cast<std::ptrdiff_t>(offset), outbox.begin() + static_cast<std::ptrdiff_t>(offset + count)};
  }
  void reserve_inbox(std::uint64_t entries) override { inbox.assign(entries, kNullRef); }
  void write_inbox(std::uint64_t offset, std::span<const ObjectId> ids) override {
    std::copy(ids.begin(), ids.end(), inbox.begin() + static_cast<std::ptrdiff_t>(offset));
  }
};

}  // namespace

TEST_CASE("the in-process communicator delivers every batch, packed in sender order") {
  constexpr unsigned kRanks = 3;
  std::vector<HostEndpoint> ranks(kRanks);
  std::vector<PartitionEndpoint*> endpoints;
  for (auto& r : ranks) endpoints.push_back(&r);
  // Rank f's outbox: a segment of 10 entries per peer t, holding f * 100 + t * 10 + i.
  ExchangePlan plan(kRanks);
  for (unsigned f = 0; f < kRanks; ++f) {
    ranks[f].outbox.assign(kRanks * 10, kNullRef);
    for (unsigned t = 0; t < kRanks; ++t) {
      plan.out_offset(f, t) = t * 10;
      if (f == t) continue;
      plan.count(f, t) = (f + 2 * t) % 4;  // some batches are empty
      for (unsigned i = 0; i < plan.count(f, t); ++i) ranks[f].outbox[t * 10 + i] = f * 100 + t * 10 + i;
    }
  }
  auto communicator = make_in_process_communicator(kRanks);
  CHECK(communicator->name() == "in-process");
  communicator->exchange(endpoints, plan);
  std::uint64_t total = 0;
  for (unsigned t = 0; t < kRanks; ++t) {
    std::vector<ObjectId> expected;
    for (unsigned f = 0; f < kRanks; ++f)
      for (unsigned i = 0; i < plan.count(f, t); ++i) expected.push_back(f * 100 + t * 10 + i);
    CHECK(ranks[t].inbox == expected);
    CHECK(plan.received(t) == expected.size());
    total += expected.size();
  }
  CHECK(plan.total() == total);
  const std::vector<std::uint64_t> counts{3, 0, 4};
  CHECK(communicator->all_reduce_sum(counts) == 7);
}

TEST_CASE("the in-process communicator rejects a batch to oneself and a plan of another size") {
  std::vector<HostEndpoint> ranks(2);
  std::vector<PartitionEndpoint*> endpoints{&ranks[0], &ranks[1]};
  auto communicator = make_in_process_communicator(2);
  ExchangePlan self(2);
  ranks[0].outbox = {1};
  self.count(0, 0) = 1;
  CHECK_THROWS_AS(communicator->exchange(endpoints, self), DeviceError);
  CHECK_THROWS_AS(communicator->exchange(endpoints, ExchangePlan(3)), DeviceError);
  const std::vector<std::uint64_t> three{1, 2, 3};
  CHECK_THROWS_AS(communicator->all_reduce_sum(three), DeviceError);
}

TEST_CASE("without NCCL in the build, asking for it is one clear error") {
  if (nccl_built()) return;
  const std::vector<int> devices{0, 1};
  CHECK_THROWS_WITH_AS(make_nccl_communicator(devices), doctest::Contains("without NCCL"), DeviceError);
}

TEST_CASE("partitions are whole blocks balanced by edges, not objects") {
  // 8 blocks; block 5 holds half of the edges.
  std::vector<std::uint32_t> degrees(8 * kSlotsPerBlock, 1);
  degrees[5 * kSlotsPerBlock] = 7 * kSlotsPerBlock;
  const std::uint64_t total = std::accumulate(degrees.begin(), degrees.end(), std::uint64_t{0});
  for (unsigned k : {1u, 2u, 3u, 4u}) {
    CAPTURE(k);
    const auto bounds = edge_balanced_bounds(degrees, k);
    REQUIRE(bounds.size() == k + 1);
    CHECK(bounds.front() == 0);
    CHECK(bounds.back() == degrees.size());
    for (unsigned p = 0; p < k; ++p) {
      CHECK(bounds[p] <= bounds[p + 1]);
      CHECK(bounds[p] % kSlotsPerBlock == 0);
    }
    // No partition exceeds its share by more than the heaviest block.
    for (unsigned p = 0; p < k; ++p) {
      const std::uint64_t edges = std::accumulate(degrees.begin() + bounds[p], degrees.begin() + bounds[p + 1], std::uint64_t{0});
      CHECK(edges <= total / k + 8 * kSlotsPerBlock);
    }
  }
  CHECK(edge_balanced_bounds(degrees, 2) == std::vector<std::uint32_t>{0, 6 * kSlotsPerBlock, 8 * kSlotsPerBlock});
  // Uniform degrees: equal block counts.
  const std::vector<std::uint32_t> uniform(8 * kSlotsPerBlock, 3);
  CHECK(edge_balanced_bounds(uniform, 4) ==
        std::vector<std::uint32_t>{0, 2 * kSlotsPerBlock, 4 * kSlotsPerBlock, 6 * kSlotsPerBlock, 8 * kSlotsPerBlock});
}

TEST_CASE("a heap without edges is cut by blocks, and more partitions than blocks leave some empty") {
  const std::vector<std::uint32_t> none(4 * kSlotsPerBlock, 0);
  CHECK(edge_balanced_bounds(none, 2) == std::vector<std::uint32_t>{0, 2 * kSlotsPerBlock, 4 * kSlotsPerBlock});
  const std::vector<std::uint32_t> one_block(kSlotsPerBlock, 2);
  const auto bounds = edge_balanced_bounds(one_block, 4);
  CHECK(bounds == std::vector<std::uint32_t>{0, kSlotsPerBlock, kSlotsPerBlock, kSlotsPerBlock, kSlotsPerBlock});
  // The owner of an id skips empty partitions.
  CHECK(partition_of(bounds, 0) == 0);
  CHECK(partition_of(bounds, kSlotsPerBlock - 1) == 0);
  const std::vector<std::uint32_t> gaps{0, 64, 64, 128};
  CHECK(partition_of(gaps, 64) == 2);
  CHECK(partition_of(gaps, 63) == 0);
  CHECK(partition_of(gaps, 500) == 2);
  CHECK(edge_balanced_bounds({}, 3) == std::vector<std::uint32_t>{0, 0, 0, 0});
}
