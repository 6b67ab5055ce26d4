// `gcvm run` and `gcvm disasm` end to end: flags, exit codes, messages, --gc-log,
// --stats, and the bad-program corpus in tests/vm/bad_programs/.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_runner.hpp"
#include "gc/device/device_registry.hpp"

using gcvm::test::check_usage_error;
using gcvm::test::kWorkloads;
using gcvm::test::line_count;
using gcvm::test::run_gcvm;
using gcvm::test::write_program;

TEST_CASE("gcvm run prints guest output on stdout and a summary on stderr") {
  const auto r = run_gcvm("run " + kWorkloads + "binary_trees.gasm --heap=512K -- 6");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("long lived tree of depth 6\t check: 127") != std::string::npos);
  CHECK(r.err.find("collector serial (refgraph barrier), heap limit 0.5M") != std::string::npos);
  CHECK(r.err.find("allocated ") != std::string::npos);
  CHECK(r.err.find("pause total") != std::string::npos);
}

TEST_CASE("--gc-log prints one line per collection") {
  const auto r = run_gcvm("run " + kWorkloads + "micro_single.gasm --gc-log --stats=none");
  REQUIRE(r.exit_code == 0);
  CHECK(line_count(r.err) == 3);
  CHECK(r.err.find("[gc 1] gc instruction: ") == 0);
  CHECK(r.err.find("marked 1, freed 0") != std::string::npos);
  CHECK(r.err.find("pause ") != std::string::npos);
  const auto rebuild = run_gcvm("run " + kWorkloads + "micro_single.gasm --gc-log --stats=none --refgraph=rebuild --verify-heap");
  CHECK(rebuild.err.find("rebuild ") != std::string::npos);
  CHECK(rebuild.err.find("verified in") != std::string::npos);
}

TEST_CASE("--stats=json has the totals and a per-collection array") {
  const auto r = run_gcvm("run " + kWorkloads + "gcbench.gasm --heap=1M --stats=json -- 6");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.err);
  CHECK(j["command"] == "run");
  CHECK(j["collector"] == "serial");
  CHECK(j["heap_limit_bytes"] == 1048576);
  CHECK(j["allocated_objects"].get<std::uint64_t>() > 100000);
  CHECK(j["allocated_arrays"] == 1);
  REQUIRE(j["collection_count"].get<int>() >= 1);
  CHECK(j["collections"].size() == j["collection_count"].get<std::size_t>());
  CHECK(j["collections"][0]["reason"] == "heap full");
  double pauses = 0;
  for (const auto& c : j["collections"]) pauses += c["pause_ms"].get<double>();
  CHECK(j["total_pause_ms"].get<double>() == doctest::Approx(pauses));
  CHECK(j["max_pause_ms"].get<double>() <= j["total_pause_ms"].get<double>());
}

TEST_CASE("guest errors exit 4 with the message and the guest stack trace") {
  const std::string file = write_program(
      "guest_error.gasm", "class C\n  v: int\nend\nfunc f(c: C) -> int\n  local v: int\n  get v, c.v\n  ret v\nend\n"
                          "func main()\n  local c: C, v: int\n  call v, f(c)\nend\n");
  const auto r = run_gcvm("run " + file + " --stats=none");
  CHECK(r.exit_code == 4);
  CHECK(r.err == "error: null dereference (reading a field of 'c', a C)\n  at f (guest_error.gasm:6)\n"
                 "  at main (guest_error.gasm:11)\n");
  std::filesystem::remove(file);
}

TEST_CASE("out of memory exits 3 naming the limit") {
  const auto r = run_gcvm("run " + kWorkloads + "micro_list.gasm --heap=64K --stats=none -- 5000");
  CHECK(r.exit_code == 3);
  CHECK(r.err.find("gcvm: out of memory: the heap limit of 65536 bytes (0.1 MiB) is exhausted after a full collection") == 0);
  CHECK(r.err.find("  at build (") != std::string::npos);
}

TEST_CASE("guest output written before an error is kept") {
  const std::string file = write_program("partial.gasm", "func main()\n  local i: int\n  print \"before\\n\"\n  div i, i, 0\nend\n");
  const auto r = run_gcvm("run " + file + " --stats=none");
  CHECK(r.exit_code == 4);
  CHECK(r.out == "before\n");
  std::filesystem::remove(file);
}

