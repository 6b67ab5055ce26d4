#include "vm/lang/compiler.hpp"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "gc/heap/shape.hpp"
#include "vm/bytecode/opcodes.hpp"
#include "vm/lang/parser.hpp"
#include "vm/lang/program.hpp"
#include "vm/lang/resolver.hpp"

namespace gcvm::vm {

namespace tern {

using K = Type::K;

ClassSym& Program::new_class(const std::string& name) {
  ClassSym& c = class_storage.emplace_back();
  c.name = name;
  c.index = static_cast<std::uint32_t>(module.classes.size());
  module.classes.push_back(ClassInfo{name, {}, 0, 0, {}});
  return c;
}

void Program::add_field(ClassSym& c, const std::string& name, const Type& type) {
  FieldSym f;
  f.name = name;
  f.type = type;
  f.is_ref = type.is_ref();
  f.index = f.is_ref ? c.ref_fields++ : c.scalar_fields++;
  f.owner = &c;
  c.fields.push_back(std::move(f));
}

void Program::finish_class(ClassSym& c, SourceLoc loc) {
  ClassInfo& info = module.classes[c.index];
  info.ref_fields = c.ref_fields;
  info.scalar_fields = c.scalar_fields;
  const std::uint64_t bytes = ShapeTable::object_bytes(c.ref_fields, c.scalar_fields);
  if (bytes > ShapeTable::kMaxObjectBytes) {
    const std::string limit = "; at most " + std::to_string(ShapeTable::kMaxObjectBytes) + " fit a heap block";
    if (c.decl != nullptr)
      diag.error(loc, "class " + c.name + " needs " + std::to_string(bytes) + " bytes per object" + limit +
                          " (use an array)");
    else
      diag.error(loc, "the variables this lambda captures need " + std::to_string(bytes) + " bytes" + limit);
  }
  c.first_field = static_cast<std::uint32_t>(module.fields.size());
  for (std::uint32_t i = 0; i < c.fields.size(); ++i) {
    const FieldSym& f = c.fields[i];
    info.fields.push_back(FieldInfo{f.name, type_name(f.type), f.is_ref, f.index});
    module.fields.push_back(FieldRef{c.index, i});
  }
}

std::uint32_t Program::field_ref(const ClassSym& c, const FieldSym& f) const {
  return c.first_field + static_cast<std::uint32_t>(&f - c.fields.data());
}

std::uint32_t Program::new_function(const std::string& name, std::uint32_t line) {
  FunctionInfo f;
  f.name = name;
  f.line = line;
  module.functions.push_back(std::move(f));
  return static_cast<std::uint32_t>(module.functions.size() - 1);
}

Type Program::resolve(const TypeExpr& t, const ClassSym* context) {
  if (t.kind == TypeExpr::Kind::Array) {
    const Type e = resolve(t.args[0], context);
    return e.is_error() ? e : Type::array_of(e);
  }
  if (t.kind == TypeExpr::Kind::Func) {
    Type f = Type::of(K::Func);
    for (const TypeExpr& a : t.args) {
      f.args.push_back(resolve(a, context));
      if (f.args.back().is_error()) return f.args.back();
    }
    f.args.push_back(t.result.empty() ? Type::of(K::Void) : resolve(t.result[0], context));
    return f.args.back().is_error() ? f.args.back() : f;
  }
  auto plain = [&](K k) {
    if (!t.args.empty()) diag.error(t.loc, "type " + t.name + " takes no type arguments");
    return Type::of(k);
  };
  if (t.name == "int") return plain(K::Int);
  if (t.name == "float") return plain(K::Float);
  if (t.name == "bool") return plain(K::Bool);
  if (t.name == "string") return plain(K::String);
  if (t.name == "Object") return plain(K::Object);
  if (context != nullptr)
    for (std::uint32_t i = 0; i < context->type_params.size(); ++i)
      if (context->type_params[i] == t.name) {
        Type p = plain(K::Param);
        p.param = i;
        return p;
      }
  const auto it = classes.find(t.name);
  if (it == classes.end() || it->second->name[0] == '$') {
    diag.error(t.loc, "unknown type '" + t.name + "'");
    return Type::of(K::Error);
  }
  ClassSym* c = it->second;
  if (t.args.size() != c->type_params.size()) {
    diag.error(t.loc, "class " + c->name + " takes " + std::to_string(c->type_params.size()) + " type argument" +
                          (c->type_params.size() == 1 ? "" : "s") + ", given " + std::to_string(t.args.size()));
    return Type::of(K::Error);
  }
  Type out = Type::of(K::Class);
  out.cls = c;
  for (const TypeExpr& a : t.args) {
    Type at = resolve(a, context);
    if (at.is_error()) return at;
    if (!at.is_ref()) {
      diag.error(a.loc, "a type argument must be a reference type (a class, string, array or function), not " +
                            type_name(at));
      return Type::of(K::Error);
    }
    out.args.push_back(std::move(at));
  }
  if (check_bounds) check_type_arguments(t, out, context);
  return out;
}

void Program::check_type_arguments(const TypeExpr& t, const Type& type, const ClassSym* context) {
  const ClassSym* c = type.cls;
  for (std::size_t i = 0; i < c->bounds.size(); ++i) {
    if (c->bounds[i].is_error()) continue;
    const Type want = substitute(c->bounds[i], type.args);
    const Type& arg = type.args[i];
    const bool ok = arg.k == K::Param ? context != nullptr && arg.param < context->bounds.size() &&
                                            context->bounds[arg.param] == want
                                      : assignable(arg, want);
    if (!ok)
      diag.error(t.args[i].loc, "type argument " + type_name(arg) + " of " + c->name + " does not implement " +
                                    type_name(want));
  }
}

namespace {

class Compiler {
 public:
  Compiler(Module& m, Diagnostics& d) : p_{m, d} {}

