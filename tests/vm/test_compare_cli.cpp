// `gcvm compare` end to end on small workloads: serial against parallel (and a GPU
// marker on OpenCL, PoCL in CI) on a guest program, a failing configuration reported
// while the others run, heap files and synthetic heaps compared by their marks, the
// output formats and files of --out, malformed input exiting 2; and the
// --gc-log=FILE and --stats-json=FILE outputs the runs are read through.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "gc/device/device_registry.hpp"
#include "vm/cli_runner.hpp"

using gcvm::test::kWorkloads;
using gcvm::test::run_gcvm;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// An OpenCL device for a GPU configuration (PoCL in CI), or empty.
std::string opencl_device() {
  for (const auto& d : gcvm::usable_devices())
    if (d.backend == "opencl") return "opencl:" + std::to_string(d.index);
  return "";
}

}  // namespace

TEST_CASE("compare serial against parallel (and gpu-bfs on OpenCL) on a guest program") {
  std::string configs = " --config gc=serial --config 'gc=parallel threads=2'";
  const std::string device = opencl_device();
  if (!device.empty())
    configs += " --config 'name=bfs gc=gpu-bfs device=" + device + "'";
  else
    MESSAGE("no OpenCL device: compare runs without a GPU configuration");
  const auto r = run_gcvm("compare " + kWorkloads + "binary_trees.gasm --heap=1M --reps=2 --warmup=1 --format=json" +
                          configs + " -- 10");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["reps"] == 2);
  CHECK(j["baseline"] == "gc=serial");
  const auto& c = j["configurations"];
  REQUIRE(c.size() == (device.empty() ? 2u : 3u));
  for (const auto& config : c) {
    CHECK(config["status"] == "ok");
    CHECK(config["runs"].size() == 2);
    CHECK(config["summary"]["collections"]["median"] == c[0]["summary"]["collections"]["median"]);
    CHECK(config["summary"]["collections"]["median"].get<double>() > 0);
    CHECK(config["summary"]["wall_ms"]["min"].get<double>() <= config["summary"]["wall_ms"]["max"].get<double>());
    // The program's own time is part of the run's, and the rest is the process's.
    const double program = config["summary"]["program_ms"]["median"].get<double>();
    CHECK(program > 0);
    CHECK(program < config["summary"]["wall_ms"]["median"].get<double>());
    CHECK(config["summary"]["outside_ms"]["median"].get<double>() > 0);
  }
  CHECK(c[0]["speedup_run"] == 1.0);
  CHECK(c[1]["flags"] == nlohmann::json::array({"--gc=parallel", "--gc-threads=2"}));
  if (!device.empty()) CHECK(c[2]["summary"]["device_ms"]["median"].get<double>() > 0);
}

TEST_CASE("a failing configuration is reported as failed and the others still run") {
  const auto r = run_gcvm("compare " + kWorkloads + "binary_trees.gasm --heap=1M --reps=1 --warmup=0 --progress=off"
                          " --config gc=serial --config 'name=tiny gc=serial heap=64K' --config 'gc=parallel threads=2'"
                          " --config 'name=nodevice gc=gpu-bfs device=cuda:99' -- 10");
  CHECK(r.exit_code == 1);
  const auto status_line = r.out.substr(r.out.find("\nstatus "), r.out.find("\ncollections ") - r.out.find("\nstatus "));
  CHECK(status_line.find("ok, 1 runs") < status_line.find("FAILED"));
  CHECK(status_line.rfind("ok, 1 runs") > status_line.find("FAILED"));  // parallel, after tiny, ran
  CHECK(r.out.find("tiny: out of memory (exit 3): gcvm: out of memory") != std::string::npos);
  CHECK(r.out.find("nodevice: device error (exit 5)") != std::string::npos);
  CHECK(r.out.find("FAILED") != std::string::npos);
}

