// Heap-trace benchmarks: CRC-32C rate, writer and reader rates on a
// synthetic event stream shaped like a mutator's (bump allocations, stores near the
// source, periodic root snapshots and collection points). Medians of repeated runs,
// in memory so that disk speed does not enter.
//
//   bench_trace [--quick]
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "bench/median.hpp"
#include "gc/util/stopwatch.hpp"
#include "heapgraph/random.hpp"
#include "heapgraph/trace/crc32c.hpp"
#include "heapgraph/trace/trace_reader.hpp"
#include "heapgraph/trace/trace_writer.hpp"

using namespace gcvm;

using gcvm::bench::median;

namespace {

/// `objects` allocations (1 ref + 1 scalar), one store each to a recent object, a root
/// snapshot of 64 objects and a collection point every 65,536 allocations.
std::string write_events(std::uint64_t objects, double* ms) {
  SplitMix64 rng(1);
  std::ostringstream out;
  const Stopwatch clock;
  trace::TraceWriter w(out, "bench");
  std::vector<ObjectId> roots(64);
  for (ObjectId id = 0; id < objects; ++id) {
    w.allocate_object(id, 1, 1, 12);
    if (id > 0) w.store_ref(id, 0, static_cast<ObjectId>(id - 1 - rng.below(std::min<std::uint64_t>(id, 1000))));
    if ((id & 0xFFFF) == 0xFFFF) {
      for (auto& r : roots) r = static_cast<ObjectId>(rng.below(id + 1));
      w.roots(roots);
      w.collection("explicit");
    }
  }
  w.end();
  *ms = clock.elapsed_ms();
  return out.str();
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const std::uint64_t objects = quick ? 200000 : 4000000;
  const int repeats = quick ? 3 : 5;

  std::string buffer(64 << 20, 'x');
  std::vector<double> crc;
  for (int r = 0; r < repeats; ++r) {
    const Stopwatch clock;
    volatile std::uint32_t sink = trace::crc32c(0, buffer.data(), buffer.size());
    (void)sink;
    crc.push_back(buffer.size() / (clock.elapsed_ms() / 1000) / 1e9);
  }
  fmt::print("{:<40} {:>10.2f} GB/s\n", "crc32c (slicing-by-4)", median(crc));

  std::vector<double> write_rate, read_rate;
  std::string file;
  std::uint64_t events = 0;
  for (int r = 0; r < repeats; ++r) {
    double ms = 0;
    file = write_events(objects, &ms);
    std::istringstream in(file);
    trace::TraceReader reader(in, "bench");
    trace::TraceEvent e;
    events = 0;
    const Stopwatch clock;
    while (reader.next(e)) ++events;
    read_rate.push_back(events / (clock.elapsed_ms() / 1000) / 1e6);
    write_rate.push_back(events / (ms / 1000) / 1e6);
  }
  fmt::print("{:<40} {:>10} events, {:.2f} bytes/event\n", fmt::format("trace of {} objects", objects), events,
             static_cast<double>(file.size()) / static_cast<double>(events));
  fmt::print("{:<40} {:>10.1f} M events/s\n", "write (encode, chunk, checksum)", median(write_rate));
  fmt::print("{:<40} {:>10.1f} M events/s\n", "read (verify, decode, consistency checks)", median(read_rate));
  return 0;
}
