// `gcvm disasm PROG.tern|PROG.gasm`: compile or assemble a program and print its bytecode.
#include <fmt/format.h>

#include <memory>

#include "vm/cli/load_program.hpp"
#include "vm/bytecode/disassembler.hpp"
#include "vm/cli/commands.hpp"

namespace gcvm::cli {

std::function<int()> register_disasm_command(CLI::App& app) {
  auto program = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("disasm", "Compile (.tern) or assemble (.gasm) a guest program and print its bytecode");
  cmd->add_option("program", *program, "Guest program (.tern or .gasm)")->required();
  return [program] {
    const vm::Module module = load_program(*program);
    fmt::print("{}", vm::disassemble(module));
    return kExitOk;
  };
}

}  // namespace gcvm::cli
