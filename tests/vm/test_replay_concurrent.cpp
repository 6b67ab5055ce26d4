// `gcvm replay --plan=concurrent`: every collection a cycle of the concurrent plan, each
// mutation round running while its cycle's snapshot is marked. Under every marker
// (serial, parallel, gpu-bfs and gpu-dfs on OpenCL/PoCL in CI, CUDA where present),
// with --verify: the cycles' pauses by kind, the marks of the mark-sweep replay one
// collection later (a cycle marks the heap the round before it left), the same marks
// under every marker, a dump's concurrent replay recorded as a trace, and one line and
// exit 2 for the combinations replay does not have.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_runner.hpp"
#include "collector_flags.hpp"
#include "replay_runner.hpp"

using namespace gcvm::test;

namespace {

namespace fs = std::filesystem;

constexpr const char* kMutation = " --collections=4 --mutate=rewire=0.05,replace=0.01,garbage=256K";

std::string concurrent_trace() { return recorded_trace("concurrent-rmat.gcvmtrace"); }

std::vector<std::uint64_t> marked(const nlohmann::json& j) {
  std::vector<std::uint64_t> out;
  for (const auto& c : j["collections"]) out.push_back(c["marked_objects"].get<std::uint64_t>());
  return out;
}

/// Every cycle: kind concurrent, an initial pause first and a final pause last (a stall
/// between them when the replay waited), the pauses summing to pause_ms; the run's
/// histograms count them by kind.
void check_cycles(const nlohmann::json& j, std::size_t cycles) {
  CHECK(j["plan"] == "concurrent");
  REQUIRE(j["collections"].size() == cycles);
  std::size_t stalls = 0;
  for (const auto& c : j["collections"]) {
    CAPTURE(c.dump());
    CHECK(c["kind"] == "concurrent");
    REQUIRE(c["pauses"].size() >= 2);
    CHECK(c["pauses"].front()["kind"] == "initial");
    CHECK(c["pauses"].back()["kind"] == "final");
    double sum = 0;
    for (const auto& p : c["pauses"]) {
      sum += p["ms"].get<double>();
      stalls += p["kind"] == "stall";
    }
    CHECK(c["pause_ms"].get<double>() == doctest::Approx(sum));
    CHECK(c["cycle_ms"].get<double>() >= sum);
    CHECK(c["concurrent_mark_ms"].get<double>() > 0);
  }
  CHECK(j["pauses"]["initial"]["count"] == cycles);
  CHECK(j["pauses"]["final"]["count"] == cycles);
  CHECK(j["pauses"]["stall"]["count"] == stalls);
  CHECK(j["stalled_cycles"] == stalls);
  CHECK(j["pauses"]["all"]["count"] == 2 * cycles + stalls);
  CHECK(j["exit_lazy_sweep"].is_object());
  CHECK(j["device_fallbacks"] == 0);
}

}  // namespace

TEST_CASE("concurrent replays: cycles under every marker, verified, mark what mark-sweep marked one collection earlier") {
  const std::string trace = concurrent_trace();
  const auto marksweep = replay_json(trace + kMutation);
  CHECK(marksweep["plan"] == "marksweep");
  CHECK(marksweep["exit_lazy_sweep"].is_null());
  CHECK(marksweep["pauses"]["all"]["count"] == 4);
  CHECK(marksweep["pauses"]["initial"]["count"] == 0);
  const auto stop_the_world = marked(marksweep);

  std::vector<std::string> reference;
  for (const std::string& flags : collector_flags()) {
    CAPTURE(flags);
    const auto j = replay_json(trace + flags + kMutation + " --plan=concurrent --verify");
    check_cycles(j, 4);
    CHECK(j["mutation"]["rounds"] == 3);
    const auto& c = j["collections"];
    CHECK(c[0]["reason"] == "explicit");  // the trace's own collection: a whole cycle
    CHECK_FALSE(c[0].contains("mutation"));
    for (std::size_t i = 1; i < 4; ++i) {
      CHECK(c[i]["reason"] == "repeat");
      CHECK(c[i]["verify_ms"].get<double>() > 0);
      CHECK(c[i]["mutation"]["bytes_allocated"].get<std::uint64_t>() >= 256 * 1024);
      CHECK(c[i]["mutation"]["live_set_ms"].get<double>() > 0);
      // The round ran while this cycle marked: its snapshot is the heap before the round.
      CHECK(c[i]["mutation"]["live_objects"] == c[i]["marked_objects"]);
    }
    // Cycle 2 marks the heap cycle 1 marked (its round had not run yet); cycle 3 the heap
    // the first round left, which mark-sweep's collection 2 marked (the same objects and
    // references; the round's new objects may sit in other slots, since the first cycle's
    // garbage was swept lazily). From the second round on the rounds differ: they draw
    // from live sets in id order.
    CHECK(c[0]["mark_digest"] == marksweep["collections"][0]["mark_digest"]);
    CHECK(c[1]["mark_digest"] == c[0]["mark_digest"]);
    CHECK(c[1]["freed_objects"] == 0);
    const auto cycles = marked(j);
    CHECK(std::vector<std::uint64_t>(cycles.begin(), cycles.begin() + 3) ==
          std::vector<std::uint64_t>{stop_the_world[0], stop_the_world[0], stop_the_world[1]});
    // The marks do not depend on the marker.
    std::vector<std::string> rows;
    for (std::size_t i = 0; i < 3; ++i) rows.push_back(c[i]["mark_digest"].get<std::string>());
    if (reference.empty())
      reference = rows;
    else
      CHECK(rows == reference);
  }
  fs::remove(trace);
}

