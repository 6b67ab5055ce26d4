#include "gc/device/device_registry.hpp"

#include "gc/markers/gc_options.hpp"
#if GCVM_HAVE_CUDA
#include "gc/device/cuda_backend.hpp"
#endif
#if GCVM_HAVE_OPENCL
#include "gc/device/opencl_backend.hpp"
#endif

namespace gcvm {

DeviceSelector parse_device_selector(const std::string& text) {
  DeviceSelector selector;
  const auto colon = text.find(':');
  selector.backend = text.substr(0, colon);
  const bool known = selector.backend == "auto" || selector.backend == "cuda" || selector.backend == "opencl";
  if (!known) throw ConfigError("--device=" + text + " is not a device; use auto, cuda or opencl, optionally :N");
  if (colon != std::string::npos) {
    const std::string number = text.substr(colon + 1);
    const auto index = parse_gc_count(number);
    if (selector.automatic() || !index)
      throw ConfigError("--device=" + text + " is not a device; use auto, cuda or opencl, optionally :N");
    selector.index = *index;
  }
  return selector;
}

std::vector<std::string> built_backends() {
  std::vector<std::string> names;
#if GCVM_HAVE_CUDA
  names.emplace_back("cuda");
#endif
#if GCVM_HAVE_OPENCL
  names.emplace_back("opencl");
#endif
  return names;
}

std::vector<DeviceInfo> usable_devices() {
  std::vector<DeviceInfo> devices;
#if GCVM_HAVE_CUDA
  for (DeviceInfo& d : cuda_devices()) devices.push_back(std::move(d));
#endif
#if GCVM_HAVE_OPENCL
  for (DeviceInfo& d : opencl_devices()) devices.push_back(std::move(d));
#endif
  return devices;
}

std::unique_ptr<DeviceBackend> open_device(const DeviceSelector& selector) {
  if (selector.automatic()) {
    for (const DeviceInfo& d : usable_devices()) {
      if (d.type == "cpu") continue;
#if GCVM_HAVE_CUDA
      if (d.backend == "cuda") return open_cuda_backend(d.index);
#endif
#if GCVM_HAVE_OPENCL
      if (d.backend == "opencl") return open_opencl_backend(d.index);
#endif
    }
    return nullptr;
  }
  const unsigned index = selector.index.value_or(0);
#if GCVM_HAVE_CUDA
  if (selector.backend == "cuda") return open_cuda_backend(index);
#endif
#if GCVM_HAVE_OPENCL
  if (selector.backend == "opencl") return open_opencl_backend(index);
#endif
  throw DeviceError("--device=" + selector.backend + ": this gcvm was built without the " + selector.backend +
                    " backend");
}

}  // namespace gcvm
