#include <doctest/doctest.h>

#include "gc/markers/mark_checker.hpp"
#include "gc/markers/serial_marker.hpp"
#include "heap_fixtures.hpp"

using namespace gcvm;

namespace {

struct Expected {
  const char* spec;
  std::uint64_t marked;
  std::uint64_t total;
};

// The expected counts for the papers' microbenchmarks.
constexpr Expected kPaperHeaps[] = {
    {"single", 1, 1},
    {"list:10000", 10000, 10000},
    {"lists:256x10000", 2560000, 2560000},
    {"wide:1000", 1001, 1001},
    {"vp-list", 8192, 131072},
    {"vp-array", 65600, 1049600},
    {"complete:5000:100", 5000, 5000},
};

}  // namespace

TEST_CASE("serial marker marks exactly the reachable objects of every paper heap") {
  for (const auto& e : kPaperHeaps) {
    CAPTURE(e.spec);
    auto built = test::build(e.spec);
    CHECK(built.builder->object_count() == e.total);
    CHECK(built.model.reachable_count() == e.marked);
    SerialMarker marker;
    MarkBitmap marks;
    const auto& roots = built.builder->roots();
    const MarkStats stats = marker.mark({built.heap->graph(), roots, built.heap->blocks().high_water()}, marks);
    CHECK(stats.marked_objects == e.marked);
    CHECK(marks.count() == e.marked);
    CHECK(stats.edges_traversed == built.model.reachable_reference_count());
    CHECK(check_marks(built.heap->graph(), built.heap->blocks(), roots, marks) == "");
    // Handle-by-handle agreement with the independent model.
    const auto reachable = built.model.reachable();
    for (SinkHandle h = 0; h < built.builder->object_count(); ++h)
      REQUIRE(marks.test(built.builder->object(h)) == reachable[h]);
  }
}

TEST_CASE("serial marker on random graphs of many shapes agrees with the model") {
  for (const char* spec : {"rmat:12", "rmat:14:4", "random:5000:0", "random:20000:1", "random:3000:40", "lists:7x3"}) {
    for (std::uint64_t seed : {1ull, 2ull, 3ull}) {
      CAPTURE(spec);
      CAPTURE(seed);
      auto built = test::build(spec, seed);
      SerialMarker marker;
      MarkBitmap marks;
      const MarkStats stats =
          marker.mark({built.heap->graph(), built.builder->roots(), built.heap->blocks().high_water()}, marks);
      CHECK(stats.marked_objects == built.model.reachable_count());
      CHECK(stats.edges_traversed == built.model.reachable_reference_count());
      CHECK(check_marks(built.heap->graph(), built.heap->blocks(), built.builder->roots(), marks) == "");
    }
  }
}

TEST_CASE("null roots are skipped and an empty heap marks nothing") {
  Heap heap;
  SerialMarker marker;
  MarkBitmap marks;
  const std::vector<ObjectId> roots = {kNullRef};
  const auto stats = marker.mark({heap.graph(), roots, heap.blocks().high_water()}, marks);
  CHECK(stats.marked_objects == 0);
  CHECK(marks.block_count() == 0);
}

TEST_CASE("the mark checker catches missing, extra and unallocated marks") {
  auto built = test::build("vp-list");
  const auto& roots = built.builder->roots();
  SerialMarker marker;
  MarkBitmap marks;
  marker.mark({built.heap->graph(), roots, built.heap->blocks().high_water()}, marks);
  const auto& graph = built.heap->graph();
  const auto& blocks = built.heap->blocks();

  MarkBitmap missing = marks;
  missing.words()[block_of(built.builder->object(100))] &= ~(std::uint64_t{1} << slot_of(built.builder->object(100)));
  CHECK(check_marks(graph, blocks, roots, missing).find("references unmarked") != std::string::npos);

  MarkBitmap no_root = marks;
  no_root.words()[block_of(roots[0])] &= ~(std::uint64_t{1} << slot_of(roots[0]));
  CHECK(check_marks(graph, blocks, roots, no_root).find("root") != std::string::npos);

  MarkBitmap floating = marks;
  const ObjectId garbage_tail = built.builder->object(8192 * 2 - 1);  // tail of list 2: nothing after it
  floating.test_and_set(garbage_tail);
  CHECK(check_marks(graph, blocks, roots, floating).find("unreachable") != std::string::npos);

  MarkBitmap too_short;
  too_short.reset(1);
  CHECK(check_marks(graph, blocks, roots, too_short).find("covers") != std::string::npos);
}
