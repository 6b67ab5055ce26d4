// The OpenCL implementation of DeviceBackend (built when GCVM_HAVE_OPENCL).
//
// Devices are numbered across all platforms in the ICD loader's order (NVIDIA's GPU
// and PoCL's CPU device on the GPU machine; PoCL alone in CI), and the kernel
// program (kernels/common/*.h + kernels/opencl/mark_kernels.cl, embedded at build
// time) is compiled once per backend instance for its device. An OpenCL 1.2 in-order
// queue gives the same ordering guarantees as the CUDA stream. Kernel time is
// measured with profiling events on that queue. Backends open on one device at once
// (the partitions of `--device=opencl:0,0`) share its context and queue, so their
// commands run one after another, never two at once (PoCL 5.0 aborted on launches of
// one kernel running at once from two queues); a partition's kernel time then
// includes the other partitions' commands queued before its own.
#pragma once

#include <memory>
#include <vector>

#include "gc/device/device_backend.hpp"

namespace gcvm {

/// Every OpenCL device of every platform; empty when there is no ICD or platform.
std::vector<DeviceInfo> opencl_devices();

/// Opens OpenCL device `index` and builds the kernels; throws DeviceError on failure.
std::unique_ptr<DeviceBackend> open_opencl_backend(unsigned index);

}  // namespace gcvm
