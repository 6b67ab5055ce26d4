#include "gc/util/thread_placement.hpp"

#include <sched.h>

namespace gcvm {

namespace {

std::vector<unsigned> cpus_of(const cpu_set_t& set) {
  std::vector<unsigned> cpus;
  for (unsigned cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  return cpus;
}

const std::vector<unsigned> kProcessCpus = allowed_cpus();

}  // namespace

std::vector<unsigned> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return {};
  return cpus_of(set);
}

const std::vector<unsigned>& process_cpus() { return kProcessCpus; }

void place_thread(pthread_t thread, const std::vector<unsigned>& cpus) {
  if (cpus.empty()) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (const unsigned cpu : cpus)
    if (cpu < CPU_SETSIZE) CPU_SET(cpu, &set);
  pthread_setaffinity_np(thread, sizeof set, &set);
}

ScopedThreadPlacement::ScopedThreadPlacement(const std::vector<unsigned>& cpus)
    : thread_(pthread_self()), before_(allowed_cpus()) {
  place_thread(thread_, cpus);
}

ScopedThreadPlacement::~ScopedThreadPlacement() { place_thread(thread_, before_); }

}  // namespace gcvm
