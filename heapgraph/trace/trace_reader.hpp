// Reads a heap trace event by event, streaming: memory is one chunk (ChunkReader),
// the current event, and the TraceObjectTable of ids allocated so far. Every number is
// checked before use (ids inside the id space, format limits, varints at most 10
// bytes, counts checked as their elements are read rather than trusted up front) and
// every consistency rule of trace_event.hpp is enforced, so a consumer (dump, stats,
// replay, the heap loader) sees only events a recording could have produced.
//
// States: reading events -> the end event was returned (next() returns false from
// then on). A file that ends without an end event, or holds bytes after it, is an
// error. Errors are TraceErrors naming the file and the byte offset of the event (or
// chunk) at fault.
#pragma once

#include <cstdint>
#include <istream>
#include <string>

#include "heapgraph/trace/chunk_reader.hpp"
#include "heapgraph/trace/trace_event.hpp"
#include "heapgraph/trace/trace_object_table.hpp"

namespace gcvm::trace {

/// True when the file at `path` starts with the trace magic (false if unreadable).
bool has_trace_magic(const std::string& path);

class TraceReader {
 public:
  TraceReader(std::istream& in, std::string name);
  explicit TraceReader(const std::string& path);

  /// Decodes the next event into `event` (reusing its storage); false after the end event.
  bool next(TraceEvent& event);

  const std::string& name() const { return chunks_.name(); }
  std::uint64_t chunks() const { return chunks_.chunks(); }
  /// File bytes consumed so far; after the end event, the file size.
  std::uint64_t bytes_read() const { return chunks_.bytes_read(); }
  /// The recorded objects seen so far (their latest allocations).
  const TraceObjectTable& objects() const { return objects_; }

 private:
  std::uint64_t read_varint(const char* what);
  ObjectId read_id_delta(const char* what);
  ObjectId checked_id(std::int64_t value, const char* what);
  void check_allocated(ObjectId id, const char* what);
  void decode_body(TraceEvent& event);
  void check_and_apply(TraceEvent& event);
  [[noreturn]] void fail(const std::string& what) const;

  ChunkReader chunks_;
  TraceObjectTable objects_;
  std::int64_t last_id_ = 0;
  std::uint64_t event_offset_ = 0;
  bool ended_ = false;
};

}  // namespace gcvm::trace
