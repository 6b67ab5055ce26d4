#include "vm/cli/load_program.hpp"

#include <filesystem>

#include "vm/asm/assembler.hpp"
#include "vm/lang/compiler.hpp"

namespace gcvm::cli {

vm::Module load_program(const std::string& path) {
  if (std::filesystem::path(path).extension() == ".tern") return vm::compile_tern_file(path);
  return vm::assemble_file(path);
}

}  // namespace gcvm::cli
