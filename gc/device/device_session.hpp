// A device marker's hold on its device and its graph mirror, and the --device=auto
// policy every GPU marker shares: with `auto` and no usable GPU, or after a device
// error, the marker says so once on stderr and marks with the serial CPU marker from
// then on; with a named device, a device error is a MarkError (DeviceError) and no
// mark bitmap is returned.
//
// States: on device (backend and mirror held) → on CPU (both released; final).
//
// Between pauses a MirrorRefresher (gc/device/mirror_refresher.hpp) keeps the mirror
// current from the graph the last pause marked, unless the marker's `refresh=off`:
// every `mark` and `snapshot` stops it before the mirror is used, and `after_pause`
// resumes it. A `mark` runs its device side on the refresher's thread
// (MirrorRefresher::stop_and_run: that thread's core holds the driver's launch path
// warm) while the pause's thread waits; a snapshot runs on the caller's thread (its
// mark goes on on the concurrent plan's marking thread). `watch` starts it before the
// first pause, on the graph the plan names: its first pass copies the graph whole, so
// the first pause syncs only what changed since. What it sent since the last pause is reported with the next pause's
// figures (sync_refresh_*): a stop-the-world mark's statistics, or a snapshot's pause
// details (a concurrent cycle's snapshot_details). A snapshot stops it before the sync
// and the marking thread resumes it only once the mark is done (Marker::after_pause),
// so those figures are what it sent between the end of the last mark and this
// snapshot; a device error it met is handled as the mark's own.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gc/device/device_backend.hpp"
#include "gc/device/device_registry.hpp"
#include "gc/device/graph_mirror.hpp"
#include "gc/device/mirror_refresher.hpp"
#include "gc/markers/serial_marker.hpp"
#include "gc/markers/snapshot_mark.hpp"

namespace gcvm {

class DeviceSession {
 public:
  /// Opens the selected device for marker `marker` (its name in messages); throws
  /// DeviceError for a named device that cannot be used.
  /// `refresh`: the mirror refresher's interval, zero for none; `wait`: how it waits
  /// between passes.
  DeviceSession(std::string_view marker, const DeviceSelector& selector,
                std::chrono::microseconds refresh = MirrorRefresher::kDefaultInterval,
                RefreshWait wait = RefreshWait::Auto);
  /// On `backend`, already open (a device that fails is always a MarkError: there is
  /// no `auto` here). The seam through which tests hand a marker a wrapped backend.
  DeviceSession(std::string_view marker, std::unique_ptr<DeviceBackend> backend,
                std::chrono::microseconds refresh = MirrorRefresher::kDefaultInterval,
                RefreshWait wait = RefreshWait::Auto);
  ~DeviceSession();

  using DeviceMark = std::function<MarkStats(DeviceBackend&, GraphMirror&)>;
  /// Runs `on_device`, or the serial marker once on the CPU (see above). `alongside`
  /// (if any; it must not throw) runs on the calling thread while `on_device` runs on
  /// the refresher's, or just before it with refresh=off; not on the CPU.
  MarkStats mark(const MarkRequest& request, MarkBitmap& out, const DeviceMark& on_device,
                 const std::function<void()>& alongside = {});

  using DeviceSnapshot = std::function<std::unique_ptr<SnapshotMark>(DeviceBackend&, GraphMirror&)>;
  /// A snapshot mark (Marker::snapshot): `on_device` in the pause, and a wait for every
  /// upload it enqueued before the mutator resumes; on the CPU, `marker`'s host copy
  /// (Marker's default). A device error here falls back as `mark` does.
  std::unique_ptr<SnapshotMark> snapshot(Marker& marker, const MarkRequest& request, const DeviceSnapshot& on_device);

  /// Outside the pause: lets the backend grow what it keeps out of pauses, then resumes
  /// refreshing the mirror.
  void after_pause();
  /// Before the first pause (Marker::watch): page-locks `graph` for the device, unless a
  /// pause came first, and starts refreshing the mirror from it, unless refresh is off.
  void watch(const RefGraph& graph, GraphChanges* changes);
  /// Keeps the refresher's thread (which runs the device's side of a pause) on `cpus`
  /// (Marker::place_host_threads).
  void place_host_threads(const std::vector<unsigned>& cpus);

  /// The device in use, or null on the CPU.
  const DeviceInfo* device() const { return backend_ ? &backend_->info() : nullptr; }

 private:
  void fall_back(const std::string& why, std::string_view when);
  /// Stops the refresher before the mirror is used; its figures go to the next mark's.
  void stop_refresh();
  /// Remembers the graph a pause used, for the refresher.
  void note_graph(const MarkRequest& request);
  /// The mirror and, unless refresh=off, its refresher on the open backend.
  void attach(std::chrono::microseconds refresh, RefreshWait wait);
  /// What the refresher sent since the last pause reported it, as details (nothing with
  /// refresh=off); zeroes it.
  std::vector<std::pair<std::string, double>> take_refreshed();

  std::string marker_;
  bool automatic_;
  std::unique_ptr<DeviceBackend> backend_;
  std::unique_ptr<GraphMirror> mirror_;
  SerialMarker cpu_;
  std::unique_ptr<MirrorRefresher> refresher_;  // null with refresh=off or on the CPU
  MirrorRefreshStats refreshed_;                // since the last mark reported it
  const RefGraph* graph_ = nullptr;             // of the last pause
  GraphChanges* changes_ = nullptr;
};

}  // namespace gcvm
