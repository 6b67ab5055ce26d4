// An independent check of a mark bitmap (the sanity checker of MMTk, Lua's
// lua_checkmemory): used by --verify and by tests for every marker.
//
// A correct mark bitmap M for roots R satisfies:
//   1. every non-null root is in M;
//   2. M is closed: every non-null reference of a marked object points to a marked object;
//   3. M contains only allocated objects;
//   4. M is minimal: it equals the set reached by a breadth-first search (a different
//      traversal order and data structure from the serial marker's depth-first stack).
// 1-3 alone show M is a superset of the reachable set; 4 rules out floating garbage.
// With pre-marked objects P (a young collection, MarkRequest::premarked), M must contain
// P, closure applies to the objects of M outside P (P is not scanned), and M equals P
// plus what the search reaches without entering P.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "gc/heap/block_allocator.hpp"
#include "gc/heap/mark_bitmap.hpp"
#include "heapgraph/ref_graph.hpp"

namespace gcvm {

/// Returns an empty string if `marks` is exactly the reachable set, else what is wrong.
std::string check_marks(const RefGraph& graph, const BlockAllocator& blocks, std::span<const ObjectId> roots,
                        const MarkBitmap& marks, std::span<const std::uint64_t> premarked = {});

/// Non-null references read from marked objects: the edges_traversed every marker reports.
std::uint64_t count_traversed_edges(const RefGraph& graph, const MarkBitmap& marks);

}  // namespace gcvm
