// Wakes a device marker's sweep pool shortly before the pause that sweeps on it, so
// that its threads are running when the sweep begins. The pool's threads sleep
// between pauses (the device marks while the host's cores are idle); a sleeping thread
// of the GPU hosts' virtual machines took 0.1-2 ms to run after its wake-up, longer
// than a warm device pause's 0.25 ms from its start to its sweep, so a wake-up in the
// pause (MarkRequest::on_device_busy) found 6-11 of 15 threads at the sweep.
//
// Invariants:
// - The waker only wakes the pool (ThreadPool::wake: its workers poll for a while and
//   sleep again); it never runs a job on it, so the pause's jobs are unchanged and a
//   wake-up that comes too early or not at all costs CPU time, never a wrong heap.
// - The wake-up comes from the mutator's thread, in the allocation that grows the heap
//   past the armed level (Heap::watch_used_bytes), never during a pause: a pause's
//   start disarms the watch, its end arms the next one. Only the pool's jobs run in
//   pauses, so a wake-up never meets a job.
// - The level is the last pause's starting heap less a lead in bytes: the heap's growth
//   in kTargetLeadMs at the mutator's rate before the first pause (from the waker's
//   making, with the plan), then, pause by pause, scaled by how far the wake-up's
//   measured lead missed kTargetLeadMs (by at most 2x a pause; doubled when no wake-up
//   came) and kept within half a cycle's growth. So the second pause is the first one
//   woken ahead (a program of two collections has one warm pause).
#pragma once

#include <cstdint>
#include <functional>

#include "gc/heap/heap.hpp"
#include "gc/util/thread_pool.hpp"

namespace gcvm {

class SweepPoolWaker {
 public:
  /// How long before a pause the pool should be woken: its slowest threads' wake-up
  /// on the GPU hosts, with a margin.
  static constexpr double kTargetLeadMs = 2.0;
  /// The longest the woken threads poll (then they sleep; the pause wakes them again).
  static constexpr double kMaxPollMs = 20.0;

  /// `clock` reads milliseconds on the clock of the pauses' start and end times.
  SweepPoolWaker(Heap& heap, ThreadPool& pool, std::function<double()> clock);
  /// Disarms the heap's watch, which calls back into this waker.
  ~SweepPoolWaker();
  SweepPoolWaker(const SweepPoolWaker&) = delete;
  SweepPoolWaker& operator=(const SweepPoolWaker&) = delete;

  /// A pause starts at `now_ms` with `used_bytes` in the heap: disarms the watch and
  /// learns from this cycle's wake-up. Returns how long before `now_ms` the pool was
  /// woken, or -1 if it was not this cycle.
  double pause_started(double now_ms, std::uint64_t used_bytes);
  /// The pause that started at `started_bytes` ends at `now_ms` with `used_bytes` left,
  /// its mark having taken `mark_ms`: arms the wake-up of the next one (when `sweeps`,
  /// the pool being the one the next pause will sweep on; otherwise nothing is armed).
  void pause_ended(double now_ms, std::uint64_t started_bytes, std::uint64_t used_bytes, double mark_ms,
                   bool sweeps);

  /// The lead in bytes of heap growth (0 before it is known).
  std::uint64_t lead_bytes() const { return lead_bytes_; }
  /// The used bytes at which the armed wake-up fires (0 when nothing is armed).
  std::uint64_t armed_bytes() const { return armed_bytes_; }

 private:
  void woken();

  Heap& heap_;
  ThreadPool& pool_;
  std::function<double()> clock_;
  double last_end_ms_;                // the last pause's end (the waker's making before the first)
  std::uint64_t last_end_bytes_;      // the heap the last pause left (or the waker found)
  std::uint64_t lead_bytes_ = 0;
  std::uint64_t armed_bytes_ = 0;
  double woken_ms_ = -1;              // this cycle's wake-up; -1 before it
  unsigned poll_microseconds_ = 0;    // how long the armed wake-up's threads poll
};

}  // namespace gcvm