  void run(std::string_view source, const std::string& file) {
    units_.push_back(parse(source, file, p_.diag));
    load_imports(units_.back());
    declare_classes();
    declare_functions_and_globals();
    compile_bodies();
  }

 private:
  void load_imports(const Unit& u) {
    for (const auto& [name, loc] : u.imports) {
      if (!loaded_.insert(name).second) continue;
      const char* text = tern_stdlib_module(name);
      if (text == nullptr) {
        p_.diag.error(loc, "unknown module '" + name + "' (the standard library has: " + tern_stdlib_names() + ")");
        continue;
      }
      units_.push_back(parse(text, "std/" + name, p_.diag));
      load_imports(units_.back());
    }
  }

  void declare_classes() {
    p_.box_scalar = &p_.new_class("$BoxScalar");
    p_.add_field(*p_.box_scalar, "value", Type::of(K::Int));
    p_.finish_class(*p_.box_scalar, SourceLoc{1, 1});
    p_.box_ref = &p_.new_class("$BoxRef");
    p_.add_field(*p_.box_ref, "value", Type::of(K::Object));
    p_.finish_class(*p_.box_ref, SourceLoc{1, 1});
    std::vector<ClassSym*> declared;
    std::vector<std::pair<ClassSym*, const TypeExpr*>> implemented;
    for (Unit& u : units_)
      for (auto& cd : u.classes) {
        if (p_.classes.count(cd->name) || is_builtin_type(cd->name)) {
          p_.diag.error(cd->loc, "class '" + cd->name + "' is already defined");
          continue;
        }
        ClassSym& c = p_.new_class(cd->name);
        c.decl = cd.get();
        c.type_params = cd->type_params;
        c.is_abstract = cd->is_abstract;
        c.is_interface = cd->is_interface;
        p_.classes[c.name] = &c;
        declared.push_back(&c);
      }
    for (ClassSym* c : declared) {
      c->bounds.assign(c->type_params.size(), Type::of(K::Error));
      for (std::size_t i = 0; i < c->decl->bounds.size(); ++i) {
        const TypeExpr& b = c->decl->bounds[i];
        if (b.name.empty()) continue;
        const Type bt = p_.resolve(b, c);
        if (!bt.is_error() && (bt.k != K::Class || !bt.cls->is_interface))
          p_.diag.error(b.loc, "the bound of a type parameter must be an interface, not " + type_name(bt));
        else c->bounds[i] = bt;
      }
      for (const TypeExpr& i : c->decl->interfaces) {
        const Type it = p_.resolve(i, c);
        if (it.is_error()) continue;
        const std::string kind = c->is_interface ? "interface " : "class ";
        if (it.k != K::Class || !it.cls->is_interface) {
          p_.diag.error(i.loc, c->is_interface ? "an interface can only extend an interface, not " + type_name(it)
                                               : "a class can only implement an interface, not " + type_name(it));
          continue;
        }
        if (std::find(c->interfaces.begin(), c->interfaces.end(), it) != c->interfaces.end()) {
          p_.diag.error(i.loc, kind + c->name + " already " + (c->is_interface ? "extends " : "implements ") +
                                   type_name(it));
          continue;
        }
        c->interfaces.push_back(it);
        implemented.emplace_back(c, &i);
      }
    }
    for (ClassSym* c : declared)
      if (c->is_interface && extends_itself(c, c)) {
        p_.diag.error(c->decl->loc, "interface " + c->name + " extends itself");
        c->interfaces.clear();
      }
    for (ClassSym* c : declared) {
      if (!c->decl->has_super) continue;
      const Type st = p_.resolve(c->decl->super, c);
      if (st.is_error()) continue;
      if (st.k != K::Class || st.cls->is_interface) {
        p_.diag.error(c->decl->super.loc, "a class can only extend a class, not " + type_name(st) +
                                              (st.k == K::Class ? " (an interface: use 'implements')" : ""));
        continue;
      }
      bool cycle = false;
      for (ClassSym* a = st.cls; a != nullptr; a = a->super) cycle |= a == c;
      if (cycle) {
        p_.diag.error(c->decl->super.loc, "class " + c->name + " extends itself (through " + st.cls->name + ")");
        continue;
      }
      c->super = st.cls;
      c->super_type = st;
      st.cls->subclasses.push_back(c);
    }
    for (ClassSym* c : declared) {
      bool dispatched = false;
      for (const ClassSym* a = c; a != nullptr; a = a->super)
        dispatched |= a->super != nullptr || !a->subclasses.empty() || !a->interfaces.empty();
      c->dispatched = dispatched && !c->is_interface;
    }
    // Bounds hold once every class knows its interfaces: check the types written so far.
    p_.check_bounds = true;
    for (ClassSym* c : declared)
      if (c->super != nullptr) p_.resolve(c->decl->super, c);
    for (const auto& [c, i] : implemented) p_.resolve(*i, c);
    std::set<ClassSym*> done;
    for (ClassSym* c : declared) lay_out(c, done);
    fill_interface_slots(declared);
  }

