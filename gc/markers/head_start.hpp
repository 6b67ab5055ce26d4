// The host's head start on a device mark (gpu-bfs `head-start=`): the narrow first
// levels of a breadth-first mark walked on the CPU, so that the device begins where
// the heap is wide.
//
// Why: a level-synchronous device mark pays for every level, however few objects it
// holds (a memory round trip for each step of the level's chain of dependent
// accesses: about 5-6 us a level even when one work group walks it on its own), and a
// tree or any heap hanging off a few roots begins with levels of 1, 2, 4, ...
// objects. The CPU walks such a level in a fraction of that. The walk ends before the
// first level wider than `max_level_objects`, before a level whose references exceed
// `max_level_references` (a huge array goes to the device, which splits it), before
// the objects walked would exceed `max_objects` (a chain: the device's CPU fallback
// takes long chains), and does not start when there are more roots than
// `max_level_objects` (a heap with many roots is wide from its first level).
//
// What it leaves (invariants):
// - `scanned` and `frontier` are disjoint and hold no null and no duplicate; their
//   union is exactly the objects the walk marked.
// - Every reference of a `scanned` object is null or in `scanned` or `frontier`; the
//   `frontier` objects are marked and not yet scanned. So a mark that sets the bits of
//   both and scans from `frontier` marks exactly what a mark from the roots marks.
// - `references` counts the non-null references of the scanned objects, so the
//   device's count plus it equals the serial marker's.
// - Roots come in order; each level is walked in order, so the result is the same on
//   every run.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "heapgraph/object_id.hpp"
#include "heapgraph/ref_graph.hpp"

namespace gcvm {

struct HeadStartLimits {
  std::uint32_t max_level_objects = 0;  // 0: no head start
  std::uint32_t max_level_references = 0;
  std::uint32_t max_objects = 0;
  /// The limits of `head-start=<objects>`: levels of at most `objects` objects and
  /// 8 x `objects` references, and 8 x `objects` objects in all.
  static HeadStartLimits for_width(std::uint32_t objects) { return {objects, 8 * objects, 8 * objects}; }
};

struct HeadStart {
  std::vector<ObjectId> scanned;   // marked and scanned, in walk order
  std::vector<ObjectId> frontier;  // marked, not scanned: where the device begins
  std::uint32_t levels = 0;        // levels the host scanned
  std::uint64_t references = 0;    // non-null references of the scanned objects
  double ms = 0;
  /// The walk's set of marked objects (open addressing, kNullRef when free; every
  /// slot free between walks).
  std::vector<ObjectId> seen;
};

/// Walks from `roots` (nulls and duplicates allowed) within `limits`, reusing `out`'s
/// storage. With no level walked, `frontier` is empty and the roots stand as given.
void walk_head_start(const RefGraph& graph, std::span<const ObjectId> roots, const HeadStartLimits& limits,
                     HeadStart& out);

}  // namespace gcvm
