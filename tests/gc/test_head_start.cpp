// The host's head start (gc/markers/head_start.hpp): on every shape, what it leaves
// keeps the header's invariants, so that a device mark from its frontier with its
// scanned objects marked equals a mark from the roots.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <unordered_set>
#include <vector>

#include "gc/markers/head_start.hpp"
#include "gc/markers/serial_marker.hpp"
#include "heap_fixtures.hpp"

using namespace gcvm;

namespace {

/// Checks the header's invariants of `walked` against the serial marker's marks.
void check_invariants(const RefGraph& graph, const MarkRequest& request, const HeadStartLimits& limits,
                      const HeadStart& walked) {
  MarkBitmap reachable;
  SerialMarker().mark(request, reachable);
  std::unordered_set<ObjectId> marked;
  for (const auto* part : {&walked.scanned, &walked.frontier})
    for (const ObjectId id : *part) {
      CHECK(id != kNullRef);
      CHECK(marked.insert(id).second);  // disjoint, no duplicates
      CHECK(reachable.test(id));
    }
  std::uint64_t references = 0;
  for (const ObjectId v : walked.scanned)
    for (const ObjectId target : graph.out_edges(v)) {
      if (target == kNullRef) continue;
      ++references;
      CHECK(marked.contains(target));  // closed: scanning the frontier finishes the mark
    }
  CHECK(references == walked.references);
  CHECK(walked.scanned.size() <= limits.max_objects);
  if (walked.levels == 0) {
    CHECK(walked.scanned.empty());
    CHECK(walked.frontier.empty());
  }
  // Every root is marked by the walk, unless it walked nothing.
  if (walked.levels != 0)
    for (const ObjectId root : request.roots) CHECK((root == kNullRef || marked.contains(root)));
  CHECK(std::ranges::all_of(walked.seen, [](ObjectId slot) { return slot == kNullRef; }));
}

}  // namespace

TEST_CASE("the head start keeps its invariants on every shape and within every limit") {
  for (const char* spec : {"single", "list:3000", "lists:64x100", "wide:1000", "vp-list", "complete:150:4", "tree:10",
                           "rmat:11:40", "random:3000:2"}) {
    CAPTURE(spec);
    auto built = test::build(spec);
    const MarkRequest request{built.heap->graph(), built.builder->roots(), built.heap->blocks().high_water()};
    HeadStart walked;
    for (const std::uint32_t width : {1u, 2u, 16u, 128u, 100000u}) {
      CAPTURE(width);
      const HeadStartLimits limits = HeadStartLimits::for_width(width);
      walk_head_start(built.heap->graph(), request.roots, limits, walked);
      check_invariants(built.heap->graph(), request, limits, walked);
      // The same walk twice gives the same result (the set is empty between walks).
      const HeadStart first = walked;
      walk_head_start(built.heap->graph(), request.roots, limits, walked);
      CHECK(walked.scanned == first.scanned);
      CHECK(walked.frontier == first.frontier);
    }
  }
}

TEST_CASE("the head start stops before a wide level, a huge object, a long chain, and many roots") {
  // tree:10: levels of 1, 2, 4, ...: width 16 walks levels 0-4 (31 objects) and leaves
  // level 5's 32 as the frontier.
  auto tree = test::build("tree:10");
  HeadStart walked;
  walk_head_start(tree.heap->graph(), tree.builder->roots(), HeadStartLimits::for_width(16), walked);
  CHECK(walked.levels == 5);
  CHECK(walked.scanned.size() == 31);
  CHECK(walked.frontier.size() == 32);
  CHECK(walked.references == 32 + 30);

  // wide:1000: one root with 1,000 references: more than 8 x 16 for its level.
  auto wide = test::build("wide:1000");
  walk_head_start(wide.heap->graph(), wide.builder->roots(), HeadStartLimits::for_width(16), walked);
  CHECK(walked.levels == 0);
  walk_head_start(wide.heap->graph(), wide.builder->roots(), HeadStartLimits::for_width(125), walked);
  CHECK(walked.levels == 1);  // 1,000 references fit 8 x 125; 1,000 leaves are a level too wide
  CHECK(walked.frontier.size() == 1000);

  // A chain: at most 8 x width objects.
  auto chain = test::build("list:3000");
  walk_head_start(chain.heap->graph(), chain.builder->roots(), HeadStartLimits::for_width(16), walked);
  CHECK(walked.levels == 128);
  CHECK(walked.scanned.size() == 128);
  CHECK(walked.frontier.size() == 1);

  // More roots than a level may hold: nothing walked.
  auto lists = test::build("lists:64x100");
  walk_head_start(lists.heap->graph(), lists.builder->roots(), HeadStartLimits::for_width(63), walked);
  CHECK(walked.levels == 0);
  walk_head_start(lists.heap->graph(), lists.builder->roots(), HeadStartLimits::for_width(64), walked);
  CHECK(walked.levels == 8);  // 64 a level, 8 x 64 objects in all
  CHECK(walked.frontier.size() == 64);

  // Off, nulls and duplicates.
  walk_head_start(tree.heap->graph(), tree.builder->roots(), HeadStartLimits{}, walked);
  CHECK(walked.levels == 0);
  const std::vector<ObjectId> messy{kNullRef, tree.builder->roots()[0], tree.builder->roots()[0], kNullRef};
  walk_head_start(tree.heap->graph(), messy, HeadStartLimits::for_width(16), walked);
  CHECK(walked.levels == 5);
  CHECK(walked.scanned.front() == tree.builder->roots()[0]);
}