  /// Whether `target` is among the interfaces that `c` extends, directly or not.
  static bool extends_itself(const ClassSym* c, const ClassSym* target, std::set<const ClassSym*> seen = {}) {
    for (const Type& i : c->interfaces) {
      if (i.cls == target) return true;
      if (seen.insert(i.cls).second && extends_itself(i.cls, target, seen)) return true;
    }
    return false;
  }

  /// Gives every interface method its own vtable slot after every class's slots and
  /// fills those slots in the vtable of each class that implements the interface.
  void fill_interface_slots(const std::vector<ClassSym*>& declared) {
    std::size_t base = 0;
    for (const ClassSym* c : declared) base = std::max(base, c->vtable.size());
    std::size_t next = base;
    for (ClassSym* c : declared) {
      if (!c->is_interface) continue;
      for (auto& md : c->decl->methods)
        if (MethodSym* m = c->method(md->name); m != nullptr && m->decl == md.get()) {
          m->vslot = static_cast<std::int32_t>(next++);
          m->overridden = true;
        }
    }
    for (ClassSym* c : declared) {
      if (c->is_interface) continue;
      std::set<const MethodSym*> done;
      for (Type cur = own_type(*c); cur.k == K::Class;) {
        for (const Type& it : cur.cls->interfaces) implement(*c, substitute(it, cur.args), next, done);
        if (cur.cls->super == nullptr) break;
        cur = substitute(cur.cls->super_type, cur.args);
      }
    }
  }
  /// Fills the slots of the methods that `iface` and the interfaces it extends declare
  /// in the vtable of `c`, or reports what `c` lacks; `done`: the methods seen so far.
  void implement(ClassSym& c, const Type& iface, std::size_t slots, std::set<const MethodSym*>& done) {
    for (const Type& parent : iface.cls->interfaces) implement(c, substitute(parent, iface.args), slots, done);
    for (const auto& [name, im] : iface.cls->methods) {
      if (im->owner != iface.cls || !done.insert(im).second) continue;
      MethodSym* m = c.method(name);
      if (m == nullptr || m->name == "init") {
        if (!c.is_abstract)
          p_.diag.error(c.decl->loc, "class " + c.name + " does not implement " + im->owner->name + "." + name);
        continue;
      }
      if (!same_signature(*m, own_type(c), *im, iface)) {
        p_.diag.error(m->decl->loc, "method '" + name + "' of class " + c.name + " does not match " +
                                        im->owner->name + "." + name + " of " + type_name(iface));
        continue;
      }
      if (c.vtable.size() < slots) c.vtable.resize(slots, nullptr);
      c.vtable[static_cast<std::size_t>(im->vslot)] = m;
    }
  }
  static bool is_builtin_type(const std::string& n) {
    return n == "int" || n == "float" || n == "bool" || n == "string" || n == "Object";
  }

