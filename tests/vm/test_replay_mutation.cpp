// `gcvm replay --collections=N --mutate=...`: warm collections of a real dump (the Java
// fixture dumps of make_java_dumps.sh) and of a recorded trace, with the synthetic
// mutator between them: bit-identical marks under every marker with --verify, the same
// run for the same seed, the dump and its converted trace (--record-trace) replay
// alike, bad flag values give one line and exit 2.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_runner.hpp"
#include "collector_flags.hpp"
#include "replay_runner.hpp"

using gcvm::test::collector_flags;
using gcvm::test::fixture_dump;
using gcvm::test::replay_json;
using gcvm::test::run_gcvm;

namespace {

namespace fs = std::filesystem;

constexpr const char* kMutation = " --collections=4 --mutate=rewire=0.05,replace=0.01,garbage=256K";

/// Per collection: marked, freed, edges, heap after, mark digest and what the mutation
/// before it did; everything that must not depend on the marker or the run.
std::vector<std::string> outcome(const nlohmann::json& j) {
  std::vector<std::string> rows;
  for (const auto& c : j["collections"]) {
    std::string row = c["marked_objects"].dump() + " " + c["freed_objects"].dump() + " " +
                      c["edges_traversed"].dump() + " " + c["heap_after_bytes"].dump() + " " +
                      c["mark_digest"].get<std::string>();
    if (c.contains("mutation"))
      for (const char* key : {"stores", "rewired", "rewired_null", "replaced", "garbage_objects", "objects_allocated",
                              "bytes_allocated", "live_objects", "live_references"})
        row += " " + c["mutation"][key].dump();
    rows.push_back(row);
  }
  return rows;
}

std::string recorded_trace() { return gcvm::test::recorded_trace("mutation-rmat.gcvmtrace"); }

}  // namespace

TEST_CASE("mutated replays of a dump and of a trace are bit-identical under every marker, verified") {
  std::vector<std::string> inputs = {recorded_trace()};
  if (fs::exists(fixture_dump()))
    inputs.push_back(fixture_dump().string());
  else
    MESSAGE("no " << fixture_dump().string() << " (java/jcmd missing?): the dump part is skipped");
  for (const std::string& input : inputs) {
    CAPTURE(input);
    std::vector<std::string> reference;
    for (const std::string& flags : collector_flags()) {
      CAPTURE(flags);
      const auto j = replay_json(input + flags + kMutation + " --verify");
      REQUIRE(j["collections"].size() == 4);
      CHECK(j["mutation"]["rounds"] == 3);
      for (std::size_t i = 1; i < 4; ++i) {
        const auto& c = j["collections"][i];
        CHECK(c["reason"] == "repeat");
        CHECK(c["verify_ms"].get<double>() > 0);
        CHECK(c["mutation"]["bytes_allocated"].get<std::uint64_t>() >= 256 * 1024);
        CHECK(c["freed_objects"].get<std::uint64_t>() >= c["mutation"]["garbage_objects"].get<std::uint64_t>());
        // A device marker's mirror sees the round through the barrier: something crosses the
        // link, in the pause or before it (refreshes while the mutator ran).
        if (c["mark_details"].contains("sync_bytes"))
          CHECK(c["mark_details"]["sync_bytes"].get<double>() + c["mark_details"].value("sync_refresh_bytes", 0.0) > 0);
      }
      const auto rows = outcome(j);
      if (reference.empty())
        reference = rows;
      else
        CHECK(rows == reference);
    }
  }
  fs::remove(inputs.front());
}

TEST_CASE("the same seed gives the same mutated run, another seed another one; no mutation re-marks the same") {
  const std::string trace = recorded_trace();
  const auto a = outcome(replay_json(trace + kMutation + " --seed=5"));
  CHECK(a == outcome(replay_json(trace + kMutation + " --seed=5")));
  const auto other = outcome(replay_json(trace + kMutation + " --seed=6"));
  CHECK(other.front() == a.front());
  CHECK(other.back() != a.back());
  const auto still = replay_json(trace + " --collections=3");
  REQUIRE(still["collections"].size() == 3);
  CHECK(still["mutation"]["rounds"] == 0);
  CHECK(still["collections"][2]["mark_digest"] == still["collections"][0]["mark_digest"]);
  CHECK(still["collections"][2]["freed_objects"] == 0);
  fs::remove(trace);
}

