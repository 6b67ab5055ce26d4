#include "gc/device/communicator.hpp"

#include <fmt/format.h>

namespace gcvm {

std::uint64_t ExchangePlan::inbox_offset(unsigned from, unsigned to) const {
  std::uint64_t offset = 0;
  for (unsigned f = 0; f < from && f < ranks_; ++f) offset += count(f, to);
  return offset;
}

std::uint64_t ExchangePlan::total() const {
  std::uint64_t sum = 0;
  for (const std::uint64_t c : counts_) sum += c;
  return sum;
}

namespace {

class InProcessCommunicator final : public Communicator {
 public:
  explicit InProcessCommunicator(unsigned ranks) : ranks_(ranks) {}
  std::string_view name() const override { return "in-process"; }
  unsigned ranks() const override { return ranks_; }

  void exchange(std::span<PartitionEndpoint* const> endpoints, const ExchangePlan& plan) override {
    check_shape(endpoints.size(), plan.ranks());
    for (unsigned to = 0; to < ranks_; ++to) endpoints[to]->reserve_inbox(plan.received(to));
    for (unsigned from = 0; from < ranks_; ++from)
      for (unsigned to = 0; to < ranks_; ++to) {
        const std::uint64_t count = plan.count(from, to);
        if (count == 0) continue;
        if (from == to) throw DeviceError("in-process exchange: a partition sent to itself");
        const std::vector<ObjectId> batch = endpoints[from]->read_outbox(plan.out_offset(from, to), count);
        endpoints[to]->write_inbox(plan.inbox_offset(from, to), batch);
      }
  }

  std::uint64_t all_reduce_sum(std::span<const std::uint64_t> values) override {
    check_shape(values.size(), ranks_);
    std::uint64_t sum = 0;
    for (const std::uint64_t v : values) sum += v;
    return sum;
  }

 private:
  void check_shape(std::size_t given, unsigned planned) const {
    if (given != ranks_ || planned != ranks_)
      throw DeviceError(fmt::format("in-process exchange: {} ranks, given {} and a plan for {}", ranks_, given, planned));
  }

  unsigned ranks_;
};

}  // namespace

std::unique_ptr<Communicator> make_in_process_communicator(unsigned ranks) {
  return std::make_unique<InProcessCommunicator>(ranks);
}

#if !GCVM_HAVE_CUDA
std::vector<std::pair<unsigned, unsigned>> cuda_peer_pairs() { return {}; }
#endif

#if !GCVM_HAVE_NCCL
bool nccl_built() { return false; }
std::string nccl_version() { return "not built (CMake found no NCCL; see docs/multi-gpu.md)"; }
std::unique_ptr<Communicator> make_nccl_communicator(std::span<const int>) {
  throw DeviceError("this gcvm was built without NCCL (docs/multi-gpu.md says how to build with it)");
}
#endif

}  // namespace gcvm
