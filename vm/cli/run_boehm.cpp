// `gcvm run --gc=boehm`: the interpreter over BoehmHeapBinding, in its own translation
// unit (run_guest.hpp says why).
#include "vm/cli/run_guest.hpp"
#include "vm/runtime/boehm_heap_binding.hpp"

namespace gcvm::cli {

int run_boehm(const RunArgs& args, const vm::Module& module, std::uint64_t limit_bytes, unsigned markers,
              const std::vector<std::int64_t>& guest_args) {
  vm::BoehmHeapBinding binding(limit_bytes, markers);
  return run_on(args, module, binding, guest_args);
}

}  // namespace gcvm::cli
