// Keeps a device mirror current while the mutator runs, so that the sync in the next
// pause finds little left to send (the mechanism: GraphMirror::refresh; the policy of
// when: here).
//
// A thread of its own. Between two pauses it wakes every interval (the markers'
// `refresh=` option, kDefaultInterval unless given) and refreshes the
// mirror: it takes the change bits of the entries the device already holds and sends
// their current values, and sends what the graph grew by since, up to the sizes the
// graph has published (RefGraph::published_vertex_count: everything below them is
// initialised), growing the device arrays first. A mirror that holds nothing yet
// (the plan started the refresher before its first pause, Marker::watch) adopts the
// graph: its first pass takes every change bit and copies the graph whole.
// Correctness does not depend on it: every change the mutator makes after a refresh
// took its bit marks the bit again (heapgraph/change_bitmap.hpp), so the pause's sync
// still sends it, and a value torn by a concurrent store is overwritten then. The
// pause's sync is what makes the mirror exact; refreshes only move work out of the
// pause.
//
// States: idle (no graph, or a pause is on) → refreshing (after `resume`, in a pause
// or by a concurrent mark's thread once its mark is done) → idle again by `stop`,
// which the device marker calls at the start of every pause before it touches the
// mirror. `stop` waits for a pass in flight; a pass that has not sent anything yet
// gives up instead (its bits are marked again), so the pause waits at most for one
// pass's upload (a pass that found growth sends it even then). A device error on the thread ends refreshing; `stop` rethrows it, so
// the marker handles it as any device error of its own.
//
// Thread-safety: `resume` and `stop` may be called from any thread, never at once.
// Between `stop` and the next `resume` the refresher touches neither the mirror, the
// backend nor the graph.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>

#include "gc/device/device_backend.hpp"
#include "gc/device/graph_mirror.hpp"

namespace gcvm {

class MirrorRefresher {
 public:
  /// On the H100, GCBench's and binary-trees' warm pauses were 7-15% shorter with
  /// 100 us than with 1 ms (the pause's patch 8-19 KB against 57-107 KB), and their run
  /// times no longer: a pass that finds nothing costs a scan of the summary bits.
  static constexpr std::chrono::microseconds kDefaultInterval{100};
  /// The shortest and longest intervals `parse_interval` accepts.
  static constexpr std::chrono::microseconds kMinInterval{10};
  static constexpr std::chrono::microseconds kMaxInterval{10'000'000};

  /// The value of a marker's `refresh=` option: `on` (the default interval), `off`
  /// (zero: no refresher) or an interval in microseconds, kMinInterval..kMaxInterval;
  /// nothing for anything else.
  static std::optional<std::chrono::microseconds> parse_interval(std::string_view value);

  MirrorRefresher(DeviceBackend& backend, GraphMirror& mirror, std::chrono::microseconds interval = kDefaultInterval);
  ~MirrorRefresher();
  MirrorRefresher(const MirrorRefresher&) = delete;
  MirrorRefresher& operator=(const MirrorRefresher&) = delete;

  /// Starts refreshing the mirror from `graph` (its change record) until `stop`.
  void resume(const RefGraph& graph, GraphChanges& changes);
  /// Stops refreshing (see above) and returns what the refreshes sent since the last
  /// `stop`; rethrows a device error the thread met.
  MirrorRefreshStats stop();

 private:
  void run();

  DeviceBackend& backend_;
  GraphMirror& mirror_;
  const std::chrono::microseconds interval_;
  std::mutex mutex_;
  std::condition_variable wake_;   // the thread: resume, stop, quit
  std::condition_variable idle_;   // stop: the pass in flight ended
  const RefGraph* graph_ = nullptr;
  GraphChanges* changes_ = nullptr;
  bool refreshing_ = false;
  bool in_pass_ = false;
  bool quit_ = false;
  std::atomic<bool> stopping_{false};
  MirrorRefreshStats stats_;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace gcvm
