#include "gc/device/driver_teardown.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace gcvm {

namespace {

std::atomic<bool> driver_state{false};
std::atomic<bool> detach_allowed{true};

constexpr std::size_t kKeeperStackBytes = 64 * 1024;

struct Keeper {
  int caller_gone = -1;            // the read end of the pipe whose write end the caller holds
  std::vector<int> files_to_close;  // made by the caller before the clone
};

/// The keeper (driver_teardown.hpp): system calls only.
int keep_driver_state(void* argument) {
  const Keeper& keeper = *static_cast<const Keeper*>(argument);
  setsid();
  for (const int fd : keeper.files_to_close) close(fd);
  char byte = 0;
  for (;;) {
    const ssize_t n = read(keeper.caller_gone, &byte, 1);
    if (n == 0 || (n < 0 && errno != EINTR)) break;
  }
  _exit(0);
}

/// Every open file of this process that is not a character device, but `keep`.
std::vector<int> files_besides_devices(int keep) {
  std::vector<int> fds;
  auto consider = [&](int fd) {
    struct stat st{};
    if (fd != keep && fstat(fd, &st) == 0 && !S_ISCHR(st.st_mode)) fds.push_back(fd);
  };
  if (DIR* dir = opendir("/proc/self/fd")) {
    std::vector<int> listed;
    while (const dirent* entry = readdir(dir)) {
      if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
      listed.push_back(std::atoi(entry->d_name));
    }
    const int own = dirfd(dir);
    closedir(dir);
    for (const int fd : listed)
      if (fd != own) consider(fd);
    return fds;
  }
  const long limit = sysconf(_SC_OPEN_MAX);
  for (int fd = 0; fd < (limit > 0 && limit < 65536 ? limit : 65536); ++fd)
    if (fcntl(fd, F_GETFD) != -1) consider(fd);
  return fds;
}

}  // namespace

void note_driver_state() { driver_state.store(true, std::memory_order_relaxed); }

bool driver_state_noted() { return driver_state.load(std::memory_order_relaxed); }

void set_detach_driver_teardown(bool detach) { detach_allowed.store(detach, std::memory_order_relaxed); }

int leave_process(int status) {
  if (!kDriverTeardownDetaches || !driver_state_noted() || !detach_allowed.load(std::memory_order_relaxed))
    return status;
  std::fflush(nullptr);
  int caller_gone[2];
  if (pipe2(caller_gone, O_CLOEXEC) != 0) return status;
  // Static, and the stack never unmapped: the keeper reads both after the caller is gone.
  static Keeper keeper;
  keeper = Keeper{caller_gone[0], files_besides_devices(caller_gone[0])};
  void* stack = mmap(nullptr, kKeeperStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED ||
      clone(keep_driver_state, static_cast<char*>(stack) + kKeeperStackBytes, CLONE_VM | SIGCHLD, &keeper) == -1) {
    close(caller_gone[0]);
    close(caller_gone[1]);
    return status;
  }
  _exit(status);
}

}  // namespace gcvm
