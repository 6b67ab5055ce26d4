// Polling a condition another thread will make true, for a bounded time: the wait of
// a thread that must react within a microsecond (a futex wake-up costs tens of them on
// the GPU hosts' virtual cores), spent in the CPU's spin-wait hint.
#pragma once

#include <chrono>

namespace gcvm {

/// Polls `done` for about `microseconds`; true as soon as it holds.
template <typename F>
bool spin_until(F&& done, std::chrono::microseconds microseconds) {
  const auto until = std::chrono::steady_clock::now() + microseconds;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
    if (std::chrono::steady_clock::now() >= until) return done();
  }
}

}  // namespace gcvm