TEST_CASE("a dump converted with --record-trace replays exactly like the dump, mutated or not") {
  const fs::path dump = fixture_dump();
  if (!fs::exists(dump)) {
    MESSAGE("no " << dump.string() << ": skipped");
    return;
  }
  const std::string converted = "mutation-converted.gcvmtrace";
  const auto first = replay_json(dump.string() + " --record-trace=" + converted);
  CHECK(first["trace_bytes"].get<std::uint64_t>() == fs::file_size(converted));
  const auto again = replay_json(converted);
  CHECK(outcome(again) == outcome(first));
  CHECK(again["allocations"] == first["allocations"]);
  CHECK(again["stores"] == first["stores"]);
  CHECK(again["recorded_collections"] == 1);
  CHECK(outcome(replay_json(converted + kMutation)) == outcome(replay_json(dump.string() + kMutation)));

  // Recording a mutated run records the rounds too: its replay needs no --mutate.
  const std::string mutated = "mutation-mutated.gcvmtrace";
  const auto live = replay_json(dump.string() + kMutation + " --record-trace=" + mutated);
  const auto replayed = replay_json(mutated);
  CHECK(replayed["recorded_collections"] == 4);
  const auto live_rows = outcome(live);
  const auto replayed_rows = outcome(replayed);
  REQUIRE(replayed_rows.size() == live_rows.size());
  for (std::size_t i = 0; i < live_rows.size(); ++i) CHECK(live_rows[i].starts_with(replayed_rows[i]));
  fs::remove(converted);
  fs::remove(mutated);
}

TEST_CASE("--gc-log shows each mutation round before its collection; text output sums the rounds") {
  const std::string trace = recorded_trace();
  const auto r = run_gcvm("replay " + trace + " --collections=3 --mutate=rewire=0.1,garbage=64K --gc-log");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.find("[mutator before gc 2]") != std::string::npos);
  CHECK(r.out.find("[mutator before gc 3]") != std::string::npos);
  CHECK(r.out.find("[mutator before gc 2]") < r.out.find("[gc 2]"));
  CHECK(r.out.find("mutator (rewire=0.1,garbage=65536, seed 1): 2 rounds") != std::string::npos);
  CHECK(gcvm::test::line_count(r.out) == 3 + 2 + 3);
  fs::remove(trace);
}

TEST_CASE("bad --mutate, --collections, --seed and --record-trace values: one line, exit 2; no room for garbage: exit 3") {
  const std::string trace = recorded_trace();
  struct Bad {
    std::string flags;
    std::string message;
  };
  for (const Bad& bad : std::vector<Bad>{
           {"--collections=3 --mutate=rewire=2", "'rewire=2': the value must be a fraction from 0 to 1"},
           {"--collections=3 --mutate=rewire=abc", "'rewire=abc': the value must be a fraction"},
           {"--collections=3 --mutate=replace=-0.1", "'replace=-0.1': the value must be a fraction"},
           {"--collections=3 --mutate=garbage=12Q", "'garbage=12Q': the value must be a size"},
           {"--collections=3 --mutate=rewire=0.1,rewire=0.2", "'rewire=0.2': key given twice"},
           {"--collections=3 --mutate=churn=0.1", "'churn=0.1': unknown key"},
           {"--collections=3 --mutate=rewire", "'rewire': expected rewire=F"},
           {"--collections=3 --mutate=", "--mutate"},
           {"--mutate=rewire=0.1", "it needs --collections=2 or more"},
           {"--collections=0", "--collections"},
           {"--seed=-3", "--seed"},
           {"--record-trace=x.gcvmtrace", "is a gcvm trace already"},
       }) {
    CAPTURE(bad.flags);
    const auto r = run_gcvm("replay " + trace + " " + bad.flags);
    CHECK(r.exit_code == 2);
    CHECK(gcvm::test::line_count(r.err) == 1);
    CHECK(r.err.find(bad.message) != std::string::npos);
  }
  const auto full = run_gcvm("replay " + trace + " --heap=2M --collections=2 --mutate=garbage=64M");
  CHECK(full.exit_code == 3);
  CHECK(gcvm::test::line_count(full.err) == 1);
  CHECK(full.err.find("allocating garbage for the mutator") != std::string::npos);
  fs::remove(trace);
}
