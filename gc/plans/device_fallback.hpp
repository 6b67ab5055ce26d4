// What a plan does when the device fails in the middle of a collection. A device
// marker that fails throws DeviceError (gc/device/device_backend.hpp) and, by the
// Marker contract (gc/markers/marker.hpp), leaves no partial mark: nothing of a failed
// mark is ever used. `--gc-opt device-error=cpu|fail` (GPU markers) chooses:
//   fail  the error ends the run (gcvm: device error, exit 5);
//   cpu   the plan marks the heap on the CPU instead, with the parallel marker on the
//         pool the run was given (--gc-threads), and keeps that marker for the rest of
//         the run; the device marker (its backend, mirror and refresher) is released.
// Default: cpu under the concurrent plan, whose point is to keep the program running
// (gc/plans/concurrent_collector.hpp says what happens to the cycle); fail under the
// stop-the-world plans, where a GPU marker is what is being measured and a run that
// quietly finished on the CPU would report the wrong marker's figures.
//
// Why the rest of the run stays on the CPU rather than retrying the device: a device
// that failed mid-mark (a driver error, a lost context, memory exhausted) is in an
// unknown state, and its mirror no longer matches the graph (the failed sync or mark
// consumed the change bits); a retry would re-upload the whole graph in a pause and,
// if the device fails again, pay for a second abandoned mark and a stop-the-world
// collection each time. A run that must show device figures uses device-error=fail.
//
// With --device=auto a device marker already falls back by itself, to the serial
// marker, for every error it sees in a pause (gc/device/device_session.hpp); what
// reaches the plan is an error of a concurrent mark's device half, which runs outside
// any pause, and errors of a named device.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "gc/markers/marker.hpp"
#include "gc/markers/marker_registry.hpp"

namespace gcvm {

struct DeviceFallback {
  enum class Policy { PlanDefault, Cpu, Fail };
  Policy policy = Policy::PlanDefault;
  /// The CPU marker's threads (--gc-threads); 0 = every hardware thread.
  unsigned threads = 0;

  /// Takes `device-error=cpu|fail` out of choice.options, so that the markers never see
  /// it, and the pool size from choice.threads. ConfigError for another value, or for
  /// a collector that uses no device.
  static DeviceFallback take_from(CollectorChoice& choice);
  /// Whether a device error falls back to the CPU under a concurrent or a
  /// stop-the-world plan.
  bool enabled(bool concurrent_plan) const;
  /// The marker that takes over: the parallel marker with `threads`.
  std::unique_ptr<Marker> cpu_marker() const;
  /// Says once on stderr that `device_marker` failed (`error`) in `where` and that the
  /// CPU marks from now on.
  void warn(std::string_view device_marker, std::string_view where, std::string_view error) const;
};

}  // namespace gcvm
