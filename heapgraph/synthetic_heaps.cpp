#include "heapgraph/synthetic_heaps.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

#include "heapgraph/random.hpp"

namespace gcvm {

namespace {

SinkHandle new_leaf(HeapSink& sink) { return sink.new_object(0, 1); }

/// A list of n nodes, each linked to the next; returns the head.
SinkHandle build_list(HeapSink& sink, std::uint64_t n) {
  const SinkHandle head = sink.new_object(1, 1);
  SinkHandle previous = head;
  for (std::uint64_t i = 1; i < n; ++i) {
    const SinkHandle node = sink.new_object(1, 1);
    sink.store_ref(previous, 0, node);
    previous = node;
  }
  return head;
}

/// An array of n fresh leaves; returns the array.
SinkHandle build_leaf_array(HeapSink& sink, std::uint64_t n) {
  const SinkHandle array = sink.new_ref_array(n);
  for (std::uint64_t i = 0; i < n; ++i) sink.store_ref(array, i, new_leaf(sink));
  return array;
}

void build_complete(HeapSink& sink, std::uint64_t n, std::uint64_t roots) {
  std::vector<SinkHandle> nodes(n);
  for (auto& node : nodes) node = sink.new_ref_array(n - 1);
  for (std::uint64_t i = 0; i < n; ++i) {
    std::uint64_t slot = 0;
    for (std::uint64_t j = 0; j < n; ++j)
      if (j != i) sink.store_ref(nodes[i], slot++, nodes[j]);
  }
  for (std::uint64_t r = 0; r < roots; ++r) sink.add_root(nodes[r]);
}

/// Gives `node` two children and builds their subtrees, `depth` levels below it, in
/// GCBench's Populate order: both children allocated and stored, then the left
/// subtree, then the right.
void populate_tree(HeapSink& sink, SinkHandle node, std::uint64_t depth) {
  if (depth == 0) return;
  const SinkHandle left = sink.new_object(2, 2);
  sink.store_ref(node, 0, left);
  const SinkHandle right = sink.new_object(2, 2);
  sink.store_ref(node, 1, right);
  populate_tree(sink, left, depth - 1);
  populate_tree(sink, right, depth - 1);
}

/// Creates vertices 0..n-1 (degree from `offsets`), stores `targets`, roots 1/64.
void materialize_csr(HeapSink& sink, const std::vector<std::uint64_t>& offsets,
                     const std::vector<std::uint32_t>& targets, std::uint64_t seed) {
  const std::uint64_t n = offsets.size() - 1;
  // Handles are consecutive in creation order (heap_sink.hpp), so vertex v is first + v:
  // no handle table, one random lookup less per reference on graphs of 10^9 edges.
  SinkHandle first = kNoHandle;
  for (std::uint64_t v = 0; v < n; ++v) {
    const std::uint64_t degree = offsets[v + 1] - offsets[v];
    const SinkHandle h = degree <= kMaxInlineReferences ? sink.new_object(static_cast<std::uint32_t>(degree), 0)
                                                        : sink.new_ref_array(degree);
    if (v == 0) first = h;
  }
  for (std::uint64_t v = 0; v < n; ++v)
    for (std::uint64_t e = offsets[v]; e < offsets[v + 1]; ++e)
      sink.store_ref(first + v, e - offsets[v], first + targets[e]);
  bool any_root = false;
  for (std::uint64_t v = 0; v < n; ++v)
    if (mix_hash(seed ^ 0x5EED, v) % 64 == 0) {
      sink.add_root(first + v);
      any_root = true;
    }
  if (!any_root) sink.add_root(first);
}

/// Counting sort of (source, target) pairs into CSR arrays.
void pairs_to_csr(std::uint64_t n, const std::vector<std::uint32_t>& sources, const std::vector<std::uint32_t>& dests,
                  std::vector<std::uint64_t>& offsets, std::vector<std::uint32_t>& targets) {
  offsets.assign(n + 1, 0);
  for (std::uint32_t s : sources) ++offsets[s + 1];
  std::partial_sum(offsets.begin(), offsets.end(), offsets.begin());
  targets.resize(sources.size());
  std::vector<std::uint64_t> cursor(offsets.begin(), offsets.end() - 1);
  for (std::size_t i = 0; i < sources.size(); ++i) targets[cursor[sources[i]]++] = dests[i];
}

void build_rmat(HeapSink& sink, std::uint32_t scale, std::uint64_t edge_factor, std::uint64_t seed) {
  const std::uint64_t n = std::uint64_t{1} << scale;
  const std::uint64_t m = edge_factor * n;
  // Quadrant thresholds on 16-bit draws: a=0.57, b=0.19, c=0.19, d=0.05.
  constexpr std::uint32_t kA = 37355, kAB = 49807, kABC = 62259;
  SplitMix64 rng(seed);
  std::vector<std::uint32_t> permutation(n);
  std::iota(permutation.begin(), permutation.end(), 0u);
  for (std::uint64_t i = n - 1; i > 0; --i) std::swap(permutation[i], permutation[rng.below(i + 1)]);
  std::vector<std::uint32_t> sources(m), dests(m);
  for (std::uint64_t e = 0; e < m; ++e) {
    std::uint64_t u = 0, v = 0, bits = 0;
    for (std::uint32_t level = 0; level < scale; ++level) {
      if (level % 4 == 0) bits = rng.next();
      const std::uint32_t draw = static_cast<std::uint32_t>(bits & 0xFFFF);
      bits >>= 16;
      const std::uint64_t row = draw >= kAB, col = (draw >= kA && draw < kAB) || draw >= kABC;
      u = (u << 1) | row;
      v = (v << 1) | col;
    }
    sources[e] = permutation[u];
    dests[e] = permutation[v];
  }
  std::vector<std::uint64_t> offsets;
  std::vector<std::uint32_t> targets;
  pairs_to_csr(n, sources, dests, offsets, targets);
  sources = {};
  dests = {};
  materialize_csr(sink, offsets, targets, seed);
}

void build_random(HeapSink& sink, std::uint64_t n, std::uint64_t degree, std::uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<std::uint64_t> offsets(n + 1);
  for (std::uint64_t v = 0; v <= n; ++v) offsets[v] = v * degree;
  std::vector<std::uint32_t> targets(n * degree);
  for (auto& t : targets) t = static_cast<std::uint32_t>(rng.below(n));
  materialize_csr(sink, offsets, targets, seed);
}

/// Reference `slot` of object i targets object hash(seed, i * degree + slot) mod n.
void build_bulk(HeapSink& sink, std::uint64_t n, std::uint32_t degree, std::uint64_t seed) {
  const SinkHandle first = sink.new_generated_objects(n, degree, [n, degree, seed](std::uint64_t i, std::uint32_t slot) {
    const std::uint64_t hash = mix_hash(seed, i * degree + slot);
    return static_cast<SinkHandle>((static_cast<unsigned __int128>(hash) * n) >> 64);
  });
  for (std::uint64_t v = 0; v < n; v += 64) sink.add_root(first + v);
}

}  // namespace

void build_synthetic_heap(const GraphSpec& spec, HeapSink& sink, std::uint64_t seed) {
  switch (spec.kind) {
    case SpecKind::Single:
      sink.add_root(new_leaf(sink));
      return;
    case SpecKind::List:
      sink.add_root(build_list(sink, spec.a));
      return;
    case SpecKind::Lists:
      for (std::uint64_t k = 0; k < spec.a; ++k) sink.add_root(build_list(sink, spec.b));
      return;
    case SpecKind::Wide:
      sink.add_root(build_leaf_array(sink, spec.a));
      return;
    case SpecKind::VpList:
      for (int k = 0; k < 16; ++k) {
        const SinkHandle head = build_list(sink, 8192);
        if (k == 0) sink.add_root(head);
      }
      return;
    case SpecKind::VpArray:
      for (int k = 0; k < 1024; ++k) {
        const SinkHandle array = build_leaf_array(sink, 1024);
        if (k < 64) sink.add_root(array);
      }
      return;
    case SpecKind::Complete:
      build_complete(sink, spec.a, spec.b);
      return;
    case SpecKind::Tree: {
      const SinkHandle root = sink.new_object(2, 2);
      populate_tree(sink, root, spec.a);
      sink.add_root(root);
      return;
    }
    case SpecKind::Rmat:
      build_rmat(sink, static_cast<std::uint32_t>(spec.a), spec.b, seed);
      return;
    case SpecKind::Random:
      build_random(sink, spec.a, spec.b, seed);
      return;
    case SpecKind::Bulk:
      build_bulk(sink, spec.a, static_cast<std::uint32_t>(spec.b), seed);
      return;
  }
}

}  // namespace gcvm
