// One mark-sweep collection: the plan that ties a Heap, a Marker and the sweep
// together, with the checks of --verify and the statistics every front end reports.
//
// Order of a collection: (rebuild mode) rebuild the CSR from the heap; (verify) check
// the graph against the heap; mark; (verify) check the marks independently
// (mark_checker.hpp) and against the serial marker; sweep. A failed check throws
// VerifyError before sweep, so a wrong mark never frees a live object. The sweep runs
// in parallel when the heap has at least kParallelSweepMinBlocks blocks (sweep.hpp):
// on the marker's thread pool when it has one, and for device markers (whose host
// threads are otherwise idle in the pause) on a pool of every hardware thread that
// the collector owns; else, and for the serial marker, serially.
//
// On a generational heap (gc/heap/generations.hpp) a collection is young or full. A young
// one marks from the roots plus the remembered set's young targets with every mature
// object pre-marked, so it traces and frees only young objects; --verify then also
// checks the remembered set before marking, and after marking that a full serial mark
// from the roots finds nothing the young marks would free. Every collection of a
// generational heap ends with Generations::after_collection (ageing, promotion,
// remembered set). Which kind, and when, is the plan's policy (generational_policy.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "gc/heap/heap.hpp"
#include "gc/markers/marker.hpp"
#include "gc/heap/sweep.hpp"

namespace gcvm {

class VerifyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class CollectionKind { Full, Young };

/// "full" or "young".
const char* kind_name(CollectionKind kind);

struct CollectionStats {
  std::uint64_t index = 0;
  CollectionKind kind = CollectionKind::Full;
  bool generational = false;  // the heap keeps generations; the figures below apply
  std::string reason;
  std::string collector;
  std::uint64_t heap_before_bytes = 0;
  std::uint64_t heap_after_bytes = 0;
  double rebuild_ms = 0;
  double verify_ms = 0;
  double pause_ms = 0;  // whole collection, verification excluded
  double start_ms = 0;  // when it began, on the process clock (gc/util/stopwatch.hpp)
  double cpu_ms = -1;   // process CPU time (all threads) during the pause, verification included; -1: not measured
  MarkStats mark;
  SweepStats sweep;
  std::uint64_t remembered_objects = 0;  // remembered set at the start (young collections)
  std::uint64_t remembered_roots = 0;    // young targets of the remembered set, marked as roots
  std::uint64_t survivors = 0;           // young objects that survived
  std::uint64_t promoted_objects = 0;    // of them, promoted to mature
  std::uint64_t mature_objects = 0;      // after the collection
};

class Collector {
 public:
  Collector(Heap& heap, std::unique_ptr<Marker> marker, bool verify);
  ~Collector();

  /// One collection from exactly `roots`. A young collection needs a generational heap.
  CollectionStats collect(std::span<const ObjectId> roots, std::string reason,
                          CollectionKind kind = CollectionKind::Full);
  const Marker& marker() const { return *marker_; }
  /// The bitmap of the last collection (valid until the next one).
  const MarkBitmap& last_marks() const { return marks_; }

 private:
  Heap& heap_;
  std::unique_ptr<Marker> marker_;
  std::unique_ptr<Marker> reference_;  // serial marker for --verify
  bool verify_;
  MarkBitmap marks_;
  MarkBitmap reference_marks_;
  MarkBitmap full_marks_;  // --verify of a young collection: everything reachable
  std::vector<ObjectId> young_roots_;
  std::uint64_t collections_ = 0;
  std::unique_ptr<ThreadPool> sweep_pool_;  // device markers' parallel sweep, made on first use
};

}  // namespace gcvm
