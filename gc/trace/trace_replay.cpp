#include "gc/trace/trace_replay.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "gc/heap/heap_materializer.hpp"
#include "heapgraph/trace/trace_error.hpp"

namespace gcvm {

using trace::EventKind;
using trace::TraceError;

TraceReplayer::TraceReplayer(Heap& heap, Collector& collector, ReplayOptions options)
    : TraceReplayer(
          heap,
          [&collector](std::span<const ObjectId> roots, std::string reason) {
            return collector.collect(roots, std::move(reason));
          },
          options) {}

TraceReplayer::TraceReplayer(Heap& heap, CollectFunction collect, ReplayOptions options)
    : heap_(heap), collect_(std::move(collect)), options_(options) {}

ObjectId TraceReplayer::resolve(ObjectId recorded, const char* role) const {
  const auto it = heap_id_.find(recorded);
  // The reader guarantees `recorded` was allocated, so `it` is valid.
  const ObjectId id = it->second;
  if (!heap_.is_live(id) || owner_[id] != recorded)
    throw TraceError(reader_->name(), offset_,
                     fmt::format("the trace is inconsistent: {} #{} was freed by a replayed collection as unreachable "
                                 "(the recorder's roots did not cover it)",
                                 role, recorded));
  return id;
}

ObjectId TraceReplayer::try_allocate(const trace::TraceEvent& e, ShapeId shape) {
  switch (e.kind) {
    case EventKind::AllocObject: return heap_.allocate(shape);
    case EventKind::AllocRefArray: return heap_.allocate_ref_array(e.length);
    default: return heap_.allocate_scalar_array(e.length);
  }
}

ObjectId TraceReplayer::allocate(const trace::TraceEvent& e) {
  ShapeId shape = 0;
  if (e.kind == EventKind::AllocObject) {
    try {
      shape = heap_.shapes().intern(e.ref_fields, e.scalar_fields);
    } catch (const std::length_error& error) {
      throw TraceError(reader_->name(), offset_, error.what());
    }
  }
  ObjectId id = try_allocate(e, shape);
  if (id == kNullRef && options_.collect_on_failure) {
    ++summary_.budget_collections;
    collect(since_snapshot_, "heap-budget");
    id = try_allocate(e, shape);
  }
  if (id == kNullRef)
    throw HeapExhausted(fmt::format("{}: byte {}: heap exhausted replaying the allocation of #{} (limit {} bytes, {} in use)",
                                    reader_->name(), offset_, e.id, heap_.limit_bytes(), heap_.used_bytes()));
  return id;
}

void TraceReplayer::store(const trace::TraceEvent& e) {
  const ObjectId source = resolve(e.id, "store source");
  const ObjectId target = e.target == kNullRef ? kNullRef : resolve(e.target, "store target");
  ObjectId old = kNullRef;
  if (heap_.shape_of(source) == ShapeTable::kRefArray) {
    old = heap_.load_element(source, e.slot);
    heap_.store_element(source, e.slot, target);
  } else {
    old = heap_.load_ref(source, static_cast<std::uint32_t>(e.slot));
    heap_.store_ref(source, static_cast<std::uint32_t>(e.slot), target);
  }
  if (old != kNullRef && options_.collect_on_failure) since_snapshot_.push_back(old);
}

void TraceReplayer::collect(const std::vector<ObjectId>& roots, const char* reason) {
  const CollectionStats stats = collect_(roots, reason);
  if (*hook_) (*hook_)(stats);
}

ReplaySummary TraceReplayer::run(trace::TraceReader& reader, const CollectionHook& on_collection) {
  reader_ = &reader;
  hook_ = &on_collection;
  trace::TraceEvent e;
  while (reader.next(e)) {
    offset_ = e.offset;
    ++summary_.events;
    switch (e.kind) {
      case EventKind::AllocObject:
      case EventKind::AllocRefArray:
      case EventKind::AllocScalarArray: {
        const ObjectId id = allocate(e);
        heap_id_[e.id] = id;
        if (owner_.size() <= id) owner_.resize(std::max<std::size_t>(std::size_t{id} + 1, owner_.size() * 2), kNullRef);
        owner_[id] = e.id;
        if (options_.collect_on_failure) since_snapshot_.push_back(id);
        ++summary_.allocations;
        summary_.allocated_bytes += e.bytes;
        break;
      }
      case EventKind::Store:
        store(e);
        ++summary_.stores;
        break;
      case EventKind::Roots:
        roots_.clear();
        for (ObjectId r : e.roots) roots_.push_back(resolve(r, "root"));
        if (options_.collect_on_failure) since_snapshot_ = roots_;
        break;
      case EventKind::Collection:
        ++summary_.recorded_collections;
        collect(roots_, e.reason.c_str());
        if (options_.collect_on_failure) since_snapshot_ = roots_;
        break;
      case EventKind::End: break;
    }
  }
  return summary_;
}

}  // namespace gcvm
