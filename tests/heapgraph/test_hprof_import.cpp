#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>

#include "heapgraph/adjacency_graph.hpp"
#include "heapgraph/import/hprof_importer.hpp"
#include "heapgraph/import/import_error.hpp"
#include "sample_dumps.hpp"

using gcvm::AdjacencyGraph;
using gcvm::ImportOptions;
using gcvm::ImportSummary;
using gcvm::kNoHandle;
using gcvm::SinkHandle;
using gcvm::WeakRefs;
using gcvm::test::HprofWriter;
using gcvm::test::sample_hprof;

namespace {

ImportSummary import(const std::string& bytes, AdjacencyGraph& graph, WeakRefs weak = WeakRefs::Strong) {
  std::istringstream in(bytes);
  ImportOptions options;
  options.weak_refs = weak;
  return gcvm::import_hprof(in, "sample.hprof", graph, options);
}

constexpr SinkHandle N = kNoHandle;

}  // namespace

TEST_CASE("HPROF: every object kind, inherited fields, statics, constant pool, segments, both id sizes") {
  for (unsigned id_size : {4u, 8u}) {
    CAPTURE(id_size);
    AdjacencyGraph g;
    const ImportSummary s = import(sample_hprof(id_size), g);
    CHECK(s.format == "hprof");
    CHECK(s.id_size == id_size);
    REQUIRE(s.objects == 14);
    REQUIRE(g.object_count() == 14);
    // Instance before its class: class, next, base_ref (id not in the dump: dropped).
    CHECK(g.out_edges(0) == std::vector<SinkHandle>{2, 6, N});
    // Class: super, loader, signers, protection domain, constant-pool object, object static.
    CHECK(g.out_edges(1) == std::vector<SinkHandle>{N, 13, N, N, 7, 0});
    CHECK(g.out_edges(2) == std::vector<SinkHandle>{1, N, N, N});
    CHECK(g.out_edges(3) == std::vector<SinkHandle>{N, N, N, N});
    CHECK(g.out_edges(5) == std::vector<SinkHandle>{3, N, N, N});
    CHECK(g.out_edges(6) == std::vector<SinkHandle>{2, N, 0});
    CHECK(g.out_edges(7) == std::vector<SinkHandle>{3});
    // Object array: its class, then the elements (null, a missing id dropped).
    CHECK(g.out_edges(8) == std::vector<SinkHandle>{4, 6, N, N, 9});
    CHECK(g.out_edges(9).empty());
    CHECK(g.out_edges(10) == std::vector<SinkHandle>{5, 11, N});
    CHECK(g.out_edges(12) == std::vector<SinkHandle>{2, 0, N});
    CHECK(s.edges_kept == 20);
    CHECK(s.edges_kept == g.reference_count());
    CHECK(s.edges_dropped == 2);
    CHECK(s.edges_weak == 0);
    // Roots: one of each of the nine kinds; one names a missing id, one is a duplicate.
    CHECK(s.root_records == 9);
    CHECK(s.roots_dropped == 1);
    CHECK(s.roots == 7);
    std::vector<SinkHandle> roots = g.roots();
    std::sort(roots.begin(), roots.end());
    CHECK(roots == std::vector<SinkHandle>{0, 2, 5, 7, 8, 10, 13});
    CHECK(g.reachable_count() == 13);  // all but the garbage Node
    CHECK(!g.reachable()[12]);
    CHECK(s.bytes > 0);
    CHECK(s.bytes_per_object() == doctest::Approx(static_cast<double>(s.bytes) / 14));
    CHECK(s.file_bytes == sample_hprof(id_size).size());
  }
}

TEST_CASE("HPROF: --weak-refs=weak does not follow Reference.referent") {
  AdjacencyGraph g;
  const ImportSummary s = import(sample_hprof(8), g, WeakRefs::Weak);
  CHECK(g.out_edges(10) == std::vector<SinkHandle>{5, N, N});
  CHECK(s.edges_weak == 1);
  CHECK(s.edges_kept == 19);
  CHECK(g.reachable_count() == 12);  // G1 was only reachable through the referent
}

