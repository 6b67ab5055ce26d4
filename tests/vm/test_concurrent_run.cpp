// `gcvm run --plan=concurrent` end to end: the cycles' pauses in --gc-log and --stats,
// stalls, the gc instruction, out of memory after a whole cycle, flags and their
// errors, and a recorded run's replay. Every workload under the plan with every marker
// is in test_workloads.cpp; the collector's properties in tests/gc/test_concurrent.cpp.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "collector_flags.hpp"

using gcvm::test::check_usage_error;
using gcvm::test::kWorkloads;
using gcvm::test::run_gcvm;

TEST_CASE("--plan=concurrent logs each cycle's pauses and reports them by kind") {
  const auto r = run_gcvm("run " + kWorkloads + "binary_trees.gasm --heap=1M --plan=concurrent --gc-log --stats=text -- 10");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.err.find("[gc 1 concurrent] heap ") == 0);
  CHECK(r.err.find("% used: ") != std::string::npos);
  CHECK(r.err.find("(initial ") != std::string::npos);
  CHECK(r.err.find(" + final ") != std::string::npos);
  CHECK(r.err.find("concurrent mark ") != std::string::npos);
  CHECK(r.err.find("lazy sweep of the last cycle ") != std::string::npos);
  CHECK(r.err.find("plan concurrent: initial ") != std::string::npos);
  CHECK(r.err.find(" pauses, pause total ") != std::string::npos);
  CHECK(r.err.find("stalled cycles: ") != std::string::npos);

  const auto json_run = run_gcvm("run " + kWorkloads + "binary_trees.gasm --heap=1M --plan=concurrent --stats=json -- 10");
  REQUIRE(json_run.exit_code == 0);
  const auto stats = nlohmann::json::parse(json_run.err);
  CHECK(stats["plan"] == "concurrent");
  const int cycles = stats["collection_count"].get<int>();
  CHECK(cycles > 1);
  CHECK(stats["pauses"]["initial"]["count"] == cycles);
  CHECK(stats["pauses"]["final"]["count"] == cycles);
  CHECK(stats["pauses"]["all"]["count"].get<int>() == 2 * cycles + stats["stalled_cycles"].get<int>());
  double lazy = 0;
  for (const auto& c : stats["collections"]) {
    CHECK(c["kind"] == "concurrent");
    double sum = 0;
    for (const auto& p : c["pauses"]) sum += p["ms"].get<double>();
    CHECK(c["pause_ms"].get<double>() == doctest::Approx(sum));
    CHECK(c["pauses"].front()["kind"] == "initial");
    CHECK(c["pauses"].back()["kind"] == "final");
    CHECK(c["cycle_ms"].get<double>() >= sum);
    CHECK(c["cpu_ms"].is_number());
    CHECK(c["snapshot_details"].contains("copy_ms"));
    lazy += c["lazy_sweep_ms"].get<double>();
  }
  // The last cycle's lazy sweep is finished at exit and reported on its own.
  const auto& exit_sweep = stats["exit_lazy_sweep"];
  REQUIRE(exit_sweep.is_object());
  CHECK(exit_sweep["blocks"].get<int>() > 0);
  CHECK(exit_sweep["freed_objects"] == stats["collections"].back()["freed_objects"]);
  CHECK(stats["lazy_sweep_ms"].get<double>() == doctest::Approx(lazy + exit_sweep["ms"].get<double>()));
  CHECK(stats["device_fallbacks"] == 0);
  CHECK(r.err.find("\n[gc exit] lazy sweep of the last cycle ") != std::string::npos);
  CHECK(r.err.find("(the last cycle's at exit: ") != std::string::npos);

  const auto marksweep = run_gcvm("run " + kWorkloads + "binary_trees.gasm --heap=1M --stats=json -- 10");
  REQUIRE(marksweep.exit_code == 0);
  CHECK(nlohmann::json::parse(marksweep.err)["exit_lazy_sweep"].is_null());
}

