// One entry point for every heap file gcvm can import: detects the format by content
// (heap_format.hpp) and runs the matching importer. gcvm traces are not imported here
// (they are replayed event by event); for them import_heap_file throws ImportError
// saying so, and callers that accept traces check detect_heap_format first.
#pragma once

#include <string>

#include "heapgraph/heap_sink.hpp"
#include "heapgraph/import/heap_format.hpp"
#include "heapgraph/import/hprof_importer.hpp"
#include "heapgraph/import/import_error.hpp"
#include "heapgraph/import/import_options.hpp"
#include "heapgraph/import/v8_importer.hpp"

namespace gcvm {

/// Imports the HPROF dump or V8 snapshot at `path` into `sink`.
ImportSummary import_heap_file(const std::string& path, HeapSink& sink, const ImportOptions& options = {});

}  // namespace gcvm
