// The second half of a snapshot mark (Marker::snapshot, the concurrent plan): what a
// marker took in the pause, marked later on a marking thread while the mutator runs.
//
// Contract: `mark(out)` runs once, on any one thread; it reads only what the snapshot
// took (a host copy of the graph, or a device mirror synced in the pause and the roots
// already uploaded), never the live graph or heap, so the mutator may change both
// meanwhile. Its result is the mark bitmap of the graph and roots as they were at the
// snapshot: exactly what `Marker::mark` would have returned in the pause (invariant 4).
// A failure is a MarkError thrown from `mark`, leaving nothing in `out`.
//
// Two kinds:
//   HostCopyMark   Marker's default: the pause copies the graph into a host RefGraph
//                  that the marker keeps between cycles (RefGraph::copy_from) and the
//                  roots; `mark` runs the marker's own `mark` on that copy.
//   DeferredMark   a device marker's: the pause synced the mirror and uploaded the
//                  roots; `mark` runs the rest (kernels, host checks, the download).
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "gc/markers/marker.hpp"

namespace gcvm {

class SnapshotMark {
 public:
  virtual ~SnapshotMark() = default;
  /// Marks the snapshot into `out` (reset here). Once, on any thread.
  virtual MarkStats mark(MarkBitmap& out) = 0;
  /// The host copy this mark reads, or null for a device mirror's snapshot.
  virtual const RefGraph* host_graph() const { return nullptr; }

  /// Figures of the pause's part (copy_ms, or the mirror's sync_* figures), in report order.
  std::vector<std::pair<std::string, double>> pause_details;
};

class HostCopyMark final : public SnapshotMark {
 public:
  /// Copies request.graph into `copy` and the roots (in the pause).
  HostCopyMark(Marker& marker, RefGraph& copy, const MarkRequest& request);
  MarkStats mark(MarkBitmap& out) override;
  const RefGraph* host_graph() const override { return &copy_; }

 private:
  Marker& marker_;
  const RefGraph& copy_;
  std::vector<ObjectId> roots_;
  std::uint32_t block_count_;
};

class DeferredMark final : public SnapshotMark {
 public:
  using Finish = std::function<MarkStats(MarkBitmap&)>;
  explicit DeferredMark(Finish finish) : finish_(std::move(finish)) {}
  MarkStats mark(MarkBitmap& out) override { return finish_(out); }

 private:
  Finish finish_;
};

}  // namespace gcvm