TEST_CASE("cycles that start with the heap full run the program to the end, and their stalls are logged") {
  // Whether a cycle stalls depends on whether its mark ends before the mutator needs
  // it (tests/gc/test_concurrent.cpp forces one); the log and the figures must agree.
  const auto r = run_gcvm("run " + kWorkloads +
                          "binary_trees.gasm --heap=1M --plan=concurrent --concurrent-trigger=100 --gc-log --stats=json -- 10");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto stats = nlohmann::json::parse(r.err.substr(r.err.rfind("\n{") + 1));
  CHECK((r.err.find("STALL ") != std::string::npos) == (stats["stalled_cycles"].get<int>() > 0));
  CHECK(stats["pauses"]["stall"]["count"] == stats["stalled_cycles"]);
}

TEST_CASE("the guest's gc instruction runs a whole cycle under the concurrent plan") {
  const auto r = run_gcvm("run " + kWorkloads + "micro_single.gasm --plan=concurrent --gc-log --stats=none");
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("[gc 1 concurrent] gc instruction: ") == 0);
}

TEST_CASE("out of memory under the concurrent plan comes after a whole cycle") {
  const auto r = run_gcvm("run " + kWorkloads + "micro_list.gasm --heap=256K --plan=concurrent --gc-log --stats=none -- 50000");
  CHECK(r.exit_code == 3);
  const auto oom = r.err.find("gcvm: out of memory");
  REQUIRE(oom != std::string::npos);
  const auto last_gc = r.err.rfind("[gc ", oom);
  REQUIRE(last_gc != std::string::npos);
  CHECK(r.err.find("heap full: ", last_gc) < oom);
}

TEST_CASE("concurrent flags that are wrong or out of place exit 2 with one line") {
  struct Case {
    std::string args;
    const char* says;
  };
  const std::string program = "run " + kWorkloads + "micro_single.gasm ";
  for (const auto& c : {
           Case{program + "--concurrent-trigger=50", "--concurrent-trigger applies to --plan=concurrent"},
           Case{program + "--plan=generational --concurrent-trigger=50", "--concurrent-trigger applies"},
           Case{program + "--plan=concurrent --concurrent-trigger=0", "--concurrent-trigger"},
           Case{program + "--plan=concurrent --concurrent-trigger=101", "--concurrent-trigger"},
           Case{program + "--plan=concurrent --nursery=1M", "--nursery applies to --plan=generational"},
           Case{program + "--plan=concurrent --gc-opt device-error=cpu", "device-error applies to GPU markers"},
           Case{program + "--plan=concurrent --gc=gpu-bfs --gc-opt device-error=retry", "device-error=cpu|fail"},
           Case{program + "--gc=parallel --gc-opt device-start=overlap", "device-start applies to GPU markers"},
           Case{program + "--gc=gpu-dfs --gc-opt device-start=soon", "device-start=open|overlap"},
           Case{"mark --graph=list:10 --gc=gpu-bfs --gc-opt device-start=overlap", "gcvm mark marks a heap it has built"},
           Case{program + "--gc=parallel --gc-opt device-exit=wait", "device-exit applies to GPU markers"},
           Case{program + "--gc=gpu-bfs --gc-opt device-exit=later", "device-exit=detach|wait"},
           Case{"replay nothing.gcvmtrace --gc=serial --gc-opt device-exit=detach", "device-exit applies to GPU markers"},
       }) {
    check_usage_error(c.args, c.says);
  }
#if GCVM_HAVE_BOEHM
  const auto boehm = run_gcvm(program + "--plan=concurrent --gc=boehm");
  CHECK(boehm.exit_code == 2);
  CHECK(boehm.err.find("--plan=concurrent needs a gcvm heap") != std::string::npos);
#endif
}

