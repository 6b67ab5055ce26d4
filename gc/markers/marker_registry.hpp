// Policy selection: from `--gc=NAME` and `--gc-opt key=value` to a Marker.
// Each marker parses its own options struct; this file only knows the names.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gc/markers/gc_options.hpp"
#include "gc/markers/marker.hpp"

namespace gcvm {

/// What `--gc`, `--gc-opt`, `--gc-threads` and `--device` select; every front end
/// (mark, run, replay) fills it the same way (vm/cli/collector_args.hpp).
struct CollectorChoice {
  std::string name = "serial";
  GcOptions options;
  /// Marker threads for CPU-parallel collectors; 0 = every hardware thread.
  unsigned threads = 0;
  /// `auto`, `cuda`, `opencl`, optionally `:N` for the device index (GPU collectors).
  std::string device = "auto";
};

/// The collectors this build offers, in the order help texts list them.
std::vector<std::string_view> collector_names();
/// The collectors that mark a gcvm heap through the Marker interface (every
/// collector but boehm, which brings its own heap): what differential tests iterate.
std::vector<std::string_view> marker_names();

/// True for `--gc=boehm` in a build with libgc: that collector has no Marker (its
/// objects live in libgc's heap, gc/boehm/); front ends dispatch on it first.
bool collector_is_boehm(const CollectorChoice& choice);

/// Builds the marker; throws ConfigError for unknown names or rejected options.
std::unique_ptr<Marker> make_marker(const CollectorChoice& choice);

/// Builds a marker later, possibly on another thread: what `prepare_marker` returns.
using MarkerFactory = std::function<std::unique_ptr<Marker>()>;
/// Checks the name and parses the options now (ConfigError as make_marker) and returns
/// what builds the marker: for a device marker, opening the device is all that is left
/// (DeviceError as the marker's constructor).
MarkerFactory prepare_marker(const CollectorChoice& choice);

}  // namespace gcvm
