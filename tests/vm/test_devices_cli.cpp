// The GPU collectors at the command line: `gcvm devices`, gpu-bfs on OpenCL (PoCL
// in CI) with the same JSON counts as the serial marker, and device errors.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "gc/device/device_registry.hpp"

using gcvm::test::line_count;
using gcvm::test::run_gcvm;

TEST_CASE("gcvm devices lists every usable device") {
  const auto r = run_gcvm("devices");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("backends built in:") == 0);
  CHECK(r.out.find("NCCL (multi-GPU exchange):") != std::string::npos);
  CHECK(r.out.find("peer to peer:") != std::string::npos);
  for (const auto& d : gcvm::usable_devices())
    CHECK(r.out.find(d.backend + ":" + std::to_string(d.index)) != std::string::npos);
}

TEST_CASE("gcvm mark --gc=gpu-bfs reports the serial marker's counts and its device statistics") {
  bool any_opencl = false;
  for (const auto& d : gcvm::usable_devices()) any_opencl = any_opencl || d.backend == "opencl";
  if (!any_opencl) {
    MESSAGE("no OpenCL device: gpu-bfs CLI test skipped");
    return;
  }
  for (const char* spec : {"vp-array", "list:5000", "wide:1000"}) {
    CAPTURE(std::string(spec));
    const auto serial = nlohmann::json::parse(run_gcvm(std::string("mark --graph=") + spec + " --stats=json").out);
    const auto r = run_gcvm(std::string("mark --graph=") + spec + " --gc=gpu-bfs --device=opencl --verify --stats=json --collections=2");
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["marked_objects"] == serial["marked_objects"]);
    CHECK(j["edges_traversed"] == serial["edges_traversed"]);
    CHECK(j["freed_objects"] == serial["freed_objects"]);
    for (const char* key : {"sync_bytes", "sync_ms", "root_upload_ms", "kernel_ms", "fallback_ms", "mark_download_ms",
                            "iterations", "device_bytes"})
      CHECK(j["mark_details"].contains(key));
    CHECK(j["collections"][1]["mark_details"]["sync_bytes"] == 0);  // nothing changed: nothing uploaded
  }
}

TEST_CASE("device errors: a named device that does not exist is one line and exit 5; auto falls back once") {
  const auto missing = run_gcvm("mark --graph=single --gc=gpu-bfs --device=opencl:99");
  CHECK(missing.exit_code == 5);
  CHECK(line_count(missing.err) == 1);
  CHECK(missing.err.find("gcvm: device error:") == 0);
  const auto bad = run_gcvm("mark --graph=single --gc=gpu-bfs --device=tpu");
  CHECK(bad.exit_code == 2);
  CHECK(line_count(bad.err) == 1);
  const auto opt = run_gcvm("mark --graph=single --gc=gpu-bfs --gc-opt offsets=sideways");
  CHECK(opt.exit_code == 2);
  CHECK(line_count(opt.err) == 1);
  bool gpu = false;
  for (const auto& d : gcvm::usable_devices()) gpu = gpu || d.type != "cpu";
  if (!gpu) {
    const auto fallback = run_gcvm("mark --graph=vp-list --gc=gpu-bfs --device=auto --collections=3 --stats=json");
    CHECK(fallback.exit_code == 0);
    CHECK(line_count(fallback.err) == 1);  // said once, not once per collection
    CHECK(fallback.err.find("marking on the CPU") != std::string::npos);
    CHECK(nlohmann::json::parse(fallback.out)["marked_objects"] == 8192);
  }
}

TEST_CASE("gcvm mark with a device list: the serial marker's counts, the exchange statistics, one-line errors") {
  bool any_opencl = false;
  for (const auto& d : gcvm::usable_devices()) any_opencl = any_opencl || d.backend == "opencl";
  if (!any_opencl) {
    MESSAGE("no OpenCL device: device-list CLI test skipped");
    return;
  }
  const auto serial = nlohmann::json::parse(run_gcvm("mark --graph=rmat:11 --stats=json").out);
  const auto r = run_gcvm("mark --graph=rmat:11 --gc=gpu-bfs --device=opencl:0,0,0 --verify --stats=json --collections=2");
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["marked_objects"] == serial["marked_objects"]);
  CHECK(j["edges_traversed"] == serial["edges_traversed"]);
  for (const char* key : {"partitions", "exchange_rounds", "exchange_bytes", "load_imbalance", "kernel_ms_p2", "sync_bytes",
                          "remote_references", "exchange_bytes_per_remote_reference", "exchange_fraction"})
    CHECK(j["mark_details"].contains(key));
  CHECK(j["mark_details"]["partitions"] == 3);
  CHECK(j["mark_details"]["remote_references"] > 0);
  // The bulk spec, built on every core, marks alike on the list and on the CPU.
  const auto bulk_serial = nlohmann::json::parse(run_gcvm("mark --graph=bulk:30000:3 --stats=json").out);
  const auto bulk = run_gcvm("mark --graph=bulk:30000:3 --gc=gpu-bfs --device=opencl:0,0 --verify --stats=json");
  REQUIRE(bulk.exit_code == 0);
  const auto b = nlohmann::json::parse(bulk.out);
  CHECK(b["marked_objects"] == bulk_serial["marked_objects"]);
  CHECK(b["edges_traversed"] == bulk_serial["edges_traversed"]);
  CHECK(b["collections"][0]["mark_digest"] == bulk_serial["collections"][0]["mark_digest"]);
  CHECK(j["collections"][1]["mark_details"]["sync_bytes"] == 0);  // nothing changed: nothing uploaded
  for (const char* bad : {"--device=opencl:0,", "--device=opencl:0,0 --gc-opt queue=async",
                          "--device=opencl:0,0 --gc-opt exchange=nccl"}) {
    CAPTURE(std::string(bad));
    const auto e = run_gcvm(std::string("mark --graph=single --gc=gpu-bfs ") + bad);
    CHECK(e.exit_code == 2);
    CHECK(line_count(e.err) == 1);
  }
}
