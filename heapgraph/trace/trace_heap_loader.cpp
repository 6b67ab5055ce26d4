#include "heapgraph/trace/trace_heap_loader.hpp"

#include <unordered_map>
#include <vector>

namespace gcvm::trace {

TraceLoadSummary load_trace_heap(TraceReader& reader, HeapSink& sink) {
  TraceLoadSummary summary;
  std::unordered_map<ObjectId, SinkHandle> handles;
  std::vector<SinkHandle> roots;  // resolved when the snapshot is read
  TraceEvent e;
  while (reader.next(e)) {
    ++summary.events;
    switch (e.kind) {
      case EventKind::AllocObject:
        handles[e.id] = sink.new_object(e.ref_fields, e.scalar_fields);
        ++summary.objects;
        break;
      case EventKind::AllocRefArray:
        handles[e.id] = sink.new_ref_array(e.length);
        ++summary.objects;
        break;
      case EventKind::AllocScalarArray:
        handles[e.id] = sink.new_object(0, 0);
        ++summary.objects;
        break;
      case EventKind::Store:
        // The reader guarantees both ends were allocated.
        sink.store_ref(handles.at(e.id), e.slot, e.target == kNullRef ? kNoHandle : handles.at(e.target));
        ++summary.stores;
        break;
      case EventKind::Roots:
        roots.clear();
        for (ObjectId r : e.roots) roots.push_back(handles.at(r));
        break;
      case EventKind::Collection: ++summary.collections; break;
      case EventKind::End: break;
    }
  }
  for (SinkHandle r : roots) sink.add_root(r);
  summary.roots = roots.size();
  return summary;
}

TraceLoadSummary load_trace_heap(const std::string& path, HeapSink& sink) {
  TraceReader reader(path);
  return load_trace_heap(reader, sink);
}

}  // namespace gcvm::trace
