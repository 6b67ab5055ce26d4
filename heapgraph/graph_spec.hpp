// Names of synthetic heaps: the papers' microbenchmarks (Maas Table 1, FastCollect
// Table 1) and random graphs, each written as one spec string.
//
//   single                 1 object, 1 root
//   list:N                 one linked list of N nodes; the head is the root
//   lists:KxN              K lists of N nodes; K roots
//   wide:N                 one reference array of N leaf objects; the array is the root
//   vp-list                16 lists of 8192; only the first list is rooted
//   vp-array               1024 arrays of 1024 leaves; only the first 64 arrays are roots
//   complete:N:R           N nodes, each referencing every other node; the first R are roots
//   tree:DEPTH             a complete binary tree of DEPTH + 1 levels (2^(DEPTH+1) - 1 nodes
//                          of two references and two scalars, GCBench's Node), built top
//                          down as GCBench's Populate builds it; the root is the root
//   rmat:SCALE[:EF]        R-MAT (a,b,c = 0.57,0.19,0.19), 2^SCALE objects, EF*2^SCALE
//                          references (default EF 16), ids scrambled, 1/64 of objects rooted
//   random:N:DEGREE        N objects with DEGREE uniformly random references, 1/64 rooted
//   bulk:N:DEGREE          N objects of DEGREE (0-16) uniformly random references, each a
//                          hash of (seed, object, slot), every 64th object rooted; built
//                          in bulk on every core (HeapSink::new_generated_objects), so
//                          the same heap for any thread count: the spec for heaps of
//                          10^8-10^9 objects
//
// Parsing never allocates the heap: `estimate()` says how big it will be, so the CLI
// can refuse impossible sizes before building anything.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "heapgraph/input_error.hpp"

namespace gcvm {

class SpecError : public InputError {
 public:
  using InputError::InputError;
};

enum class SpecKind { Single, List, Lists, Wide, VpList, VpArray, Complete, Tree, Rmat, Random, Bulk };

struct GraphSpec {
  SpecKind kind = SpecKind::Single;
  std::uint64_t a = 0;  // N, K, DEPTH, SCALE depending on kind
  std::uint64_t b = 0;  // N (lists), R (complete), EF (rmat), DEGREE (random, bulk)
  std::string text;     // the spec as written

  /// Objects the heap will hold (garbage included) and non-null references it stores.
  struct Size {
    std::uint64_t objects = 0;
    std::uint64_t references = 0;
  };
  Size estimate() const;
};

/// Parses a spec; throws SpecError with a one-line message naming the problem.
GraphSpec parse_graph_spec(std::string_view text);

/// The list of accepted forms, for help texts and error messages.
std::string_view graph_spec_forms();

}  // namespace gcvm
