// What the host link does for the copy patterns of the device mirror's sync (CUDA
// builds): the same bytes as one copy, as several copies each a driver call, and as
// ranges in cudaMemcpyBatchAsync batches (the sync's direct ranges), from page-locked
// host memory both registered (malloc + cudaHostRegister, as the host graph's arrays)
// and allocated (cudaMallocHost, as the patch buffer); from registered memory also
// with the calls alternating between two streams. Each pattern is timed on the
// device (events around its copies) and on the host (from the first call to the
// stream's end), the median of --reps repetitions after three warm-ups.
//
// Then the first driver call after the host did other work: a batch of one 2 MiB
// copy issued after the host slept, after it spun, after it walked --walk MiB of
// memory (as a pause's first copy after the mutator ran), and after it spun while
// another thread walked that memory (as a pause's first copy from a thread of its
// own, such as the mirror refresher's, while the mutator ran elsewhere), against the
// second call right after it; and the first call 30 µs after a walk with the driver
// warmed meanwhile by this thread or by another one. Host-timed, medians of --reps.
//
//   bench_host_link [--bytes 14680064] [--reps 25] [--walk 256]
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bench/median.hpp"

using gcvm::bench::median;

namespace {

using Clock = std::chrono::steady_clock;

double elapsed_us(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::micro>(to - from).count();
}

void check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  fmt::print(stderr, "bench_host_link: {}: {}\n", what, cudaGetErrorString(status));
  std::exit(1);
}

struct Link {
  cudaStream_t stream = nullptr;
  cudaStream_t side = nullptr;  // the second stream of a two-stream pattern
  char* device = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr, side_done = nullptr;
  int reps = 25;
};

/// Copies `count` ranges of `bytes` each, `stride` apart, from `host` to the same
/// offsets on the device: `per_call` ranges to a cudaMemcpyBatchAsync call, or each
/// range a cudaMemcpyAsync of its own when `per_call` is 0; with `streams` 2 the calls
/// alternate between the link's two streams.
void issue(const Link& link, const char* host, std::size_t count, std::size_t bytes, std::size_t stride,
           std::size_t per_call, int streams = 1) {
  auto stream_of = [&](std::size_t call) { return streams == 2 && call % 2 == 1 ? link.side : link.stream; };
  if (per_call == 0) {
    for (std::size_t i = 0; i < count; ++i)
      check(cudaMemcpyAsync(link.device + i * stride, host + i * stride, bytes, cudaMemcpyHostToDevice, stream_of(i)),
            "cudaMemcpyAsync");
    return;
  }
  std::vector<void*> to(count);
  std::vector<const void*> from(count);
  std::vector<std::size_t> sizes(count, bytes);
  for (std::size_t i = 0; i < count; ++i) {
    to[i] = link.device + i * stride;
    from[i] = host + i * stride;
  }
  cudaMemcpyAttributes attributes{};
  attributes.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
  std::size_t first = 0;
  for (std::size_t i = 0, call = 0; i < count; i += per_call, ++call) {
    const std::size_t n = std::min(per_call, count - i);
    check(cudaMemcpyBatchAsync(to.data() + i, from.data() + i, sizes.data() + i, n, &attributes, &first, 1,
                               stream_of(call)),
          "cudaMemcpyBatchAsync");
  }
}

/// Copies the word at `host` to `device` in a batch of its own.
void issue_one_word(const Link& link, char* device, const char* host) {
  void* to = device;
  const void* from = host;
  std::size_t bytes = sizeof(std::uint32_t);
  cudaMemcpyAttributes attributes{};
  attributes.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
  std::size_t first = 0;
  check(cudaMemcpyBatchAsync(&to, &from, &bytes, 1, &attributes, &first, 1, link.stream), "cudaMemcpyBatchAsync");
}