  void lay_out(ClassSym* c, std::set<ClassSym*>& done) {
    if (!done.insert(c).second) return;
    ClassSym* s = c->super;
    if (s != nullptr) {
      lay_out(s, done);
      for (const FieldSym& f : s->fields) {
        p_.add_field(*c, f.name, substitute(f.type, c->super_type.args));
        c->fields.back().owner = f.owner;
        c->fields.back().type = f.type;
      }
      c->methods = s->methods;
      c->vtable = s->vtable;
    } else if (c->dispatched) {
      p_.add_field(*c, "$class", Type::of(K::Int));
    }
    for (const FieldDecl& fd : c->decl->fields) {
      if (c->field(fd.name) != nullptr) {
        p_.diag.error(fd.loc, "field '" + fd.name + "' is already defined in class " + c->name +
                                  (c->field(fd.name)->owner != c ? " (inherited)" : ""));
        continue;
      }
      const Type t = p_.resolve(fd.type, c);
      p_.add_field(*c, fd.name, t.is_error() ? Type::of(K::Int) : t);
    }
    p_.finish_class(*c, c->decl->loc);
    std::set<std::string> own;
    for (auto& md : c->decl->methods) {
      if (!own.insert(md->name).second) {
        p_.diag.error(md->loc, "method '" + md->name + "' is already defined in class " + c->name);
        continue;
      }
      MethodSym& m = p_.method_storage.emplace_back();
      m.name = md->name;
      m.decl = md.get();
      m.owner = c;
      m.is_abstract = md->is_abstract;
      for (const Param& prm : md->params) m.params.push_back(p_.resolve(prm.type, c));
      if (!md->result.empty()) m.result = p_.resolve(md->result[0], c);
      m.function = p_.new_function(c->name + "." + m.name, md->loc.line);
      if (m.is_abstract && !c->is_abstract)
        p_.diag.error(md->loc, "abstract method '" + m.name + "' in class " + c->name + ", which is not abstract");
      MethodSym* inherited = m.name == "init" ? nullptr : c->method(m.name);
      if (inherited != nullptr) {
        bool same = inherited->params.size() == m.params.size() &&
                    substitute(inherited->result, c->super_type.args) == m.result;
        for (std::size_t i = 0; same && i < m.params.size(); ++i)
          same = substitute(inherited->params[i], c->super_type.args) == m.params[i];
        if (!same)
          p_.diag.error(md->loc, "method '" + m.name + "' overrides " + inherited->owner->name + "." + m.name +
                                     " with a different signature");
        m.vslot = inherited->vslot;
        for (ClassSym* a = c->super; a != nullptr; a = a->super)
          if (MethodSym* am = a->method(m.name)) am->overridden = true;
        c->vtable[static_cast<std::size_t>(m.vslot)] = &m;
      } else if (c->dispatched && m.name != "init") {
        m.vslot = static_cast<std::int32_t>(c->vtable.size());
        c->vtable.push_back(&m);
      }
      c->methods[m.name] = &m;
    }
    if (c->is_interface) {
      inherit_interface_methods(*c, done);
      return;
    }
    if (!c->is_abstract)
      for (const auto& [name, m] : c->methods)
        if (m->is_abstract)
          p_.diag.error(c->decl->loc, "class " + c->name + " does not implement abstract method " + m->owner->name +
                                          "." + name);
  }