TEST_CASE("bad flags and arguments exit 2 with one line") {
  struct Case {
    std::string args;
    const char* says;
  };
  for (const auto& c : {
           Case{"run", "program is required"},
           Case{"run nonexistent.gasm", "nonexistent.gasm: no such program file"},
           Case{"run " + kWorkloads + "micro_single.gasm --heap=lots", "--heap=lots is not a size"},
           Case{"run " + kWorkloads + "micro_single.gasm --refgraph=maybe", "--refgraph"},
           Case{"run " + kWorkloads + "micro_single.gasm --gc=quantum", "--gc=quantum is not a collector"},
           Case{"run " + kWorkloads + "micro_single.gasm --stats=xml", "--stats"},
           Case{"run " + kWorkloads + "micro_single.gasm --gc-opt vector=on", "does not accept --gc-opt vector=on"},
           Case{"run " + kWorkloads + "micro_single.gasm -- ten", "program argument 'ten' is not a 64-bit integer"},
           Case{"disasm", "program is required"},
       }) {
    check_usage_error(c.args, c.says);
  }
}

TEST_CASE("gcvm run takes the collector flags every subcommand shares") {
  const auto r = run_gcvm("run " + kWorkloads + "micro_single.gasm --gc=serial --gc-threads=2 --device=auto --stats=none");
  CHECK(r.exit_code == 0);
  CHECK(r.out == "single item: 42\n");
}

TEST_CASE("gcvm disasm lists the bytecode") {
  const auto r = run_gcvm("disasm " + kWorkloads + "binary_trees.gasm");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("func bottom_up (line ") != std::string::npos);
  CHECK(r.out.find("new       node, Node") != std::string::npos);
  CHECK(r.out.find("call      child <- bottom_up(d)") != std::string::npos);
}

TEST_CASE("every malformed program gives file:line:col errors and exit 2") {
  // Each file's first line is `# expect: LINE:COL: MESSAGE` for its first diagnostic.
  const std::string dir = std::string(GCVM_SOURCE_DIR) + "/tests/vm/bad_programs";
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".gasm") continue;
    ++files;
    std::ifstream in(entry.path());
    std::string first;
    std::getline(in, first);
    CAPTURE(entry.path().string());
    REQUIRE(first.rfind("# expect: ", 0) == 0);
    const std::string expect = entry.path().string() + ":" + first.substr(10);
    for (const char* command : {"run ", "disasm "}) {
      const auto r = run_gcvm(command + entry.path().string());
      CAPTURE(r.err);
      CHECK(r.exit_code == 2);
      CHECK(r.out.empty());
      CHECK(r.err.substr(0, expect.size()) == expect);
      std::istringstream lines(r.err);
      for (std::string line; std::getline(lines, line);) CHECK(line.rfind(entry.path().string() + ":", 0) == 0);
    }
  }
  CHECK(files >= 10);
}

TEST_CASE("the complete example in docs/gasm.md runs as documented") {
  std::ifstream in(std::string(GCVM_SOURCE_DIR) + "/docs/gasm.md");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  const auto start = doc.find("```\n# A linked list");
  REQUIRE(start != std::string::npos);
  const auto end = doc.find("```", start + 4);
  const std::string file = write_program("doc_example.gasm", doc.substr(start + 4, end - start - 4));
  const auto r = run_gcvm("run " + file + " --stats=none -- 100");
  CHECK(r.exit_code == 0);
  CHECK(r.out == "sum of 1..100 = 5050\nafter a collection: 5050\n");
  std::filesystem::remove(file);
}

TEST_CASE("--gc-log of a GPU collection says what the mutator changed and what the sync sent") {
  bool any_opencl = false;
  for (const auto& d : gcvm::usable_devices()) any_opencl = any_opencl || d.backend == "opencl";
  if (!any_opencl) {
    MESSAGE("no OpenCL device: gpu-bfs --gc-log test skipped");
    return;
  }
  // Without the refresher, which would copy the graph before the first pause.
  const auto r = run_gcvm("run " + kWorkloads +
                          "hash_map.gasm --heap=4M --gc=gpu-bfs --device=opencl --gc-opt refresh=off --gc-log --stats=none");
  REQUIRE(r.exit_code == 0);
  const auto first = r.err.find("[gc 1]");
  REQUIRE(first != std::string::npos);
  const std::string line = r.err.substr(first, r.err.find('\n', first) - first);
  CHECK(line.find(", sync ") != std::string::npos);
  CHECK(line.find(" changed -> ") != std::string::npos);
  CHECK(line.find(" sent (full) in ") != std::string::npos);  // the first sync uploads the whole graph
  CHECK(line.find(" GB/s)") != std::string::npos);             // and waits for its copies
  CHECK(r.err.find("[gc 2]") != std::string::npos);
  CHECK(r.err.find(" sent in ", first) != std::string::npos);  // later ones only what changed
  // A later sync that only patches is applied by the device before the mark's first launch.
  CHECK(r.err.find(" (applied before the mark)", first) != std::string::npos);
}
