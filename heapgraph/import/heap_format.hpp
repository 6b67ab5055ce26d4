// Recognizes a heap file by its first bytes, never by its name:
//   "GCVMTRAC"                          a gcvm trace (docs/trace-format.md)
//   "JAVA PROFILE 1.0.x\0"              a Java HPROF heap dump
//   a JSON object whose first key is "snapshot", "nodes" or "edges"
//                                       a V8 heap snapshot (.heapsnapshot)
// Anything else is an ImportError naming the file.
#pragma once

#include <string>
#include <string_view>

namespace gcvm {

enum class HeapFormat { GcvmTrace, Hprof, V8Snapshot };

/// "gcvm trace", "HPROF heap dump", "V8 heap snapshot".
std::string_view heap_format_name(HeapFormat format);

/// Classifies the first bytes of a file (a few hundred suffice); `name` is for errors.
HeapFormat detect_heap_format(std::string_view head, const std::string& name);

/// Reads the start of `path` and classifies it; ImportError if unreadable or unknown.
HeapFormat detect_heap_format(const std::string& path);

}  // namespace gcvm
