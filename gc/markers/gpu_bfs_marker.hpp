// gpu-bfs: the frontier-queue breadth-first mark of Maas et al. (2012) on a GPU, in
// CUDA or OpenCL (kernels/common/bfs_mark.h has the algorithm and its departures
// from the paper).
//
// A collection: sync the device mirror of the CSR from the graph's change record
// (GraphMirror) → upload the roots, clear the bitmap → seed kernel (claims the
// roots) → one kernel per BFS level, enqueued in growing batches (1, 2, 4, ... 64
// levels) with one small state read between batches, never one per level unless
// `levels-per-check=1` asks for it → (fallback) download the short queue and finish
// on the CPU → download the mark bitmap.
//
// Options (--gc-opt, Maas's Table 1 columns in brackets):
//   offsets=histogram|prefix   output offsets by histogram (Alg. 2) or prefix sum [+P]
//   vector=on|off              16-byte edge loads [+V]
//   wide=<threshold>|off       objects with more references go to the whole group [+D]
//   fallback=<threshold>:<min-levels>|off   CPU finishes a narrow tail [+F]
//   sms=all|<n>|split          all compute units share each level's queue, or only n;
//                              split: every work group marks from its own slice of
//                              the roots with its own queue, no balancing (§5.5's
//                              static root split; one kernel, no CPU fallback)
//   levels-per-check=auto|<n>  levels enqueued between host checks
// Defaults: histogram, vector on, wide 16, fallback 20:5, all SMs.
//
// With --device=auto and no usable GPU, or on a device error, the marker says so once
// on stderr and marks with the serial CPU marker from then on. With a named device,
// a device error is a MarkError and no mark bitmap is returned.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "gc/device/device_session.hpp"
#include "gc/markers/gc_options.hpp"
#include "gc/markers/marker.hpp"

namespace gcvm {

struct GpuBfsMarkerOptions {
  bool prefix_offsets = false;
  bool vector_loads = true;
  std::uint32_t wide_threshold = 16;  // 0 = off
  std::uint32_t fallback_threshold = 20;  // 0 = off
  std::uint32_t fallback_min_levels = 5;
  std::uint32_t sms = 0;  // 0 = all
  bool split = false;
  std::uint32_t levels_per_check = 0;  // 0 = auto (doubling)
  DeviceSelector device;

  static GpuBfsMarkerOptions parse(const GcOptions& options, const std::string& device);
};

class GpuBfsMarker final : public Marker {
 public:
  explicit GpuBfsMarker(GpuBfsMarkerOptions options);
  std::string_view name() const override { return "gpu-bfs"; }
  MarkerConstraints constraints() const override { return {.needs_device = true}; }
  MarkStats mark(const MarkRequest& request, MarkBitmap& out) override;

  /// The device in use, or null after falling back to the CPU.
  const DeviceInfo* device() const { return session_.device(); }

 private:
  MarkStats mark_on_device(DeviceBackend& backend, GraphMirror& mirror, const MarkRequest& request, MarkBitmap& out);

  GpuBfsMarkerOptions options_;
  DeviceSession session_;
};

}  // namespace gcvm
