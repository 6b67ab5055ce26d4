// Test helper: device errors on demand. A FaultyBackend wraps a real DeviceBackend and
// a FaultyCommunicator a real Communicator; both forward every call, and the n-th call
// (1-based) of one named method throws DeviceError instead of reaching the real one,
// as a driver error mid-mark would. Calls are counted from `arm()` (so a test can
// first let a collection through), and the fault fires once: later calls, the next
// collection's included, go through. The markers take them through their seams
// (PartitionedBfsMarker's constructor from backends and a communicator; GpuBfsMarker's
// and GpuDfsMarker's from a backend), so production code has no fault hooks. A
// FaultyBackend can also claim a smaller page-locked patch buffer than the real one's,
// so that a sync hands a patch over in parts (gc/device/graph_mirror.cpp).
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "gc/device/communicator.hpp"
#include "gc/device/device_backend.hpp"

namespace gcvm::test {

/// The call that fails: the `nth` call of `method` (a member function's name).
struct Fault {
  std::string method;
  unsigned nth = 1;
};

/// Counts the calls of the faulty method and throws at the chosen one. Calls may come
/// from several threads (a marking thread, a mirror's refresher).
class FaultTrigger {
 public:
  explicit FaultTrigger(Fault fault) : fault_(std::move(fault)) {}
  void arm() { armed_ = true; }
  void call(std::string_view method) {
    if (!armed_ || method != fault_.method || ++seen_ != fault_.nth) return;
    throw DeviceError(fmt::format("injected fault: call {} of {}", fault_.nth, method));
  }
  bool fired() const { return seen_ >= fault_.nth; }

 private:
  Fault fault_;
  std::atomic<bool> armed_ = false;
  std::atomic<unsigned> seen_ = 0;
};

class FaultyBackend final : public DeviceBackend {
 public:
  FaultyBackend(std::unique_ptr<DeviceBackend> real, Fault fault) : real_(std::move(real)), trigger_(std::move(fault)) {}
  void arm() { trigger_.arm(); }
  bool fired() const { return trigger_.fired(); }
  void cap_patch_buffer(std::uint64_t bytes) { patch_capacity_ = bytes; }

  const DeviceInfo& info() const override { return real_->info(); }
  void make_current() override { real_->make_current(); }
  void reserve_graph(std::uint64_t vertices, std::uint64_t edges, std::uint64_t keep_vertices,
                     std::uint64_t keep_edges) override {
    trigger_.call("reserve_graph");
    real_->reserve_graph(vertices, edges, keep_vertices, keep_edges);
  }
  std::shared_ptr<HostPinner> host_pinner() override { return real_->host_pinner(); }
  void upload_ranges(MirrorArray array, const void* host, std::span<const ElementRange> ranges) override {
    trigger_.call("upload_ranges");
    real_->upload_ranges(array, host, ranges);
  }
  std::span<std::byte> patch_buffer(std::uint64_t bytes) override { return real_->patch_buffer(bytes); }
  std::uint64_t patch_buffer_capacity() const override {
    return std::min(patch_capacity_, real_->patch_buffer_capacity());
  }
  void want_patch_buffer(std::uint64_t bytes) override { real_->want_patch_buffer(bytes); }
  void grow_patch_buffer() override { real_->grow_patch_buffer(); }
  void apply_patch(const MirrorPatchLayout& layout, std::uint64_t offset) override {
    trigger_.call("apply_patch");
    real_->apply_patch(layout, offset);
  }
  void finish_sync() override {
    trigger_.call("finish_sync");
    real_->finish_sync();
  }
  void launch_held_back() override {
    trigger_.call("launch_held_back");
    real_->launch_held_back();
  }

  void begin_mark(std::span<const ObjectId> roots, std::uint64_t mark_words,
                  std::span<const std::uint64_t> premarked) override {
    trigger_.call("begin_mark");
    real_->begin_mark(roots, mark_words, premarked);
  }
  void launch_bfs_seed(std::uint32_t root_count, std::uint32_t marked_count, std::uint32_t groups) override {
    trigger_.call("launch_bfs_seed");
    real_->launch_bfs_seed(root_count, marked_count, groups);
  }
  void launch_bfs_level(std::uint32_t level, const BfsLaunch& launch) override {
    trigger_.call("launch_bfs_level");
    real_->launch_bfs_level(level, launch);
  }
  std::uint32_t bfs_levels_together_groups() const override { return real_->bfs_levels_together_groups(); }
  void launch_bfs_levels_together(std::uint32_t root_count, std::uint32_t marked_count, std::uint64_t mark_words,
                                  const BfsLaunch& launch) override {
    trigger_.call("launch_bfs_levels_together");
    real_->launch_bfs_levels_together(root_count, marked_count, mark_words, launch);
  }
  void snapshot_marks(std::uint64_t mark_words) override {
    trigger_.call("snapshot_marks");
    real_->snapshot_marks(mark_words);
  }
  void launch_bfs_frontier(std::uint32_t level, std::uint64_t mark_words) override {
    trigger_.call("launch_bfs_frontier");
    real_->launch_bfs_frontier(level, mark_words);
  }
  void launch_bfs_lanes(std::uint32_t root_count, const BfsLaunch& launch) override {
    real_->launch_bfs_lanes(root_count, launch);
  }
  void begin_chunks(std::uint64_t capacity) override { real_->begin_chunks(capacity); }
  std::vector<std::uint64_t> read_chunk_items(std::uint32_t from, std::uint32_t to) override {
    return real_->read_chunk_items(from, to);
  }
  void launch_bfs_async_seed(std::uint32_t root_count, std::uint32_t groups) override {
    real_->launch_bfs_async_seed(root_count, groups);
  }
  void launch_bfs_async(const BfsLaunch& launch) override {
    trigger_.call("launch_bfs_async");
    real_->launch_bfs_async(launch);
  }
  std::vector<ObjectId> gather_async_queue(std::uint32_t tail, std::uint32_t capacity) override {
    return real_->gather_async_queue(tail, capacity);
  }
  std::uint32_t async_resident_groups() const override { return real_->async_resident_groups(); }
  std::vector<std::uint32_t> read_state() override {
    trigger_.call("read_state");
    return real_->read_state();
  }
  std::vector<ObjectId> read_level_queue(std::uint32_t level, std::uint32_t count) override {
    return real_->read_level_queue(level, count);
  }
  void read_marks(std::uint64_t* words, std::uint64_t word_count) override {
    trigger_.call("read_marks");
    real_->read_marks(words, word_count);
  }
  std::vector<std::uint32_t> read_state_and_marks(std::uint64_t* words, std::uint64_t word_count) override {
    trigger_.call("read_state");
    trigger_.call("read_marks");
    return real_->read_state_and_marks(words, word_count);
  }

