// The serial CPU marker: the reference every other marker must match bit for bit
// (DESIGN.md invariant 4).
//
// Depth-first with an explicit stack of object ids; an object is pushed only when
// its mark bit goes from 0 to 1, so each reachable object is scanned exactly once and
// the stack never holds more than the number of reachable objects.
#pragma once

#include "gc/markers/gc_options.hpp"
#include "gc/markers/marker.hpp"

namespace gcvm {

struct SerialMarkerOptions {
  /// The serial marker has no variants; any option is an error.
  static SerialMarkerOptions parse(const GcOptions& options);
};

class SerialMarker final : public Marker {
 public:
  explicit SerialMarker(SerialMarkerOptions options = {}) : options_(options) {}
  std::string_view name() const override { return "serial"; }
  MarkerConstraints constraints() const override { return {}; }
  MarkStats mark(const MarkRequest& request, MarkBitmap& out) override;

 private:
  SerialMarkerOptions options_;
  std::vector<ObjectId> stack_;  // kept between collections to avoid regrowth
};

}  // namespace gcvm
