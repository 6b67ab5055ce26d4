// gpu-dfs: FastCollect's parallel depth-first mark from every root (Abhinav and
// Nasre, §3.2, §4) on a GPU, in CUDA or OpenCL (kernels/common/dfs_mark.h has the
// algorithm, its termination argument and its departures from the paper).
//
// A collection: sync the device mirror of the CSR (GraphMirror, shared with gpu-bfs)
// → upload the roots, clear the bitmap → reset the stack storage (one word per
// object), the saved tops, the donation pool and the chunk table → seed kernel
// (every thread claims its share of the roots) → run kernels, enqueued in growing
// batches (1, 2, 4, ... 64) with one small state read between batches, until a
// launch ends with no thread holding work, an empty pool and no open chunks →
// download the mark bitmap. With the fallback on, a check that finds the work narrow
// (below) instead gathers the saved stacks' entries on the device (at most
// GCVM_DFS_GATHER_CAPACITY, else it keeps launching), downloads them with the bitmap
// and finishes with a serial DFS on the host CSR (gc/markers/cpu_finish.hpp).
//
// Options (--gc-opt; FastCollect Table 1 columns in brackets; GPU = all off):
//   atomics=checked|plain      plain read of the mark word before the atomic [+A]
//   local-stack=<entries>|off  hybrid stack: entries per thread in work-group memory,
//                              1..GCVM_DFS_LOCAL_MAX (32) [+H]
//   balance=on|off             donation pool and stealing of whole chains, objects
//                              with more than `wide` references scanned by the whole
//                              group [+D]
//   vector=on|off              16-byte edge loads [+V]
//   wide=<threshold>           references above which balance=on hands an object to
//                              the group (default 64)
//   chunk=<references>|off     balance=on splits objects of more than two chunks into
//                              chunks that every group takes from a shared table
//                              (default 4096; beyond the paper, like the stealing)
//   rounds=<n>                 rounds a group runs per launch (default 2048)
//   steps=<n>                  objects a thread pops between two group barriers
//                              (default 32)
//   pool=<slots>               donation pool slots (default 4096)
//   groups=auto|<n>            work groups (auto: the device's resident groups)
//   launches-per-check=auto|<n> run kernels enqueued between host checks
//   fallback=<threshold>:<min-launches>|off  finish on the CPU once launch L, with
//                              L + 1 >= min-launches, leaves fewer than `threshold`
//                              threads with work, an empty pool and no open chunks
//                              (default 20:1; beyond the paper, like gpu-bfs's [+F]).
//                              A launch is long (up to rounds × steps pops per
//                              thread, with idle threads asking for donations all
//                              along), so one launch that ends with under 20 of the
//                              device's thousands of threads busy has met a chain:
//                              a linked list then costs one launch, not V launches'
//                              worth of single-thread steps. With balance=off
//                              nothing spreads the work, so a single root also
//                              falls back after launch 1.
// Defaults: everything on [+O]: checked, local-stack=32, balance on, vector on,
// fallback 20:1.
//
// Statistics (MarkStats::details): gpu-bfs's keys (sync_*, root_*, kernel_ms,
// kernel_gteps, iterations = launches that found work, host_checks, gpu_edges,
// mark_download_*, groups, device_bytes = everything this marker holds on the device)
// plus launches, max_rounds, donations, steals, wide_objects, chunks,
// stack_peak_bytes and local_stack_bytes, and for the fallback fallback_launch (the
// last launch before the CPU took over, or -1), fallback_objects (stack entries handed
// over), fallback_gathers (gathers run, including overflowed ones),
// fallback_gather_ms and fallback_ms (the CPU's part). edges_traversed = gpu_edges +
// the CPU's references. stack_peak_bytes is the global stack
// memory: the linked storage (4 bytes per object: it never grows, so what is held is
// the peak), the saved tops (4 bytes per thread), the pool and the chunk table;
// local_stack_bytes is the work-group memory of the hybrid stacks of all groups.
//
// Device selection and the CPU fallback of --device=auto: DeviceSession.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "gc/device/device_session.hpp"
#include "gc/markers/cpu_finish.hpp"
#include "gc/markers/gc_options.hpp"
#include "gc/markers/marker.hpp"
#include "kernels/common/mark_layout.h"

