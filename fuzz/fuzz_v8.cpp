// libFuzzer target for the V8 heap snapshot importer: any input must import or be
// rejected with ImportError; anything else is a bug. Seeds: fuzz_write_seeds DIR;
// dictionary: fuzz/v8.dict.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "heapgraph/csr_graph.hpp"
#include "heapgraph/import/import_error.hpp"
#include "heapgraph/import/v8_importer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  gcvm::CsrGraph graph;
  gcvm::ImportOptions options;
  options.progress = false;
  try {
    gcvm::import_v8_snapshot(in, "fuzz.heapsnapshot", graph, options);
  } catch (const gcvm::ImportError&) {
  }
  return 0;
}
