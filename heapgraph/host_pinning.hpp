// Page-locking host memory so that a device's copy engines read it directly (DMA at
// the host link's speed, with no staging copy), as a hook that heapgraph calls
// without knowing any device API. A device backend implements it (the CUDA backend
// with cudaHostRegister, gc/device/cuda_host_pinner.hpp); AddressReservation calls it
// for what it has committed and, from then on, for every step it commits, and undoes
// every pin before it unmaps (virtual_array.hpp).
#pragma once

#include <cstddef>

namespace gcvm {

class HostPinner {
 public:
  virtual ~HostPinner() = default;
  /// Page-locks [base, base + bytes) (page-aligned) for device DMA; false if refused.
  virtual bool pin(std::byte* base, std::size_t bytes) = 0;
  /// Undoes one successful pin that started at `base`.
  virtual void unpin(std::byte* base) = 0;
};

}  // namespace gcvm
