// Whether a run that opened a device waits, as it exits, for the driver to tear its
// state down: `--gc-opt device-exit=detach|wait` (GPU markers; gcvm run, replay, mark).
//   detach  the default: the process exits once its outputs are written, and a keeper
//           process that holds the device files and the address space exits after it,
//           so the driver's teardown (90-120 ms on the H200 machine) happens there
//           (gc/device/driver_teardown.hpp: the mechanism and its invariants);
//   wait    the process tears its driver state down itself and exits after it, as any
//           CUDA program does: its wall time includes the teardown.
// Either way the teardown is the same work; what changes is who waits for it. A script
// that starts device runs back to back may overlap one run's teardown with the next
// run's start-up under detach (gcvm compare does not: it reaps each run's keeper first).
#pragma once

#include "gc/markers/marker_registry.hpp"

namespace gcvm {

struct DeviceExit {
  enum class Policy { Detach, Wait };
  Policy policy = Policy::Detach;

  /// Takes `device-exit=detach|wait` out of choice.options, so that the markers never see
  /// it. ConfigError for another value, or for a collector that uses no device.
  static DeviceExit take_from(CollectorChoice& choice);
  /// Makes this the process's policy for leave_process.
  void apply() const;
};

}  // namespace gcvm
