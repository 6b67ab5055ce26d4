// `gcvm run --plan=generational` end to end: flags and their errors, the
// young/full statistics in --gc-log and --stats, out of memory after a full
// collection. Every workload under the plan with every marker is in test_workloads.cpp.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

using gcvm::test::check_usage_error;
using gcvm::test::kWorkloads;
using gcvm::test::run_gcvm;

TEST_CASE("--plan=generational logs young and full collections and their pause histograms") {
  const auto r = run_gcvm("run " + kWorkloads +
                          "binary_trees.gasm --heap=2M --plan=generational --nursery=128K --promotion-age=1 --full-trigger=20 --gc-log "
                          "--stats=text -- 10");
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("[gc 1 young] nursery full: ") == 0);
  CHECK(r.err.find(" full] ") != std::string::npos);
  CHECK(r.err.find("promoted ") != std::string::npos);
  CHECK(r.err.find("remembered ") != std::string::npos);
  CHECK(r.err.find("plan generational: young ") != std::string::npos);
  CHECK(r.err.find("young per full collection: ") != std::string::npos);

  const auto json_run = run_gcvm("run " + kWorkloads +
                                 "binary_trees.gasm --heap=2M --plan=generational --nursery=128K --stats=json -- 10");
  REQUIRE(json_run.exit_code == 0);
  const auto stats = nlohmann::json::parse(json_run.err);
  CHECK(stats["plan"] == "generational");
  const auto& young = stats["pauses"]["young"];
  const auto& full = stats["pauses"]["full"];
  CHECK(young["count"].get<int>() > 0);
  CHECK(young["count"].get<int>() + full["count"].get<int>() == stats["collection_count"].get<int>());
  CHECK(young["p50_ms"].get<double>() <= young["p90_ms"].get<double>());
  CHECK(young["p90_ms"].get<double>() <= young["max_ms"].get<double>());
  int young_seen = 0;
  for (const auto& c : stats["collections"]) {
    CHECK(c["generational"] == true);
    young_seen += c["kind"] == "young";
  }
  CHECK(young_seen == young["count"].get<int>());
}

TEST_CASE("mark-sweep runs report every collection as full") {
  const auto r = run_gcvm("run " + kWorkloads + "binary_trees.gasm --heap=512K --stats=json -- 8");
  REQUIRE(r.exit_code == 0);
  const auto stats = nlohmann::json::parse(r.err);
  CHECK(stats["plan"] == "marksweep");
  CHECK(stats["pauses"]["young"]["count"] == 0);
  CHECK(stats["pauses"]["full"]["count"] == stats["collection_count"]);
  CHECK(stats["pauses"]["all"]["count"] == stats["collection_count"]);
}

TEST_CASE("the guest's gc instruction is a full collection under the generational plan") {
  const auto r = run_gcvm("run " + kWorkloads + "micro_single.gasm --plan=generational --gc-log --stats=none");
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("[gc 1 full] gc instruction: ") == 0);
}

TEST_CASE("out of memory under the generational plan comes after a full collection") {
  const auto r = run_gcvm("run " + kWorkloads +
                          "micro_list.gasm --heap=256K --plan=generational --nursery=64K --gc-log --stats=none -- 50000");
  CHECK(r.exit_code == 3);
  const auto oom = r.err.find("gcvm: out of memory");
  REQUIRE(oom != std::string::npos);
  const auto last_gc = r.err.rfind("[gc ", oom);
  REQUIRE(last_gc != std::string::npos);
  CHECK(r.err.find(" full] ", last_gc) < oom);
}

TEST_CASE("generational flags that are wrong or out of place exit 2 with one line") {
  struct Case {
    std::string args;
    const char* says;
  };
  const std::string program = "run " + kWorkloads + "micro_single.gasm ";
  for (const auto& c : {
           Case{program + "--plan=copying", "--plan"},
           Case{program + "--nursery=1M", "--nursery applies to --plan=generational"},
           Case{program + "--promotion-age=3", "--promotion-age applies to --plan=generational"},
           Case{program + "--full-trigger=50", "--full-trigger applies to --plan=generational"},
           Case{program + "--plan=generational --nursery=lots", "--nursery=lots is not a size"},
           Case{program + "--plan=generational --nursery=1K", "the nursery (1024 bytes) must be at least"},
           Case{program + "--plan=generational --heap=1M --nursery=2M", "at most the heap limit"},
           Case{program + "--plan=generational --promotion-age=16", "--promotion-age"},
           Case{program + "--plan=generational --promotion-age=0", "--promotion-age"},
           Case{program + "--plan=generational --full-trigger=101", "--full-trigger"},
       }) {
    check_usage_error(c.args, c.says);
  }
}
