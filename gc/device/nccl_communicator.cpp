// The NCCL communicator (gc/device/communicator.hpp): one process drives every GPU,
// one NCCL rank per partition (ncclCommInitAll), and a round's batches move as one
// group of ncclSend/ncclRecv pairs, outbox to inbox, on each partition's own stream;
// the count all-reduce is an ncclAllReduce of one u64 per rank. Built only where
// CMake finds NCCL (cmake/Nccl.cmake).
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nccl.h>

#include <cstdlib>
#include <memory>

#include "gc/device/communicator.hpp"
#include "gc/device/cuda_memory.hpp"

namespace gcvm {

namespace {

void check_nccl(ncclResult_t status, const char* what) {
  if (status != ncclSuccess) throw DeviceError(fmt::format("NCCL error in {}: {}", what, ncclGetErrorString(status)));
}

class NcclCommunicator final : public Communicator {
 public:
  explicit NcclCommunicator(std::span<const int> devices) : devices_(devices.begin(), devices.end()) {
    // NVLink multicast (NVLS) stays off unless the user chose otherwise: it reserves
    // memory on every GPU and is unusable on some of the machines gcvm runs on.
    setenv("NCCL_NVLS_ENABLE", "0", /*overwrite=*/0);
    comms_.resize(devices_.size());
    check_nccl(ncclCommInitAll(comms_.data(), static_cast<int>(devices_.size()), devices_.data()), "ncclCommInitAll");
    streams_.resize(devices_.size());
    for (std::size_t r = 0; r < devices_.size(); ++r) {
      cuda_memory::check(cudaSetDevice(devices_[r]), "cudaSetDevice");
      scratch_.push_back(std::make_unique<cuda_memory::DeviceBuffer>());
      scratch_.back()->reserve(sizeof(std::uint64_t), "the all-reduce word");
      cuda_memory::check(cudaStreamCreateWithFlags(&streams_[r], cudaStreamNonBlocking), "cudaStreamCreate");
    }
  }
  ~NcclCommunicator() override {
    for (std::size_t r = 0; r < devices_.size(); ++r) {
      cudaSetDevice(devices_[r]);
      cudaStreamDestroy(streams_[r]);
      ncclCommDestroy(comms_[r]);
    }
  }

  std::string_view name() const override { return "nccl"; }
  unsigned ranks() const override { return static_cast<unsigned>(devices_.size()); }

  void exchange(std::span<PartitionEndpoint* const> endpoints, const ExchangePlan& plan) override {
    const unsigned n = ranks();
    if (endpoints.size() != n || plan.ranks() != n)
      throw DeviceError(fmt::format("NCCL exchange: {} ranks, given {} and a plan for {}", n, endpoints.size(), plan.ranks()));
    std::vector<PartitionBuffers> buffers(n);
    for (unsigned r = 0; r < n; ++r) {
      endpoints[r]->reserve_inbox(plan.received(r));
      buffers[r] = endpoints[r]->buffers();
      if (buffers[r].stream == nullptr) throw DeviceError("NCCL exchange: a partition is not on a CUDA device");
    }
    // One group: every send and receive of the round (a single thread drives all ranks).
    check_nccl(ncclGroupStart(), "ncclGroupStart");
    for (unsigned from = 0; from < n; ++from)
      for (unsigned to = 0; to < n; ++to) {
        const std::uint64_t count = plan.count(from, to);
        if (count == 0 || from == to) continue;
        const auto* outbox = static_cast<const std::uint32_t*>(buffers[from].outbox) + plan.out_offset(from, to);
        auto* inbox = static_cast<std::uint32_t*>(buffers[to].inbox) + plan.inbox_offset(from, to);
        check_nccl(ncclSend(outbox, count, ncclUint32, static_cast<int>(to), comms_[from],
                            static_cast<cudaStream_t>(buffers[from].stream)),
                   "ncclSend");
        check_nccl(ncclRecv(inbox, count, ncclUint32, static_cast<int>(from), comms_[to],
                            static_cast<cudaStream_t>(buffers[to].stream)),
                   "ncclRecv");
      }
    check_nccl(ncclGroupEnd(), "ncclGroupEnd");
    // The claim kernels that read the inboxes run next on the same streams: no wait here.
  }

  std::uint64_t all_reduce_sum(std::span<const std::uint64_t> values) override {
    const unsigned n = ranks();
    if (values.size() != n) throw DeviceError("NCCL all-reduce: one value per rank expected");
    for (unsigned r = 0; r < n; ++r) {
      cuda_memory::check(cudaSetDevice(devices_[r]), "cudaSetDevice");
      cuda_memory::check(cudaMemcpyAsync(scratch_[r]->as<void>(), &values[r], sizeof(std::uint64_t),
                                         cudaMemcpyHostToDevice, streams_[r]),
                         "the all-reduce word");
    }
    check_nccl(ncclGroupStart(), "ncclGroupStart");
    for (unsigned r = 0; r < n; ++r)
      check_nccl(ncclAllReduce(scratch_[r]->as<void>(), scratch_[r]->as<void>(), 1, ncclUint64, ncclSum, comms_[r],
                               streams_[r]),
                 "ncclAllReduce");
    check_nccl(ncclGroupEnd(), "ncclGroupEnd");
    std::uint64_t sum = 0;
    cuda_memory::check(cudaSetDevice(devices_[0]), "cudaSetDevice");
    cuda_memory::check(cudaMemcpyAsync(&sum, scratch_[0]->as<void>(), sizeof(sum), cudaMemcpyDeviceToHost, streams_[0]),
                       "the all-reduce result");
    for (unsigned r = 0; r < n; ++r) cuda_memory::check(cudaStreamSynchronize(streams_[r]), "ncclAllReduce");
    return sum;
  }

 private:
  std::vector<int> devices_;
  std::vector<ncclComm_t> comms_;
  std::vector<std::unique_ptr<cuda_memory::DeviceBuffer>> scratch_;
  std::vector<cudaStream_t> streams_;
};

}  // namespace

bool nccl_built() { return true; }

std::string nccl_version() {
  int version = 0;
  if (ncclGetVersion(&version) != ncclSuccess) return "unknown";
  return fmt::format("{}.{}.{}", version / 10000, version / 100 % 100, version % 100);
}

std::unique_ptr<Communicator> make_nccl_communicator(std::span<const int> devices) {
  return std::make_unique<NcclCommunicator>(devices);
}

}  // namespace gcvm
