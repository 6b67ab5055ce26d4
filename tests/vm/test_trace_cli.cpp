// End to end: record traces with `gcvm mark --record-trace`, then dump, stats and
// replay them (under every collector, with --verify and --heap), and feed the CLI
// malformed traces.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli_runner.hpp"
#include "gc/markers/marker_registry.hpp"
#include "heapgraph/trace/trace_writer.hpp"

using gcvm::test::line_count;
using gcvm::test::run_gcvm;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void spill(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

/// Records `spec` with `collections` collections into `path`; returns mark's JSON.
nlohmann::json record(const std::string& spec, const std::string& path, int collections = 1) {
  const auto r = run_gcvm("mark --graph=" + spec + " --collections=" + std::to_string(collections) +
                          " --stats=json --record-trace=" + path);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}

/// A trace written directly: 20 rounds of 3000 temporaries (garbage once the root
/// snapshot after them is taken) and a 2000-node list that replaces the previous one as
/// the only root, each round ending with a collection point.
void write_churn_trace(const std::string& path) {
  gcvm::trace::TraceWriter w(path);
  gcvm::ObjectId next = 0;
  std::vector<gcvm::ObjectId> roots;
  for (int round = 0; round < 20; ++round) {
    for (int i = 0; i < 3000; ++i) w.allocate_object(next++, 0, 1, 8);
    w.roots(roots);
    const gcvm::ObjectId head = next;
    for (int i = 0; i < 2000; ++i) {
      w.allocate_object(next, 1, 1, 12);
      if (i > 0) w.store_ref(next - 1, 0, next);
      ++next;
    }
    roots = {head};
    w.roots(roots);
    w.collection("explicit");
  }
  w.end();
}

}  // namespace

TEST_CASE("gcvm mark --record-trace records a trace that replays to the same counts") {
  const std::string path = "trace_cli_vp_list.gcvmtrace";
  const auto mark = record("vp-list", path, 2);
  CHECK(mark["trace_events"].get<std::uint64_t>() > 131072);
  CHECK(mark["trace_bytes"] == slurp(path).size());
  for (std::string_view name : gcvm::marker_names()) {
    CAPTURE(std::string(name));
    const auto r = run_gcvm("replay " + path + " --gc=" + std::string(name) + " --verify --stats=json");
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    REQUIRE(j["collections"].size() == 2);
    CHECK(j["collections"][0]["marked_objects"] == mark["collections"][0]["marked_objects"]);
    CHECK(j["collections"][0]["freed_objects"] == mark["collections"][0]["freed_objects"]);
    CHECK(j["collections"][1]["marked_objects"] == 8192);
    CHECK(j["collections"][1]["freed_objects"] == 0);
    CHECK(j["collections"][0]["reason"] == "explicit");
    CHECK(j["collections"][1]["reason"] == "repeat");
    CHECK(j["recorded_collections"] == 2);
    CHECK(j["allocations"] == 131072);
    CHECK(j["marked_objects"] == 2 * 8192);
    CHECK(j["freed_objects"] == 131072 - 8192);
  }
  std::remove(path.c_str());
}

TEST_CASE("gcvm replay under every collector gives identical counts at every collection") {
  const std::string path = "trace_cli_churn.gcvmtrace";
  write_churn_trace(path);
  nlohmann::json first;
  for (std::string_view name : gcvm::marker_names()) {
    const auto r = run_gcvm("replay " + path + " --gc=" + std::string(name) + " --verify --stats=json");
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    REQUIRE(j["collections"].size() == 20);
    for (const auto& c : j["collections"]) {
      CHECK(c["marked_objects"] == 2000);
      CHECK(c["verify_ms"].get<double>() > 0);
    }
    CHECK(j["collections"][0]["freed_objects"] == 3000);
    CHECK(j["collections"][19]["freed_objects"] == 5000);
    if (first.is_null()) first = j;
    for (std::size_t i = 0; i < 20; ++i) {
      CHECK(j["collections"][i]["marked_objects"] == first["collections"][i]["marked_objects"]);
      CHECK(j["collections"][i]["freed_objects"] == first["collections"][i]["freed_objects"]);
    }
  }
  std::remove(path.c_str());
}

