// The Are We Fast Yet benchmarks in Tern (workloads/awfy/*.tern): each prints its
// expected output, with its result verified by its own harness, under every collector
// with --verify-heap, under the generational plan with a small nursery, under the
// concurrent plan with an early trigger, and under libgc when it is built. A
// benchmark's `// args:` and `// heap:` lines give the small size the tests use. A
// benchmark whose smallest verified size is long (Havlak: AWFY has results for an
// inner count of 1 and up, a few seconds here) may name with `// collectors:` the
// markers that run it with --verify-heap (the others run it under every plan without,
// its own harness still verifying the result), and with `// nursery:` the nursery of
// its generational run (64K when absent).
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

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string header_line(const std::string& source, const std::string& key) {
  std::istringstream lines(source);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("// " + key + ":", 0) == 0) return line.substr(key.size() + 4);
  return "";
}

std::vector<std::filesystem::path> benchmarks() {
  std::vector<std::filesystem::path> out;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(GCVM_SOURCE_DIR) + "/workloads/awfy"))
    if (entry.path().extension() == ".tern") out.push_back(entry.path());
  std::sort(out.begin(), out.end());
  return out;
}

void check_run(const std::string& command, const std::string& expected) {
  CAPTURE(command);
  const auto r = run_gcvm(command);
  CHECK(r.exit_code == 0);
  CHECK(r.out == expected);
  CHECK_MESSAGE(!nlohmann::json::parse(r.err, nullptr, false).is_discarded(), r.err);
}

}  // namespace

TEST_CASE("the AWFY benchmarks in Tern are all fourteen") {
  std::vector<std::string> names;
  for (const auto& p : benchmarks()) names.push_back(p.stem().string());
  for (const char* required : {"bounce", "cd", "deltablue", "havlak", "json", "list", "mandelbrot", "nbody", "permute",
                               "queens", "richards", "sieve", "storage", "towers"}) {
    CAPTURE(std::string(required));
    CHECK(std::find(names.begin(), names.end(), required) != names.end());
  }
}

TEST_CASE("every AWFY benchmark verifies its result under every collector and plan") {
  for (const auto& program : benchmarks()) {
    const std::string source = read_text(program);
    std::filesystem::path expected_path = program;
    expected_path.replace_extension(".expected");
    REQUIRE_MESSAGE(std::filesystem::exists(expected_path), expected_path.string());
    const std::string expected = read_text(expected_path);
    const std::string heap = header_line(source, "heap");
    const std::string args = " -- " + header_line(source, "args");
    const std::string nursery = header_line(source, "nursery");
    const std::string only = " " + header_line(source, "collectors") + " ";
    const std::string base = "run " + program.string() + " --stats=json" + (heap.empty() ? "" : " --heap=" + heap);
    for (const std::string& collector : collector_flags()) {
      const std::string name = collector.substr(6, collector.find(' ', 1) - 6);  // " --gc=NAME[ --device=...]"
      const bool verify = only == "  " || only.find(" " + name + " ") != std::string::npos;
      const std::string checks = verify ? " --verify-heap" : "";
      check_run(base + collector + checks + args, expected);
      check_run(base + collector + " --plan=generational --nursery=" + (nursery.empty() ? "64K" : nursery) + checks +
                    args,
                expected);
      check_run(base + collector + " --plan=concurrent --concurrent-trigger=25" + checks + args, expected);
    }
#if GCVM_HAVE_BOEHM
    check_run("run " + program.string() + " --stats=json --gc=boehm --heap=16M" + args, expected);
#endif
  }
}
