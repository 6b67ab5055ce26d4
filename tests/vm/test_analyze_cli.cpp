#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_runner.hpp"
#include "heapgraph/sample_dumps.hpp"

using gcvm::test::line_count;
using gcvm::test::run_gcvm;

namespace {

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::filesystem::path scratch(const std::string& name) {
  const auto dir = std::filesystem::current_path() / "analyze_cli_scratch";
  std::filesystem::create_directories(dir);
  return dir / name;
}

std::filesystem::path write_scratch(const std::string& name, const std::string& bytes) {
  const auto path = scratch(name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

}  // namespace

TEST_CASE("gcvm analyze --graph: levels, caps and degrees in JSON") {
  const auto r = run_gcvm("analyze --width-cap 128 --graph=wide:1000 --width-cap=256 --stats=json");
  REQUIRE(r.exit_code == 0);
  CHECK(r.err == "");
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["objects"] == 1001);
  CHECK(j["references"] == 1000);
  CHECK(j["reachable_objects"] == 1001);
  CHECK(j["levels"]["uncapped"] == nlohmann::json::array({1, 1000}));
  CHECK(j["levels"]["256"] == nlohmann::json::array({1, 256, 256, 256, 232}));
  CHECK(j["depth"]["128"] == 9);
  CHECK(j["degree_histogram"] == nlohmann::json::array({{0, 1000}, {1000, 1}}));
  CHECK(j["no_reference_share"].get<double>() == doctest::Approx(1000.0 / 1001));
  CHECK(j["source"]["graph"] == "wide:1000");

  const auto repeated = run_gcvm("analyze --graph=wide:1000 --width-cap=100 --width-cap=300 --stats=json");
  REQUIRE(repeated.exit_code == 0);
  const auto k = nlohmann::json::parse(repeated.out);
  CHECK(k["depth"] == nlohmann::json{{"uncapped", 2}, {"100", 11}, {"300", 5}});
}

TEST_CASE("gcvm analyze FILE --out writes CSV, JSON and gnuplot plots") {
  const auto dump = write_scratch("sample.hprof", gcvm::test::sample_hprof(8));
  const auto out = scratch("sample-out");
  std::filesystem::remove_all(out);
  const auto r = run_gcvm(dump.string() + " --out=" + out.string());
  REQUIRE(r.exit_code == 2);  // a file is not a command
  const auto a = run_gcvm("analyze " + dump.string() + " --out=" + out.string());
  REQUIRE(a.exit_code == 0);
  CHECK(a.out.find("(hprof): 14 objects, 20 references kept, 2 dropped, 0 weak; 7 roots") != std::string::npos);
  CHECK(a.out.find("reachable 13 of 14 objects") != std::string::npos);
  CHECK(slurp(out / "levels.csv").starts_with("step,uncapped,cap128,cap256,cap1024,cap32768\n0,7,7,7,7,7\n"));
  CHECK(slurp(out / "degrees.csv").starts_with("degree,objects,cumulative_share\n0,2,"));
  const auto j = nlohmann::json::parse(slurp(out / "shape.json"));
  CHECK(j["reachable_objects"] == 13);
  CHECK(j["source"]["format"] == "hprof");
  CHECK(j["source"]["edges_dropped"] == 2);
  CHECK(slurp(out / "plots.gp").find("set terminal pngcairo") != std::string::npos);
  if (a.err.find("no plots drawn") != std::string::npos) {
    MESSAGE("gnuplot is not installed here: plots not checked");
  } else {
    CHECK(a.err == "");
    CHECK(slurp(out / "levels.png").starts_with("\x89PNG"));
    CHECK(slurp(out / "degrees.png").starts_with("\x89PNG"));
  }
  const auto weak = run_gcvm("analyze " + dump.string() + " --weak-refs=weak --plots=none --stats=json");
  REQUIRE(weak.exit_code == 0);
  CHECK(nlohmann::json::parse(weak.out)["reachable_objects"] == 12);

  const auto v8 = write_scratch("sample.heapsnapshot", gcvm::test::sample_v8());
  const auto svg_out = scratch("v8-out");
  const auto b = run_gcvm("analyze " + v8.string() + " --out=" + svg_out.string() + " --plots=svg --stats=json");
  REQUIRE(b.exit_code == 0);
  const auto k = nlohmann::json::parse(b.out);
  CHECK(k["source"]["format"] == "v8");
  CHECK(k["reachable_objects"] == 4);
  CHECK(k["levels"]["uncapped"] == nlohmann::json::array({1, 2, 1}));
  if (b.err.empty()) CHECK(slurp(svg_out / "levels.svg").find("<svg") != std::string::npos);
}

TEST_CASE("gcvm analyze: bad input gives one line and exit code 2") {
  const auto garbage = write_scratch("garbage.bin", "not a heap at all");
  const auto truncated = write_scratch("truncated.hprof", gcvm::test::sample_hprof(4).substr(0, 100));
  const auto trace = write_scratch("run.trace", std::string("GCVMTRAC\x01\0\0\0", 12));
  struct Case {
    std::string args;
    std::string says;
  };
  for (const auto& c : {
           Case{"analyze", "FILE or --graph"},
           Case{"analyze " + garbage.string() + " --graph=single", "FILE or --graph"},
           Case{"analyze " + garbage.string(), garbage.string() + ": byte 0: not a gcvm trace"},
           Case{"analyze " + truncated.string(), truncated.string() + ": byte "},
           Case{"analyze " + trace.string(), trace.string() + ": byte 12: truncated"},
           Case{"analyze /nonexistent.hprof", "/nonexistent.hprof: byte 0: cannot open the file"},
           Case{"analyze --graph=single --width-cap=0", "--width-cap=0"},
           Case{"analyze --graph=single --plots=jpg", "--plots"},
           Case{"analyze --graph=ring:3", "is not one of"},
       }) {
    CAPTURE(c.args);
    const auto r = run_gcvm(c.args);
    CAPTURE(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.out == "");
    CHECK(line_count(r.err) == 1);
    CHECK(r.err.find(c.says) != std::string::npos);
  }
}

TEST_CASE("gcvm analyze draws a progress bar only on a terminal") {
  const auto dump = write_scratch("progress.hprof", gcvm::test::sample_hprof(4));
  const auto piped = run_gcvm("analyze " + dump.string());
  REQUIRE(piped.exit_code == 0);
  CHECK(piped.err == "");  // stderr is a file here: no bar
  if (std::system("command -v script >/dev/null 2>&1") != 0) {
    MESSAGE("util-linux 'script' is missing: the terminal case is not checked");
    return;
  }
  // `script` runs the command on a pseudo-terminal and copies what it writes.
  const std::string command = std::string("script -qec '") + GCVM_BINARY + " analyze " + dump.string() + "' /dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string terminal;
  char buffer[4096];
  while (std::size_t n = fread(buffer, 1, sizeof buffer, pipe)) terminal.append(buffer, n);
  CHECK(pclose(pipe) == 0);
  CHECK(terminal.find("reading HPROF (pass 1/3) [") != std::string::npos);
  CHECK(terminal.find("100%") != std::string::npos);
  CHECK(terminal.find("gcvm analyze: ") != std::string::npos);
}
