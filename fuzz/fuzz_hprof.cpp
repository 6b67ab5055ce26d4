// libFuzzer target for the HPROF importer: any input must import or be rejected with
// ImportError; anything else (another exception, a sanitizer report, a timeout, an
// allocation beyond -rss_limit_mb) is a bug. CsrGraph checks every slot and target
// the importer stores. Seeds: fuzz_write_seeds DIR.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "heapgraph/csr_graph.hpp"
#include "heapgraph/import/hprof_importer.hpp"
#include "heapgraph/import/import_error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  gcvm::CsrGraph graph;
  gcvm::ImportOptions options;
  options.progress = false;
  options.weak_refs = size % 2 ? gcvm::WeakRefs::Weak : gcvm::WeakRefs::Strong;
  try {
    gcvm::import_hprof(in, "fuzz.hprof", graph, options);
  } catch (const gcvm::ImportError&) {
  }
  return 0;
}
