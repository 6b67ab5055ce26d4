// A test marker: the serial marker after a nap, so that a concurrent cycle's mark is
// still running when the mutator needs it (a stall, a full heap during the mark).
#pragma once

#include <chrono>
#include <thread>

#include "gc/markers/serial_marker.hpp"

namespace gcvm::test {

class SlowMarker final : public Marker {
 public:
  explicit SlowMarker(std::chrono::milliseconds nap = std::chrono::milliseconds(200)) : nap_(nap) {}
  std::string_view name() const override { return "slow"; }
  MarkerConstraints constraints() const override { return {}; }
  MarkStats mark(const MarkRequest& request, MarkBitmap& out) override {
    std::this_thread::sleep_for(nap_);
    return SerialMarker().mark(request, out);
  }

 private:
  std::chrono::milliseconds nap_;
};

}  // namespace gcvm::test