TEST_CASE("gcvm replay --gc-log prints one line per collection and a summary") {
  const std::string path = "trace_cli_log.gcvmtrace";
  write_churn_trace(path);
  const auto r = run_gcvm("replay " + path + " --gc-log");
  REQUIRE(r.exit_code == 0);
  CHECK(line_count(r.out) == 20 + 2);
  CHECK(r.out.find("[gc 1] explicit (serial): heap ") != std::string::npos);
  CHECK(r.out.find("[gc 1] explicit (serial): heap 0.15 MiB -> 0.06 MiB, 2000 marked, 3000 freed, pause ") !=
        std::string::npos);
  CHECK(r.out.find("2000 marked, 5000 freed, pause ") != std::string::npos);
  CHECK(r.out.find("20 collections: 40000 marked, 98000 freed") != std::string::npos);
  std::remove(path.c_str());
}

TEST_CASE("gcvm replay --heap collects when an allocation does not fit, and exits 3 when nothing helps") {
  const std::string path = "trace_cli_budget.gcvmtrace";
  write_churn_trace(path);
  // Blocks of 2 KiB hold 64 objects: the temporaries take 94 KiB and a list 64 KiB, so
  // from round 2 on the new list fits 192 KiB only after the temporaries are collected.
  const auto r = run_gcvm("replay " + path + " --heap=192K --verify --stats=json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["budget_collections"] == 19);
  CHECK(j["recorded_collections"] == 20);
  for (const auto& c : j["collections"])
    CHECK(c["freed_objects"] == (c["reason"] == "heap-budget" || c["index"] == 1 ? 3000 : 2000));
  const auto small = run_gcvm("replay " + path + " --heap=16K");
  CHECK(small.exit_code == 3);
  CHECK(small.err.find("out of memory: " + path + ": byte ") != std::string::npos);
  CHECK(line_count(small.err) == 1);
  std::remove(path.c_str());
}

TEST_CASE("gcvm trace dump prints every event with its byte offset") {
  const std::string path = "trace_cli_dump.gcvmtrace";
  record("list:3", path, 2);
  const auto r = run_gcvm("trace dump " + path);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out ==
        "20 alloc #0 refs=1 scalars=1 bytes=12\n"
        "25 alloc #1 refs=1 scalars=1 bytes=12\n"
        "30 store #0[0] = #1\n"
        "34 alloc #2 refs=1 scalars=1 bytes=12\n"
        "39 store #1[0] = #2\n"
        "43 roots 1: #0\n"
        "46 collect explicit\n"
        "56 collect repeat\n"
        "64 end\n");
  std::remove(path.c_str());
}

TEST_CASE("gcvm trace stats counts events, objects, stores, roots and bytes") {
  const std::string path = "trace_cli_stats.gcvmtrace";
  write_churn_trace(path);
  const auto r = run_gcvm("trace stats " + path + " --format=json");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["events"] == 20 * (5000 + 1999 + 2 + 1) + 1);
  CHECK(j["events_by_kind"]["alloc"] == 100000);
  CHECK(j["events_by_kind"]["store"] == 20 * 1999);
  CHECK(j["events_by_kind"]["roots"] == 40);
  CHECK(j["events_by_kind"]["collect"] == 20);
  CHECK(j["events_by_kind"]["end"] == 1);
  CHECK(j["objects"] == 100000);
  CHECK(j["allocated_bytes"] == 20 * (3000 * 8 + 2000 * 12));
  CHECK(j["null_stores"] == 0);
  CHECK(j["collections"] == 20);
  CHECK(j["final_roots"] == 1);
  CHECK(j["file_bytes"] == slurp(path).size());
  CHECK(j["chunks"].get<int>() >= 2);
  CHECK(j["bytes_per_event"].get<double>() < 6.0);
  const auto text = run_gcvm("trace stats " + path);
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("stores: 39980 (0 null)") != std::string::npos);
  CHECK(text.out.find("collections: 20") != std::string::npos);
  std::remove(path.c_str());
}

