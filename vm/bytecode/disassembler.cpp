#include "vm/bytecode/disassembler.hpp"

#include <fmt/format.h>

#include <bit>

#include "vm/bytecode/opcodes.hpp"

namespace gcvm::vm {

namespace {

std::string lower(std::string_view name) {
  std::string out(name);
  for (char& c : out) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return out;
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '"') out += "\\\"";
    else if (c == '\\') out += "\\\\";
    else out += c;
  }
  return out + "\"";
}

class Lister {
 public:
  explicit Lister(const Module& m) : m_(m) {}

  std::string slot(const FunctionInfo& f, std::uint32_t s) const {
    if (s == kNoSlot) return "_";
    return s < f.slots.size() ? f.slots[s].name : fmt::format("?{}", s);
  }

  std::string operand(const FunctionInfo& f, char kind, std::uint32_t w) const {
    switch (kind) {
      case 'd':
      case 's': return slot(f, w);
      case 'i': return std::to_string(static_cast<std::int32_t>(w));
      case 'k': {
        const std::uint64_t bits = w < m_.constants.size() ? m_.constants[w] : 0;
        return fmt::format("k{}(int {} | float {})", w, static_cast<std::int64_t>(bits), std::bit_cast<double>(bits));
      }
      case 'g': return w < m_.globals.size() ? "@" + m_.globals[w].name : fmt::format("@?{}", w);
      case 'j': return fmt::format("-> {}", w);
      case 'c': return w < m_.classes.size() ? m_.classes[w].name : fmt::format("class?{}", w);
      case 'f': {
        if (w >= m_.fields.size()) return fmt::format("field?{}", w);
        const ClassInfo& c = m_.classes[m_.fields[w].class_index];
        const FieldInfo& f = c.fields[m_.fields[w].field];
        return fmt::format("{}.{}#{}", c.name, f.name, f.index);
      }
      case 't': return w < m_.strings.size() ? quoted(m_.strings[w]) : fmt::format("str?{}", w);
      case 'n': return w < m_.functions.size() ? m_.functions[w].name : fmt::format("func?{}", w);
      default: return "?";
    }
  }

  std::string function(const FunctionInfo& f) const {
    std::string out = fmt::format("func {} (line {}): {} param{}, frame {} slot{}, returns {}\n", f.name, f.line,
                                  f.param_count, f.param_count == 1 ? "" : "s", f.frame_size,
                                  f.frame_size == 1 ? "" : "s", f.returns_value ? f.return_type : "nothing");
    for (std::uint32_t s = 0; s < f.slots.size(); ++s)
      out += fmt::format("  slot {:3} {:12} {}{}\n", s, f.slots[s].name, f.slots[s].type, f.slots[s].is_ref ? "  (ref)" : "");
    std::uint32_t last_line = 0;
    for (std::uint32_t pc = 0; pc < f.code.size();) {
      const Op op = static_cast<Op>(f.code[pc]);
      if (static_cast<std::uint32_t>(op) >= kOpCount) {
        out += fmt::format("  {:5}  <bad opcode {}>\n", pc, f.code[pc]);
        break;
      }
      const OpInfo& info = op_info(op);
      std::string args;
      if (op == Op::CALL || op == Op::CALLV) {
        const std::uint32_t argc = f.code[pc + 3];
        const std::string callee =
            op == Op::CALL ? operand(f, 'n', f.code[pc + 1]) : fmt::format("vtable[{}]", f.code[pc + 1]);
        args = fmt::format("{} <- {}(", slot(f, f.code[pc + 2]), callee);
        for (std::uint32_t a = 0; a < argc; ++a) args += (a ? ", " : "") + slot(f, f.code[pc + 4 + a]);
        args += ")";
      } else {
        for (std::size_t k = 0; k < info.operands.size(); ++k)
          args += (k ? ", " : "") + operand(f, info.operands[k], f.code[pc + 1 + k]);
      }
      const std::uint32_t line = f.lines[pc];
      std::string text = fmt::format("  {:5}  {:9} {}", pc, lower(info.name), args);
      if (line != last_line) text = fmt::format("{:<48} ; line {}", text, line);
      last_line = line;
      out += text + "\n";
      pc += instruction_words(&f.code[pc]);
    }
    return out;
  }

  std::string run() const {
    std::string out = fmt::format("module {}: {} class{}, {} global{}, {} function{}, {} constant{}, {} string{}\n",
                                  m_.file, m_.classes.size(), m_.classes.size() == 1 ? "" : "es", m_.globals.size(),
                                  m_.globals.size() == 1 ? "" : "s", m_.functions.size(),
                                  m_.functions.size() == 1 ? "" : "s", m_.constants.size(),
                                  m_.constants.size() == 1 ? "" : "s", m_.strings.size(), m_.strings.size() == 1 ? "" : "s");
    for (const ClassInfo& c : m_.classes) {
      out += fmt::format("class {}: {} ref field{}, {} scalar field{}\n", c.name, c.ref_fields, c.ref_fields == 1 ? "" : "s",
                         c.scalar_fields, c.scalar_fields == 1 ? "" : "s");
      for (std::uint32_t v = 0; v < c.vtable.size(); ++v)
        out += fmt::format("  vtable[{}] {}\n", v, operand(m_.functions.front(), 'n', c.vtable[v]));
      for (const FieldInfo& f : c.fields)
        out += fmt::format("  {:12} {:10} {} #{}\n", f.name, f.type, f.is_ref ? "ref" : "scalar", f.index);
    }
    for (const GlobalInfo& g : m_.globals) out += fmt::format("global @{}: {}{}\n", g.name, g.type, g.is_ref ? "  (ref)" : "");
    for (const FunctionInfo& f : m_.functions) {
      out += '\n';
      out += function(f);
    }
    return out;
  }

 private:
  const Module& m_;
};

}  // namespace

std::string disassemble(const Module& module) { return Lister(module).run(); }

}  // namespace gcvm::vm