namespace gcvm {

struct GpuDfsMarkerOptions {
  bool checked_atomics = true;
  std::uint32_t local_stack = 32;  // 0 = off
  bool balance = true;
  bool vector_loads = true;
  std::uint32_t wide_threshold = 64;
  std::uint32_t pool_slots = 4096;
  std::uint32_t chunk_edges = GCVM_DFS_CHUNK_EDGES;  // 0 = off
  std::uint32_t rounds_per_launch = GCVM_DFS_ROUNDS_PER_LAUNCH;
  std::uint32_t steps = GCVM_DFS_STEPS;
  std::uint32_t groups = 0;  // 0 = auto
  std::uint32_t launches_per_check = 0;  // 0 = auto (doubling)
  std::uint32_t fallback_threshold = 20;  // 0 = off
  std::uint32_t fallback_min_launches = 1;
  /// The mirror refreshed between pauses this often (DeviceSession); zero: not at all.
  std::chrono::microseconds refresh = MirrorRefresher::kDefaultInterval;
  /// How the refresher's thread waits between passes (MirrorRefresher).
  RefreshWait refresh_wait = RefreshWait::Auto;
  DeviceSelector device;

  static GpuDfsMarkerOptions parse(const GcOptions& options, const std::string& device);
};

class GpuDfsMarker final : public Marker {
 public:
  explicit GpuDfsMarker(GpuDfsMarkerOptions options);
  /// On `backend`, already open (options.device is not used): the seam for tests that
  /// wrap a backend (tests/gc/fault_injection.hpp).
  GpuDfsMarker(GpuDfsMarkerOptions options, std::unique_ptr<DeviceBackend> backend);
  std::string_view name() const override { return "gpu-dfs"; }
  MarkerConstraints constraints() const override { return {.needs_device = true}; }
  MarkStats mark(const MarkRequest& request, MarkBitmap& out) override;
  /// The pause syncs the mirror and uploads the roots; the snapshot mark runs the
  /// launches and downloads the marks, without the CPU fallback (which would read the
  /// live graph): the device finishes every mark.
  std::unique_ptr<SnapshotMark> snapshot(const MarkRequest& request) override;

  /// The device in use, or null after falling back to the CPU.
  const DeviceInfo* device() const { return session_.device(); }
  void after_pause() override { session_.after_pause(); }
  void watch(const RefGraph& graph, GraphChanges* changes) override { session_.watch(graph, changes); }
  void place_host_threads(const std::vector<unsigned>& cpus) override { session_.place_host_threads(cpus); }

 private:
  /// What the pause's part of a mark leaves for the rest.
  struct Pause {
    MirrorSyncStats sync;
    DfsLaunch launch;
    std::uint32_t block_count = 0;
    std::uint32_t root_count = 0;
    std::uint64_t premarked_objects = 0;
    double roots_ms = 0;
  };
  /// Syncs the mirror, uploads the roots, resets the stacks.
  Pause begin_on_device(DeviceBackend& backend, GraphMirror& mirror, const MarkRequest& request);
  /// Launches and downloads; `request` is the pause's request, null in a snapshot mark
  /// (which allows no CPU fallback): a fallback finishes on its graph, and its
  /// on_device_busy is called once the first kernels are enqueued.
  MarkStats finish_on_device(DeviceBackend& backend, const Pause& pause, const MarkRequest* request,
                             MarkBitmap& out);

  GpuDfsMarkerOptions options_;
  DeviceSession session_;
  CpuFinish cpu_finish_;  // a fallback's CPU end
};

}  // namespace gcvm
