// When a device marker opens its device: before the program runs, or while it runs.
//
// Opening a GPU costs a fixed start-up that has nothing to do with the heap: on the
// H200 machine the CUDA driver's initialisation and the context take about 230 ms
// (docs/gpu-markers.md), more than a whole run of GCBench's collections. `--gc-opt
// device-start=open|overlap` (GPU markers, gcvm run and gcvm replay) chooses:
//   open     the marker opens its device before the program's first instruction, so
//            that every collection marks on the device (the default: a run measures
//            the marker it names, from the first collection on);
//   overlap  the device opens on a thread of its own while the program runs; until it
//            is open, each collection marks on the CPU with the parallel marker on the
//            pool the run was given (--gc-threads). A concurrent cycle that starts then
//            marks in its initial pause (there is no device snapshot to mark later, and
//            a host copy of a graph that has never been copied would cost more pause
//            than the mark). The first pause that finds the device open uses it from
//            then on; the CPU marker's threads sleep from then on and go with this
//            marker (joining them in that pause made it 0.8-2.6 ms longer on the H200
//            host).
//
// The start-up thread also does what the plan asked before the first pause
// (Marker::watch): it page-locks the graph and starts the mirror's refresher on it,
// while the mutator runs (heapgraph/virtual_array.hpp: page-locking is safe against
// the owner's growth), so the first device pause finds the mirror mostly current; and
// it keeps the refresher's thread on the CPUs the plan gave the pause's threads
// (Marker::place_host_threads).
//
// What a run reports: each collection marked on the CPU while the device was starting
// carries the mark detail `device_starting` (1) and its log line says so; the first
// device collection carries `device_ready_ms` (when the device was open, on the
// process clock that collection start times use) and `device_start_cpu_marks` (how
// many collections came before).
// A named device that fails to open is a DeviceError at the first pause after the
// failure is known, handled as a device error in a mark is (gc/plans/device_fallback.hpp);
// with --device=auto the marker itself falls back to the serial marker, as it does at
// start-up (gc/device/device_session.hpp). If no pause came after the failure, the
// marker says so on stderr when the run ends.
//
// The states of OverlappedStartMarker: starting (the thread opens; marks on the CPU) →
// on device (the thread is joined; every call goes to the device marker; final), or →
// failed (the error is thrown once, at the next pause; the plan replaces the marker).
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "gc/markers/marker.hpp"
#include "gc/markers/marker_registry.hpp"
#include "gc/util/stopwatch.hpp"

namespace gcvm {

struct DeviceStart {
  enum class Policy { Open, Overlap };
  Policy policy = Policy::Open;
  /// The CPU marker's threads while the device starts (--gc-threads); 0 = every core.
  unsigned threads = 0;

  /// Takes `device-start=open|overlap` out of choice.options, so that the markers never
  /// see it, and the pool size from choice.threads. ConfigError for another value, or
  /// for a collector that uses no device.
  static DeviceStart take_from(CollectorChoice& choice);
  /// The marker `choice` names, started by this policy (ConfigError as make_marker; with
  /// `open`, DeviceError as make_marker).
  std::unique_ptr<Marker> make_marker(const CollectorChoice& choice) const;
};

/// A device marker that `open` builds on a thread of its own, and `interim` that marks
/// until it is built (see above). `name` is the device marker's.
class OverlappedStartMarker final : public Marker {
 public:
  OverlappedStartMarker(std::string name, MarkerFactory open, std::unique_ptr<Marker> interim);
  ~OverlappedStartMarker() override;
  OverlappedStartMarker(const OverlappedStartMarker&) = delete;
  OverlappedStartMarker& operator=(const OverlappedStartMarker&) = delete;

  std::string_view name() const override { return name_; }
  MarkerConstraints constraints() const override { return {.needs_device = true}; }
  MarkStats mark(const MarkRequest& request, MarkBitmap& out) override;
  ThreadPool* thread_pool() override;
  void after_pause() override;
  void watch(const RefGraph& graph, GraphChanges* changes) override;
  void place_host_threads(const std::vector<unsigned>& cpus) override;
  std::unique_ptr<SnapshotMark> snapshot(const MarkRequest& request) override;

  /// Whether the device marker is built (it may not have been used yet).
  bool device_open() const { return open_.load(std::memory_order_acquire); }

 private:
  /// What the plan asked before its first pause (`watch`, `place_host_threads`).
  struct Asked {
    const RefGraph* graph = nullptr;
    GraphChanges* changes = nullptr;
    std::vector<unsigned> host_cpus;
    bool operator==(const Asked&) const = default;
  };
  /// The starting thread: builds the device marker, hands it what the plan asked.
  void start(MarkerFactory open);
  /// The device marker once the starting thread is done (null if it failed); until
  /// then null, and `ask` records the plan's request in what the thread hands over.
  Marker* device_or_ask(const std::function<void(Asked&)>& ask);
  /// In a pause: the device marker if it is open (joining the starting thread the first
  /// time), null while it starts; rethrows its failure once.
  Marker* device_in_pause();
  /// What the switch adds to the first device pause's figures, or a CPU mark's note.
  std::vector<std::pair<std::string, double>> notes(bool on_device);

  std::string name_;
  std::unique_ptr<Marker> interim_;  // kept, idle, once switched_
  bool switched_ = false;            // a pause has used the device (for good)
  std::unique_ptr<Marker> device_;   // written by the thread before open_, then the pause's
  std::exception_ptr error_;         // the thread's failure, written before open_
  std::atomic<bool> open_{false};    // the thread is done: device_ or error_ is set
  std::mutex mutex_;                 // asked_, and its hand-over to the device marker
  Asked asked_;
  double ready_ms_ = 0;              // process_ms() when the thread was done
  bool device_paused_ = false;       // the last pause marked on the device
  bool reported_switch_ = false;     // the first device pause carried device_ready_ms
  std::uint64_t cpu_marks_ = 0;      // collections marked by interim_
  std::thread thread_;
};

}  // namespace gcvm
