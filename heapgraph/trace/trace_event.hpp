// The events of a heap trace (docs/trace-format.md) and the format's fixed numbers.
//
// A trace is what a mutator did to its heap, in order: allocations (with the heap's
// own object ids), reference stores, root-set snapshots, collection points, and one
// end event. Object ids are the recording heap's ids (DESIGN.md invariant 1); after a
// collection point the recorder's allocator may hand out an id again, and from then
// on that id names the new object.
//
// Consistency rules every reader enforces (TraceReader): a store's source and
// non-null target and every root were allocated earlier; a store's slot is below the
// source's reference count (fields of an object, length of a reference array); an id
// is allocated again only after a collection point; the end event is last.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "heapgraph/object_id.hpp"

namespace gcvm::trace {

inline constexpr std::array<char, 8> kMagic = {'G', 'C', 'V', 'M', 'T', 'R', 'A', 'C'};
inline constexpr std::uint32_t kVersion = 1;
/// Magic plus a 4-byte little-endian version.
inline constexpr std::size_t kFileHeaderBytes = 12;
/// Each chunk: 4-byte little-endian payload length, 4-byte CRC-32C, payload.
inline constexpr std::size_t kChunkHeaderBytes = 8;
/// No chunk payload is larger (a reader's buffer never exceeds it).
inline constexpr std::uint32_t kMaxChunkPayload = 1u << 20;
inline constexpr std::uint32_t kDefaultChunkPayload = 64u << 10;
/// Limits of the format (larger values are rejected as impossible).
inline constexpr std::uint32_t kMaxFields = 1u << 16;
inline constexpr std::uint64_t kMaxArrayLength = 1ull << 28;
inline constexpr std::size_t kMaxReasonBytes = 64;
/// The first id that no heap can hand out.
inline constexpr std::uint64_t kIdLimit = std::uint64_t{kMaxBlocks} * kSlotsPerBlock;

/// Tag bytes; the numbers are part of the file format.
enum class EventKind : std::uint8_t {
  End = 0,
  AllocObject = 1,
  AllocRefArray = 2,
  AllocScalarArray = 3,
  Store = 4,
  Roots = 5,
  Collection = 6,
};
inline constexpr int kEventKinds = 7;

std::string_view event_kind_name(EventKind kind);

/// One decoded event. Only the fields of its kind are meaningful.
struct TraceEvent {
  EventKind kind = EventKind::End;
  std::uint64_t offset = 0;  // file offset of the event's tag byte
  ObjectId id = kNullRef;    // allocations: the new object; Store: the source
  std::uint32_t ref_fields = 0;
  std::uint32_t scalar_fields = 0;
  std::uint64_t length = 0;  // arrays
  std::uint64_t bytes = 0;   // allocations: the recording heap's size of the object
  std::uint64_t slot = 0;    // Store
  ObjectId target = kNullRef;  // Store; kNullRef = null
  std::vector<ObjectId> roots;  // Roots: the whole root set (a snapshot)
  std::string reason;          // Collection

  bool is_allocation() const {
    return kind == EventKind::AllocObject || kind == EventKind::AllocRefArray || kind == EventKind::AllocScalarArray;
  }
  /// Reference slots of an allocated object: its fields, or a reference array's length.
  std::uint64_t reference_slots() const {
    return kind == EventKind::AllocObject ? ref_fields : kind == EventKind::AllocRefArray ? length : 0;
  }
};

/// One line of text (no offset, no newline), as `gcvm trace dump` prints it.
std::string describe(const TraceEvent& event);

}  // namespace gcvm::trace
