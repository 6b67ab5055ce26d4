// leave_process (gc/device/driver_teardown.hpp): a process that noted driver state exits
// at once with its status; whoever reads its output sees the end when it exits; its
// keeper exits after it and is adopted by the nearest subreaper. Each case runs in a
// forked harness process that is the subreaper, so this test process adopts nothing.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string_view>

#include "gc/device/driver_teardown.hpp"

namespace {

using gcvm::leave_process;

// What the harness found, as bits of its exit status.
constexpr int kStatusWrong = 1;    // the process did not exit with the status it expected
constexpr int kOutputWrong = 2;    // its output did not arrive, or did not end
constexpr int kKeeperWrong = 4;    // a keeper was adopted where none belonged, or none where one did
constexpr int kHarnessFailed = 8;  // a system call of the harness failed

/// In the harness: forks the leaving process (note driver state or not, detaching
/// allowed or not; a regular file and /dev/null open besides its output pipe), reads
/// its output to the end, and checks its status and the keeper it leaves.
int harness(bool driver_state, bool detach) {
  if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) return kHarnessFailed;
  int output[2];
  if (pipe(output) != 0) return kHarnessFailed;
  const pid_t leaving = fork();
  if (leaving < 0) return kHarnessFailed;
  if (leaving == 0) {
    close(output[0]);
    open("/dev/null", O_RDONLY);
    FILE* file = tmpfile();
    if (file != nullptr) std::fputs("a file the keeper closes", file);
    if (driver_state) gcvm::note_driver_state();
    gcvm::set_detach_driver_teardown(detach);
    if (write(output[1], "done", 4) != 4) _exit(90);
    _exit(100 + leave_process(7));  // 7 when it detached, 107 when leave_process returned
  }
  close(output[1]);
  int result = 0;
  char text[8] = {};
  std::size_t got = 0;
  for (;;) {  // end of file only once no process holds the write end
    const ssize_t n = read(output[0], text + got, sizeof text - 1 - got);
    if (n > 0) got += static_cast<std::size_t>(n);
    if (n == 0 || (n < 0 && errno != EINTR) || got == sizeof text - 1) break;
  }
  if (std::string_view(text, got) != "done") result |= kOutputWrong;
  int status = 0;
  if (waitpid(leaving, &status, 0) != leaving) return result | kHarnessFailed;
  const bool detached = driver_state && detach && gcvm::kDriverTeardownDetaches;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != (detached ? 7 : 107)) result |= kStatusWrong;
  int adopted = 0;
  for (;;) {
    int keeper_status = 0;
    const pid_t keeper = waitpid(-1, &keeper_status, 0);
    if (keeper < 0) break;  // ECHILD: every adopted process reaped
    ++adopted;
    if (!WIFEXITED(keeper_status) || WEXITSTATUS(keeper_status) != 0) result |= kKeeperWrong;
  }
  if (adopted != (detached ? 1 : 0)) result |= kKeeperWrong;
  return result;
}

int run_harness(bool driver_state, bool detach) {
  std::fflush(nullptr);  // or the leaving process's flush would print this process's buffered output again
  const pid_t pid = fork();
  if (pid == 0) _exit(harness(driver_state, detach));
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return kHarnessFailed;
  return WEXITSTATUS(status);
}

}  // namespace

TEST_CASE("leave_process: with driver state, the process exits at once with its status; its output ends with it; "
          "its keeper exits after it") {
  CHECK(run_harness(true, true) == 0);
}

TEST_CASE("leave_process: without driver state, or with detaching turned off (device-exit=wait), the process "
          "exits as any process does and leaves no keeper") {
  CHECK(run_harness(true, false) == 0);
  // The leaving process is forked from this one: it has driver state if a device test
  // of this process opened a CUDA device before.
  if (gcvm::driver_state_noted())
    MESSAGE("this process has opened a device: the case without driver state is not run");
  else
    CHECK(run_harness(false, true) == 0);
}
