# Writes OUTPUT: a C++ file defining gcvm::vm::tern_stdlib_module(name) over the .tern
# files given in SOURCES (a |-separated list), each embedded as a raw string literal,
# and tern_stdlib_names(), their names in order.
string(REPLACE "|" ";" SOURCES "${SOURCES}")
set(body "")
set(names "")
foreach(src IN LISTS SOURCES)
  get_filename_component(name "${src}" NAME_WE)
  file(READ "${src}" text)
  string(APPEND body "  if (name == \"${name}\") return R\"tern_module(${text})tern_module\";\n")
  if(names)
    string(APPEND names ", ")
  endif()
  string(APPEND names "${name}")
endforeach()
file(WRITE "${OUTPUT}.tmp" "// Generated from vm/lang/stdlib/*.tern by cmake/embed_tern_stdlib.cmake; do not edit.\n#include \"vm/lang/compiler.hpp\"\n\nnamespace gcvm::vm {\n\nconst char* tern_stdlib_module(std::string_view name) {\n${body}  return nullptr;\n}\n\nstd::string tern_stdlib_names() { return \"${names}\"; }\n\n}  // namespace gcvm::vm\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
