// A corpus of malformed heap files generated from the valid samples: truncations at
// every offset, a bit flipped in every byte, the other identifier size, records and
// counts forged to huge values, wrong formats. Every import must either succeed or
// throw ImportError with one line naming the file and a byte offset inside it —
// never another exception, a crash (run under ASan in the debug preset) or a hang.
#include <doctest/doctest.h>

#include <random>
#include <sstream>

#include "heapgraph/adjacency_graph.hpp"
#include "heapgraph/import/heap_format.hpp"
#include "heapgraph/import/hprof_importer.hpp"
#include "heapgraph/import/import_error.hpp"
#include "heapgraph/import/v8_importer.hpp"
#include "sample_dumps.hpp"

namespace {

enum class Outcome { Imported, Rejected };

/// Imports `bytes` as `format`; checks the error contract; says what happened.
Outcome import_checked(const std::string& bytes, gcvm::HeapFormat format) {
  const std::string name = "corpus.bin";
  gcvm::AdjacencyGraph graph;
  std::istringstream in(bytes);
  try {
    if (format == gcvm::HeapFormat::Hprof)
      gcvm::import_hprof(in, name, graph);
    else
      gcvm::import_v8_snapshot(in, name, graph);
    return Outcome::Imported;
  } catch (const gcvm::ImportError& e) {
    const std::string message = e.what();
    CAPTURE(message);
    CHECK(message.starts_with(name + ": byte "));
    CHECK(message.find('\n') == std::string::npos);
    CHECK(e.offset() <= bytes.size());
    return Outcome::Rejected;
  }
}

struct Tally {
  int imported = 0, rejected = 0;
  void add(Outcome o) { (o == Outcome::Imported ? imported : rejected) += 1; }
};

void run_corpus(const std::string& valid, gcvm::HeapFormat format, Tally& truncated, Tally& flipped) {
  REQUIRE(import_checked(valid, format) == Outcome::Imported);
  for (std::size_t cut = 0; cut < valid.size(); ++cut) truncated.add(import_checked(valid.substr(0, cut), format));
  std::mt19937 random(7);
  for (std::size_t at = 0; at < valid.size(); ++at) {
    std::string bad = valid;
    bad[at] = static_cast<char>(bad[at] ^ (1 << (random() % 8)));
    flipped.add(import_checked(bad, format));
  }
}

}  // namespace

TEST_CASE("malformed HPROF corpus: truncations, bit flips, id sizes, huge lengths") {
  for (unsigned id_size : {4u, 8u}) {
    CAPTURE(id_size);
    const std::string valid = gcvm::test::sample_hprof(id_size);
    Tally truncated, flipped;
    run_corpus(valid, gcvm::HeapFormat::Hprof, truncated, flipped);
    CHECK(truncated.imported == 0);  // every proper prefix is cut inside a record or the header
    CHECK(truncated.rejected == static_cast<int>(valid.size()));
    CHECK(flipped.rejected > 0);
    MESSAGE("HPROF id size " << id_size << ": " << valid.size() << " truncations rejected; bit flips: "
                             << flipped.rejected << " rejected, " << flipped.imported << " still valid");

    // The other identifier size: every field shifts, the parse must fail cleanly.
    std::string other = valid;
    other[19 + 3] = static_cast<char>(id_size == 4 ? 8 : 4);
    CHECK(import_checked(other, gcvm::HeapFormat::Hprof) == Outcome::Rejected);

    // Every aligned 4 bytes forged to 0xFFFFFFFF or 0x7FFFFFFF: record lengths, counts, array lengths.
    for (std::size_t at = 23; at + 4 <= valid.size(); ++at)
      for (char high : {'\xff', '\x7f'}) {
        std::string huge = valid;
        huge[at] = high, huge[at + 1] = huge[at + 2] = huge[at + 3] = '\xff';
        import_checked(huge, gcvm::HeapFormat::Hprof);
      }
  }
}

TEST_CASE("malformed V8 corpus: truncations, bit flips, forged numbers") {
  const std::string valid = gcvm::test::sample_v8();
  Tally truncated, flipped;
  run_corpus(valid, gcvm::HeapFormat::V8Snapshot, truncated, flipped);
  CHECK(truncated.imported <= 1);  // only the cut of the final newline may still parse
  CHECK(flipped.rejected > 0);
  MESSAGE("V8: truncations " << truncated.rejected << " rejected; bit flips: " << flipped.rejected << " rejected, "
                             << flipped.imported << " still valid");
  // Every number replaced by a huge one.
  for (std::size_t at = 0; at < valid.size(); ++at)
    if (std::isdigit(static_cast<unsigned char>(valid[at])) && !std::isdigit(static_cast<unsigned char>(valid[at - 1]))) {
      for (const char* big : {"4294967295", "18446744073709551615", "99999999999999999999999", "1e300"}) {
        std::string forged = valid;
        forged.insert(at, big);
        import_checked(forged, gcvm::HeapFormat::V8Snapshot);
      }
    }
  // Deep nesting and other shapes.
  for (const std::string& text : {std::string(100000, '[') + std::string(100000, ']'),
                                  "{\"snapshot\":" + std::string(10000, '[') + std::string(10000, ']') + "}",
                                  std::string("{\"nodes\":[1,2,3]}"), std::string("{}"), std::string("")})
    CHECK(import_checked(text, gcvm::HeapFormat::V8Snapshot) == Outcome::Rejected);
}

TEST_CASE("a file of another format is rejected at byte 0 by the detector") {
  for (const std::string& text : {std::string("PK\x03\x04zip"), std::string("\x1f\x8b gzip"), std::string("hello")}) {
    std::string message;
    try {
      gcvm::detect_heap_format(text, "x.bin");
    } catch (const gcvm::ImportError& e) {
      message = e.what();
    }
    CHECK(message.starts_with("x.bin: byte 0: not a gcvm trace"));
  }
}

TEST_CASE("bytes of the file never break the one-line message") {
  std::string header = gcvm::test::sample_hprof(4);
  header[0] = '\n';
  header[5] = '\r';
  CHECK(import_checked(header, gcvm::HeapFormat::Hprof) == Outcome::Rejected);
  CHECK(import_checked("{\"snapshot\":\n\x01\x02\n}", gcvm::HeapFormat::V8Snapshot) == Outcome::Rejected);
}
