// One mark-sweep collection: the plan that ties a Heap, a Marker and the sweep
// together, with the checks of --verify and the statistics every front end reports.
//
// Order of a collection: (rebuild mode) rebuild the CSR from the heap; (verify) check
// the graph against the heap; mark; (verify) check the marks independently
// (mark_checker.hpp) and against the serial marker; sweep. A failed check throws
// VerifyError before sweep, so a wrong mark never frees a live object. The sweep runs
// on the marker's thread pool when it has one (sweep.hpp), else serially.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>

#include "gc/heap.hpp"
#include "gc/marker.hpp"
#include "gc/sweep.hpp"

namespace gcvm {

class VerifyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CollectionStats {
  std::uint64_t index = 0;
  std::string reason;
  std::string collector;
  std::uint64_t heap_before_bytes = 0;
  std::uint64_t heap_after_bytes = 0;
  double rebuild_ms = 0;
  double verify_ms = 0;
  double pause_ms = 0;  // whole collection, verification excluded
  MarkStats mark;
  SweepStats sweep;
};

class Collector {
 public:
  Collector(Heap& heap, std::unique_ptr<Marker> marker, bool verify);
  ~Collector();

  CollectionStats collect(std::span<const ObjectId> roots, std::string reason);
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
  std::uint64_t collections_ = 0;
};

}  // namespace gcvm