void pattern(const Link& link, const char* memory, const char* host, const std::string& name, std::size_t count,
             std::size_t bytes, std::size_t stride, std::size_t per_call, int streams = 1) {
  std::vector<double> device_ms, host_ms;
  for (int rep = 0; rep < link.reps + 3; ++rep) {
    check(cudaStreamSynchronize(link.stream), "cudaStreamSynchronize");
    const auto begin = Clock::now();
    check(cudaEventRecord(link.start, link.stream), "cudaEventRecord");
    if (streams == 2) check(cudaStreamWaitEvent(link.side, link.start), "cudaStreamWaitEvent");
    issue(link, host, count, bytes, stride, per_call, streams);
    if (streams == 2) {
      check(cudaEventRecord(link.side_done, link.side), "cudaEventRecord");
      check(cudaStreamWaitEvent(link.stream, link.side_done), "cudaStreamWaitEvent");
    }
    check(cudaEventRecord(link.stop, link.stream), "cudaEventRecord");
    check(cudaStreamSynchronize(link.stream), "cudaStreamSynchronize");
    const double host_elapsed = elapsed_us(begin, Clock::now()) / 1e3;
    float device_elapsed = 0;
    check(cudaEventElapsedTime(&device_elapsed, link.start, link.stop), "cudaEventElapsedTime");
    if (rep < 3) continue;
    device_ms.push_back(device_elapsed);
    host_ms.push_back(host_elapsed);
  }
  const double total = static_cast<double>(count) * static_cast<double>(bytes);
  const std::size_t calls = per_call == 0 ? count : (count + per_call - 1) / per_call;
  fmt::print("{:<10} {:<42} {:>6} {:>6} {:>9.1f} {:>10.3f} {:>7.1f} {:>10.3f} {:>7.1f}\n", memory, name, count, calls,
             total / 1e6, median(device_ms), total / median(device_ms) / 1e6, median(host_ms),
             total / median(host_ms) / 1e6);
}

volatile std::uint64_t sink;

/// Walks `junk`, touching a byte of every cache line.
void walk(std::vector<char>& junk) {
  std::uint64_t x = 0;
  for (std::size_t i = 0; i < junk.size(); i += 64) x += static_cast<unsigned char>(++junk[i]);
  sink = x;
}

/// The host's work before a first call: 0 sleeps 2 ms, 1 spins 2 ms, 2 walks `junk`,
/// 3 spins while another thread walks it.
void host_work(int kind, std::vector<char>& junk) {
  if (kind == 0) std::this_thread::sleep_for(std::chrono::milliseconds{2});
  if (kind == 1) {
    const auto begin = Clock::now();
    std::uint64_t x = 1;
    while (elapsed_us(begin, Clock::now()) < 2000) x = x * 6364136223846793005ull + 1;
    sink = x;
  }
  if (kind == 2) walk(junk);
  if (kind == 3) {
    std::atomic<bool> walked{false};
    std::thread walker([&] {
      walk(junk);
      walked.store(true, std::memory_order_release);
    });
    while (!walked.load(std::memory_order_acquire)) {
    }
    walker.join();
  }
}

