// One run of a configuration: the gcvm binary itself started as a child process, so
// that a configuration that crashes, hangs or exits with an error cannot take
// `gcvm compare` down. Its stdout and stderr go to files; the parent measures its wall
// time, and wait4 gives its CPU time and peak resident set. A run that opened a device
// leaves its driver's teardown to a keeper process (gc/device/driver_teardown.hpp):
// `gcvm compare` adopts the keepers (a subreaper) and waits for them after each run,
// outside the run's wall time, so that no teardown overlaps the next run.
#pragma once

#include <string>
#include <vector>

namespace gcvm::compare {

struct ChildRun {
  bool started = false;
  int exit_code = -1;   // when it exited
  int signal = 0;       // when a signal ended it
  bool timed_out = false;
  double wall_ms = 0;
  double cpu_ms = 0;    // user + system
  double max_rss_mib = 0;
  std::string start_error;  // why it could not be started
};

/// How long a run's keepers may take to exit before compare goes on without them.
inline constexpr double kKeeperReapSeconds = 10;

/// Runs `argv` (argv[0] a path) with stdin from /dev/null, stdout into `stdout_path`
/// and stderr into `stderr_path`; kills it after `timeout_s` seconds (0: no limit).
ChildRun run_child(const std::vector<std::string>& argv, const std::string& stdout_path,
                   const std::string& stderr_path, double timeout_s);

/// The path of the running executable (/proc/self/exe resolved).
std::string own_executable();

}  // namespace gcvm::compare
