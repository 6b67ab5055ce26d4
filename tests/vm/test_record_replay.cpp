// `gcvm run --record-trace` end to end: guest workloads recorded at their small test
// arguments and heap limits, then replayed under every marker with --verify. Replay
// collects at the recorded collection points from the recorded (precise) roots, so
// every collection must mark and free exactly what the recorded run did, under every
// marker; `gcvm trace stats` must count the run's allocations and collections.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_runner.hpp"
#include "collector_flags.hpp"

using gcvm::test::collector_flags;
using gcvm::test::run_gcvm;

namespace {

/// The value of a workload's `# key:` header line.
std::string header(const std::string& program, const std::string& key) {
  std::ifstream in(std::string(GCVM_SOURCE_DIR) + "/workloads/" + program + ".gasm");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("# " + key + ":", 0) == 0) return line.substr(key.size() + 3);
  return "";
}

}  // namespace

TEST_CASE("gcvm run --record-trace: replays mark and free what the run did, under every marker") {
  for (const char* program : {"binary_trees", "gcbench", "lru_cache", "life"}) {
    CAPTURE(std::string(program));
    const std::string trace = std::string("record-") + program + ".gcvmtrace";
    const std::string heap = header(program, "heap");
    REQUIRE(!heap.empty());
    const auto run = run_gcvm("run " + std::string(GCVM_SOURCE_DIR) + "/workloads/" + program + ".gasm --heap=" +
                              heap + " --stats=json --record-trace=" + trace + " -- " + header(program, "args"));
    REQUIRE_MESSAGE(run.exit_code == 0, run.err);
    const auto recorded = nlohmann::json::parse(run.err);
    const auto& collections = recorded["collections"];
    REQUIRE(collections.size() >= 1);

    const auto stats = run_gcvm("trace stats " + trace + " --format=json");
    REQUIRE_MESSAGE(stats.exit_code == 0, stats.err);
    const auto s = nlohmann::json::parse(stats.out);
    CHECK(s["objects"] ==
          recorded["allocated_objects"].get<std::uint64_t>() + recorded["allocated_arrays"].get<std::uint64_t>());
    CHECK(s["arrays"] == recorded["allocated_arrays"]);
    CHECK(s["collections"] == collections.size());
    CHECK(s["root_snapshots"].get<std::uint64_t>() >= 1);

    for (const std::string& flags : collector_flags()) {
      CAPTURE(flags);
      const auto r = run_gcvm("replay " + trace + flags + " --verify --stats=json");
      REQUIRE_MESSAGE(r.exit_code == 0, r.err);
      const auto j = nlohmann::json::parse(r.out);
      REQUIRE(j["collections"].size() == collections.size());
      CHECK(j["recorded_collections"] == collections.size());
      for (std::size_t i = 0; i < collections.size(); ++i) {
        CAPTURE(i);
        CHECK(j["collections"][i]["marked_objects"] == collections[i]["marked_objects"]);
        CHECK(j["collections"][i]["freed_objects"] == collections[i]["freed_objects"]);
        std::string reason = collections[i]["reason"];
        std::replace(reason.begin(), reason.end(), ' ', '-');  // trace reasons are single words
        CHECK(j["collections"][i]["reason"] == reason);
      }
    }
    std::filesystem::remove(trace);
  }
}

TEST_CASE("gcvm run --record-trace: a replay with a heap budget runs and the trace is valid after a guest error") {
  const std::string trace = "record-budget.gcvmtrace";
  const auto run = run_gcvm("run " + std::string(GCVM_SOURCE_DIR) + "/workloads/binary_trees.gasm --heap=" +
                            header("binary_trees", "heap") + " --stats=none --record-trace=" + trace + " -- 8");
  REQUIRE(run.exit_code == 0);
  const auto r = run_gcvm("replay " + trace + " --heap=" + header("binary_trees", "heap") + " --stats=json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["recorded_collections"].get<std::uint64_t>() >= 1);

  const auto oom = run_gcvm("run " + std::string(GCVM_SOURCE_DIR) +
                            "/workloads/binary_trees.gasm --heap=64K --stats=none --record-trace=" + trace + " -- 12");
  CHECK(oom.exit_code == 3);
  CHECK(run_gcvm("trace stats " + trace).exit_code == 0);
  CHECK(run_gcvm("replay " + trace + " --verify").exit_code == 0);

  const auto bad = run_gcvm("run " + std::string(GCVM_SOURCE_DIR) +
                            "/workloads/binary_trees.gasm --record-trace=/no/such/dir/t.gcvmtrace -- 4");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("cannot create the trace file") != std::string::npos);
  std::filesystem::remove(trace);
}

TEST_CASE("gcvm run --plan=generational --record-trace: the replay collects full at the same points") {
  const std::string trace = "record-generational.gcvmtrace";
  const auto run = run_gcvm("run " + std::string(GCVM_SOURCE_DIR) +
                            "/workloads/binary_trees.gasm --heap=1M --plan=generational --nursery=64K --promotion-age=1 "
                            "--full-trigger=40 --stats=json --record-trace=" + trace + " -- 10");
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  const auto recorded = nlohmann::json::parse(run.err);
  const auto& collections = recorded["collections"];
  REQUIRE(recorded["pauses"]["young"]["count"].get<int>() > 0);
  REQUIRE(recorded["pauses"]["full"]["count"].get<int>() > 0);

  const auto r = run_gcvm("replay " + trace + " --verify --stats=json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["collections"].size() == collections.size());
  // A replayed collection is full and frees all garbage, so by every collection point
  // the replay has freed at least what the run had. At the run's full collections both
  // mark exactly the reachable objects; a young collection may have kept young garbage
  // that dead mature objects still referenced (nepotism), which the replay frees.
  std::uint64_t run_freed = 0, replay_freed = 0;
  for (std::size_t i = 0; i < collections.size(); ++i) {
    CAPTURE(i);
    run_freed += collections[i]["freed_objects"].get<std::uint64_t>();
    replay_freed += j["collections"][i]["freed_objects"].get<std::uint64_t>();
    CHECK(replay_freed >= run_freed);
    if (collections[i]["kind"] == "full") CHECK(j["collections"][i]["marked_objects"] == collections[i]["marked_objects"]);
  }
  std::filesystem::remove(trace);
}
