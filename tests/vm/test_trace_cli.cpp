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
#include "gc/marker_registry.hpp"
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
  for (std::string_view name : gcvm::collector_names()) {
    CAPTURE(std::string(name));
    const auto r = run_gcvm("replay " + path + " --gc=" + std::string(name) + " --verify --stats=json");
    REQUIRE(r.exit_code == 0);
    CHECK(r.err == "");
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
  for (std::string_view name : gcvm::collector_names()) {
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
