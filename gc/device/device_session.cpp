#include "gc/device/device_session.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <utility>

namespace gcvm {

DeviceSession::DeviceSession(std::string_view marker, const DeviceSelector& selector,
                             std::chrono::microseconds refresh, RefreshWait wait)
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
  attach(refresh, wait);
}

DeviceSession::DeviceSession(std::string_view marker, std::unique_ptr<DeviceBackend> backend,
                             std::chrono::microseconds refresh, RefreshWait wait)
    : marker_(marker), automatic_(false), backend_(std::move(backend)) {
  attach(refresh, wait);
}

void DeviceSession::attach(std::chrono::microseconds refresh, RefreshWait wait) {
  mirror_ = std::make_unique<GraphMirror>(*backend_);
  if (refresh.count() != 0) refresher_ = std::make_unique<MirrorRefresher>(*backend_, *mirror_, refresh, wait);
}

DeviceSession::~DeviceSession() {
  if (refresher_) {
    try {
      refresher_->stop();
    } catch (const std::exception&) {
      // The device failed between pauses and no mark came to report it: nothing to hand back.
    }
  }
}

void DeviceSession::place_host_threads(const std::vector<unsigned>& cpus) {
  if (refresher_) refresher_->place(cpus);
}

void DeviceSession::stop_refresh() {
  if (refresher_) refreshed_ += refresher_->stop();
}

std::vector<std::pair<std::string, double>> DeviceSession::take_refreshed() {
  if (!refresher_) return {};
  return std::exchange(refreshed_, {}).details();
}

void DeviceSession::note_graph(const MarkRequest& request) {
  graph_ = &request.graph;
  changes_ = request.changes;
}

void DeviceSession::after_pause() {
  if (!backend_) return;
  backend_->grow_patch_buffer();
  if (refresher_ && changes_ != nullptr && changes_ == &graph_->changes()) refresher_->resume(*graph_, *changes_);
}

void DeviceSession::watch(const RefGraph& graph, GraphChanges* changes) {
  if (!backend_ || graph_ != nullptr) return;
  // Page-locked from now on, step by step as the program commits memory, with or
  // without the refresher: a first sync that page-locks the graph itself spends more
  // on that than on the copy (470 MB: 14-24 ms against 9-10 on the H200 machine).
  graph.pin_with(backend_->host_pinner());
  if (!refresher_ || changes != &graph.changes()) return;
  graph_ = &graph;
  changes_ = changes;
  refresher_->resume(graph, *changes);
}

void DeviceSession::fall_back(const std::string& why, std::string_view when) {
  fmt::print(stderr, "gcvm: warning: {}: {}; marking on the CPU (serial){}{}\n", marker_, why, when.empty() ? "" : " ",
             when);
  refresher_.reset();
  mirror_.reset();
  backend_.reset();
}

MarkStats DeviceSession::mark(const MarkRequest& request, MarkBitmap& out, const DeviceMark& on_device,
                              const std::function<void()>& alongside) {
  if (!backend_) return cpu_.mark(request, out);
  try {
    note_graph(request);
    MarkStats stats;
    if (refresher_) {
      refreshed_ += refresher_->stop_and_run([&] { stats = on_device(*backend_, *mirror_); }, alongside);
    } else {
      if (alongside) alongside();
      stats = on_device(*backend_, *mirror_);
    }
    if (refresher_)
      stats.add_details([refreshed = std::exchange(refreshed_, {})](MarkDetails& details) {
        append_details(details, refreshed.details());
      }, request.details_after_pause);
    return stats;
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
    stop_refresh();
    note_graph(request);
    auto mark = on_device(*backend_, *mirror_);
    backend_->finish_sync();
    append_details(mark->pause_details, take_refreshed());
    return mark;
  } catch (const DeviceError& e) {
    if (!automatic_) throw;
    fall_back(e.what(), "from now on");
    return marker.Marker::snapshot(request);
  }
}

}  // namespace gcvm
