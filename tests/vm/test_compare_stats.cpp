// gcvm compare's arithmetic against hand-computed examples: nearest-rank percentiles,
// medians, minimum mutator utilization, a run's figures from its statistics object,
// medians with spread and speed-ups; configurations and their errors; why a run failed
// and whether two runs did the same work.
#include <doctest/doctest.h>

#include <csignal>
#include <fstream>

#include "gc/plans/pause_metrics.hpp"
#include "vm/cli/commands.hpp"
#include "vm/compare/comparison.hpp"
#include "vm/compare/configuration.hpp"
#include "vm/compare/run_metrics.hpp"

using namespace gcvm;
using namespace gcvm::compare;

TEST_CASE("nearest-rank percentiles and medians") {
  const std::vector<double> ten{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  CHECK(nearest_rank(ten, 0.5) == 5);   // ceil(0.5 * 10) = 5th
  CHECK(nearest_rank(ten, 0.9) == 9);   // 9th
  CHECK(nearest_rank(ten, 0.99) == 10); // ceil(9.9) = 10th
  const std::vector<double> one{7};
  CHECK(nearest_rank(one, 0.5) == 7);
  CHECK(median({3, 1, 2}) == 2);
  CHECK(median({4, 1, 3, 2}) == 2.5);
  CHECK(median({5}) == 5);
}

TEST_CASE("minimum mutator utilization of two pauses in a 100 ms run") {
  // Pauses [10, 20) and [50, 55).
  const std::vector<PauseInterval> pauses{{50, 5}, {10, 10}};
  CHECK(*minimum_mutator_utilization(pauses, 100, 10) == doctest::Approx(0.0));   // [10, 20] is all pause
  CHECK(*minimum_mutator_utilization(pauses, 100, 20) == doctest::Approx(0.5));   // [10, 30]: 10 of 20
  CHECK(*minimum_mutator_utilization(pauses, 100, 50) == doctest::Approx(0.7));   // [10, 60]: 15 of 50
  CHECK(*minimum_mutator_utilization(pauses, 100, 100) == doctest::Approx(0.85)); // the whole run
  CHECK(*minimum_mutator_utilization(pauses, 100, 4) == doctest::Approx(0.0));
  CHECK_FALSE(minimum_mutator_utilization(pauses, 100, 200).has_value());  // longer than the run
  CHECK(*minimum_mutator_utilization({}, 100, 10) == doctest::Approx(1.0));
  // Overlapping pauses count once: [0, 10) and [5, 15) pause [0, 15).
  const std::vector<PauseInterval> overlapping{{0, 10}, {5, 10}};
  CHECK(*minimum_mutator_utilization(overlapping, 100, 30) == doctest::Approx(0.5));
  // A pause at the end of the run is clipped to it.
  const std::vector<PauseInterval> late{{95, 10}};
  CHECK(*minimum_mutator_utilization(late, 100, 10) == doctest::Approx(0.5));
}

TEST_CASE("MMU windows run from 1 ms to 1 s") {
  const std::vector<double> w = mmu_windows(2);
  REQUIRE(w.size() == 7);
  CHECK(w.front() == 1);
  CHECK(w[2] == 10);
  CHECK(w[4] == 100);
  CHECK(w.back() == 1000);
}

namespace {

nlohmann::json collection(double start, double pause, std::optional<double> cpu, nlohmann::json details = {}) {
  return {{"start_ms", start},
          {"pause_ms", pause},
          {"mark_ms", pause * 0.75},
          {"sweep_ms", pause * 0.25},
          {"cpu_ms", cpu ? nlohmann::json(*cpu) : nlohmann::json()},
          {"marked_objects", 10},
          {"mark_details", details.is_null() ? nlohmann::json::object() : details}};
}

}  // namespace

TEST_CASE("a run's figures from its statistics and its process") {
  nlohmann::json stats = {{"elapsed_ms", 100.0}, {"collections", nlohmann::json::array()}};
  const double pause_ms[] = {4, 1, 3, 2};
  for (int i = 0; i < 4; ++i)
    stats["collections"].push_back(collection(10.0 + 20 * i, pause_ms[i], 2.0 * pause_ms[i],
                                              {{"sync_ms", 0.5}, {"kernel_ms", 1.0}, {"device_bytes", 1048576.0 * (i + 1)}}));
  stats["collections"][1]["kind"] = "young";
  ChildRun child;
  child.wall_ms = 120;
  child.cpu_ms = 110;
  child.max_rss_mib = 30;
  const RunFigures f = run_figures(stats, child);
  CHECK(*f[Metric::Collections] == 4);
  CHECK(*f[Metric::PauseTotal] == doctest::Approx(10));
  CHECK(*f[Metric::PauseMax] == 4);
  CHECK(*f[Metric::PauseP50] == 2);
  CHECK(*f[Metric::PauseP90] == 4);
  CHECK(*f[Metric::WarmPauseP50] == 2);  // of 1, 3 and 2: the first, cold one left out
  CHECK(*f[Metric::Mark] == doctest::Approx(7.5));
  CHECK(*f[Metric::Sweep] == doctest::Approx(2.5));
  CHECK(*f[Metric::Sync] == doctest::Approx(2));
  CHECK(*f[Metric::DeviceTime] == doctest::Approx(4));
  CHECK(*f[Metric::DeviceMemory] == doctest::Approx(4));  // the largest
  CHECK(*f[Metric::GcCpu] == doctest::Approx(20));
  CHECK(*f[Metric::Wall] == 120);
  CHECK(*f[Metric::Mutator] == doctest::Approx(110));
  CHECK(*f[Metric::Young] == 1);
  CHECK(*f[Metric::Full] == 3);
  CHECK(*f[Metric::PeakRss] == 30);
  CHECK(*f[Metric::Mmu1ms] == doctest::Approx(0));
  CHECK(*f[Metric::Mmu10ms] == doctest::Approx(0.6));   // [10, 20] holds the 4 ms pause
  CHECK(*f[Metric::Mmu100ms] == doctest::Approx(0.9));
  CHECK_FALSE(f[Metric::Mmu1s].has_value());

  // A collector that measures no CPU time, device time or memory: those are empty.
  nlohmann::json libgc = {{"elapsed_ms", 50.0}, {"collections", {collection(5, 1, std::nullopt)}}};
  const RunFigures g = run_figures(libgc, child);
  CHECK_FALSE(g[Metric::GcCpu].has_value());
  CHECK_FALSE(g[Metric::Sync].has_value());
  CHECK_FALSE(g[Metric::DeviceMemory].has_value());
  const RunFigures none = run_figures({{"elapsed_ms", 5.0}, {"collections", nlohmann::json::array()}}, child);
  CHECK(*none[Metric::Collections] == 0);
  CHECK_FALSE(none[Metric::PauseP50].has_value());
  CHECK_FALSE(g[Metric::WarmPauseP50].has_value());  // one collection: no warm one
  // A cold first pause far above the rest moves the median of all, not the warm one.
  nlohmann::json cold = {{"elapsed_ms", 50.0}, {"collections", {collection(1, 10, 1.0), collection(5, 1, 1.0),
                                                                 collection(9, 2, 1.0)}}};
  const RunFigures c = run_figures(cold, child);
  CHECK(*c[Metric::PauseP50] == 2);
  CHECK(*c[Metric::WarmPauseP50] == 1);
  CHECK_FALSE(none[Metric::Program].has_value());  // a heap file's run: no program

  // A program's run: its own time, and what the process spent outside it (start-up,
  // a device opened before the program, exit).
  nlohmann::json program = {{"elapsed_ms", 100.0}, {"run_ms", 85.0}, {"collections", nlohmann::json::array()}};
  const RunFigures p = run_figures(program, child);
  CHECK(*p[Metric::Program] == 85);
  CHECK(*p[Metric::Outside] == 35);
}

TEST_CASE("a concurrent run's pauses: each pause of a cycle counts, by kind too") {
  nlohmann::json stats = {{"elapsed_ms", 100.0}, {"collections", nlohmann::json::array()}};
  for (int i = 0; i < 2; ++i) {
    nlohmann::json cycle = collection(10.0 + 40 * i, 0, 1.0);
    cycle["kind"] = "concurrent";
    auto pause = [](const char* kind, double start, double ms) {
      return nlohmann::json{{"kind", kind}, {"start_ms", start}, {"ms", ms}};
    };
    cycle["pauses"] = nlohmann::json::array({pause("initial", 10.0 + 40 * i, 1.0 + i)});
    if (i == 1) cycle["pauses"].push_back(pause("stall", 60.0, 4.0));
    cycle["pauses"].push_back(pause("final", 30.0 + 40 * i, 0.5));
    stats["collections"].push_back(cycle);
  }
  ChildRun child;
  child.wall_ms = 100;
  const RunFigures f = run_figures(stats, child);
  CHECK(*f[Metric::Collections] == 2);
  CHECK(f.pauses.size() == 5);
  CHECK(*f[Metric::PauseTotal] == doctest::Approx(8));
  CHECK(*f[Metric::PauseMax] == 4);
  CHECK(*f[Metric::Stalls] == 1);
  CHECK(*f[Metric::InitialMax] == 2);
  CHECK(*f[Metric::FinalMax] == 0.5);
  CHECK(*f[Metric::Mmu10ms] == doctest::Approx(0.6));  // [60, 70] holds the stall
  // Stop-the-world runs have no rows for the kinds of a cycle's pauses.
  const RunFigures g = run_figures({{"elapsed_ms", 50.0}, {"collections", {collection(5, 1, 1.0)}}}, child);
  CHECK_FALSE(g[Metric::Stalls].has_value());
  CHECK_FALSE(g[Metric::InitialMax].has_value());
}

TEST_CASE("medians with spread and speed-ups against the baseline") {
  Comparison c;
  c.shown = parse_metric_list("");
  for (const char* name : {"a", "b"}) c.results.push_back({{name, name, {}}, {}, {}, {}, {}, {}});
  auto run = [](double wall, double pause) {
    RunFigures f;
    f[Metric::Wall] = wall;
    f[Metric::PauseTotal] = pause;
    return f;
  };
  c.results[0].runs = {run(100, 10), run(120, 30), run(110, 20)};
  c.results[1].runs = {run(50, 40), run(60, 40)};
  c.summarize();
  const auto& a = *c.results[0].summary[static_cast<std::size_t>(Metric::Wall)];
  CHECK(a.median == 110);
  CHECK(a.min == 100);
  CHECK(a.max == 120);
  CHECK(c.results[1].summary[static_cast<std::size_t>(Metric::Wall)]->median == 55);
  CHECK(*c.results[0].speedup_run == doctest::Approx(1));
  CHECK(*c.results[1].speedup_run == doctest::Approx(2.0));   // 110 / 55
  CHECK(*c.results[1].speedup_pause == doctest::Approx(0.5)); // 20 / 40
  CHECK_FALSE(c.results[0].summary[static_cast<std::size_t>(Metric::Sync)].has_value());
  CHECK(c.text().find("110.0 (100.0-120.0)") != std::string::npos);
  CHECK(c.markdown().find("| b |") != std::string::npos);
  CHECK(c.csv().find("b,ok,wall_ms,55,50,60,2,") != std::string::npos);

  c.results[1].failure = "crashed (Segmentation fault)";
  c.summarize();
  CHECK_FALSE(c.all_ok());
  CHECK(c.text().find("FAILED") != std::string::npos);
  CHECK(c.json()["configurations"][1]["status"] == "failed");
}

TEST_CASE("configurations become gcvm flags") {
  const Configuration c =
      parse_configuration("gc=gpu-bfs device=opencl:0 opt=offsets=prefix opt=vector=off plan=generational heap=8M",
                          WorkloadKind::Program, "--config");
  CHECK(c.flags == std::vector<std::string>{"--gc=gpu-bfs", "--device=opencl:0", "--gc-opt=offsets=prefix",
                                            "--gc-opt=vector=off", "--plan=generational", "--heap=8M"});
  CHECK(c.name == "gc=gpu-bfs device=opencl:0 opt=offsets=prefix opt=vector=off plan=generational heap=8M");
  CHECK(parse_configuration("name=par2 gc=parallel threads=2", WorkloadKind::Graph, "x").name == "par2");

  Workload w{WorkloadKind::Program, "p.gasm", {"14"}, {"--heap=64M"}};
  const auto argv = run_command("gcvm", w, parse_configuration("gc=serial heap=8M", WorkloadKind::Program, "x"), "s.json");
  CHECK(argv == std::vector<std::string>{"gcvm", "run", "p.gasm", "--stats=none", "--gc=serial", "--heap=8M",
                                         "--stats-json=s.json", "--", "14"});
}

TEST_CASE("malformed configurations are one clear error each") {
  auto error = [](const std::string& text, WorkloadKind kind = WorkloadKind::Program) {
    try {
      parse_configuration(text, kind, "--config '" + text + "'");
    } catch (const cli::UsageError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(error("gc=nope").find("unknown collector 'nope'") != std::string::npos);
  CHECK(error("gc=serial threads=-1").find("threads is a count") != std::string::npos);
  CHECK(error("serial").find("'serial' is not key=value") != std::string::npos);
  CHECK(error("gc=serial colour=red").find("unknown key 'colour'") != std::string::npos);
  CHECK(error("gc=serial gc=parallel").find("gc is given twice") != std::string::npos);
  CHECK(error("gc=serial heap=lots").find("heap=lots is not a size") != std::string::npos);
  CHECK(error("gc=serial plan=copying").find("plan is one of marksweep|generational|concurrent") != std::string::npos);
  CHECK(error("gc=serial concurrent-trigger=0").find("concurrent-trigger is a percentage") != std::string::npos);
  CHECK(error("gc=serial plan=generational", WorkloadKind::HeapFile).find("applies to guest programs") !=
        std::string::npos);
  CHECK(error("  ").find("empty configuration") != std::string::npos);

  std::vector<Configuration> twice{{"a", "gc=serial", {}}, {"a", "gc=serial", {}}};
  CHECK_THROWS_WITH_AS(check_configurations(twice, ""), doctest::Contains("two configurations are named 'a'"),
                       cli::UsageError);
  twice[1].name = "b";
  CHECK(check_configurations(twice, "b") == 1);
  CHECK_THROWS_WITH_AS(check_configurations(twice, "c"), doctest::Contains("names no configuration"), cli::UsageError);
}

TEST_CASE("configuration files: JSON strings and objects, errors with their place") {
  {
    std::ofstream("compare_configs.json")
        << R"({"configurations": ["gc=serial", {"name": "par", "gc": "parallel", "threads": 2, "opt": []}]})";
  }
  const auto configs = read_configuration_file("compare_configs.json", WorkloadKind::Program);
  REQUIRE(configs.size() == 2);
  CHECK(configs[1].name == "par");
  CHECK(configs[1].flags == std::vector<std::string>{"--gc=parallel", "--gc-threads=2"});
  { std::ofstream("compare_configs.json") << R"(["gc=serial", {"gc": "parallel", "threads": 2.5}])"; }
  CHECK_THROWS_WITH_AS(read_configuration_file("compare_configs.json", WorkloadKind::Program),
                       doctest::Contains("configuration 2: the value of threads"), cli::UsageError);
  { std::ofstream("compare_configs.json") << "[\"gc=serial\",\n  {gc: 1}]"; }
  CHECK_THROWS_WITH_AS(read_configuration_file("compare_configs.json", WorkloadKind::Program),
                       doctest::Contains("compare_configs.json: byte 18: not JSON (parse error at line 2, column 4"), cli::UsageError);
  std::remove("compare_configs.json");
}

TEST_CASE("why a run failed, and whether two runs did the same work") {
  ChildRun crashed;
  crashed.started = true;
  crashed.signal = SIGSEGV;
  CHECK(failure_of(crashed, "", 0).find("crashed (Segmentation fault)") == 0);
  ChildRun device;
  device.started = true;
  device.exit_code = cli::kExitDeviceError;
  CHECK(failure_of(device, "gcvm: device error: no CUDA device is usable\n", 0) ==
        "device error (exit 5): gcvm: device error: no CUDA device is usable");
  ChildRun oom;
  oom.started = true;
  oom.exit_code = cli::kExitOutOfMemory;
  CHECK(failure_of(oom, "gcvm: out of memory: heap full\n  at main (p.gasm:3)\n", 0) ==
        "out of memory (exit 3): gcvm: out of memory: heap full");
  ChildRun slow;
  slow.started = true;
  slow.timed_out = true;
  CHECK(failure_of(slow, "", 2.5) == "timed out after 2.5 s");
  ChildRun fine;
  fine.started = true;
  fine.exit_code = 0;
  CHECK(failure_of(fine, "", 0).empty());

  const WorkDone a{"1\n2\n3\n", {}, {}}, b{"1\n2\n4\n", {}, {}};
  CHECK(a.differs_from(a).empty());
  CHECK(a.differs_from(b) == "printed other output (first difference in line 3)");
  const WorkDone m{"", {"aa", "bb"}, {5, 6}}, n{"", {"aa", "bc"}, {5, 6}}, counts_only{"", {}, {5, 6}};
  CHECK(m.differs_from(n).find("marked other objects in collection 2") == 0);
  CHECK(m.differs_from(counts_only).empty());  // no digests (libgc, conservative): collections only
  CHECK(m.differs_from(WorkDone{"", {}, {7, 9}}).empty());
  CHECK(counts_only.differs_from(WorkDone{"", {}, {5}}) == "ran 2 collections, not 1");
}
