#include "gc/trace/trace_recorder.hpp"

#include <algorithm>

namespace gcvm {

void TraceRecorder::allocated(ObjectId id) {
  const ShapeId shape = heap_.shape_of(id);
  const Shape& s = heap_.shapes().layout(shape).shape;
  switch (s.kind) {
    case ShapeKind::Object:
      writer_.allocate_object(id, s.ref_fields, s.scalar_fields,
                              std::uint64_t{s.ref_fields} * sizeof(ObjectId) + std::uint64_t{s.scalar_fields} * 8);
      return;
    case ShapeKind::RefArray: {
      const std::uint64_t length = heap_.array_length(id);
      writer_.allocate_ref_array(id, length, 16 + length * sizeof(ObjectId));
      return;
    }
    case ShapeKind::ScalarArray: {
      const std::uint64_t length = heap_.array_length(id);
      writer_.allocate_scalar_array(id, length, 16 + length * 8);
      return;
    }
  }
}

void TraceRecorder::snapshot_roots(std::span<const ObjectId> roots) {
  if (roots_written_ && std::equal(roots.begin(), roots.end(), last_roots_.begin(), last_roots_.end())) return;
  writer_.roots(roots);
  last_roots_.assign(roots.begin(), roots.end());
  roots_written_ = true;
}

void TraceRecorder::collecting(std::span<const ObjectId> roots, std::string_view reason) {
  snapshot_roots(roots);
  writer_.collection(reason);
}

}  // namespace gcvm
