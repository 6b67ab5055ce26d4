#include "heapgraph/import/heap_import.hpp"

#include <fstream>

namespace gcvm {

ImportSummary import_heap_file(const std::string& path, HeapSink& sink, const ImportOptions& options) {
  const HeapFormat format = detect_heap_format(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ImportError(path, 0, "cannot open the file");
  switch (format) {
    case HeapFormat::Hprof: return import_hprof(in, path, sink, options);
    case HeapFormat::V8Snapshot: return import_v8_snapshot(in, path, sink, options);
    case HeapFormat::GcvmTrace: break;
  }
  throw ImportError(path, 0, "is a gcvm trace; traces are replayed (gcvm replay), not imported as one heap");
}

}  // namespace gcvm
