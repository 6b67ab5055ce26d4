// The CUDA implementation of HostPinner (heapgraph/host_pinning.hpp): page-locks host
// memory with cudaHostRegister (portable: every CUDA device of the process may DMA from
// it), and remembers what it pinned, so that a copy can tell which parts of a host
// range the copy engines can read directly (memory that spans a registered and an
// unregistered part must not go to one cudaMemcpy: CUDA refuses it).
//
// One instance per process (`instance()`), shared by every CUDA backend and held by the
// reservations it pinned, so it outlives them. Thread-safe.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>

#include "heapgraph/host_pinning.hpp"

namespace gcvm {

class CudaHostPinner final : public HostPinner {
 public:
  static std::shared_ptr<CudaHostPinner> instance();

  bool pin(std::byte* base, std::size_t bytes) override;
  void unpin(std::byte* base) override;

  /// Bytes from `p` to the end of the pinned segment that holds it; 0 if `p` is not pinned.
  std::size_t pinned_from(const void* p) const;
  /// Bytes from `p` to the start of the next pinned segment above it, at most `limit`
  /// (for `p` outside every segment).
  std::size_t unpinned_from(const void* p, std::size_t limit) const;

 private:
  mutable std::mutex mutex_;
  std::map<const std::byte*, std::size_t> segments_;  // start -> bytes
};

}  // namespace gcvm