TEST_CASE("HPROF: version 1.0.1 headers are accepted") {
  AdjacencyGraph g;
  CHECK(import(sample_hprof(4, "JAVA PROFILE 1.0.1"), g).objects == 14);
}

TEST_CASE("HPROF: wide objects become reference arrays; all slots survive") {
  HprofWriter w(4);
  std::vector<std::uint64_t> elements;
  for (std::uint64_t i = 0; i < 1000; ++i) elements.push_back(0x100);
  w.begin_record(0x1C);
  w.class_dump(0x100, 0, 0, 0, 0, {}, {}, {});
  w.obj_array(0x200, 0x100, elements);
  w.root(0xFF, 0x200);
  w.end_record();
  w.other_record(0x2C, "");
  AdjacencyGraph g;
  const ImportSummary s = import(w.bytes(), g);
  CHECK(s.objects == 2);
  CHECK(g.out_edges(1).size() == 1001);
  CHECK(s.edges_kept == 1001);
  CHECK(g.reachable_count() == 2);
}

TEST_CASE("HPROF: malformed structure is reported with the file and byte offset") {
  struct Case {
    std::string bytes;
    const char* says;
  };
  HprofWriter bad_id(4);
  std::string wrong_id_size = bad_id.bytes();
  wrong_id_size[19 + 3] = 5;  // identifier size 5
  HprofWriter dup(4);
  dup.begin_record(0x1C);
  dup.class_dump(0x10, 0, 0, 0, 0, {}, {}, {});
  dup.class_dump(0x10, 0, 0, 0, 0, {}, {}, {});
  dup.end_record();
  dup.other_record(0x2C, "");
  HprofWriter no_class(4);
  no_class.begin_record(0x1C);
  no_class.instance(0x20, 0x10, {});
  no_class.end_record();
  no_class.other_record(0x2C, "");
  HprofWriter wrong_size(4);
  wrong_size.begin_record(0x1C);
  wrong_size.class_dump(0x10, 0, 0, 0, 0, {}, {}, {{1, 10}});
  wrong_size.instance(0x20, 0x10, {{4, 1}});
  wrong_size.end_record();
  wrong_size.other_record(0x2C, "");
  HprofWriter bad_tag(4);
  bad_tag.begin_record(0x1C);
  bad_tag.u1(0x42);
  bad_tag.end_record();
  HprofWriter cycle(4);
  cycle.begin_record(0x1C);
  cycle.class_dump(0x10, 0x30, 0, 0, 0, {}, {}, {{1, 10}});
  cycle.class_dump(0x30, 0x10, 0, 0, 0, {}, {}, {});
  cycle.instance(0x20, 0x10, {{10, 1}});
  cycle.end_record();
  cycle.other_record(0x2C, "");
  HprofWriter huge(4);
  huge.begin_record(0x1C);
  huge.u1(0x22), huge.u4(0x20), huge.u4(0), huge.u4(0xFFFFFFFF), huge.u4(0x10);
  huge.end_record();
  const std::string sample = sample_hprof(4);
  for (const auto& c : {
           Case{std::string("JAVA PROFILE 2.0\0\0\0\0\4", 21), "not an HPROF file"},
           Case{wrong_id_size, "identifier size 5"},
           Case{sample.substr(0, sample.size() - 3), "byte "},
           Case{dup.bytes(), "appears twice"},
           Case{no_class.bytes(), "has no CLASS_DUMP"},
           Case{wrong_size.bytes(), "its class 0x10 describes 4"},
           Case{bad_tag.bytes(), "unknown heap dump sub-record tag 0x42"},
           Case{cycle.bytes(), "superclass chain longer than"},
           Case{huge.bytes(), "object array of 4294967295 elements runs past the end"},
       }) {
    CAPTURE(std::string(c.says));
    AdjacencyGraph g;
    std::string message;
    try {
      import(c.bytes, g);
    } catch (const gcvm::ImportError& e) {
      message = e.what();
    }
    CHECK(message.starts_with("sample.hprof: byte "));
    CAPTURE(message);
    CHECK(message.find(c.says) != std::string::npos);
    CHECK(message.find('\n') == std::string::npos);
  }
}