/// The first call after the host walked `junk`, issued 30 µs after the walk (as a
/// sync's first batch follows its first planning), when nothing warmed the driver
/// meanwhile, when this thread made a one-word copy first, and when another thread
/// (spinning until then) made a cudaStreamQuery or a one-word copy meanwhile.
void first_call_warmed(const Link& link, const char* registered, std::size_t span, std::vector<char>& junk) {
  enum Warm { kNone, kOwnCopy, kOtherQuery, kOtherCopy };
  char* scratch = link.device + span - 64;  // a word no pattern copies to
  auto one_word = [&] { issue_one_word(link, scratch, registered); };
  std::atomic<int> order{kNone};
  std::atomic<bool> ordered{false}, quit{false};
  std::atomic<double> other_us{0};
  std::thread other([&] {
    check(cudaSetDevice(0), "cudaSetDevice");
    while (!quit.load(std::memory_order_acquire)) {
      if (!ordered.load(std::memory_order_acquire)) continue;
      const auto t0 = Clock::now();
      if (order.load() == kOtherQuery) cudaStreamQuery(link.stream);
      if (order.load() == kOtherCopy) one_word();
      other_us.store(elapsed_us(t0, Clock::now()));
      ordered.store(false, std::memory_order_release);
    }
  });
  fmt::print("\n{:<44} {:>14} {:>14}\n", "walked, then 30 us, then the first call", "first call us", "warm-up us");
  const char* names[] = {"nothing warmed", "this thread copied a word first", "another thread queried the stream",
                         "another thread copied a word"};
  for (const Warm warm : {kNone, kOwnCopy, kOtherQuery, kOtherCopy}) {
    std::vector<double> first, warm_up;
    for (int rep = 0; rep < link.reps; ++rep) {
      check(cudaStreamSynchronize(link.stream), "cudaStreamSynchronize");
      walk(junk);
      const auto t0 = Clock::now();
      if (warm == kOtherQuery || warm == kOtherCopy) {
        order.store(warm);
        ordered.store(true, std::memory_order_release);
      }
      if (warm == kOwnCopy) one_word();
      const double own_us = elapsed_us(t0, Clock::now());
      while (elapsed_us(t0, Clock::now()) < 30) {
      }
      const auto t1 = Clock::now();
      issue(link, registered, 1, std::size_t{2} << 20, 0, 1);
      first.push_back(elapsed_us(t1, Clock::now()));
      while (ordered.load(std::memory_order_acquire)) {
      }
      warm_up.push_back(warm == kOwnCopy ? own_us : warm == kNone ? 0.0 : other_us.load());
    }
    fmt::print("{:<44} {:>14.1f} {:>14.1f}\n", names[warm], median(first), median(warm_up));
  }
  quit.store(true, std::memory_order_release);
  other.join();
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t bytes = std::size_t{14} << 20;
  int reps = 25;
  std::size_t walk_mib = 256;
  CLI::App app{"Host-to-device copies in the patterns of the mirror's sync, and a first driver call's cost"};
  app.add_option("--bytes", bytes, "Bytes each pattern copies (rounded down to whole 64 KiB ranges)")
      ->check(CLI::Range(std::size_t{1} << 20, std::size_t{1} << 30));
  app.add_option("--reps", reps, "Repetitions per pattern (medians)")->check(CLI::Range(1, 1000));
  app.add_option("--walk", walk_mib, "MiB of memory walked before a cold first call")->check(CLI::Range(1, 4096));
  CLI11_PARSE(app, argc, argv);

  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    fmt::print(stderr, "bench_host_link: no CUDA device\n");
    return 1;
  }
  const std::size_t range64 = std::size_t{64} << 10, range256 = std::size_t{256} << 10;
  bytes = bytes / range64 * range64;
  // Room for the patterns' strides (a gap of a quarter range after every range) and for
  // the first-call probe's two 2 MiB copies, 4 MiB apart.
  const std::size_t span = std::max(bytes + bytes / 4 + range256, std::size_t{6} << 20);

  Link link;
  link.reps = reps;
  check(cudaSetDevice(0), "cudaSetDevice");
  check(cudaStreamCreateWithFlags(&link.stream, cudaStreamNonBlocking), "cudaStreamCreate");
  check(cudaEventCreate(&link.start), "cudaEventCreate");
  check(cudaEventCreate(&link.stop), "cudaEventCreate");
  check(cudaStreamCreateWithFlags(&link.side, cudaStreamNonBlocking), "cudaStreamCreate");
  check(cudaEventCreateWithFlags(&link.side_done, cudaEventDisableTiming), "cudaEventCreate");
  check(cudaMalloc(reinterpret_cast<void**>(&link.device), span), "cudaMalloc");
  char* registered = static_cast<char*>(std::aligned_alloc(4096, (span + 4095) / 4096 * 4096));
  if (registered == nullptr) {
    fmt::print(stderr, "bench_host_link: out of host memory\n");
    return 1;
  }
  std::memset(registered, 1, span);
  check(cudaHostRegister(registered, span, cudaHostRegisterDefault), "cudaHostRegister");
  char* allocated = nullptr;
  check(cudaMallocHost(reinterpret_cast<void**>(&allocated), span), "cudaMallocHost");
  std::memset(allocated, 1, span);

  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  fmt::print("# {}, {:.1f} MB a pattern, medians of {}\n", prop.name, static_cast<double>(bytes) / 1e6, reps);
  fmt::print("{:<10} {:<42} {:>6} {:>6} {:>9} {:>10} {:>7} {:>10} {:>7}\n", "memory", "pattern", "copies", "calls",
             "MB", "device ms", "GB/s", "host ms", "GB/s");
  const std::size_t sevenths = bytes / 7 / range64 * range64;
  for (const auto& [memory, host] : {std::pair{"registered", registered}, std::pair{"allocated", allocated}}) {
    pattern(link, memory, host, "one copy", 1, bytes, 0, 0);
    pattern(link, memory, host, "7 copies, each a call", 7, sevenths, sevenths + range64, 0);
    pattern(link, memory, host, "7 copies, one batch", 7, sevenths, sevenths + range64, 7);
    const std::size_t n256 = bytes / range256, n64 = bytes / range64;
    pattern(link, memory, host, "256 KiB ranges, each a call", n256, range256, range256 + range64, 0);
    pattern(link, memory, host, "256 KiB ranges, batches of 8", n256, range256, range256 + range64, 8);
    pattern(link, memory, host, "256 KiB ranges, one batch", n256, range256, range256 + range64, n256);
    pattern(link, memory, host, "64 KiB ranges, each a call", n64, range64, range64 + range64 / 4, 0);
    pattern(link, memory, host, "64 KiB ranges, one batch", n64, range64, range64 + range64 / 4, n64);
    if (memory != std::string("registered")) continue;
    // The same over two streams, the calls alternating: one stream's copy setup under
    // the other's transfer.
    pattern(link, memory, host, "7 copies, each a call, 2 streams", 7, sevenths, sevenths + range64, 0, 2);
    for (const std::size_t per_call : {std::size_t{4}, std::size_t{16}})
      pattern(link, memory, host, fmt::format("256 KiB ranges, batches of {}", per_call), n256, range256,
              range256 + range64, per_call);
    for (const std::size_t per_call : {std::size_t{4}, std::size_t{8}, (n256 + 1) / 2})
      pattern(link, memory, host, fmt::format("256 KiB ranges, batches of {}, 2 streams", per_call), n256, range256,
              range256 + range64, per_call, 2);
    pattern(link, memory, host, "256 KiB ranges, each a call, 2 streams", n256, range256, range256 + range64, 0, 2);
    pattern(link, memory, host, "64 KiB ranges, batches of 16, 2 streams", n64, range64, range64 + range64 / 4, 16, 2);
    pattern(link, memory, host, fmt::format("64 KiB ranges, batches of {}, 2 streams", (n64 + 1) / 2), n64, range64,
            range64 + range64 / 4, (n64 + 1) / 2, 2);
  }

  std::vector<char> junk(walk_mib << 20, 1);
  fmt::print("\n{:<34} {:>14} {:>14}\n", "before the first call", "first call us", "second call us");
  for (int kind = 0; kind < 4; ++kind) {
    std::vector<double> first, second;
    for (int rep = 0; rep < reps; ++rep) {
      check(cudaStreamSynchronize(link.stream), "cudaStreamSynchronize");
      host_work(kind, junk);
      const auto t0 = Clock::now();
      issue(link, registered, 1, std::size_t{2} << 20, 0, 1);
      const auto t1 = Clock::now();
      issue(link, registered + (std::size_t{4} << 20), 1, std::size_t{2} << 20, 0, 1);
      const auto t2 = Clock::now();
      first.push_back(elapsed_us(t0, t1));
      second.push_back(elapsed_us(t1, t2));
    }
    const std::string what = kind == 0   ? std::string("slept 2 ms")
                             : kind == 1 ? std::string("spun 2 ms")
                             : kind == 2 ? fmt::format("walked {} MiB", walk_mib)
                                         : fmt::format("spun, another walked {} MiB", walk_mib);
    fmt::print("{:<34} {:>14.1f} {:>14.1f}\n", what, median(first), median(second));
  }
  first_call_warmed(link, registered, span, junk);
  check(cudaStreamSynchronize(link.stream), "cudaStreamSynchronize");
  cudaHostUnregister(registered);
  std::free(registered);
  cudaFreeHost(allocated);
  cudaFree(link.device);
  return 0;
}