TEST_CASE("malformed traces: one line naming the file and byte offset, exit 2, for every command") {
  const std::string good_path = "trace_cli_good.gcvmtrace";
  record("list:1000", good_path);
  const std::string good = slurp(good_path);
  std::remove(good_path.c_str());
  struct Case {
    std::string name;
    std::string bytes;
    std::string says;
  };
  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x04;
  std::string version = good;
  version[8] = 9;
  std::vector<Case> cases = {
      {"truncated", good.substr(0, good.size() - 1), "truncated"},
      {"header-only", good.substr(0, 12), "byte 12: truncated: the file ends without an end event"},
      {"flipped", flipped, "byte 12: chunk 1 is damaged: checksum"},
      {"version", version, "byte 8: unsupported trace version 9"},
      {"trailing", good + "junk", "data after the end event"},
  };
  {
    std::ostringstream out;
    gcvm::trace::TraceWriter w(out, "memory");
    w.allocate_object(0, 1, 0, 4);
    w.store_ref(7, 0, 0);
    w.end();
    cases.push_back({"order", out.str(), "byte 25: event out of order: store into #7, which was never allocated"});
  }
  for (const auto& c : cases) {
    const std::string path = "trace_cli_bad_" + c.name + ".gcvmtrace";
    spill(path, c.bytes);
    for (const char* command : {"trace dump ", "trace stats ", "replay "}) {
      CAPTURE(c.name);
      CAPTURE(std::string(command));
      const auto r = run_gcvm(command + path);
      CHECK(r.exit_code == 2);
      CHECK(line_count(r.err) == 1);
      CHECK(r.err.rfind("gcvm: " + path + ": byte ", 0) == 0);
      CHECK(r.err.find(c.says) != std::string::npos);
    }
    std::remove(path.c_str());
  }
  {
    // Valid for the reader, but the recorder's roots missed #1, which is used after the
    // collection: only a replay can tell. Offsets: header 12 + chunk header 8, two
    // allocations of 5 bytes, roots 3, collect 10: the store is at byte 43.
    const std::string path = "trace_cli_inconsistent.gcvmtrace";
    gcvm::trace::TraceWriter w(path);
    w.allocate_object(0, 1, 0, 4);
    w.allocate_object(1, 1, 0, 4);
    w.roots(std::vector<gcvm::ObjectId>{0});
    w.collection("explicit");
    w.store_ref(1, 0, 0);
    w.end();
    CHECK(run_gcvm("trace stats " + path).exit_code == 0);
    const auto r = run_gcvm("replay " + path);
    CHECK(r.exit_code == 2);
    CHECK(r.err == "gcvm: " + path + ": byte 43: the trace is inconsistent: store source #1 was freed by a " +
                       "replayed collection as unreachable (the recorder's roots did not cover it)\n");
    std::remove(path.c_str());
  }
  const std::string text = "trace_cli_not_a_trace.txt";
  spill(text, "hello, world\n");
  const auto r = run_gcvm("replay " + text);
  CHECK(r.exit_code == 2);
  CHECK(r.err.starts_with("gcvm: " + text + ": byte 0: not a gcvm trace (\"GCVMTRAC\"), HPROF dump"));
  CHECK(gcvm::test::line_count(r.err) == 1);
  std::remove(text.c_str());
  const auto missing = run_gcvm("trace stats no_such_file.gcvmtrace");
  CHECK(missing.exit_code == 2);
  CHECK(missing.err == "gcvm: no_such_file.gcvmtrace: byte 0: cannot open the file\n");
  const auto record_fail = run_gcvm("mark --graph=single --record-trace=/no/such/dir/t.gcvmtrace");
  CHECK(record_fail.exit_code == 2);
  CHECK(record_fail.err.find("cannot create the trace file") != std::string::npos);
}