TEST_CASE("heap files and synthetic heaps are compared by their marks; --out writes the summary and the runs") {
  const std::string trace = "compare_cli.trace";
  REQUIRE(run_gcvm("mark --graph=rmat:10 --collections=2 --record-trace=" + trace).exit_code == 0);
  const std::string out = "compare_cli_out";
  std::filesystem::remove_all(out);
  const auto r = run_gcvm("compare " + trace + " --collections=3 --reps=1 --warmup=0 --plots=none --out=" + out +
                          " --config gc=serial --config 'gc=parallel threads=2' --format=csv"
                          " --metrics=collections,pause_total_ms");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("configuration,status,metric,median,min,max,runs,failure\n") == 0);
  CHECK(r.out.find("gc=parallel threads=2,ok,collections,3,3,3,1,") != std::string::npos);
  CHECK(r.out.find("mark_ms") == std::string::npos);  // not among --metrics
  CHECK(std::filesystem::exists(out + "/summary.json"));
  CHECK(std::filesystem::exists(out + "/summary.csv"));
  const auto stats = nlohmann::json::parse(read_file(out + "/runs/c1-r1.json"));
  CHECK(stats["collections"].size() == 3);
  CHECK(stats["collections"][0].contains("mark_digest"));

  const auto graph = run_gcvm("compare --graph=list:2000 --reps=1 --warmup=0 --config gc=serial --config gc=parallel "
                              "--format=markdown --metrics=collections");
  CHECK(graph.exit_code == 0);
  CHECK(graph.out.find("| gc=parallel | 1 | ") != std::string::npos);
  std::filesystem::remove_all(out);
  std::filesystem::remove(trace);
}

TEST_CASE("compare draws the timeline, histogram and MMU plots with gnuplot") {
  const std::string out = "compare_cli_plots";
  std::filesystem::remove_all(out);
  const auto r = run_gcvm("compare " + kWorkloads + "binary_trees.gasm --heap=1M --reps=1 --warmup=0 --out=" + out +
                          " --config gc=serial --config 'gc=parallel threads=2' -- 10");
  REQUIRE(r.exit_code == 0);
  CHECK(read_file(out + "/plots.gp").find("mmu.png") != std::string::npos);
  CHECK(read_file(out + "/mmu.dat").find("# gc=parallel threads=2\n") != std::string::npos);
  if (r.err.find("no plots drawn") == std::string::npos) {
    for (const char* png : {"/timeline.png", "/pauses.png", "/mmu.png"}) CHECK(std::filesystem::file_size(out + png) > 1000);
  } else {
    MESSAGE("gnuplot missing: ", r.err);
  }
  std::filesystem::remove_all(out);
}

TEST_CASE("malformed input to compare exits 2 with one clear line") {
  const std::string program = kWorkloads + "binary_trees.gasm";
  for (const auto& [args, message] : std::vector<std::pair<std::string, std::string>>{
           {program + " --config gc=nope", "unknown collector 'nope'"},
           {program + " --config 'gc=serial threads=many'", "threads is a count"},
           {program + " --config gcserial", "'gcserial' is not key=value"},
           {program, "needs configurations"},
           {program + " --config gc=serial --baseline=other", "--baseline='other' names no configuration"},
           {program + " --config gc=serial --config gc=serial", "two configurations are named 'gc=serial'"},
           {program + " --config gc=serial --reps=0", "--reps=0"},
           {program + " --config gc=serial --configs=missing.json", "cannot read the file"},
           {program + " --config gc=serial --metrics=speed", "unknown metric 'speed'"},
           {"--graph=list:10 --config gc=serial -- 3", "takes one workload"},
           {program + " --graph=list:10 --config gc=serial", "takes one workload"},
           {"missing.gasm --config gc=serial", "missing.gasm: no such file"},
           {program + " --config gc=serial gc=parallel 10", "program argument 'gc=parallel' is not an integer"},
       }) {
    CAPTURE(args);
    const auto r = run_gcvm("compare " + args);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(message) != std::string::npos);
    CHECK(gcvm::test::line_count(r.err) == 1);
  }
}

TEST_CASE("--gc-log=FILE and --stats-json=FILE keep the statistics apart from the guest's output") {
  const auto plain = run_gcvm("run " + kWorkloads + "binary_trees.gasm --heap=1M --stats=none -- 10");
  const auto r = run_gcvm("run " + kWorkloads + "binary_trees.gasm --heap=1M --stats=none --gc-log=compare_gc.log "
                          "--stats-json=compare_stats.json -- 10");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == plain.out);
  CHECK(r.err.empty());
  const std::string log = read_file("compare_gc.log");
  CHECK(log.find("[gc 1] heap full: ") == 0);
  const auto stats = nlohmann::json::parse(read_file("compare_stats.json"));
  CHECK(stats["collection_count"].get<int>() == gcvm::test::line_count(log));
  CHECK(stats["elapsed_ms"].get<double>() >= stats["collections"].back()["start_ms"].get<double>());
  CHECK(stats["pauses"]["all"].contains("p99_ms"));
  CHECK(run_gcvm("run " + kWorkloads + "binary_trees.gasm --gc-log=/nonexistent/dir/x.log -- 4").exit_code == 2);
  std::remove("compare_gc.log");
  std::remove("compare_stats.json");
}
