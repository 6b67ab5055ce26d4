// Real heaps from the machine the tests run on: a Java program dumped with jcmd
// (make_java_dumps.sh) and a Node.js script that writes a V8 heap snapshot
// (make_v8_snapshot.sh), both run by ctest as fixtures before this test. Each import
// is checked against
//   - what the programs built (1000 chain nodes and 500 leaves reachable, 2000
//     garbage objects unreachable in the -all dump and absent from the live dump and
//     the V8 snapshot, which both collect first), counted by class name;
//   - an independent reading of the same file written here: the whole file in
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

#include "gc/collector.hpp"
#include "gc/heap_materializer.hpp"
#include "gc/marker_registry.hpp"
#include "heapgraph/adjacency_graph.hpp"
#include "heapgraph/import/heap_import.hpp"

namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Independent HPROF model: trusts the file (it comes from a real JVM).
struct HprofModel {
  std::uint64_t objects = 0;
  std::uint64_t reachable = 0;
  std::unordered_map<std::string, std::uint64_t> instances, reachable_instances;  // by class name

  explicit HprofModel(const std::string& file) {
    std::size_t p = file.find('\0') + 1;
    auto u = [&](unsigned n) {
      std::uint64_t v = 0;
      for (unsigned i = 0; i < n; ++i) v = v << 8 | static_cast<unsigned char>(file[p++]);
      return v;
    };
    const unsigned id_size = static_cast<unsigned>(u(4));
    p += 8;
    auto size_of = [&](unsigned type) -> unsigned {
      static const unsigned sizes[] = {0, 0, 0, 0, 1, 2, 4, 8, 1, 2, 4, 8};
      return type == 2 ? id_size : sizes[type];
    };
    std::unordered_map<std::uint64_t, std::string> strings;
    std::unordered_map<std::uint64_t, std::uint64_t> class_name;  // class id -> string id
    struct Class {
      std::uint64_t super;
      std::vector<unsigned> field_types;
    };
    std::unordered_map<std::uint64_t, Class> classes;
    std::unordered_map<std::uint64_t, std::vector<std::uint64_t>> out;
    std::unordered_map<std::uint64_t, std::pair<std::uint64_t, std::string>> instance_data;  // id -> class, bytes
    std::unordered_map<std::uint64_t, std::uint64_t> instance_class;
    std::vector<std::uint64_t> roots;
    while (p < file.size()) {
      const unsigned tag = static_cast<unsigned>(u(1));
      p += 4;
      const std::size_t end = p + u(4);
      if (tag == 0x01) {
        const std::uint64_t id = u(id_size);
        strings[id] = file.substr(p, end - p);
      } else if (tag == 0x02) {
        p += 4;
        const std::uint64_t id = u(id_size);
        p += 4;
        class_name[id] = u(id_size);
      } else if (tag == 0x0C || tag == 0x1C) {
        while (p < end) {
          const unsigned sub = static_cast<unsigned>(u(1));
          if (sub == 0xFF || (sub >= 0x01 && sub <= 0x08)) {
            roots.push_back(u(id_size));
            static const unsigned extra[] = {0, 1, 8, 8, 4, 0, 4, 0, 8};
            p += sub == 0xFF ? 0 : sub == 0x01 ? id_size : extra[sub];
          } else if (sub == 0x20) {
            const std::uint64_t id = u(id_size);
            p += 4;
            auto& edges = out[id];
            Class c{u(id_size), {}};
            edges.push_back(c.super);
            for (int i = 0; i < 3; ++i) edges.push_back(u(id_size));
            p += 2 * id_size + 4;
            for (int part = 0; part < 2; ++part)
              for (std::uint64_t n = u(2), i = 0; i < n; ++i) {
                p += part == 0 ? 2 : id_size;
                const unsigned type = static_cast<unsigned>(u(1));
                if (type == 2) edges.push_back(u(id_size)); else p += size_of(type);
              }
            for (std::uint64_t n = u(2), i = 0; i < n; ++i) {
              p += id_size;
              c.field_types.push_back(static_cast<unsigned>(u(1)));
            }
            classes[id] = c;
          } else if (sub == 0x21) {
            const std::uint64_t id = u(id_size);
            p += 4;
            const std::uint64_t cls = u(id_size);
            const std::size_t n = u(4);
            instance_data[id] = {cls, file.substr(p, n)};
            p += n;
          } else if (sub == 0x22) {
            const std::uint64_t id = u(id_size);
            p += 4;
            const std::uint64_t n = u(4);
            auto& edges = out[id];
            edges.push_back(u(id_size));
            for (std::uint64_t i = 0; i < n; ++i) edges.push_back(u(id_size));
          } else if (sub == 0x23) {
            const std::uint64_t id = u(id_size);
            p += 4;
            const std::uint64_t n = u(4);
            p += n * size_of(static_cast<unsigned>(u(1)));
            out[id];
          } else {
            FAIL("independent parser: unknown sub-record " << sub);
          }
        }
      }
      p = end;
    }
    for (const auto& [id, data] : instance_data) {
      auto& edges = out[id];
      edges.push_back(data.first);
      std::size_t q = 0;
      for (std::uint64_t c = data.first; classes.count(c); c = classes[c].super)
        for (unsigned type : classes[c].field_types) {
          if (type == 2) {
            std::uint64_t v = 0;
            for (unsigned i = 0; i < id_size; ++i) v = v << 8 | static_cast<unsigned char>(data.second[q + i]);
            edges.push_back(v);
          }
          q += size_of(type);
        }
      instance_class[id] = data.first;
      ++instances[strings[class_name[data.first]]];
    }
    objects = out.size();
    std::unordered_set<std::uint64_t> seen;
    std::vector<std::uint64_t> stack;
    for (auto r : roots)
      if (out.count(r) && seen.insert(r).second) stack.push_back(r);
    while (!stack.empty()) {
      const auto v = stack.back();
      stack.pop_back();
      for (auto t : out[v])
        if (out.count(t) && seen.insert(t).second) stack.push_back(t);
    }
    reachable = seen.size();
    for (auto v : seen)
      if (instance_class.count(v)) ++reachable_instances[strings[class_name[instance_class[v]]]];
  }
};

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
  // Independent reading: a DOM of the whole (small) file.
  const auto j = nlohmann::json::parse(slurp(file));
  const auto& meta = j["snapshot"]["meta"];
  const auto& node_fields = meta["node_fields"];
  const auto& edge_fields = meta["edge_fields"];
  auto index = [](const nlohmann::json& a, const char* name) {
    return static_cast<std::size_t>(std::find(a.begin(), a.end(), name) - a.begin());
  };
  const std::size_t nf = node_fields.size(), ef = edge_fields.size();
  const std::size_t edge_count = index(node_fields, "edge_count"), name_field = index(node_fields, "name");
  const std::size_t type_field = index(node_fields, "type");
  const std::size_t to_node = index(edge_fields, "to_node"), edge_type = index(edge_fields, "type");
  const auto& edge_types = meta["edge_types"][edge_type];
  const std::size_t weak = index(edge_types, "weak");
  const auto& node_types = meta["node_types"][type_field];
  const std::size_t object_type = index(node_types, "object");
  const std::vector<std::uint64_t> nodes = j["nodes"].get<std::vector<std::uint64_t>>();
  const std::vector<std::uint64_t> edges = j["edges"].get<std::vector<std::uint64_t>>();
  const std::vector<std::string> strings = j["strings"].get<std::vector<std::string>>();
  const std::size_t n = nodes.size() / nf;
  std::vector<std::size_t> first_edge(n + 1, 0);
  for (std::size_t v = 0; v < n; ++v) first_edge[v + 1] = first_edge[v] + nodes[v * nf + edge_count];
  std::vector<bool> seen(n, false);
  std::vector<std::size_t> stack{0};
  seen[0] = true;
  while (!stack.empty()) {
    const std::size_t v = stack.back();
    stack.pop_back();
    for (std::size_t e = first_edge[v]; e < first_edge[v + 1]; ++e) {
      if (edges[e * ef + edge_type] == weak) continue;
      const std::size_t t = edges[e * ef + to_node] / nf;
      if (!seen[t]) seen[t] = true, stack.push_back(t);
    }
  }
  std::unordered_map<std::string, std::uint64_t> reachable_objects, objects;
  for (std::size_t v = 0; v < n; ++v)
    if (nodes[v * nf + type_field] == object_type) {
      ++objects[strings[nodes[v * nf + name_field]]];
      if (seen[v]) ++reachable_objects[strings[nodes[v * nf + name_field]]];
    }
  CHECK(reachable_objects["GcvmChainNode"] == 1000);
  CHECK(reachable_objects["GcvmLeaf"] == 500);
  CHECK(objects["GcvmGarbage"] == 0);

  gcvm::ImportSummary summary;
  const std::uint64_t reachable = imported_reachable(file, summary);
  CHECK(summary.format == "v8");
  CHECK(summary.objects == n);
  CHECK(reachable == static_cast<std::uint64_t>(std::count(seen.begin(), seen.end(), true)));
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
