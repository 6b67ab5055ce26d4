// The corpus of malformed traces, generated from valid ones: every truncation at a
// chunk boundary and at many random offsets, every single-bit flip of a small trace,
// wrong magic and version, impossible numbers, and random payloads behind valid
// checksums. Each must be a TraceError naming a byte offset inside the file; nothing
// may crash, hang or throw anything else.
#include <doctest/doctest.h>

#include <regex>

#include "heapgraph/trace/trace_error.hpp"
#include "heapgraph/trace/varint.hpp"
#include "trace_fixtures.hpp"

using namespace gcvm;
using namespace gcvm::trace;
using gcvm::test::read_trace;

namespace {

/// The error for `bytes`, checked to be one line naming an offset within the file
/// (empty when the trace is valid).
std::string rejection(const std::string& bytes) {
  try {
    read_trace(bytes);
  } catch (const TraceError& e) {
    const std::string what = e.what();
    CHECK(what.find('\n') == std::string::npos);
    CHECK(what.rfind("memory: byte " + std::to_string(e.offset()) + ": ", 0) == 0);
    CHECK(e.offset() <= bytes.size());
    return what;
  }
  return "";
}

std::string small_trace() {
  return gcvm::test::write_trace(gcvm::test::random_trace_events(11, 40), 16);
}

}  // namespace

TEST_CASE("corpus: wrong magic, wrong version, empty and header-only files") {
  const std::string good = small_trace();
  REQUIRE(rejection(good).empty());
  CHECK(rejection("").find("not a gcvm trace") != std::string::npos);
  CHECK(rejection("GCVM").find("not a gcvm trace") != std::string::npos);
  CHECK(rejection("JAVA PROFILE 1.0.2").find("not a gcvm trace") != std::string::npos);
  std::string version = good;
  version[8] = 2;
  CHECK(rejection(version) == "memory: byte 8: unsupported trace version 2 (this gcvm reads version 1)");
  CHECK(rejection(good.substr(0, 10)).find("truncated") != std::string::npos);
  CHECK(rejection(good.substr(0, kFileHeaderBytes)).find("without an end event") != std::string::npos);
}

TEST_CASE("corpus: truncation at every chunk boundary and at random offsets") {
  const std::string good = gcvm::test::write_trace(gcvm::test::random_trace_events(5, 400), 64);
  const auto boundaries = gcvm::test::chunk_offsets(good);
  REQUIRE(boundaries.size() > 20);
  for (std::size_t at : boundaries) {
    CAPTURE(at);
    CHECK(rejection(good.substr(0, at)).find("truncated: the file ends") != std::string::npos);
    CHECK(rejection(good.substr(0, at + 3)).find("truncated: chunk") != std::string::npos);
    CHECK(rejection(good.substr(0, at + kChunkHeaderBytes + 1)).find("truncated: chunk") != std::string::npos);
  }
  SplitMix64 rng(9);
  for (int i = 0; i < 300; ++i) {
    const std::size_t at = rng.below(good.size());
    CAPTURE(at);
    CHECK(rejection(good.substr(0, at)).find(at < kMagic.size() ? "not a gcvm trace" : "truncated") !=
          std::string::npos);
  }
}

TEST_CASE("corpus: every single-bit flip is detected") {
  const std::string good = small_trace();
  for (std::size_t bit = 0; bit < good.size() * 8; ++bit) {
    std::string bad = good;
    bad[bit / 8] ^= static_cast<char>(1 << (bit % 8));
    CAPTURE(bit);
    CHECK(!rejection(bad).empty());
  }
}

TEST_CASE("corpus: a damaged chunk is reported at its own offset") {
  const std::string good = gcvm::test::write_trace(gcvm::test::random_trace_events(5, 400), 64);
  const auto boundaries = gcvm::test::chunk_offsets(good);
  std::string bad = good;
  bad[boundaries[7] + kChunkHeaderBytes + 5] ^= 0x10;
  CHECK(rejection(bad).find("byte " + std::to_string(boundaries[7]) + ": chunk 8 is damaged: checksum") !=
        std::string::npos);
  std::string huge = good;
  huge[boundaries[3] + 3] = 0x7f;  // length 2^30-ish: refused before any allocation
  CHECK(rejection(huge).find("chunk 4 declares an impossible payload length") != std::string::npos);
  CHECK(rejection(good + "x").find("data after the end event") != std::string::npos);
  CHECK(rejection(good + good.substr(kFileHeaderBytes)).find("data after the end event") != std::string::npos);
}

TEST_CASE("corpus: impossible numbers behind valid checksums") {
  auto payload = [](std::initializer_list<std::uint64_t> numbers) {
    std::string p;
    for (std::uint64_t n : numbers) put_uvarint(p, n);
    return gcvm::test::frame_trace_payload(p);
  };
  const auto alloc = static_cast<std::uint64_t>(EventKind::AllocObject);
  const auto ref_array = static_cast<std::uint64_t>(EventKind::AllocRefArray);
  const auto roots = static_cast<std::uint64_t>(EventKind::Roots);
  const auto collect = static_cast<std::uint64_t>(EventKind::Collection);
  CHECK(rejection(payload({9})).find("unknown event tag 9") != std::string::npos);
  CHECK(rejection(payload({alloc, zigzag_encode(-1), 0, 0, 0})).find("impossible allocated id -1") !=
        std::string::npos);
  CHECK(rejection(payload({alloc, zigzag_encode(std::int64_t{1} << 40), 0, 0, 0})).find("impossible allocated id") !=
        std::string::npos);
  CHECK(rejection(payload({alloc, 0, kMaxFields + 1, 0, 0})).find("impossible object shape") != std::string::npos);
  CHECK(rejection(payload({ref_array, 0, kMaxArrayLength + 1, 0})).find("impossible array length") !=
        std::string::npos);
  // A root count of 2^62 with no roots behind it: read, not reserved.
  CHECK(rejection(payload({alloc, 0, 0, 0, 0, roots, std::uint64_t{1} << 62, 0}))
            .find("truncated: the file ends inside an event") != std::string::npos);
  CHECK(rejection(payload({collect, 1000})).find("impossible collection reason length 1000") != std::string::npos);
  CHECK(rejection(payload({collect, 2, 'a', 1})).find("non-printable byte 0x01") != std::string::npos);
  std::string overlong(11, '\xff');
  CHECK(rejection(gcvm::test::frame_trace_payload(std::string(1, '\x01') + overlong))
            .find("longer than 64 bits") != std::string::npos);
}

TEST_CASE("corpus: random payloads behind valid checksums never crash the decoder") {
  SplitMix64 rng(21);
  const std::string valid_payload = small_trace().substr(kFileHeaderBytes);
  for (int i = 0; i < 3000; ++i) {
    std::string p;
    const std::size_t size = 1 + rng.below(64);
    for (std::size_t k = 0; k < size; ++k)
      p.push_back(static_cast<char>(rng.below(3) == 0 ? rng.below(8) : rng.next()));
    const std::string bytes = gcvm::test::frame_trace_payload(p, 1 + rng.below(16));
    std::string error;
    CHECK_NOTHROW(error = rejection(bytes));
  }
}
