#include <doctest/doctest.h>

#include "heapgraph/import/heap_format.hpp"
#include "heapgraph/import/import_error.hpp"
#include "sample_dumps.hpp"

using gcvm::detect_heap_format;
using gcvm::HeapFormat;

TEST_CASE("heap files are recognized by content") {
  CHECK(detect_heap_format("GCVMTRAC\x01\x00", "t") == HeapFormat::GcvmTrace);
  CHECK(detect_heap_format(gcvm::test::sample_hprof(4), "h") == HeapFormat::Hprof);
  CHECK(detect_heap_format(std::string("JAVA PROFILE 1.0.1\0", 19), "h") == HeapFormat::Hprof);
  CHECK(detect_heap_format(gcvm::test::sample_v8(), "v") == HeapFormat::V8Snapshot);
  CHECK(detect_heap_format("  \n{ \"nodes\": []", "v") == HeapFormat::V8Snapshot);
  CHECK(detect_heap_format("{\"edges\":[", "v") == HeapFormat::V8Snapshot);
  for (const char* bad : {"", "{\"name\": 1}", "[1,2]", "JAVA PROFILE", "GCVMTRA", "\x7f" "ELF"}) {
    CAPTURE(bad);
    std::string message;
    try {
      detect_heap_format(bad, "file.bin");
    } catch (const gcvm::ImportError& e) {
      message = e.what();
    }
    CHECK(message.starts_with("file.bin: byte 0: "));
  }
  std::string message;
  try {
    detect_heap_format(std::string("/nonexistent/heap.hprof"));
  } catch (const gcvm::ImportError& e) {
    message = e.what();
  }
  CHECK(message == "/nonexistent/heap.hprof: byte 0: cannot open the file");
}
