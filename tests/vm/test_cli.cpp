#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

using gcvm::test::line_count;
using gcvm::test::run_gcvm;

TEST_CASE("gcvm mark --stats=json reports the paper heaps' counts") {
  struct Case {
    const char* spec;
    std::uint64_t marked, freed, edges;
  };
  for (const auto& c : {Case{"vp-array", 65600, 1049600 - 65600, 65536}, Case{"vp-list", 8192, 131072 - 8192, 8191},
                        Case{"wide:1000", 1001, 0, 1000}, Case{"single", 1, 0, 0}}) {
    CAPTURE(std::string(c.spec));
    const auto r = run_gcvm(std::string("mark --graph=") + c.spec + " --gc=serial --verify --stats=json");
    REQUIRE(r.exit_code == 0);
    CHECK(r.err == "");
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["marked_objects"] == c.marked);
    CHECK(j["freed_objects"] == c.freed);
    CHECK(j["edges_traversed"] == c.edges);
    CHECK(j["mark_ms"].is_number());
    CHECK(j["sweep_ms"].is_number());
  }
}

TEST_CASE("gcvm mark prints a human summary") {
  const auto r = run_gcvm("mark --graph=list:10000");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("10000 reachable") != std::string::npos);
  CHECK(r.out.find("mark") != std::string::npos);
  CHECK(r.out.find("sweep") != std::string::npos);
}

TEST_CASE("bad input gives one clear line and exit code 2") {
  struct Case {
    const char* args;
    const char* says;
  };
  for (const auto& c : {
           Case{"mark --graph=list:10 --bogus", "--bogus"},
           Case{"mark --graph=ring:3", "is not one of"},
           Case{"mark --graph=list:-1", "not a whole number"},
           Case{"mark --graph=list:10 --gc=quantum", "--gc=quantum is not a collector"},
           Case{"mark --graph=list:10 --gc-opt vector=on", "does not accept --gc-opt vector=on"},
           Case{"mark --graph=list:10 --gc-opt novalue", "key=value"},
           Case{"mark --graph=list:10 --heap=lots", "--heap=lots is not a size"},
           Case{"mark --graph=list:100000 --heap=64K", "does not fit the heap"},
           Case{"mark --graph=random:4294967296:1", "object ids address at most"},
           Case{"mark --graph=random:100000000:1000", "references; the reference graph holds at most"},
           Case{"mark --graph=list:10 --stats=xml", "--stats"},
           Case{"mark", "--graph is required"},
           Case{"frobnicate", "frobnicate"},
       }) {
    const auto r = run_gcvm(c.args);
    CAPTURE(std::string(c.args));
    CAPTURE(r.err);
    CHECK(r.exit_code == 2);
    CHECK(line_count(r.err) == 1);
    CHECK(r.err.rfind("gcvm: ", 0) == 0);
    CHECK(r.err.find(c.says) != std::string::npos);
  }
}

TEST_CASE("--help exits 0") {
  const auto r = run_gcvm("mark --help");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("--graph") != std::string::npos);
}
