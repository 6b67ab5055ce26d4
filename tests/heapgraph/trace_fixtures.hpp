// Test helpers for traces: random but valid event streams (every consistency rule of
// heapgraph/trace/trace_event.hpp holds), written with TraceWriter into memory.
#pragma once

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "heapgraph/random.hpp"
#include "heapgraph/trace/crc32c.hpp"
#include "heapgraph/trace/trace_reader.hpp"
#include "heapgraph/trace/trace_writer.hpp"

namespace gcvm::test {

/// `count` events (plus the end event) drawn from `seed`: allocations of all three
/// kinds, stores (some null), root snapshots, collections, and id reuse after them.
inline std::vector<trace::TraceEvent> random_trace_events(std::uint64_t seed, int count) {
  using trace::EventKind;
  SplitMix64 rng(seed);
  std::vector<trace::TraceEvent> events;
  struct Live {
    ObjectId id;
    std::uint64_t slots;
  };
  std::vector<Live> objects;
  std::vector<ObjectId> reusable;  // allocated before the last collection
  ObjectId next_id = static_cast<ObjectId>(rng.below(1000));
  for (int i = 0; i < count; ++i) {
    trace::TraceEvent e;
    const std::uint64_t pick = objects.empty() ? 0 : rng.below(100);
    if (pick < 40) {
      const std::uint64_t kind = rng.below(4);
      if (!reusable.empty() && rng.below(4) == 0) {
        e.id = reusable.back();
        reusable.pop_back();
      } else {
        e.id = next_id;
        next_id += rng.below(8) == 0 ? static_cast<ObjectId>(rng.below(100000)) : 1;
      }
      if (kind <= 1) {
        e.kind = EventKind::AllocObject;
        e.ref_fields = static_cast<std::uint32_t>(rng.below(5));
        e.scalar_fields = static_cast<std::uint32_t>(rng.below(3));
        e.bytes = e.ref_fields * 4 + e.scalar_fields * 8;
      } else {
        e.kind = kind == 2 ? EventKind::AllocRefArray : EventKind::AllocScalarArray;
        e.length = rng.below(8) == 0 ? rng.below(5000) : rng.below(10);
        e.bytes = 16 + e.length * (kind == 2 ? 4 : 8);
      }
      std::erase_if(objects, [&](const Live& l) { return l.id == e.id; });
      objects.push_back({e.id, e.reference_slots()});
    } else if (pick < 85) {
      std::vector<const Live*> sources;
      for (const Live& l : objects)
        if (l.slots > 0) sources.push_back(&l);
      if (sources.empty()) {
        --i;
        continue;
      }
      const Live& s = *sources[rng.below(sources.size())];
      e.kind = EventKind::Store;
      e.id = s.id;
      e.slot = rng.below(s.slots);
      e.target = rng.below(6) == 0 ? kNullRef : objects[rng.below(objects.size())].id;
    } else if (pick < 93) {
      e.kind = EventKind::Roots;
      const std::uint64_t n = rng.below(std::min<std::uint64_t>(objects.size(), 20) + 1);
      for (std::uint64_t k = 0; k < n; ++k) e.roots.push_back(objects[rng.below(objects.size())].id);
    } else {
      e.kind = EventKind::Collection;
      e.reason = rng.below(2) ? "explicit" : "allocation-failure";
      reusable.clear();
      for (const Live& l : objects)
        if (rng.below(3) == 0) reusable.push_back(l.id);
    }
    events.push_back(std::move(e));
  }
  events.push_back(trace::TraceEvent{});  // End
  return events;
}

/// Writes `events` (the last must be End) through a TraceWriter; returns the file bytes.
inline std::string write_trace(const std::vector<trace::TraceEvent>& events, std::uint32_t chunk_payload = 64 << 10) {
  using trace::EventKind;
  std::ostringstream out;
  trace::TraceWriter writer(out, "memory", {chunk_payload});
  for (const auto& e : events) {
    switch (e.kind) {
      case EventKind::AllocObject: writer.allocate_object(e.id, e.ref_fields, e.scalar_fields, e.bytes); break;
      case EventKind::AllocRefArray: writer.allocate_ref_array(e.id, e.length, e.bytes); break;
      case EventKind::AllocScalarArray: writer.allocate_scalar_array(e.id, e.length, e.bytes); break;
      case EventKind::Store: writer.store_ref(e.id, e.slot, e.target); break;
      case EventKind::Roots: writer.roots(e.roots); break;
      case EventKind::Collection: writer.collection(e.reason); break;
      case EventKind::End: writer.end(); break;
    }
  }
  return out.str();
}

/// Reads every event of `bytes`; throws TraceError for bad input.
inline std::vector<trace::TraceEvent> read_trace(const std::string& bytes, std::uint64_t* chunks = nullptr) {
  std::istringstream in(bytes);
  trace::TraceReader reader(in, "memory");
  std::vector<trace::TraceEvent> events;
  trace::TraceEvent e;
  while (reader.next(e)) events.push_back(e);
  if (chunks != nullptr) *chunks = reader.chunks();
  return events;
}

}  // namespace gcvm::test

namespace gcvm::test {

/// A file with the trace header and `payload` framed into valid, checksummed chunks
/// of `chunk` bytes: for feeding the event decoder arbitrary bytes past the checksums.
inline std::string frame_trace_payload(const std::string& payload, std::size_t chunk = 4096) {
  std::ostringstream out;
  trace::TraceWriter writer(out, "memory", {1});  // header only; chunks framed below
  std::string file = out.str();
  auto put_u32 = [&](std::uint32_t v) {
    for (int i = 0; i < 4; ++i) file.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  };
  for (std::size_t at = 0; at < payload.size(); at += chunk) {
    const std::string piece = payload.substr(at, chunk);
    char len[4];
    for (int i = 0; i < 4; ++i) len[i] = static_cast<char>((piece.size() >> (8 * i)) & 0xFF);
    put_u32(static_cast<std::uint32_t>(piece.size()));
    put_u32(trace::crc32c(trace::crc32c(0, len, 4), piece.data(), piece.size()));
    file += piece;
  }
  return file;
}

/// File offsets where chunks start (the first right after the file header).
inline std::vector<std::size_t> chunk_offsets(const std::string& file) {
  std::vector<std::size_t> offsets;
  std::size_t at = trace::kFileHeaderBytes;
  while (at + trace::kChunkHeaderBytes <= file.size()) {
    offsets.push_back(at);
    std::uint32_t len = 0;
    for (int i = 0; i < 4; ++i) len |= std::uint32_t{static_cast<unsigned char>(file[at + i])} << (8 * i);
    at += trace::kChunkHeaderBytes + len;
  }
  return offsets;
}

}  // namespace gcvm::test