  void timer_start() override { real_->timer_start(); }
  void timer_end() override { real_->timer_end(); }
  double timer_stop_ms() override {
    trigger_.call("timer_stop_ms");
    return real_->timer_stop_ms();
  }
  std::uint64_t device_bytes() const override { return real_->device_bytes(); }
  double copy_bandwidth(std::uint64_t bytes) override { return real_->copy_bandwidth(bytes); }

  void begin_dfs(std::uint64_t vertices, std::uint32_t threads, std::uint32_t pool_slots) override {
    real_->begin_dfs(vertices, threads, pool_slots);
  }
  void launch_dfs_seed(std::uint32_t root_count, const DfsLaunch& launch) override {
    trigger_.call("launch_dfs_seed");
    real_->launch_dfs_seed(root_count, launch);
  }
  void launch_dfs_run(std::uint32_t index, const DfsLaunch& launch) override {
    trigger_.call("launch_dfs_run");
    real_->launch_dfs_run(index, launch);
  }
  std::vector<std::uint32_t> read_dfs_state() override {
    trigger_.call("read_dfs_state");
    return real_->read_dfs_state();
  }
  std::uint32_t dfs_resident_groups() const override { return real_->dfs_resident_groups(); }
  std::uint64_t dfs_stack_bytes() const override { return real_->dfs_stack_bytes(); }
  std::optional<std::vector<ObjectId>> gather_dfs_stacks(std::uint32_t groups, std::uint32_t capacity) override {
    return real_->gather_dfs_stacks(groups, capacity);
  }

  void begin_partition_mark(const PartitionMarkSetup& setup, std::span<const std::uint64_t> premarked) override {
    trigger_.call("begin_partition_mark");
    real_->begin_partition_mark(setup, premarked);
  }
  void reserve_partition_inbox(std::uint64_t entries) override {
    trigger_.call("reserve_partition_inbox");
    real_->reserve_partition_inbox(entries);
  }
  void write_partition_inbox(std::uint64_t offset, std::span<const ObjectId> ids) override {
    trigger_.call("write_partition_inbox");
    real_->write_partition_inbox(offset, ids);
  }
  std::vector<ObjectId> read_partition_outbox(std::uint64_t offset, std::uint64_t count) override {
    trigger_.call("read_partition_outbox");
    return real_->read_partition_outbox(offset, count);
  }
  void launch_partition_claim(std::uint32_t queue, std::uint32_t count, std::uint32_t groups) override {
    trigger_.call("launch_partition_claim");
    real_->launch_partition_claim(queue, count, groups);
  }
  void launch_partition_scan(std::uint32_t round, std::uint32_t groups) override {
    trigger_.call("launch_partition_scan");
    real_->launch_partition_scan(round, groups);
  }
  std::vector<std::uint32_t> read_partition_state() override {
    trigger_.call("read_partition_state");
    return real_->read_partition_state();
  }
  PartitionBuffers partition_buffers() override { return real_->partition_buffers(); }

 private:
  std::unique_ptr<DeviceBackend> real_;
  FaultTrigger trigger_;
  std::uint64_t patch_capacity_ = std::numeric_limits<std::uint64_t>::max();
};

class FaultyCommunicator final : public Communicator {
 public:
  FaultyCommunicator(std::unique_ptr<Communicator> real, Fault fault)
      : real_(std::move(real)), trigger_(std::move(fault)) {}
  void arm() { trigger_.arm(); }
  bool fired() const { return trigger_.fired(); }

  std::string_view name() const override { return real_->name(); }
  unsigned ranks() const override { return real_->ranks(); }
  void exchange(std::span<PartitionEndpoint* const> endpoints, const ExchangePlan& plan) override {
    trigger_.call("exchange");
    real_->exchange(endpoints, plan);
  }
  std::uint64_t all_reduce_sum(std::span<const std::uint64_t> values) override {
    trigger_.call("all_reduce_sum");
    return real_->all_reduce_sum(values);
  }

 private:
  std::unique_ptr<Communicator> real_;
  FaultTrigger trigger_;
};

}  // namespace gcvm::test
