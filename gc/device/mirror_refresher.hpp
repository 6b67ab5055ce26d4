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
// stops within 16,384 entries and hands what it planned to the pause's sync
// (GraphMirror::refresh), so the pause waits at most for that much planning or one
// pass's upload, and sends the stopped pass's changes without planning them again. A
// device error on the thread ends refreshing; `stop` rethrows it, so the marker
// handles it as any device error of its own.
//
// The pause's device work on this thread (`stop_and_run`): a stop-the-world mark stops
// refreshing and hands its whole device side (the sync, the launches, the reads) to
// this thread, and the pause's thread waits for it, yielding its core in a loop (a
// sleep would add its own wake-up to the pause). This thread made the refreshes'
// driver calls (a patch's copy and launch every interval while the program changes
// the graph), so its core's caches hold the driver's launch path; the pause's thread
// ran the program, whose allocation pushed that state out of every cache. On
// the H100 host two launches took 55-69 us from a thread that had just written
// 256 MiB and 17 us from a thread that launched a kernel every 100 us (a small CUDA
// program); a pause's first CUDA calls took 47-64 us in an instrumented gpu-bfs.
// Such a pause's work is a pass like any other: the thread resumes refreshing only
// when `resume` is called again.
//
// Between passes the thread polls (spins on the stop flag until the next pass is due)
// or sleeps, as the markers' `refresh-wait=` says: `auto` (the default) polls on hosts
// of kPollMinThreads hardware threads or more and sleeps on smaller ones. A sleeping
// thread woken for a pause's work added 15-25 us to the H100 hosts' pauses (a futex
// wake-up of a virtual core); a polling one keeps a core while the program runs.
// While refreshing is stopped (in a pause, or after `stop`) it sleeps.
//
// Thread-safety: `resume`, `stop` and `stop_and_run` may be called from any thread,
// never at once. Between a stop and the next `resume` the refresher touches neither
// the mirror, the backend nor the graph, except inside `stop_and_run`'s job.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>

#include "gc/device/device_backend.hpp"
#include "gc/device/graph_mirror.hpp"
#include "gc/util/thread_placement.hpp"

namespace gcvm {

/// How the refresher's thread waits between passes (see above).
enum class RefreshWait { Auto, Poll, Sleep };

class MirrorRefresher {
 public:
  /// On the H100, GCBench's and binary-trees' warm pauses were 7-15% shorter with
  /// 100 us than with 1 ms (the pause's patch 8-19 KB against 57-107 KB), and their run
  /// times no longer: a pass that finds nothing costs a scan of the summary bits.
  static constexpr std::chrono::microseconds kDefaultInterval{100};
  /// The shortest and longest intervals `parse_interval` accepts.
  static constexpr std::chrono::microseconds kMinInterval{10};
  static constexpr std::chrono::microseconds kMaxInterval{10'000'000};
  /// With RefreshWait::Auto, hosts with this many hardware threads or more poll
  /// between passes (see above).
  static constexpr unsigned kPollMinThreads = 8;

  /// The value of a marker's `refresh=` option: `on` (the default interval), `off`
  /// (zero: no refresher) or an interval in microseconds, kMinInterval..kMaxInterval;
  /// nothing for anything else.
  static std::optional<std::chrono::microseconds> parse_interval(std::string_view value);
  /// The value of a marker's `refresh-wait=` option: auto, poll or sleep; nothing for
  /// anything else.
  static std::optional<RefreshWait> parse_wait(std::string_view value);
  /// Whether a refresher told `wait` polls on a host of `hardware_threads`.
  static constexpr bool polls(RefreshWait wait, unsigned hardware_threads) {
    return wait == RefreshWait::Poll || (wait == RefreshWait::Auto && hardware_threads >= kPollMinThreads);
  }

  MirrorRefresher(DeviceBackend& backend, GraphMirror& mirror, std::chrono::microseconds interval = kDefaultInterval,
                  RefreshWait wait = RefreshWait::Auto);
  ~MirrorRefresher();
  MirrorRefresher(const MirrorRefresher&) = delete;
  MirrorRefresher& operator=(const MirrorRefresher&) = delete;

  /// Starts refreshing the mirror from `graph` (its change record) until `stop`.
  void resume(const RefGraph& graph, GraphChanges& changes);
  /// Lets the thread run only on `cpus` (gc/util/thread_placement.hpp).
  void place(const std::vector<unsigned>& cpus) { place_thread(thread_.native_handle(), cpus); }
  /// Stops refreshing (see above) and returns what the refreshes sent since the last
  /// `stop`; rethrows a device error the thread met.
  MirrorRefreshStats stop();
  /// Stops refreshing as `stop` does, then runs `job` on the refresher's thread and
  /// returns when it has returned, rethrowing what it threw; the caller runs
  /// `alongside` (if any; it must not throw) meanwhile, then yields its core until the
  /// job is done. A device error the thread met before is rethrown without running
  /// either.
  MirrorRefreshStats stop_and_run(const std::function<void()>& job, const std::function<void()>& alongside = {});

 private:
  void run();
  /// Runs the job `stop_and_run` left, with `lock` released meanwhile.
  void run_job(std::unique_lock<std::mutex>& lock);
  /// The thread's first driver call makes the backend current on it.
  void make_current();

  DeviceBackend& backend_;
  GraphMirror& mirror_;
  const std::chrono::microseconds interval_;
  const bool polls_;
  std::mutex mutex_;
  std::condition_variable wake_;   // the thread: resume, stop, quit
  std::condition_variable idle_;   // stop: the pass in flight ended
  const RefGraph* graph_ = nullptr;
  GraphChanges* changes_ = nullptr;
  bool refreshing_ = false;
  bool in_pass_ = false;
  bool quit_ = false;
  bool made_current_ = false;                   // the refresher's thread only
  const std::function<void()>* job_ = nullptr;  // stop_and_run's, until the thread takes it
  // What the thread hands back with a job's end (job_done_), written by it alone
  // between taking the job and that release, read by stop_and_run after it.
  MirrorRefreshStats job_stats_;
  std::exception_ptr job_error_;
  std::atomic<bool> job_done_{false};
  std::atomic<bool> stopping_{false};
  MirrorRefreshStats stats_;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace gcvm