  /// Gives interface `c` the methods of the interfaces it extends; one that `c` declares
  /// again must have the same signature.
  void inherit_interface_methods(ClassSym& c, std::set<ClassSym*>& done) {
    for (const Type& parent : c.interfaces) {
      lay_out(parent.cls, done);
      for (const auto& [name, im] : parent.cls->methods) {
        MethodSym* own = c.method(name);
        if (own == nullptr) {
          c.methods[name] = im;
        } else if (own != im && !same_signature(*own, own_type(c), *im, parent)) {
          p_.diag.error(own->decl->loc, "method '" + name + "' of interface " + c.name + " does not match " +
                                            im->owner->name + "." + name + " of " + type_name(parent));
        }
      }
    }
  }

  /// Whether `m` seen from `m_holder` (a type that has it) and `other` seen from
  /// `other_holder` take the same parameters and give the same result.
  static bool same_signature(const MethodSym& m, const Type& m_holder, const MethodSym& other, const Type& other_holder) {
    const std::vector<Type> m_args = as_ancestor(m_holder, m.owner).args;
    const std::vector<Type> other_args = as_ancestor(other_holder, other.owner).args;
    if (m.params.size() != other.params.size() ||
        substitute(m.result, m_args) != substitute(other.result, other_args))
      return false;
    for (std::size_t i = 0; i < m.params.size(); ++i)
      if (substitute(m.params[i], m_args) != substitute(other.params[i], other_args)) return false;
    return true;
  }

  void declare_functions_and_globals() {
    for (Unit& u : units_) {
      for (auto& fd : u.functions) {
        if (p_.functions.count(fd->name)) {
          p_.diag.error(fd->loc, "function '" + fd->name + "' is already defined");
          continue;
        }
        FunctionSym f;
        f.decl = fd.get();
        for (const Param& prm : fd->params) f.params.push_back(p_.resolve(prm.type, nullptr));
        if (!fd->result.empty()) f.result = p_.resolve(fd->result[0], nullptr);
        f.function = p_.new_function(fd->name, fd->loc.line);
        p_.functions[fd->name] = std::move(f);
      }
      for (GlobalDecl& g : u.globals) {
        if (p_.globals.count(g.name)) {
          p_.diag.error(g.loc, "global '" + g.name + "' is already defined");
          continue;
        }
        Type t;
        if (g.has_type) {
          t = p_.resolve(g.type, nullptr);
        } else if (g.value) {  // without either, the parser has reported it; t stays the error type
          switch (g.value->kind) {
            case ExprKind::IntLit: t = Type::of(K::Int); break;
            case ExprKind::FloatLit: t = Type::of(K::Float); break;
            case ExprKind::BoolLit: t = Type::of(K::Bool); break;
            case ExprKind::StringLit: t = Type::of(K::String); break;
            case ExprKind::Unary:
              if (g.value->kids[0]->kind == ExprKind::IntLit) t = Type::of(K::Int);
              else if (g.value->kids[0]->kind == ExprKind::FloatLit) t = Type::of(K::Float);
              break;
            default: break;
          }
          if (t.is_error())
            p_.diag.error(g.loc, "global '" + g.name + "' needs a type (only a literal's type is inferred)");
        }
        GlobalSym s;
        s.type = t;
        s.index = static_cast<std::uint32_t>(p_.module.globals.size());
        p_.module.globals.push_back(GlobalInfo{g.name, type_name(t), t.is_ref()});
        p_.globals[g.name] = s;
        if (g.value) p_.global_inits.push_back(&g);
      }
    }
  }

