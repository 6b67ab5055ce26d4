// A HeapSink that materializes into a Heap (through HeapMaterializer) and records every
// allocation and store it makes with a TraceRecorder: how `gcvm mark --record-trace`
// turns a synthetic heap's construction into a trace. Roots are not recorded here;
// they go into the trace's root snapshot when the caller reaches a collection point.
#pragma once

#include <optional>
#include <string>

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

/// `--record-trace=PATH` of a command that materializes a heap: with a path, the
/// trace file, its recorder and the recording sink around `builder`; without one,
/// nothing, and `sink()` is `builder` itself.
class OptionalRecording {
 public:
  OptionalRecording(const std::string& path, Heap& heap, HeapMaterializer& builder) : builder_(builder) {
    if (path.empty()) return;
    writer_.emplace(path);
    recorder_.emplace(heap, *writer_);
    sink_.emplace(builder, *recorder_);
  }
  HeapSink& sink() { return sink_ ? static_cast<HeapSink&>(*sink_) : builder_; }
  /// The recorder, or null when nothing is recorded.
  TraceRecorder* recorder() { return recorder_ ? &*recorder_ : nullptr; }

 private:
  HeapMaterializer& builder_;
  std::optional<trace::TraceWriter> writer_;
  std::optional<TraceRecorder> recorder_;
  std::optional<RecordingSink> sink_;
};

}  // namespace gcvm
