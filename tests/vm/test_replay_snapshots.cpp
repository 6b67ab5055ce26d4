// `gcvm replay` of real heap snapshots (the Java dumps and the V8 snapshot that the
// make_java_dumps / make_v8_snapshot fixtures write): one full collection under every
// marker, whose marked and freed counts must equal the independent models'
// (tests/import/snapshot_models.hpp) and be the same under every marker; bad files
// give one line with the file and a byte offset. Also `gcvm analyze` of a gcvm trace.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "collector_flags.hpp"
#include "heapgraph/adjacency_graph.hpp"
#include "heapgraph/import/heap_import.hpp"
#include "tests/import/snapshot_models.hpp"

using gcvm::test::collector_flags;
using gcvm::test::run_gcvm;

namespace {

namespace fs = std::filesystem;

struct Expected {
  std::uint64_t objects = 0;
  std::uint64_t reachable = 0;
};

nlohmann::json replay_json(const std::string& args) {
  const auto r = run_gcvm("replay " + args + " --stats=json");
  CAPTURE(args);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("gcvm replay of real snapshots: one collection, the independent counts, under every marker") {
  struct Snapshot {
    const char* relative;
    bool hprof;
  };
  int replayed = 0;
  for (const Snapshot& s : {Snapshot{"java/all.hprof", true}, Snapshot{"java/live.hprof", true},
                            Snapshot{"v8/node.heapsnapshot", false}}) {
    const fs::path file = fs::path(GCVM_SNAPSHOT_DIR) / s.relative;
    if (!fs::exists(file)) {
      MESSAGE("no " << file.string() << " (java/jcmd or node missing?): skipped");
      continue;
    }
    CAPTURE(file.string());
    Expected expected;
    if (s.hprof) {
      const gcvm::test::HprofModel model(gcvm::test::slurp(file));
      expected = {model.objects, model.reachable};
    } else {
      const gcvm::test::V8Model model(gcvm::test::slurp(file));
      expected = {model.objects, model.reachable};
    }
    // The -all dump holds the 2000 garbage objects the Java program dropped.
    if (std::string(s.relative) == "java/all.hprof") CHECK(expected.objects - expected.reachable >= 2000);
    for (const std::string& flags : collector_flags()) {
      CAPTURE(flags);
      const auto j = replay_json(file.string() + flags + " --verify");
      CHECK(j["format"] == (s.hprof ? "hprof" : "v8"));
      CHECK(j["allocations"] == expected.objects);
      REQUIRE(j["collections"].size() == 1);
      CHECK(j["collections"][0]["marked_objects"] == expected.reachable);
      CHECK(j["collections"][0]["freed_objects"] == expected.objects - expected.reachable);
      CHECK(j["marked_objects"] == expected.reachable);
      CHECK(j["freed_objects"] == expected.objects - expected.reachable);
      CHECK(j["collections"][0]["verify_ms"].get<double>() > 0);
      ++replayed;
    }
  }
  if (replayed == 0) MESSAGE("no real snapshots: skipped");
}

TEST_CASE("gcvm replay of a dump: --weak-refs=weak, --gc-log, text output and a heap limit") {
  const fs::path file = fs::path(GCVM_SNAPSHOT_DIR) / "java" / "all.hprof";
  if (!fs::exists(file)) {
    MESSAGE("no " << file.string() << ": skipped");
    return;
  }
  gcvm::AdjacencyGraph weak_graph;
  gcvm::ImportOptions weak;
  weak.weak_refs = gcvm::WeakRefs::Weak;
  const gcvm::ImportSummary summary = gcvm::import_heap_file(file.string(), weak_graph, weak);
  const auto j = replay_json(file.string() + " --weak-refs=weak");
  CHECK(j["marked_objects"] == weak_graph.reachable_count());
  CHECK(j["freed_objects"] == summary.objects - weak_graph.reachable_count());
  CHECK(j["edges_weak"] == summary.edges_weak);

  const auto text = run_gcvm("replay " + file.string() + " --gc-log");
  CHECK(text.exit_code == 0);
  CHECK(text.out.find("hprof") != std::string::npos);
  CHECK(text.out.find("snapshot") != std::string::npos);
  CHECK(gcvm::test::line_count(text.out) == 3);

  const auto small = run_gcvm("replay " + file.string() + " --heap=64K");
  CHECK(small.exit_code == 3);
  CHECK(gcvm::test::line_count(small.err) == 1);
}

TEST_CASE("gcvm replay of bad snapshots: one line naming the file and a byte offset, exit 2") {
  for (const char* relative : {"java/all.hprof", "v8/node.heapsnapshot"}) {
    const fs::path file = fs::path(GCVM_SNAPSHOT_DIR) / relative;
    if (!fs::exists(file)) {
      MESSAGE("no " << file.string() << ": skipped");
      continue;
    }
    const std::string bytes = gcvm::test::slurp(file);
    const std::string cut = "replay-cut-" + file.filename().string();
    std::string corrupt = bytes;
    corrupt[corrupt.size() / 2] = '\xff';
    corrupt[corrupt.size() / 2 + 1] = '\xfe';
    for (const std::string& content : {bytes.substr(0, bytes.size() / 3), bytes.substr(0, bytes.size() - 7), corrupt}) {
      std::ofstream(cut, std::ios::binary) << content;
      const auto r = run_gcvm("replay " + cut + " --gc=serial");
      CAPTURE(content.size());
      if (content.size() == bytes.size() && r.exit_code == 0) continue;  // a corrupted payload byte can be valid
      CHECK(r.exit_code == 2);
      CHECK(r.err.starts_with("gcvm: " + cut + ": byte "));
      CHECK(gcvm::test::line_count(r.err) == 1);
    }
    fs::remove(cut);
  }
  std::ofstream("replay-garbage.bin", std::ios::binary) << "neither a trace nor a heap dump";
  const auto r = run_gcvm("replay replay-garbage.bin");
  CHECK(r.exit_code == 2);
  CHECK(r.err.starts_with("gcvm: replay-garbage.bin: byte 0: not a gcvm trace"));
  CHECK(gcvm::test::line_count(r.err) == 1);
  fs::remove("replay-garbage.bin");
}

TEST_CASE("gcvm analyze of a trace recorded by gcvm mark analyzes its final heap") {
  const std::string path = "analyze-vp-list.gcvmtrace";
  const auto recorded = run_gcvm("mark --graph=vp-list --stats=json --record-trace=" + path);
  REQUIRE(recorded.exit_code == 0);
  const auto mark = nlohmann::json::parse(recorded.out);
  const auto r = run_gcvm("analyze " + path + " --stats=json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["source"]["format"] == "trace");
  CHECK(j["source"]["collections"] == 1);
  CHECK(j["objects"] == 131072);
  CHECK(j["reachable_objects"] == mark["collections"][0]["marked_objects"]);
  const auto weak = run_gcvm("analyze " + path + " --weak-refs=weak");
  CHECK(weak.exit_code == 2);
  CHECK(weak.err.find("--weak-refs applies to HPROF") != std::string::npos);
  fs::remove(path);
}
