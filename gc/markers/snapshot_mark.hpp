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
//   HostCopyMark   Marker's default: the pause brings a host copy of the graph that the
//                  marker keeps between cycles (HostGraphCopy) up to date and copies the
//                  roots; `mark` runs the marker's own `mark` on that copy.
//   DeferredMark   a device marker's: the pause synced the mirror and uploaded the
//                  roots; `mark` runs the rest (kernels, host checks, the download).
//   CompletedMark  marked whole in the pause (a device marker whose device is still
//                  starting, gc/plans/device_start.hpp); `mark` hands the result over.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gc/markers/marker.hpp"

namespace gcvm {

/// The host copy of a graph that a CPU marker's snapshots mark, kept between cycles. It
/// consumes the graph's change record as a device mirror does (DESIGN.md invariant 5,
/// gc/device/graph_mirror.hpp): an update copies the entries marked changed since the
/// last update and what the graph grew by, and clears the marks. It copies everything
/// the first time, for another graph, without a change record, or when someone else
/// cleared the changes since its last update (GraphChanges::generation).
class HostGraphCopy {
 public:
  /// Brings the copy up to date with `source`; returns the bytes copied. Throws
  /// MarkError when the copy does not fit in memory.
  std::uint64_t update(const RefGraph& source, GraphChanges* changes);
  const RefGraph& graph() const { return *copy_; }

 private:
  std::unique_ptr<RefGraph> copy_;
  const RefGraph* source_ = nullptr;
  std::uint64_t generation_ = 0;
  std::uint64_t vertices_ = 0;  // of the source, at the last update
  std::uint64_t edges_ = 0;
};

class SnapshotMark {
 public:
  virtual ~SnapshotMark() = default;
  /// Marks the snapshot into `out` (reset here). Once, on any thread.
  virtual MarkStats mark(MarkBitmap& out) = 0;
  /// The host copy this mark reads, or null for a device mirror's snapshot.
  virtual const RefGraph* host_graph() const { return nullptr; }

  /// Figures of the pause's part (copy_ms, or the mirror's sync_* figures), in report order.
  MarkDetails pause_details;
};

class HostCopyMark final : public SnapshotMark {
 public:
  /// Updates `copy` from request.graph and copies the roots (in the pause).
  HostCopyMark(Marker& marker, HostGraphCopy& copy, const MarkRequest& request);
  MarkStats mark(MarkBitmap& out) override;
  const RefGraph* host_graph() const override { return &copy_.graph(); }

 private:
  Marker& marker_;
  const HostGraphCopy& copy_;
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

class CompletedMark final : public SnapshotMark {
 public:
  CompletedMark(MarkBitmap marks, MarkStats stats) : marks_(std::move(marks)), stats_(std::move(stats)) {}
  MarkStats mark(MarkBitmap& out) override {
    out = std::move(marks_);
    return std::move(stats_);
  }

 private:
  MarkBitmap marks_;
  MarkStats stats_;
};

}  // namespace gcvm
