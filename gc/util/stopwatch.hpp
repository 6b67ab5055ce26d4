// Timing for statistics, in milliseconds as double: wall-clock intervals (steady
// clock), the process clock every collection's start time is read on, and the CPU
// time of the whole process (every thread).
#pragma once

#include <time.h>

#include <chrono>

namespace gcvm {

class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  double elapsed_ms() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

/// The steady clock's reading when the process started (static initialization).
inline const std::chrono::steady_clock::time_point kProcessEpoch = std::chrono::steady_clock::now();

/// Milliseconds since the process started: the time base of collection start times
/// and of a run's elapsed time in the statistics, so a pause timeline needs no offset.
inline double process_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - kProcessEpoch).count();
}

/// CPU time the whole process (all its threads) has used, in milliseconds.
inline double process_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

/// CPU time the calling thread has used, in milliseconds.
inline double thread_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

}  // namespace gcvm
