#include "gc/device/device_session.hpp"

#include <fmt/format.h>

#include <cstdio>

namespace gcvm {

DeviceSession::DeviceSession(std::string_view marker, const DeviceSelector& selector)
    : marker_(marker), automatic_(selector.automatic()) {
  if (!automatic_) {
    backend_ = open_device(selector);
  } else {
    try {
      backend_ = open_device(selector);
    } catch (const DeviceError& e) {
      fall_back(e.what(), "instead");
      return;
    }
    if (!backend_) {
      fall_back("no GPU is usable (--device=auto)", "");
      return;
    }
  }
  mirror_ = std::make_unique<GraphMirror>(*backend_);
}

DeviceSession::~DeviceSession() = default;

void DeviceSession::fall_back(const std::string& why, std::string_view when) {
  fmt::print(stderr, "gcvm: warning: {}: {}; marking on the CPU (serial){}{}\n", marker_, why, when.empty() ? "" : " ",
             when);
  mirror_.reset();
  backend_.reset();
}

MarkStats DeviceSession::mark(const MarkRequest& request, MarkBitmap& out, const DeviceMark& on_device) {
  if (!backend_) return cpu_.mark(request, out);
  try {
    return on_device(*backend_, *mirror_);
  } catch (const DeviceError& e) {
    out.reset(0);
    if (!automatic_) throw;
    fall_back(e.what(), "from now on");
    return cpu_.mark(request, out);
  }
}

std::unique_ptr<SnapshotMark> DeviceSession::snapshot(Marker& marker, const MarkRequest& request,
                                                     const DeviceSnapshot& on_device) {
  if (!backend_) return marker.Marker::snapshot(request);
  try {
    auto mark = on_device(*backend_, *mirror_);
    backend_->finish_sync();
    return mark;
  } catch (const DeviceError& e) {
    if (!automatic_) throw;
    fall_back(e.what(), "from now on");
    return marker.Marker::snapshot(request);
  }
}

}  // namespace gcvm
