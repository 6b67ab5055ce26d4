// Real heaps from the machine the tests run on: a Java program dumped with jcmd
// (make_java_dumps.sh) and a Node.js script that writes a V8 heap snapshot
// (make_v8_snapshot.sh), both run by ctest as fixtures before this test. Each import
// is checked against
//   - what the programs built (1000 chain nodes and 500 leaves reachable, 2000
//     garbage objects unreachable in the -all dump and absent from the live dump and
//     the V8 snapshot, which both collect first), counted by class name;
//   - an independent reading of the same file (snapshot_models.hpp): the whole file in
//     memory, objects keyed by their ids in hash maps, no passes, no handles, no
//     sink, no CSR;
//   - the JVM itself: the reachable count of the live dump (taken after a full GC)
//     equals that of the -all dump.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "gc/plans/collector.hpp"
#include "gc/heap/heap_materializer.hpp"
#include "gc/markers/marker_registry.hpp"
#include "heapgraph/adjacency_graph.hpp"
#include "heapgraph/import/heap_import.hpp"
#include "tests/import/snapshot_models.hpp"

namespace {

namespace fs = std::filesystem;
using gcvm::test::HprofModel;
using gcvm::test::slurp;
using gcvm::test::V8Model;

std::uint64_t imported_reachable(const fs::path& file, gcvm::ImportSummary& summary) {
  gcvm::AdjacencyGraph graph;
  summary = gcvm::import_heap_file(file.string(), graph);
  CHECK(graph.object_count() == summary.objects);
  CHECK(graph.reference_count() == summary.edges_kept);
  return graph.reachable_count();
}

}  // namespace

TEST_CASE("real HPROF dumps from jcmd GC.heap_dump [-all]") {
  const fs::path dir = fs::path(GCVM_SNAPSHOT_DIR) / "java";
  if (!fs::exists(dir / "all.hprof") || !fs::exists(dir / "live.hprof")) {
    MESSAGE("no Java dumps in " << dir.string() << " (java/jcmd missing?): skipped");
    return;
  }
  std::uint64_t reachable[2] = {};
  int i = 0;
  for (const char* name : {"all.hprof", "live.hprof"}) {
    CAPTURE(std::string(name));
    HprofModel model(slurp(dir / name));
    gcvm::ImportSummary summary;
    reachable[i] = imported_reachable(dir / name, summary);
    CHECK(summary.format == "hprof");
    CHECK(summary.objects == model.objects);
    CHECK(reachable[i] == model.reachable);
    CHECK(model.reachable_instances["GcvmHeapFixture$ChainNode"] == 1000);
    CHECK(model.reachable_instances["GcvmHeapFixture$Leaf"] == 500);
    CHECK(model.reachable_instances["GcvmHeapFixture$GarbageNode"] == 0);
    CHECK(model.instances["GcvmHeapFixture$GarbageNode"] == (i == 0 ? 2000 : 0));
    CHECK(summary.objects - reachable[i] >= (i == 0 ? 2000u : 0u));
    ++i;
  }
  CHECK(reachable[0] == reachable[1]);
}

TEST_CASE("real V8 heap snapshot from v8.writeHeapSnapshot()") {
  const fs::path file = fs::path(GCVM_SNAPSHOT_DIR) / "v8" / "node.heapsnapshot";
  if (!fs::exists(file)) {
    MESSAGE("no V8 snapshot at " << file.string() << " (node missing?): skipped");
    return;
  }
  const V8Model model(slurp(file));
  auto named = [](const std::unordered_map<std::string, std::uint64_t>& m, const char* name) {
    const auto it = m.find(name);
    return it == m.end() ? std::uint64_t{0} : it->second;
  };
  CHECK(named(model.reachable_object_names, "GcvmChainNode") == 1000);
  CHECK(named(model.reachable_object_names, "GcvmLeaf") == 500);
  CHECK(named(model.object_names, "GcvmGarbage") == 0);

  gcvm::ImportSummary summary;
  const std::uint64_t reachable = imported_reachable(file, summary);
  CHECK(summary.format == "v8");
  CHECK(summary.objects == model.objects);
  CHECK(reachable == model.reachable);
  CHECK(summary.edges_weak > 0);
}

TEST_CASE("real dumps cut short are rejected with the file and an offset") {
  for (const char* relative : {"java/all.hprof", "v8/node.heapsnapshot"}) {
    const fs::path file = fs::path(GCVM_SNAPSHOT_DIR) / relative;
    if (!fs::exists(file)) {
      MESSAGE("no " << file.string() << ": skipped");
      continue;
    }
    const std::string bytes = slurp(file);
    const fs::path cut_file = fs::path(GCVM_SNAPSHOT_DIR) / (std::string("cut-") + file.filename().string());
    for (int i = 1; i < 16; ++i) {
      const std::size_t cut = bytes.size() * static_cast<std::size_t>(i) / 16 + static_cast<std::size_t>(i);
      std::ofstream(cut_file, std::ios::binary) << bytes.substr(0, cut);
      gcvm::AdjacencyGraph graph;
      std::string message;
      try {
        gcvm::import_heap_file(cut_file.string(), graph);
      } catch (const gcvm::ImportError& e) {
        message = e.what();
        CHECK(e.offset() <= cut);
      }
      CAPTURE(cut);
      CHECK(message.starts_with(cut_file.string() + ": byte "));
    }
    fs::remove(cut_file);
  }
}

TEST_CASE("imported heaps materialize in the SOA heap and collect like the independent model") {
  // What `gcvm replay` of a dump will do: one full collection; marked = reachable.
  std::vector<fs::path> files = {fs::path(GCVM_SNAPSHOT_DIR) / "java" / "all.hprof",
                                 fs::path(GCVM_SNAPSHOT_DIR) / "v8" / "node.heapsnapshot"};
  for (const auto& file : files) {
    if (!fs::exists(file)) {
      MESSAGE("no " << file.string() << ": skipped");
      continue;
    }
    CAPTURE(file.string());
    gcvm::AdjacencyGraph model;
    const gcvm::ImportSummary summary = gcvm::import_heap_file(file.string(), model);
    gcvm::Heap heap;
    gcvm::HeapMaterializer materializer(heap);
    gcvm::import_heap_file(file.string(), materializer);
    REQUIRE(materializer.object_count() == summary.objects);
    gcvm::Collector collector(heap, gcvm::make_marker(gcvm::CollectorChoice{}), /*verify=*/true);
    const gcvm::CollectionStats stats = collector.collect(materializer.roots(), "import");
    CHECK(stats.mark.marked_objects == model.reachable_count());
    CHECK(stats.mark.edges_traversed == model.reachable_reference_count());
    CHECK(stats.sweep.freed_objects == summary.objects - model.reachable_count());
  }
}
