// `gcvm disasm PROG.gasm`: assemble a program and print its bytecode.
#include <fmt/format.h>

#include <memory>

#include "vm/asm/assembler.hpp"
#include "vm/bytecode/disassembler.hpp"
#include "vm/cli/commands.hpp"

namespace gcvm::cli {

std::function<int()> register_disasm_command(CLI::App& app) {
  auto program = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("disasm", "Assemble a guest program (.gasm) and print its bytecode");
  cmd->add_option("program", *program, "Guest program (.gasm)")->required();
  return [program] {
    const vm::Module module = vm::assemble_file(*program);
    fmt::print("{}", vm::disassemble(module));
    return kExitOk;
  };
}

}  // namespace gcvm::cli
