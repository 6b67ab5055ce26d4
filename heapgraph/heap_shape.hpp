// Heap-shape analysis after Maas et al. 2012, §3: how much parallelism a breadth-first
// mark can find in a heap, and how divergent per-object work is.
//
// Levels. An idealized BFS mark starts with the (distinct) roots in a FIFO frontier
// queue; each step takes objects off the front, marks them and appends their unmarked
// targets (marked on discovery, so every reachable object is taken exactly once).
// Uncapped, a step takes the whole queue, so step i holds the objects at depth i.
// With a width cap W (the paper's "maximum step width": no device runs infinitely
// many threads) a step takes at most W objects, the rest wait for the next step; the
// sum of every row is the reachable count, and capping can only add steps.
//
// Degrees. The out-degree of an object is its number of non-null references (as the
// paper, objects and reference arrays alike; a Java instance's class pointer counts,
// since importers store it as a reference). The distribution, the share of objects
// with no references, and the edge count are over reachable objects, as a collector
// sees them; `objects` and `references` also give the whole heap.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "heapgraph/csr_graph.hpp"

namespace gcvm {

struct HeapShape {
  std::uint64_t objects = 0;     // in the heap, garbage included
  std::uint64_t references = 0;  // non-null references in the heap
  std::uint64_t roots = 0;       // distinct roots
  std::uint64_t reachable = 0;
  std::uint64_t reachable_references = 0;
  /// Objects taken at each step, uncapped (index = depth; step 0 = the roots).
  std::vector<std::uint64_t> levels;
  /// Objects taken at each step with each width cap.
  std::map<std::uint64_t, std::vector<std::uint64_t>> capped_levels;
  /// Out-degree -> number of reachable objects with it (sparse: only degrees that occur).
  std::map<std::uint64_t, std::uint64_t> degree_histogram;
  std::uint64_t max_degree = 0;
  /// Share (0..1) of reachable objects with no references.
  double no_reference_share() const;
  /// Share (0..1) of reachable objects with at most `degree` references (Maas §3.2 quotes 4 and 12).
  double share_with_at_most(std::uint64_t degree) const;
};

/// Objects per step of a BFS from the roots taking at most `cap` objects per step (0 = uncapped).
std::vector<std::uint64_t> bfs_levels(const CsrGraph& graph, std::uint64_t cap);

/// The whole analysis, with levels for every cap in `caps` (0s are ignored).
HeapShape analyze_heap_shape(const CsrGraph& graph, const std::vector<std::uint64_t>& caps);

}  // namespace gcvm
