#include "heapgraph/import/heap_format.hpp"

#include <array>
#include <fstream>

#include "heapgraph/import/import_error.hpp"

namespace gcvm {

namespace {

bool is_json_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/// True if `head` starts with '{' and a first key naming a heap-snapshot section.
bool looks_like_v8(std::string_view head) {
  std::size_t i = 0;
  if (head.substr(0, 3) == "\xEF\xBB\xBF") i = 3;  // UTF-8 byte order mark
  while (i < head.size() && is_json_space(head[i])) ++i;
  if (i >= head.size() || head[i] != '{') return false;
  ++i;
  while (i < head.size() && is_json_space(head[i])) ++i;
  for (std::string_view key : {"\"snapshot\"", "\"nodes\"", "\"edges\""})
    if (head.substr(i, key.size()) == key) return true;
  return false;
}

}  // namespace

std::string_view heap_format_name(HeapFormat format) {
  switch (format) {
    case HeapFormat::GcvmTrace: return "gcvm trace";
    case HeapFormat::Hprof: return "HPROF heap dump";
    case HeapFormat::V8Snapshot: return "V8 heap snapshot";
  }
  return "?";
}

HeapFormat detect_heap_format(std::string_view head, const std::string& name) {
  if (head.substr(0, 8) == "GCVMTRAC") return HeapFormat::GcvmTrace;
  constexpr std::string_view kHprof = "JAVA PROFILE 1.0.";
  if (head.substr(0, kHprof.size()) == kHprof) return HeapFormat::Hprof;
  if (looks_like_v8(head)) return HeapFormat::V8Snapshot;
  if (head.empty()) throw ImportError(name, 0, "the file is empty; expected a gcvm trace, HPROF dump or V8 heap snapshot");
  throw ImportError(name, 0,
                    "not a gcvm trace (\"GCVMTRAC\"), HPROF dump (\"JAVA PROFILE 1.0.x\") or V8 heap snapshot "
                    "(JSON starting with \"snapshot\", \"nodes\" or \"edges\")");
}

HeapFormat detect_heap_format(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ImportError(path, 0, "cannot open the file");
  std::array<char, 512> head{};
  in.read(head.data(), head.size());
  return detect_heap_format(std::string_view(head.data(), static_cast<std::size_t>(in.gcount())), path);
}

}  // namespace gcvm
