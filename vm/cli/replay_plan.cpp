#include "vm/cli/replay_plan.hpp"

#include <utility>
#include <vector>

#include "gc/plans/concurrent_collector.hpp"
#include "vm/cli/commands.hpp"

namespace gcvm::cli {

namespace {

class MarkSweepReplay final : public ReplayPlan {
 public:
  MarkSweepReplay(Heap& heap, std::unique_ptr<Marker> marker, bool verify, DeviceFallback fallback)
      : collector_(heap, std::move(marker), verify, fallback) {}

  std::string_view name() const override { return "marksweep"; }
  ReplayCollection collect(std::span<const ObjectId> roots, std::string reason, SyntheticMutator* mutator) override {
    ReplayCollection out;
    if (mutator != nullptr) out.mutation = mutator->mutate(collector_.last_marks());
    if (before_collection) before_collection(roots, reason);
    out.stats = collector_.collect(roots, std::move(reason));
    return out;
  }
  const MarkBitmap& last_marks() const override { return collector_.last_marks(); }
  std::string_view marker_name() const override { return collector_.marker().name(); }

 private:
  Collector collector_;
};

class ConcurrentReplay final : public ReplayPlan, private MutatorSafepoint {
 public:
  /// Stores and allocations of a round between two polls. A poll costs one atomic load
  /// while the mark runs, so polling often costs little and brings the final pause soon
  /// after the mark ends (the interpreter polls every 1/64 of the heap's allocation,
  /// at least 64 KiB: a thousand or more small objects).
  static constexpr std::uint64_t kPollInterval = 1024;

  ConcurrentReplay(Heap& heap, std::unique_ptr<Marker> marker, bool verify, DeviceFallback fallback)
      : heap_(heap), collector_(heap, std::move(marker), verify, fallback) {}

  std::string_view name() const override { return "concurrent"; }

  ReplayCollection collect(std::span<const ObjectId> roots, std::string reason, SyntheticMutator* mutator) override {
    ReplayCollection out;
    heap_.finish_lazy_sweep();  // the last cycle's rest, before the pause (the collector reports it)
    if (before_collection) before_collection(roots, reason);
    roots_ = roots;
    finished_.reset();
    if (std::optional<CollectionStats> fallback = collector_.start(roots, std::move(reason)))
      finished_ = std::move(*fallback);
    if (mutator != nullptr)
      out.mutation = mutator->mutate_reachable(roots, collector_.in_flight() ? this : nullptr);
    if (collector_.in_flight()) apply(roots);
    out.stats = std::move(*finished_);
    return out;
  }
  const MarkBitmap& last_marks() const override { return collector_.last_marks(); }
  std::string_view marker_name() const override { return collector_.marker().name(); }
  std::optional<LazySweepTotals> finish() override {
    heap_.finish_lazy_sweep();
    return heap_.take_lazy_sweep_totals();
  }

 private:
  std::uint64_t poll_interval() const override { return kPollInterval; }
  void poll(HeldObjects held) override {
    if (collector_.in_flight() && collector_.mark_done()) apply(with_held(held));
  }
  bool heap_full(HeldObjects held) override {
    if (!collector_.in_flight()) return false;
    apply(with_held(held));
    return true;
  }

  /// The final pause (waiting for the mark if it has not finished) with the mutator's
  /// roots now.
  void apply(std::span<const ObjectId> roots) {
    CollectionStats stats = collector_.finish(roots);
    if (stats.kind == CollectionKind::Fallback && before_collection) before_collection(roots, stats.reason);
    finished_ = std::move(stats);
  }
  /// The roots of the collection in flight and the objects the round holds.
  std::span<const ObjectId> with_held(HeldObjects held) {
    mutator_roots_.assign(roots_.begin(), roots_.end());
    mutator_roots_.insert(mutator_roots_.end(), held.live.begin(), held.live.end());
    mutator_roots_.insert(mutator_roots_.end(), held.garbage.begin(), held.garbage.end());
    return mutator_roots_;
  }

  Heap& heap_;
  ConcurrentCollector collector_;
  std::span<const ObjectId> roots_;  // of the collection in progress
  std::optional<CollectionStats> finished_;
  std::vector<ObjectId> mutator_roots_;
};

}  // namespace

void check_replay_plan(const PlanArgs& plan) {
  if (plan.name == "generational")
    throw UsageError("--plan=generational: gcvm replay collects under --plan=marksweep or --plan=concurrent (a "
                     "replay's collections are full ones at fixed points; `gcvm run` has the generational plan)");
  if (plan.concurrent() && plan.concurrent_trigger != 0)
    throw UsageError("--concurrent-trigger does not apply to gcvm replay: each of its collections is one cycle, "
                     "started where the replay collects");
}

std::unique_ptr<ReplayPlan> make_replay_plan(const PlanArgs& plan, Heap& heap, std::unique_ptr<Marker> marker,
                                             bool verify, DeviceFallback fallback) {
  check_replay_plan(plan);
  if (plan.name == "concurrent")
    return std::make_unique<ConcurrentReplay>(heap, std::move(marker), verify, fallback);
  return std::make_unique<MarkSweepReplay>(heap, std::move(marker), verify, fallback);
}

}  // namespace gcvm::cli
