#include "vm/compare/child_run.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <thread>

#include "gc/util/stopwatch.hpp"

extern char** environ;

namespace gcvm::compare {

namespace {

/// Waits, for at most `limit_s`, until every process this one adopted has exited: the
/// keepers to which the runs left their drivers' teardown (gc/device/driver_teardown.hpp).
void reap_adopted(double limit_s) {
  const Stopwatch clock;
  for (;;) {
    const pid_t done = waitpid(-1, nullptr, WNOHANG);
    if (done > 0) continue;
    if (done < 0 && errno != EINTR) return;  // ECHILD: none left
    if (clock.elapsed_ms() > limit_s * 1000) return;
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
}

}  // namespace

ChildRun run_child(const std::vector<std::string>& argv, const std::string& stdout_path,
                   const std::string& stderr_path, double timeout_s) {
  // A run that opened a device exits before its driver's teardown, which its keeper
  // does; as their subreaper this process waits for that teardown after each run, so
  // that it never overlaps the next run's measurement.
  static const bool adopts_keepers = prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
  ChildRun run;
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&files, 1, stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&files, 2, stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  const Stopwatch clock;
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, args[0], &files, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&files);
  if (spawned != 0) {
    run.start_error = std::strerror(spawned);
    return run;
  }
  run.started = true;
  int status = 0;
  rusage usage{};
  for (;;) {
    const pid_t done = wait4(pid, &status, timeout_s > 0 ? WNOHANG : 0, &usage);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) {
      run.start_error = std::string("waiting for the run failed: ") + std::strerror(errno);
      return run;
    }
    if (timeout_s > 0 && clock.elapsed_ms() > timeout_s * 1000 && !run.timed_out) {
      run.timed_out = true;
      kill(pid, SIGKILL);
    }
    if (timeout_s > 0) std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  run.wall_ms = clock.elapsed_ms();
  if (adopts_keepers) reap_adopted(kKeeperReapSeconds);
  auto ms = [](const timeval& t) { return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_usec) / 1e3; };
  run.cpu_ms = ms(usage.ru_utime) + ms(usage.ru_stime);
  run.max_rss_mib = static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux: kilobytes
  if (WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) run.signal = WTERMSIG(status);
  return run;
}

std::string own_executable() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::string("/proc/self/exe") : self.string();
}

}  // namespace gcvm::compare
