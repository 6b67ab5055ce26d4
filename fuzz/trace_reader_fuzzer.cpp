// libFuzzer target for the heap trace reader (heapgraph/trace/). Any input must end in
// a complete read or a TraceError; any other exception, crash, leak, hang or large
// allocation is a bug.
//
// The first input byte picks the mode: even = the rest is a whole file (exercises the
// header and chunk checks); odd = the rest is an event payload that the harness frames
// into valid, checksummed chunks (a fuzzer cannot forge CRC-32C, so this is how it
// reaches the event decoder and the consistency checks). Events are fed to the heap
// loader with a sink that only counts, so the loader's paths are covered too.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include "heapgraph/heap_sink.hpp"
#include "heapgraph/trace/crc32c.hpp"
#include "heapgraph/trace/trace_error.hpp"
#include "heapgraph/trace/trace_event.hpp"
#include "heapgraph/trace/trace_heap_loader.hpp"

namespace {

using namespace gcvm;

class CountingSink final : public HeapSink {
 public:
  SinkHandle new_object(std::uint32_t, std::uint32_t) override { return objects_++; }
  SinkHandle new_ref_array(std::uint64_t) override { return objects_++; }
  void store_ref(SinkHandle source, std::uint64_t, SinkHandle target) override {
    if (source >= objects_ || (target != kNoHandle && target >= objects_)) std::abort();
  }
  void add_root(SinkHandle object) override {
    if (object >= objects_) std::abort();
  }

 private:
  SinkHandle objects_ = 0;
};

void put_u32le(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

std::string framed(const std::uint8_t* data, std::size_t size) {
  std::string file(trace::kMagic.begin(), trace::kMagic.end());
  put_u32le(file, trace::kVersion);
  // Chunk sizes vary with the data so events straddle boundaries.
  const std::size_t chunk = size > 0 ? 1 + data[0] % 61 : 1;
  for (std::size_t at = 0; at < size; at += chunk) {
    const auto n = static_cast<std::uint32_t>(std::min(chunk, size - at));
    std::string header;
    put_u32le(header, n);
    put_u32le(header, trace::crc32c(trace::crc32c(0, header.data(), 4), data + at, n));
    file += header;
    file.append(reinterpret_cast<const char*>(data + at), n);
  }
  return file;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string bytes = (data[0] & 1) ? framed(data + 1, size - 1)
                                          : std::string(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    std::istringstream in(bytes);
    trace::TraceReader reader(in, "fuzz");
    CountingSink sink;
    trace::load_trace_heap(reader, sink);
  } catch (const trace::TraceError& e) {
    if (e.offset() > bytes.size()) std::abort();
  }
  return 0;
}
