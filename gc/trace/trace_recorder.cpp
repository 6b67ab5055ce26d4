#include "gc/trace/trace_recorder.hpp"

#include <algorithm>

namespace gcvm {

void TraceRecorder::allocated(ObjectId id) {
  const Shape& s = heap_.shapes().layout(heap_.shape_of(id)).shape;
  switch (s.kind) {
    case ShapeKind::Object: writer_.allocate_object(id, s.ref_fields, s.scalar_fields, heap_.object_bytes(id)); return;
    case ShapeKind::RefArray: writer_.allocate_ref_array(id, heap_.array_length(id), heap_.object_bytes(id)); return;
    case ShapeKind::ScalarArray:
      writer_.allocate_scalar_array(id, heap_.array_length(id), heap_.object_bytes(id));
      return;
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
