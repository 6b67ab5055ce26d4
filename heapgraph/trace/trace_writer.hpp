// Writes a heap trace (docs/trace-format.md): the file header, then events packed into
// checksummed chunks. This is the recording API a VM's heap binding calls: one call
// per allocation, reference store, root-set snapshot and collection point, then
// `end()`. It holds at most one chunk plus the event being written; nothing else grows
// with the trace.
//
// Encoding state (shared with TraceReader, which mirrors it): `last_id_`, the id of
// the last allocation or store source. Allocation ids and store sources are written
// as zigzag deltas from it (a bump allocator's consecutive ids cost one byte); a
// store's target as a delta from its source (0 = null); root ids as deltas from the
// previous root.
//
// The writer checks only what the format cannot express (ids in the id space, format
// limits); it throws std::invalid_argument for those, and TraceWriteError (an
// InputError) when the output cannot be written. Call `end()` exactly once; a writer
// destroyed without it leaves a trace that readers report as truncated.
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <string_view>

#include "heapgraph/input_error.hpp"
#include "heapgraph/trace/trace_event.hpp"

namespace gcvm::trace {

class TraceWriteError : public InputError {
 public:
  using InputError::InputError;
};

struct TraceWriterOptions {
  /// Payload bytes per chunk (1..kMaxChunkPayload); small values exercise boundaries.
  std::uint32_t chunk_payload = kDefaultChunkPayload;
};

struct TraceWriterTotals {
  std::uint64_t events = 0;
  std::uint64_t chunks = 0;
  std::uint64_t bytes = 0;  // file bytes written so far, header included
};

class TraceWriter {
 public:
  /// Writes to `out` (which must outlive the writer); `name` appears in errors.
  TraceWriter(std::ostream& out, std::string name, TraceWriterOptions options = {});
  /// Creates (truncates) the file at `path`.
  explicit TraceWriter(const std::string& path, TraceWriterOptions options = {});
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  void allocate_object(ObjectId id, std::uint32_t ref_fields, std::uint32_t scalar_fields, std::uint64_t bytes);
  void allocate_ref_array(ObjectId id, std::uint64_t length, std::uint64_t bytes);
  void allocate_scalar_array(ObjectId id, std::uint64_t length, std::uint64_t bytes);
  /// Reference `slot` (field index or element index) of `source` := `target` (kNullRef = null).
  void store_ref(ObjectId source, std::uint64_t slot, ObjectId target);
  /// The whole root set now (duplicates and kNullRef entries allowed; null is skipped).
  void roots(std::span<const ObjectId> roots);
  /// A collection happens here, with the current root set; `reason` is 1..64 printable
  /// ASCII characters without spaces (e.g. "explicit", "allocation-failure").
  void collection(std::string_view reason);
  /// Writes the end event and flushes. Nothing may be written after it.
  void end();

  const TraceWriterTotals& totals() const { return totals_; }
  bool ended() const { return ended_; }

 private:
  void write_header();
  void allocate_array(EventKind kind, ObjectId id, std::uint64_t length, std::uint64_t bytes);
  void begin_event(EventKind kind);
  void put_id_delta(ObjectId id);
  void finish_event();
  void flush_chunks(bool all);
  void write_bytes(const char* data, std::size_t size);
  static void check_id(ObjectId id, const char* what);

  std::unique_ptr<std::ofstream> file_;
  std::ostream& out_;
  std::string name_;
  TraceWriterOptions options_;
  std::string pending_;  // encoded events not yet in a chunk
  std::uint64_t last_id_ = 0;
  TraceWriterTotals totals_;
  bool ended_ = false;
};

}  // namespace gcvm::trace
