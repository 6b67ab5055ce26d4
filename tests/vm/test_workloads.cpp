// Every guest program in workloads/ against its expected output, under every collector
// of this build, with the write barrier, with --verify-heap, and with the graph rebuilt
// at each collection. A workload's `# args:` and `# heap:` header lines give the
// (small) arguments and heap limit the tests use; each must collect at least once.
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
                               "cyclic", "life"}) {
    CAPTURE(std::string(required));
    CHECK(names.count(required) == 1);
  }
}

TEST_CASE("every workload prints its expected output under every collector and graph mode") {
  for (const auto& program : workloads()) {
    const std::string source = read_file(program);
    auto expected_path = program;
    expected_path.replace_extension(".expected");
    REQUIRE_MESSAGE(std::filesystem::exists(expected_path), expected_path.string());
    const std::string expected = read_file(expected_path);
    const std::string heap = header(source, "heap");
    const std::string base = "run " + program.string() + (heap.empty() ? "" : " --heap=" + heap);
    const std::string args = " -- " + header(source, "args");
    for (const std::string& collector : collector_flags()) {
      for (const char* mode : {"", " --verify-heap", " --refgraph=rebuild --verify-heap"}) {
        const std::string command = base + collector + mode + " --stats=json" + args;
        CAPTURE(command);
        const auto r = run_gcvm(command);
        CHECK(r.exit_code == 0);
        CHECK(r.out == expected);
        const auto stats = nlohmann::json::parse(r.err, nullptr, false);
        REQUIRE_MESSAGE(!stats.is_discarded(), r.err);
        CHECK(stats["collection_count"].get<int>() >= 1);
        CHECK(stats["collections"].size() == stats["collection_count"].get<std::size_t>());
      }
    }
  }
}

TEST_CASE("binary-trees N=10 prints the benchmarks-game checks") {
  const auto r = run_gcvm("run " + std::string(GCVM_SOURCE_DIR) + "/workloads/binary_trees.gasm --stats=none -- 10");
  REQUIRE(r.exit_code == 0);
  for (const char* check : {"check: 4095", "check: 31744", "check: 32512", "check: 32704", "check: 32752", "check: 2047"}) {
    CAPTURE(std::string(check));
    CHECK(r.out.find(check) != std::string::npos);
  }
}
