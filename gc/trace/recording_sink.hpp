// A HeapSink that materializes into a Heap (through HeapMaterializer) and records every
// allocation and store it makes with a TraceRecorder: how `gcvm mark --record-trace`
// turns a synthetic heap's construction into a trace. Roots are not recorded here;
// they go into the trace's root snapshot when the caller reaches a collection point.
#pragma once

#include "gc/heap/heap_materializer.hpp"
#include "gc/trace/trace_recorder.hpp"

namespace gcvm {

class RecordingSink final : public HeapSink {
 public:
  RecordingSink(HeapMaterializer& inner, TraceRecorder& recorder) : inner_(inner), recorder_(recorder) {}

  SinkHandle new_object(std::uint32_t ref_fields, std::uint32_t scalar_fields) override {
    const SinkHandle h = inner_.new_object(ref_fields, scalar_fields);
    recorder_.allocated(inner_.object(h));
    return h;
  }
  SinkHandle new_ref_array(std::uint64_t length) override {
    const SinkHandle h = inner_.new_ref_array(length);
    recorder_.allocated(inner_.object(h));
    return h;
  }
  void store_ref(SinkHandle source, std::uint64_t slot, SinkHandle target) override {
    inner_.store_ref(source, slot, target);
    recorder_.stored(inner_.object(source), slot, target == kNoHandle ? kNullRef : inner_.object(target));
  }
  void add_root(SinkHandle object) override { inner_.add_root(object); }

 private:
  HeapMaterializer& inner_;
  TraceRecorder& recorder_;
};

}  // namespace gcvm
