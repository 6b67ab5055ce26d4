// Every guest program in workloads/ against its expected output, under every collector
// of this build, with the write barrier, with --verify-heap, and with the graph rebuilt
// at each collection; under the generational and concurrent plans; and under libgc
// (--gc=boehm) when it is built. A workload's
// `# args:` and `# heap:` header lines give the (small) arguments and heap limit the
// tests use; each must collect at least once on the SOA heap.
#include <doctest/doctest.h>

#include <set>

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

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string header(const std::string& source, const std::string& key) {
  std::istringstream lines(source);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("# " + key + ":", 0) == 0) return line.substr(key.size() + 3);
  return "";
}

/// Runs gcvm with `command` (which asks for --stats=json), checks exit status 0 and
/// the guest output, and returns the statistics.
nlohmann::json run_expecting(const std::string& command, const std::string& expected) {
  CAPTURE(command);
  const auto r = run_gcvm(command);
  CHECK(r.exit_code == 0);
  CHECK(r.out == expected);
  auto stats = nlohmann::json::parse(r.err, nullptr, false);
  REQUIRE_MESSAGE(!stats.is_discarded(), r.err);
  return stats;
}

/// The .expected file beside `program` (which must exist).
std::string expected_output(std::filesystem::path program) {
  program.replace_extension(".expected");
  REQUIRE_MESSAGE(std::filesystem::exists(program), program.string());
  return read_file(program);
}

std::vector<std::filesystem::path> workloads() {
  std::vector<std::filesystem::path> out;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(GCVM_SOURCE_DIR) + "/workloads"))
    if (entry.path().extension() == ".gasm") out.push_back(entry.path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("the workloads include the papers' microbenchmarks and the named programs") {
  std::set<std::string> names;
  for (const auto& p : workloads()) names.insert(p.stem().string());
  for (const char* required : {"micro_single", "micro_list", "micro_lists", "micro_wide", "micro_vp_list",
                               "micro_vp_array", "micro_complete", "binary_trees", "gcbench", "hash_map", "lru_cache",
                               "cyclic", "life", "churn_array"}) {
    CAPTURE(std::string(required));
    CHECK(names.count(required) == 1);
  }
}

TEST_CASE("every workload prints its expected output under every collector and graph mode") {
  for (const auto& program : workloads()) {
    const std::string source = read_file(program);
    const std::string expected = expected_output(program);
    const std::string heap = header(source, "heap");
    const std::string base = "run " + program.string() + (heap.empty() ? "" : " --heap=" + heap);
    const std::string args = " -- " + header(source, "args");
    for (const std::string& collector : collector_flags()) {
      for (const char* mode : {"", " --verify-heap", " --refgraph=rebuild --verify-heap"}) {
        const auto stats = run_expecting(base + collector + mode + " --stats=json" + args, expected);
        CHECK(stats["collection_count"].get<int>() >= 1);
        CHECK(stats["collections"].size() == stats["collection_count"].get<std::size_t>());
      }
    }
  }
}

TEST_CASE("every workload prints its expected output under --plan=generational with every marker") {
  // A 64K nursery makes every workload collect young; promotion at the first survival
  // with a low full trigger also makes the larger ones collect full, with the graph
  // rebuilt, so the remembered set is exercised in both graph modes.
  for (const auto& program : workloads()) {
    const std::string source = read_file(program);
    const std::string expected = expected_output(program);
    const std::string heap = header(source, "heap");
    const std::string base = "run " + program.string() + (heap.empty() ? "" : " --heap=" + heap) +
                             " --plan=generational --nursery=64K --verify-heap --stats=json";
    const std::string args = " -- " + header(source, "args");
    for (const std::string& collector : collector_flags()) {
      for (const char* mode : {"", " --promotion-age=1 --full-trigger=30 --refgraph=rebuild"}) {
        const auto stats = run_expecting(base + collector + mode + args, expected);
        CHECK(stats["plan"] == "generational");
        CHECK(stats["pauses"]["young"]["count"].get<int>() + stats["pauses"]["full"]["count"].get<int>() ==
              stats["collection_count"].get<int>());
      }
    }
  }
}

TEST_CASE("every workload prints its expected output under --plan=concurrent with every marker") {
  // The adaptive trigger without checks, and an early fixed trigger (more cycles, more
  // of them in flight while the program runs) with every cycle verified: the marks of
  // its snapshot against the serial marker and nothing reachable at its end freed.
  for (const auto& program : workloads()) {
    const std::string source = read_file(program);
    const std::string expected = expected_output(program);
    const std::string heap = header(source, "heap");
    const std::string base =
        "run " + program.string() + (heap.empty() ? "" : " --heap=" + heap) + " --plan=concurrent --stats=json";
    const std::string args = " -- " + header(source, "args");
    for (const std::string& collector : collector_flags()) {
      for (const char* mode : {"", " --concurrent-trigger=25 --verify-heap"}) {
        const auto stats = run_expecting(base + collector + mode + args, expected);
        CHECK(stats["plan"] == "concurrent");
        CHECK(stats["collection_count"].get<int>() >= 1);
        CHECK(stats["pauses"]["initial"]["count"] == stats["collection_count"]);
        CHECK(stats["pauses"]["final"]["count"] == stats["collection_count"]);
        for (const auto& c : stats["collections"]) CHECK(c["kind"] == "concurrent");
      }
    }
  }
}

#if GCVM_HAVE_BOEHM
TEST_CASE("every workload prints its expected output under --gc=boehm with 1 and 2 markers") {
  // libgc objects carry a header word and 16-byte granules, and libgc needs room to
  // grow its heap: the SOA heap limits of the headers are too small, so all run in 16M.
  for (const auto& program : workloads()) {
    const std::string source = read_file(program);
    const std::string expected = expected_output(program);
    for (const char* threads : {"1", "2"}) {
      const auto stats = run_expecting("run " + program.string() + " --gc=boehm --gc-threads=" + threads +
                                           " --heap=16M --stats=json -- " + header(source, "args"),
                                       expected);
      CHECK(stats["collector"] == "boehm");
      CHECK(stats["collections"].size() == stats["collection_count"].get<std::size_t>());
      for (const auto& c : stats["collections"]) CHECK(c["mark_details"]["markers"].get<double>() == std::stod(threads));
    }
  }
}
#endif

TEST_CASE("binary-trees N=10 prints the benchmarks-game checks") {
  const auto r = run_gcvm("run " + std::string(GCVM_SOURCE_DIR) + "/workloads/binary_trees.gasm --stats=none -- 10");
  REQUIRE(r.exit_code == 0);
  for (const char* check : {"check: 4095", "check: 31744", "check: 32512", "check: 32704", "check: 32752", "check: 2047"}) {
    CAPTURE(std::string(check));
    CHECK(r.out.find(check) != std::string::npos);
  }
}
