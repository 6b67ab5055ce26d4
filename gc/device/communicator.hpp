// The exchange between the partitions of a multi-device mark
// (gc/markers/partitioned_bfs_marker.hpp): every round, each partition's outbox holds
// one batch of object ids per peer (the references it found into that peer's
// objects), and the communicator moves every batch into its destination's inbox. An
// all-reduce of counts tells the driver when no partition has work left.
//
// Two implementations behind one interface:
//   - in-process (make_in_process_communicator): batches cross through host memory,
//     read from one device and written to the other; works for every backend and for
//     several partitions on one device, which is how CI runs the partitioned mark on
//     PoCL;
//   - NCCL (make_nccl_communicator, built only where CMake finds NCCL): grouped
//     ncclSend/ncclRecv between CUDA devices, straight from outbox to inbox over
//     NVLink or PCIe, and ncclAllReduce for the counts.
//
// Invariants:
// - `exchange` packs what rank r receives in sender order: the batch from peer f
//   starts at inbox entry `plan.inbox_offset(f, r)`, and `plan.received(r)` entries
//   arrive in all. A rank never sends to itself (its count is 0).
// - `exchange` returns when every batch is in its inbox (the next work a device
//   runs may read it); it reserves each inbox first.
// - Every call either completes or throws DeviceError.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gc/device/device_backend.hpp"

namespace gcvm {

/// One partition's side of an exchange: where its batches come from and go to.
class PartitionEndpoint {
 public:
  virtual ~PartitionEndpoint() = default;
  /// Outbox entries [offset, offset + count).
  virtual std::vector<ObjectId> read_outbox(std::uint64_t offset, std::uint64_t count) = 0;
  /// Makes room in the inbox for `entries` ids.
  virtual void reserve_inbox(std::uint64_t entries) = 0;
  /// Writes `ids` into the inbox from entry `offset`.
  virtual void write_inbox(std::uint64_t offset, std::span<const ObjectId> ids) = 0;
  /// The device addresses of outbox and inbox, where the partition has them (CUDA).
  virtual PartitionBuffers buffers() { return {}; }
};

/// A partition's endpoint on its device backend.
class BackendEndpoint final : public PartitionEndpoint {
 public:
  explicit BackendEndpoint(DeviceBackend& backend) : backend_(backend) {}
  std::vector<ObjectId> read_outbox(std::uint64_t offset, std::uint64_t count) override {
    return backend_.read_partition_outbox(offset, count);
  }
  void reserve_inbox(std::uint64_t entries) override { backend_.reserve_partition_inbox(entries); }
  void write_inbox(std::uint64_t offset, std::span<const ObjectId> ids) override {
    backend_.write_partition_inbox(offset, ids);
  }
  PartitionBuffers buffers() override { return backend_.partition_buffers(); }

 private:
  DeviceBackend& backend_;
};

/// The batches of one round: count(f, t) ids from rank f's outbox, from entry
/// out_offset(f, t), to rank t.
class ExchangePlan {
 public:
  explicit ExchangePlan(unsigned ranks) : ranks_(ranks), counts_(ranks * ranks), out_offsets_(ranks * ranks) {}
  unsigned ranks() const { return ranks_; }
  std::uint64_t& count(unsigned from, unsigned to) { return counts_[from * ranks_ + to]; }
  std::uint64_t count(unsigned from, unsigned to) const { return counts_[from * ranks_ + to]; }
  std::uint64_t& out_offset(unsigned from, unsigned to) { return out_offsets_[from * ranks_ + to]; }
  std::uint64_t out_offset(unsigned from, unsigned to) const { return out_offsets_[from * ranks_ + to]; }
  /// Where the batch from `from` lands in `to`'s inbox (sender order).
  std::uint64_t inbox_offset(unsigned from, unsigned to) const;
  /// Entries `to` receives in all.
  std::uint64_t received(unsigned to) const { return inbox_offset(ranks_, to); }
  /// Entries sent by all ranks together.
  std::uint64_t total() const;

 private:
  unsigned ranks_;
  std::vector<std::uint64_t> counts_;
  std::vector<std::uint64_t> out_offsets_;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  /// "in-process" or "nccl".
  virtual std::string_view name() const = 0;
  virtual unsigned ranks() const = 0;
  /// Moves every batch of `plan` (endpoints[r] is rank r); see the invariants above.
  virtual void exchange(std::span<PartitionEndpoint* const> endpoints, const ExchangePlan& plan) = 0;
  /// The sum over the ranks of values[r].
  virtual std::uint64_t all_reduce_sum(std::span<const std::uint64_t> values) = 0;
};

/// Batches through host memory, one rank after the other, on the calling thread.
std::unique_ptr<Communicator> make_in_process_communicator(unsigned ranks);

/// The pairs (a, b), a < b, of CUDA devices that can access each other's memory
/// directly (NVLink or PCIe peer to peer): where NCCL moves batches without the host.
std::vector<std::pair<unsigned, unsigned>> cuda_peer_pairs();

/// True where this build has NCCL (GCVM_HAVE_NCCL).
bool nccl_built();
/// The NCCL library's version ("2.x.y"), or why there is none.
std::string nccl_version();
/// One NCCL communicator per CUDA device of `devices` (rank r on devices[r]), made
/// with ncclCommInitAll in this process. Sets NCCL_NVLS_ENABLE=0 (NVLink multicast
/// off) unless the environment already sets it. Throws DeviceError without NCCL.
std::unique_ptr<Communicator> make_nccl_communicator(std::span<const int> devices);

}  // namespace gcvm
