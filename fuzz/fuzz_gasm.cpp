// libFuzzer target for the gasm assembler (vm/asm): any input must assemble or be
// rejected with AssemblyError carrying at least one `file:line:col: message`; anything
// else (another exception, a sanitizer report, a timeout, an allocation beyond
// -rss_limit_mb) is a bug. An accepted program must pass check_module (the invariants
// the interpreter trusts) and disassemble; it is never run. Seeds: workloads/*.gasm and
// fuzz/corpus/gasm; dictionary: fuzz/gasm.dict.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "fuzz/module_check.hpp"
#include "vm/asm/assembler.hpp"
#include "vm/bytecode/disassembler.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view source(reinterpret_cast<const char*>(data), size);
  try {
    const gcvm::vm::Module module = gcvm::vm::assemble(source, "fuzz.gasm");
    gcvm::fuzz::check_module(module);
    if (gcvm::vm::disassemble(module).empty()) std::abort();
  } catch (const gcvm::vm::AssemblyError& e) {
    if (e.diagnostics().empty()) std::abort();
  }
  return 0;
}
