// cuda_peer_pairs (gc/device/communicator.hpp) where CUDA is built.
#include <cuda_runtime_api.h>

#include "gc/device/communicator.hpp"

namespace gcvm {

std::vector<std::pair<unsigned, unsigned>> cuda_peer_pairs() {
  std::vector<std::pair<unsigned, unsigned>> pairs;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return pairs;
  }
  for (int a = 0; a < count; ++a)
    for (int b = a + 1; b < count; ++b) {
      int ab = 0, ba = 0;
      if (cudaDeviceCanAccessPeer(&ab, a, b) == cudaSuccess && cudaDeviceCanAccessPeer(&ba, b, a) == cudaSuccess &&
          ab != 0 && ba != 0)
        pairs.emplace_back(static_cast<unsigned>(a), static_cast<unsigned>(b));
    }
  return pairs;
}

}  // namespace gcvm
