// A random mutator for trace tests: a register file of object references is its only
// root set; it allocates into registers, stores register values into fields, loads
// fields into registers (so objects reached only through the heap become roots), and
// snapshots its roots and collects now and then (one step in 100 * collect_one_in). It runs on a real Heap with a TraceRecorder, so its trace is
// consistent by construction and the recorded marked/freed counts are ground truth.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "gc/plans/collector.hpp"
#include "gc/markers/serial_marker.hpp"
#include "gc/trace/trace_recorder.hpp"
#include "heapgraph/random.hpp"

namespace gcvm::test {

struct RecordedRun {
  std::string trace;  // the file bytes
  std::vector<CollectionStats> collections;
};

inline RecordedRun record_random_mutator(std::uint64_t seed, int steps, std::uint64_t collect_one_in = 1,
                                         int registers = 12) {
  SplitMix64 rng(seed);
  Heap heap;
  Collector collector(heap, std::make_unique<SerialMarker>(), false);
  std::ostringstream out;
  trace::TraceWriter writer(out, "memory", {4096});
  TraceRecorder recorder(heap, writer);
  std::vector<ObjectId> regs(registers, kNullRef);
  RecordedRun run;
  auto slots = [&](ObjectId o) -> std::uint64_t {
    const Shape& s = heap.shapes().layout(heap.shape_of(o)).shape;
    return s.kind == ShapeKind::Object ? s.ref_fields : s.kind == ShapeKind::RefArray ? heap.array_length(o) : 0;
  };
  for (int step = 0; step < steps; ++step) {
    const std::uint64_t r = rng.below(regs.size());
    const std::uint64_t op = rng.below(100);
    if (op < 45) {
      ObjectId id = kNullRef;
      const std::uint64_t kind = rng.below(6);
      if (kind < 4)
        id = heap.allocate(heap.shapes().intern(static_cast<std::uint32_t>(rng.below(4)), 1));
      else if (kind == 4)
        id = heap.allocate_ref_array(rng.below(12));
      else
        id = heap.allocate_scalar_array(rng.below(12));
      recorder.allocated(id);
      regs[r] = id;
    } else if (op < 80) {
      const ObjectId src = regs[r];
      if (src == kNullRef || slots(src) == 0) continue;
      const std::uint64_t slot = rng.below(slots(src));
      const ObjectId target = rng.below(5) == 0 ? kNullRef : regs[rng.below(regs.size())];
      if (heap.shape_of(src) == ShapeTable::kRefArray)
        heap.store_element(src, slot, target);
      else
        heap.store_ref(src, static_cast<std::uint32_t>(slot), target);
      recorder.stored(src, slot, target);
    } else if (op < 97) {
      const ObjectId src = regs[rng.below(regs.size())];
      if (src == kNullRef || slots(src) == 0) continue;
      const std::uint64_t slot = rng.below(slots(src));
      regs[r] = heap.shape_of(src) == ShapeTable::kRefArray ? heap.load_element(src, slot)
                                                            : heap.load_ref(src, static_cast<std::uint32_t>(slot));
    } else if (op < 98) {
      regs[r] = kNullRef;
    } else if (op < 99) {
      recorder.snapshot_roots(regs);
    } else if (rng.below(collect_one_in) == 0) {
      recorder.collecting(regs, "explicit");
      run.collections.push_back(collector.collect(regs, "explicit"));
    }
  }
  recorder.collecting(regs, "final");
  run.collections.push_back(collector.collect(regs, "final"));
  recorder.finish();
  run.trace = out.str();
  return run;
}

}  // namespace gcvm::test