TEST_CASE("gcvm run --plan=concurrent --record-trace: the replay collects at the snapshots what the cycles freed") {
  const std::string trace = "record-concurrent.gcvmtrace";
  const auto run = run_gcvm("run " + kWorkloads +
                            "binary_trees.gasm --heap=1M --plan=concurrent --concurrent-trigger=40 --stats=json "
                            "--record-trace=" + trace + " -- 10");
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
  const auto recorded = nlohmann::json::parse(run.err.substr(run.err.find('{')));
  const auto& cycles = recorded["collections"];
  REQUIRE(cycles.size() > 1);

  const auto r = run_gcvm("replay " + trace + " --verify --stats=json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["collections"].size() == cycles.size());
  // A replayed collection at a snapshot marks what the cycle's mark reached and frees
  // what its lazy sweep freed later: the heaps agree at every snapshot.
  for (std::size_t i = 0; i < cycles.size(); ++i) {
    CAPTURE(i);
    CHECK(j["collections"][i]["marked_objects"] == cycles[i]["marked_objects"]);
    CHECK(j["collections"][i]["freed_objects"] == cycles[i]["freed_objects"]);
  }
  std::filesystem::remove(trace);
}

TEST_CASE("--gc-opt device-start=overlap: the program runs while the device opens, its output is unchanged, and the "
          "log names the collections marked on the CPU and the first on the device") {
  for (const std::string& flags : gcvm::test::collector_flags()) {
    if (flags.find("gpu-") == std::string::npos) continue;
    for (const char* plan : {"marksweep", "concurrent"}) {
      CAPTURE(flags);
      CAPTURE(std::string(plan));
      const std::string run = "run " + kWorkloads + "binary_trees.gasm --heap=1M --verify-heap --gc-log --stats=json" +
                              flags + " --plan=" + plan + " --gc-opt device-start=overlap -- 12";
      const auto r = run_gcvm(run);
      REQUIRE_MESSAGE(r.exit_code == 0, r.err);
      CHECK(r.out == run_gcvm("run " + kWorkloads + "binary_trees.gasm --heap=1M -- 12").out);
      const auto stats = nlohmann::json::parse(r.err.substr(r.err.find("\n{") + 1));
      int starting = 0, first = 0, after = 0;
      for (const auto& c : stats["collections"]) {
        const auto& details = c["mark_details"];
        const bool on_cpu = details.contains("device_starting");
        bool is_first = details.contains("device_ready_ms");
        if (c.contains("snapshot_details")) is_first = is_first || c["snapshot_details"].contains("device_ready_ms");
        if (on_cpu) CHECK(first + after == 0);  // no CPU mark once the device has marked
        starting += on_cpu ? 1 : 0;
        first += is_first ? 1 : 0;
        after += !on_cpu && !is_first ? 1 : 0;
      }
      CHECK(first <= 1);
      CHECK(starting + first + after == stats["collection_count"].get<int>());
      if (starting > 0) CHECK(r.err.find("marked on the CPU (parallel): the device is starting") != std::string::npos);
      if (first > 0) CHECK(r.err.find("first on the device (open at ") != std::string::npos);
    }
  }
}

TEST_CASE("--gc-opt device-exit=detach|wait: the same run either way, on every GPU marker") {
  const std::string expected = run_gcvm("run " + kWorkloads + "binary_trees.gasm --heap=1M -- 12").out;
  for (const std::string& flags : gcvm::test::collector_flags()) {
    if (flags.find("gpu-") == std::string::npos) continue;
    for (const char* exit : {"detach", "wait"}) {
      CAPTURE(flags);
      CAPTURE(std::string(exit));
      const auto r = run_gcvm("run " + kWorkloads + "binary_trees.gasm --heap=1M --stats=json" + flags +
                              " --gc-opt device-exit=" + exit + " -- 12");
      REQUIRE_MESSAGE(r.exit_code == 0, r.err);
      CHECK(r.out == expected);
      CHECK(nlohmann::json::parse(r.err)["collection_count"].get<int>() > 0);
    }
  }
  const auto mark = run_gcvm("mark --graph=list:100 --gc=gpu-bfs --gc-opt device-exit=wait");
  CHECK_MESSAGE(mark.exit_code == 0, mark.err);
}
