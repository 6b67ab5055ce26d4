// libFuzzer target for the Tern compiler (vm/lang), with the standard-library modules
// a program imports: any input must compile or be rejected with AssemblyError carrying
// at least one `file:line:col: message`; anything else (another exception, a sanitizer
// report, a timeout, an allocation beyond -rss_limit_mb) is a bug. A compiled program
// must pass check_module (the invariants the interpreter trusts) and disassemble; it is
// never run. Seeds: fuzz/corpus/tern and the .tern sources of the repository;
// dictionary: fuzz/tern.dict.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "fuzz/module_check.hpp"
#include "vm/bytecode/disassembler.hpp"
#include "vm/lang/compiler.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view source(reinterpret_cast<const char*>(data), size);
  try {
    const gcvm::vm::Module module = gcvm::vm::compile_tern(source, "fuzz.tern");
    gcvm::fuzz::check_module(module);
    if (gcvm::vm::disassemble(module).empty()) std::abort();
  } catch (const gcvm::vm::AssemblyError& e) {
    if (e.diagnostics().empty()) std::abort();
  }
  return 0;
}
