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
// download the mark bitmap.
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
// Defaults: everything on [+O]: checked, local-stack=32, balance on, vector on.
//
// Statistics (MarkStats::details): gpu-bfs's keys (sync_*, root_*, kernel_ms,
// kernel_gteps, iterations = launches that found work, host_checks, gpu_edges,
// mark_download_*, groups, device_bytes = everything this marker holds on the device)
// plus launches, max_rounds, donations, steals, wide_objects, chunks,
// stack_peak_bytes and local_stack_bytes. stack_peak_bytes is the global stack
// memory: the linked storage (4 bytes per object: it never grows, so what is held is
// the peak), the saved tops (4 bytes per thread), the pool and the chunk table;
// local_stack_bytes is the work-group memory of the hybrid stacks of all groups.
//
// Device selection and the CPU fallback of --device=auto: DeviceSession.
#pragma once

#include <cstdint>
#include <string>

#include "gc/device/device_session.hpp"
#include "gc/gc_options.hpp"
#include "gc/marker.hpp"
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
  DeviceSelector device;

  static GpuDfsMarkerOptions parse(const GcOptions& options, const std::string& device);
};

class GpuDfsMarker final : public Marker {
 public:
  explicit GpuDfsMarker(GpuDfsMarkerOptions options);
  std::string_view name() const override { return "gpu-dfs"; }
  MarkerConstraints constraints() const override { return {.needs_device = true}; }
  MarkStats mark(const MarkRequest& request, MarkBitmap& out) override;

  /// The device in use, or null after falling back to the CPU.
  const DeviceInfo* device() const { return session_.device(); }

 private:
  MarkStats mark_on_device(DeviceBackend& backend, GraphMirror& mirror, const MarkRequest& request, MarkBitmap& out);

  GpuDfsMarkerOptions options_;
  DeviceSession session_;
};

}  // namespace gcvm
