// Runs guest source text in-process (assembler + interpreter over the SOA binding) and
// captures its output, exit status or guest error, for interpreter tests.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "gc/markers/serial_marker.hpp"
#include "vm/asm/assembler.hpp"
#include "vm/interp/interpreter.hpp"
#include "vm/runtime/soa_heap_binding.hpp"

namespace gcvm::test {

struct GuestRun {
  int status = -1;
  std::string out;
  bool failed = false;  // a GuestError was raised
  vm::GuestFailure failure = vm::GuestFailure::RuntimeError;
  std::string error;
  std::vector<std::string> trace;
  std::size_t collections = 0;
};

inline GuestRun run_guest(const std::string& source, std::vector<std::int64_t> args = {},
                          std::uint64_t heap_limit = 64u << 20, bool verify = true,
                          RefGraphMode mode = RefGraphMode::Barrier) {
  const vm::Module module = vm::assemble(source, "test.gasm");
  HeapConfig config;
  config.limit_bytes = heap_limit;
  config.graph_mode = mode;
  vm::SoaHeapBinding binding(config, std::make_unique<SerialMarker>(), verify);
  char* buffer = nullptr;
  std::size_t size = 0;
  FILE* out = open_memstream(&buffer, &size);
  GuestRun run;
  {
    vm::Interpreter<vm::SoaHeapBinding> interpreter(module, binding, std::move(args), out);
    try {
      run.status = interpreter.run();
    } catch (const vm::GuestError& e) {
      run.failed = true;
      run.failure = e.kind();
      run.error = e.what();
      run.trace = e.trace();
    }
  }
  std::fclose(out);
  run.out.assign(buffer, size);
  std::free(buffer);
  run.collections = binding.collections().size();
  return run;
}

/// The first diagnostic of assembling `source`, as "line:col: message", or "" if it assembles.
inline std::string first_error(const std::string& source) {
  try {
    vm::assemble(source, "t.gasm");
  } catch (const vm::AssemblyError& e) {
    const auto& d = e.diagnostics().front();
    return std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) + ": " + d.message;
  }
  return "";
}

}  // namespace gcvm::test
