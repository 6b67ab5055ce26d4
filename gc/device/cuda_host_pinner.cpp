#include "gc/device/cuda_host_pinner.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>

namespace gcvm {

std::shared_ptr<CudaHostPinner> CudaHostPinner::instance() {
  static const std::shared_ptr<CudaHostPinner> pinner = std::make_shared<CudaHostPinner>();
  return pinner;
}

bool CudaHostPinner::pin(std::byte* base, std::size_t bytes) {
  if (cudaHostRegister(base, bytes, cudaHostRegisterPortable) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  const std::lock_guard lock(mutex_);
  segments_[base] = bytes;
  return true;
}

void CudaHostPinner::unpin(std::byte* base) {
  {
    const std::lock_guard lock(mutex_);
    segments_.erase(base);
  }
  if (cudaHostUnregister(base) != cudaSuccess) cudaGetLastError();
}

std::size_t CudaHostPinner::pinned_from(const void* p) const {
  const auto* at = static_cast<const std::byte*>(p);
  const std::lock_guard lock(mutex_);
  auto it = segments_.upper_bound(at);
  if (it == segments_.begin()) return 0;
  --it;
  const std::byte* end = it->first + it->second;
  return at < end ? static_cast<std::size_t>(end - at) : 0;
}

std::size_t CudaHostPinner::unpinned_from(const void* p, std::size_t limit) const {
  const auto* at = static_cast<const std::byte*>(p);
  const std::lock_guard lock(mutex_);
  const auto next = segments_.upper_bound(at);
  return next == segments_.end() ? limit : std::min(limit, static_cast<std::size_t>(next->first - at));
}

}  // namespace gcvm
