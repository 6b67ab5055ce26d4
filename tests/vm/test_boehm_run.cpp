// `gcvm run --gc=boehm` end to end: guest errors and out of memory exit as under the
// SOA heap with the same messages, the statistics have the shape of every other
// collector's, libgc's own (allocation-triggered) collections are reported, roots are
// the interpreter's precise roots, and the flags that only apply to gcvm heaps are
// refused. (Every workload's output under boehm is in test_workloads.cpp.)
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

using gcvm::test::kWorkloads;
using gcvm::test::line_count;
using gcvm::test::run_gcvm;
using gcvm::test::write_program;

TEST_CASE("boehm: a guest error exits 4 with the same message and stack trace as the SOA heap") {
  const std::string file = write_program(
      "boehm_guest_error.gasm",
      "class C\n  v: int\n  next: C\nend\nfunc f(c: C) -> int\n  local v: int, d: C\n  get d, c.next\n"
      "  get v, d.v\n  ret v\nend\nfunc main()\n  local c: C, v: int\n  new c\n  call v, f(c)\nend\n");
  const auto serial = run_gcvm("run " + file + " --stats=none");
  for (const char* threads : {"1", "2"}) {
    CAPTURE(std::string(threads));
    const auto r = run_gcvm("run " + file + " --gc=boehm --gc-threads=" + threads + " --stats=none");
    CHECK(r.exit_code == 4);
    CHECK(r.err == serial.err);
    CHECK(r.err.find("error: null dereference (reading a field of 'd', a C)\n  at f (boehm_guest_error.gasm:8)") == 0);
  }
  std::filesystem::remove(file);
}

TEST_CASE("boehm: out of memory exits 3 with the SOA heap's message") {
  for (const char* threads : {"1", "2"}) {
    CAPTURE(std::string(threads));
    const auto r = run_gcvm("run " + kWorkloads + "micro_list.gasm --gc=boehm --gc-threads=" + threads +
                            " --heap=64K --stats=none -- 5000");
    CHECK(r.exit_code == 3);
    CHECK(r.err.find("gcvm: out of memory: the heap limit of 65536 bytes (0.1 MiB) is exhausted after a full collection") ==
          0);
    CHECK(r.err.find("  at build (") != std::string::npos);
    CHECK(r.err.find("GC Warning") == std::string::npos);
  }
}

TEST_CASE("boehm: a global is a precise root and nothing else survives") {
  // micro_single: one object, reachable only from a global, and three `gc` instructions.
  for (const char* threads : {"1", "2"}) {
    CAPTURE(std::string(threads));
    const auto r =
        run_gcvm("run " + kWorkloads + "micro_single.gasm --gc=boehm --gc-threads=" + threads + " --stats=json");
    REQUIRE(r.exit_code == 0);
    CHECK(r.out == "single item: 42\n");
    const auto j = nlohmann::json::parse(r.err);
    CHECK(j["collector"] == "boehm");
    REQUIRE(j["collection_count"].get<int>() == 3);
    for (const auto& c : j["collections"]) {
      CHECK(c["reason"] == "gc instruction");
      CHECK(c["marked_objects"].get<int>() == 1);
    }
  }
}

TEST_CASE("boehm: libgc's own collections during allocation are reported, with libgc's statistics") {
  const auto r = run_gcvm("run " + kWorkloads + "binary_trees.gasm --gc=boehm --gc-threads=2 --heap=16M --stats=json -- 12");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.err);
  REQUIRE(j["collection_count"].get<int>() >= 2);
  std::size_t triggered = 0;
  double pauses = 0, max_pause = 0;
  std::uint64_t freed = 0;
  for (const auto& c : j["collections"]) {
    triggered += c["reason"] == "libgc trigger";
    pauses += c["pause_ms"].get<double>();
    max_pause = std::max(max_pause, c["pause_ms"].get<double>());
    freed += c["freed_objects"].get<std::uint64_t>();
    CHECK(c["pause_ms"].get<double>() >= c["mark_ms"].get<double>());
    CHECK(c["mark_details"]["markers"].get<double>() == 2);
  }
  CHECK(triggered == j["collection_count"].get<std::size_t>());
  CHECK(freed > 0);
  CHECK(j["total_pause_ms"].get<double>() == doctest::Approx(pauses));
  CHECK(j["max_pause_ms"].get<double>() == doctest::Approx(max_pause));
  CHECK(j["allocated_objects"].get<std::uint64_t>() > j["marked_objects"].get<std::uint64_t>() / j["collection_count"].get<std::uint64_t>());
}

TEST_CASE("boehm: --gc-log prints one line per collection and the summary names libgc's collector") {
  const auto r = run_gcvm("run " + kWorkloads + "micro_single.gasm --gc=boehm --gc-log");
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("[gc 1] gc instruction: ") == 0);
  CHECK(r.err.find("[gc 3] gc instruction: ") != std::string::npos);
  CHECK(r.err.find("[gc 4]") == std::string::npos);
  CHECK(r.err.find("collector boehm (refgraph none)") != std::string::npos);
  CHECK(r.err.find("3 collections, pause total") != std::string::npos);
}

TEST_CASE("boehm: flags for gcvm heaps are refused with one line and exit 2") {
  for (const char* flags : {"--verify-heap", "--refgraph=rebuild", "--gc-opt=vector=on", "--record-trace=boehm.trace"}) {
    CAPTURE(std::string(flags));
    const auto r = run_gcvm("run " + kWorkloads + "micro_single.gasm --gc=boehm " + flags);
    CHECK(r.exit_code == 2);
    CHECK(line_count(r.err) == 1);
    CHECK(r.out.empty());
  }
}