TEST_CASE("concurrent replays that only rewire mark exactly what mark-sweep marked, one collection later") {
  const std::string trace = concurrent_trace();
  const std::string mutation = " --collections=5 --mutate=rewire=0.05";
  const auto marksweep = replay_json(trace + mutation);
  const auto concurrent = replay_json(trace + mutation + " --plan=concurrent");
  check_cycles(concurrent, 5);
  CHECK(concurrent["collections"][0]["mark_digest"] == marksweep["collections"][0]["mark_digest"]);
  for (std::size_t i = 1; i < 5; ++i)
    CHECK(concurrent["collections"][i]["mark_digest"] == marksweep["collections"][i - 1]["mark_digest"]);
  // Without --mutate every cycle is a whole one and marks the same heap.
  const auto still = replay_json(trace + " --collections=3 --plan=concurrent");
  check_cycles(still, 3);
  CHECK(still["mutation"]["rounds"] == 0);
  CHECK(still["collections"][2]["mark_digest"] == still["collections"][0]["mark_digest"]);
  fs::remove(trace);
}

TEST_CASE("--plan=concurrent --gc-log: each round during its cycle, the cycles' pauses, the lazy sweep at exit") {
  const std::string trace = concurrent_trace();
  const auto r = run_gcvm("replay " + trace + " --collections=3 --mutate=rewire=0.1,garbage=64K --plan=concurrent --gc-log");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.find("[gc 1 concurrent] explicit: ") == 0);
  CHECK(r.out.find("[mutator during gc 2]") < r.out.find("[gc 2 concurrent] repeat: "));
  CHECK(r.out.find("(finding the live set ") != std::string::npos);
  CHECK(r.out.find("[gc exit] lazy sweep of the last cycle ") != std::string::npos);
  CHECK(r.out.find("under serial (concurrent)") != std::string::npos);
  CHECK(r.out.find("3 collections (3 concurrent cycles)") != std::string::npos);
  CHECK(r.out.find("plan concurrent: initial 3 pauses") != std::string::npos);
  CHECK(r.out.find("stalled cycles: ") != std::string::npos);
  CHECK(r.out.find("mutator (rewire=0.1,garbage=65536, seed 1): 2 rounds") != std::string::npos);
  fs::remove(trace);
}

TEST_CASE("a dump's concurrent replay, recorded with --record-trace, replays with the marks of its cycles") {
  const fs::path dump = fixture_dump();
  if (!fs::exists(dump)) {
    MESSAGE("no " << dump.string() << " (java/jcmd missing?): skipped");
    return;
  }
  const std::string recorded = "concurrent-recorded.gcvmtrace";
  const auto live = replay_json(dump.string() + kMutation + " --plan=concurrent --verify --record-trace=" + recorded);
  check_cycles(live, 4);
  CHECK(live["collections"][0]["reason"] == "snapshot");
  const auto replayed = replay_json(recorded + " --verify");
  CHECK(replayed["recorded_collections"] == 4);
  CHECK(marked(replayed) == marked(live));
  for (std::size_t i = 0; i < 4; ++i)
    CHECK(replayed["collections"][i]["freed_objects"] == live["collections"][i]["freed_objects"]);
  fs::remove(recorded);
}

TEST_CASE("replay's plans: bad combinations give one line and exit 2; a round that does not fit, exit 3") {
  const std::string trace = concurrent_trace();
#if GCVM_HAVE_BOEHM
  check_usage_error("replay " + trace + " --plan=concurrent --gc=boehm", "--plan=concurrent needs a gcvm heap");
#endif
  check_usage_error("replay " + trace + " --plan=incremental", "--plan: incremental not in");
  check_usage_error("replay " + trace + " --plan=generational", "gcvm replay collects under --plan=marksweep or");
  check_usage_error("replay " + trace + " --concurrent-trigger=50", "applies to --plan=concurrent");
  check_usage_error("replay " + trace + " --plan=concurrent --concurrent-trigger=50",
                    "--concurrent-trigger does not apply to gcvm replay");
  check_usage_error("replay " + trace + " --plan=concurrent --nursery=1M", "--nursery");
  const auto full = run_gcvm("replay " + trace + " --plan=concurrent --heap=2M --collections=2 --mutate=garbage=64M");
  CHECK(full.exit_code == 3);
  CHECK(line_count(full.err) == 1);
  CHECK(full.err.find("allocating garbage for the mutator") != std::string::npos);
  fs::remove(trace);
}
