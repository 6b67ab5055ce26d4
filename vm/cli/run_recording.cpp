// `gcvm run --record-trace`: the interpreter over RecordingSoaHeapBinding, in its own
// translation unit (run_guest.hpp says why).
#include "vm/cli/run_guest.hpp"

#include "heapgraph/trace/trace_writer.hpp"

namespace gcvm::cli {

int run_recording(const RunArgs& args, const vm::Module& module, HeapConfig config, std::unique_ptr<Marker> marker,
                  const std::vector<std::int64_t>& guest_args, std::optional<GenerationalOptions> generational,
                  std::optional<ConcurrentOptions> concurrent) {
  trace::TraceWriter writer(args.record_trace);
  vm::RecordingSoaHeapBinding binding(config, std::move(marker), args.verify, writer, generational, concurrent,
                                      args.collector.device_fallback());
  return run_on(args, module, binding, guest_args);
}

}  // namespace gcvm::cli
