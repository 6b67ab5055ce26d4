// Shared by the `gcvm replay` tests: a replay's --stats=json, a small recorded trace of
// a synthetic heap, and the Java fixture dump (made by make_java_dumps.sh at test time).
#pragma once

#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.hpp"

namespace gcvm::test {

/// `gcvm replay ARGS --stats=json`, which must succeed.
inline nlohmann::json replay_json(const std::string& args) {
  const auto r = run_gcvm("replay " + args + " --stats=json");
  CAPTURE(args);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return nlohmann::json::parse(r.out);
}

/// A trace of a synthetic heap (rmat:12), recorded by gcvm mark into `path` (no Java
/// needed); returns `path`.
inline std::string recorded_trace(const std::string& path) {
  const auto r = run_gcvm("mark --graph=rmat:12 --stats=json --record-trace=" + path);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return path;
}

/// The Java fixture dump with unreachable objects (may be missing where java is).
inline std::filesystem::path fixture_dump() {
  return std::filesystem::path(GCVM_SNAPSHOT_DIR) / "java" / "all.hprof";
}

}  // namespace gcvm::test
