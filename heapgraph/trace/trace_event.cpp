#include "heapgraph/trace/trace_event.hpp"

#include <fmt/format.h>

namespace gcvm::trace {

std::string_view event_kind_name(EventKind kind) {
  switch (kind) {
    case EventKind::End: return "end";
    case EventKind::AllocObject: return "alloc";
    case EventKind::AllocRefArray: return "alloc-ref-array";
    case EventKind::AllocScalarArray: return "alloc-scalar-array";
    case EventKind::Store: return "store";
    case EventKind::Roots: return "roots";
    case EventKind::Collection: return "collect";
  }
  return "unknown";
}

std::string describe(const TraceEvent& e) {
  const std::string_view name = event_kind_name(e.kind);
  switch (e.kind) {
    case EventKind::AllocObject:
      return fmt::format("{} #{} refs={} scalars={} bytes={}", name, e.id, e.ref_fields, e.scalar_fields, e.bytes);
    case EventKind::AllocRefArray:
    case EventKind::AllocScalarArray:
      return fmt::format("{} #{} length={} bytes={}", name, e.id, e.length, e.bytes);
    case EventKind::Store:
      return e.target == kNullRef ? fmt::format("{} #{}[{}] = null", name, e.id, e.slot)
                                  : fmt::format("{} #{}[{}] = #{}", name, e.id, e.slot, e.target);
    case EventKind::Roots: {
      std::string text = fmt::format("{} {}:", name, e.roots.size());
      for (ObjectId r : e.roots) text += fmt::format(" #{}", r);
      return text;
    }
    case EventKind::Collection: return fmt::format("{} {}", name, e.reason);
    case EventKind::End: break;
  }
  return std::string(name);
}

}  // namespace gcvm::trace
