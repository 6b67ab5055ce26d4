// The CUDA implementation of DeviceBackend (built when GCVM_HAVE_CUDA).
//
// One stream per backend; device buffers grow by half again when they must grow, so
// a heap that grows between collections reallocates rarely. Timing uses CUDA
// events on the stream. A machine without a driver or device reports no CUDA
// devices (cudaErrorNoDevice / cudaErrorInsufficientDriver are "none", not errors).
#pragma once

#include <memory>
#include <vector>

#include "gc/device/device_backend.hpp"

namespace gcvm {

/// Every usable CUDA device; empty when there is no driver or device.
std::vector<DeviceInfo> cuda_devices();

/// Opens CUDA device `index`; throws DeviceError if it cannot be used.
std::unique_ptr<DeviceBackend> open_cuda_backend(unsigned index);

}  // namespace gcvm