  void compile_bodies() {
    // Compiling a method that holds a lambda adds the lambda's closure class to
    // class_storage: walk it by index, since emplace_back keeps a deque's references
    // valid but not its iterators.
    for (std::size_t ci = 0; ci < p_.class_storage.size(); ++ci) {
      ClassSym& c = p_.class_storage[ci];
      if (c.decl == nullptr) continue;
      const Type this_type = own_type(c);
      for (auto& md : c.decl->methods) {
        MethodSym* m = nullptr;
        for (MethodSym& ms : p_.method_storage)
          if (ms.decl == md.get()) m = &ms;
        if (m == nullptr) continue;
        if (m->is_abstract) {
          FunctionInfo& f = p_.module.functions[m->function];
          f.param_count = f.frame_size = 1 + static_cast<std::uint32_t>(m->params.size());
          f.slots.push_back(SlotInfo{"this", type_name(this_type), true});
          for (std::size_t i = 0; i < m->params.size(); ++i)
            f.slots.push_back(SlotInfo{md->params[i].var->name, type_name(m->params[i]), m->params[i].is_ref()});
          for (std::uint32_t s = 0; s < f.slots.size(); ++s)
            if (f.slots[s].is_ref) f.ref_slots.push_back(s);
          f.returns_value = m->result.k != K::Void;
          f.return_type = f.returns_value ? type_name(m->result) : "";
          f.code = {static_cast<std::uint32_t>(Op::FALLOFF)};
          f.lines = {md->loc.line};
          continue;
        }
        resolve_locals(*md, true);
        set_signature(m->function, m->result);
        compile_body(p_, *md, m->function, &c, this_type, m->params, m->result, nullptr);
      }
    }
    for (auto& [name, f] : p_.functions) {
      resolve_locals(*f.decl, false);
      set_signature(f.function, f.result);
      compile_body(p_, *f.decl, f.function, nullptr, Type{}, f.params, f.result, nullptr);
    }
    for (std::size_t i = 0; i < p_.lambdas.size(); ++i) {
      const PendingLambda& pl = p_.lambdas[i];
      set_signature(pl.function, pl.result);
      compile_body(p_, *pl.decl, pl.function, pl.this_class, pl.this_type, pl.params, pl.result, &pl);
    }
    const auto main = p_.functions.find("main");
    if (main == p_.functions.end()) {
      p_.diag.error(SourceLoc{1, 1}, "the program has no 'fn main()'");
      return;
    }
    if (!main->second.params.empty() || (main->second.result.k != K::Void && main->second.result.k != K::Int))
      p_.diag.error(main->second.decl->loc, "main takes no parameters and returns nothing or an int");
    p_.module.main_function = main->second.function;
    for (ClassSym& c : p_.class_storage)
      for (MethodSym* m : c.vtable) p_.module.classes[c.index].vtable.push_back(m != nullptr ? m->function : 0);
  }
  void set_signature(std::uint32_t function, const Type& result) {
    FunctionInfo& f = p_.module.functions[function];
    f.returns_value = result.k != K::Void;
    f.return_type = f.returns_value ? type_name(result) : "";
  }

  Program p_;
  std::deque<Unit> units_;
  std::set<std::string> loaded_;
};

}  // namespace

}  // namespace tern

Module compile_tern(std::string_view source, const std::string& file) {
  Module m;
  m.file = file;
  Diagnostics d(file);
  tern::Compiler(m, d).run(source, file);
  d.throw_if_any();
  return m;
}

Module compile_tern_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open the program");
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw InputError(path + ": cannot read the program");
  return compile_tern(ss.str(), path);
}

}  // namespace gcvm::vm
