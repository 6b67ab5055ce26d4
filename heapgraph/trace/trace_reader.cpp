#include "heapgraph/trace/trace_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>

#include "heapgraph/trace/trace_error.hpp"
#include "heapgraph/trace/varint.hpp"

namespace gcvm::trace {

bool has_trace_magic(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[kMagic.size()];
  return in.read(magic, sizeof magic) && std::equal(kMagic.begin(), kMagic.end(), magic);
}

TraceReader::TraceReader(std::istream& in, std::string name) : chunks_(in, std::move(name)) {}
TraceReader::TraceReader(const std::string& path) : chunks_(path) {}

void TraceReader::fail(const std::string& what) const { throw TraceError(chunks_.name(), event_offset_, what); }

std::uint64_t TraceReader::read_varint(const char* what) {
  std::uint64_t value = 0;
  switch (read_uvarint([this] { return chunks_.next_byte(); }, value)) {
    case VarintStatus::Ok: return value;
    case VarintStatus::Truncated:
      fail(fmt::format("truncated: the file ends inside an event (reading the {}), with no end event", what));
    case VarintStatus::Overlong: fail(fmt::format("malformed number ({}): longer than 64 bits", what));
  }
  return value;
}

ObjectId TraceReader::checked_id(std::int64_t value, const char* what) {
  if (value < 0 || static_cast<std::uint64_t>(value) >= kIdLimit)
    fail(fmt::format("impossible {} id {} (ids are 0..{})", what, value, kIdLimit - 1));
  return static_cast<ObjectId>(value);
}

ObjectId TraceReader::read_id_delta(const char* what) {
  const std::int64_t delta = zigzag_decode(read_varint(what));
  if (delta > static_cast<std::int64_t>(kIdLimit) || delta < -static_cast<std::int64_t>(kIdLimit))
    fail(fmt::format("impossible {} id (delta {})", what, delta));
  const ObjectId id = checked_id(last_id_ + delta, what);
  last_id_ = id;
  return id;
}

void TraceReader::check_allocated(ObjectId id, const char* what) {
  if (objects_.find(id) == nullptr) fail(fmt::format("event out of order: {} #{} was never allocated", what, id));
}

bool TraceReader::next(TraceEvent& event) {
  if (ended_) return false;
  event_offset_ = chunks_.offset();
  const int tag = chunks_.next_byte();
  if (tag < 0) fail("truncated: the file ends without an end event");
  event_offset_ = chunks_.last_offset();
  if (tag >= kEventKinds) fail(fmt::format("unknown event tag {}", tag));
  event.kind = static_cast<EventKind>(tag);
  event.offset = event_offset_;
  decode_body(event);
  check_and_apply(event);
  return true;
}

void TraceReader::decode_body(TraceEvent& e) {
  switch (e.kind) {
    case EventKind::AllocObject: {
      e.id = read_id_delta("allocated");
      const std::uint64_t refs = read_varint("reference field count");
      const std::uint64_t scalars = read_varint("scalar field count");
      if (refs > kMaxFields || scalars > kMaxFields)
        fail(fmt::format("impossible object shape: {} reference and {} scalar fields (at most {} each)", refs, scalars,
                         kMaxFields));
      e.ref_fields = static_cast<std::uint32_t>(refs);
      e.scalar_fields = static_cast<std::uint32_t>(scalars);
      e.length = 0;
      e.bytes = read_varint("object bytes");
      return;
    }
    case EventKind::AllocRefArray:
    case EventKind::AllocScalarArray:
      e.id = read_id_delta("allocated");
      e.length = read_varint("array length");
      if (e.length > kMaxArrayLength)
        fail(fmt::format("impossible array length {} (at most {})", e.length, kMaxArrayLength));
      e.ref_fields = e.scalar_fields = 0;
      e.bytes = read_varint("array bytes");
      return;
    case EventKind::Store: {
      e.id = read_id_delta("store source");
      e.slot = read_varint("store slot");
      const std::uint64_t target = read_varint("store target");
      if (target == 0) {
        e.target = kNullRef;
      } else {
        const std::int64_t delta = zigzag_decode(target - 1);
        if (delta > static_cast<std::int64_t>(kIdLimit) || delta < -static_cast<std::int64_t>(kIdLimit))
          fail(fmt::format("impossible store target id (delta {})", delta));
        e.target = checked_id(static_cast<std::int64_t>(e.id) + delta, "store target");
      }
      return;
    }
    case EventKind::Roots: {
      const std::uint64_t count = read_varint("root count");
      e.roots.clear();
      std::int64_t previous = 0;
      // Not reserved from `count`: each root costs at least one byte that must be read.
      for (std::uint64_t i = 0; i < count; ++i) {
        const std::int64_t delta = zigzag_decode(read_varint("root"));
        if (delta > static_cast<std::int64_t>(kIdLimit) || delta < -static_cast<std::int64_t>(kIdLimit))
          fail(fmt::format("impossible root id (delta {})", delta));
        previous = checked_id(previous + delta, "root");
        e.roots.push_back(static_cast<ObjectId>(previous));
      }
      return;
    }
    case EventKind::Collection: {
      const std::uint64_t size = read_varint("collection reason length");
      if (size == 0 || size > kMaxReasonBytes)
        fail(fmt::format("impossible collection reason length {} (1..{})", size, kMaxReasonBytes));
      e.reason.clear();
      for (std::uint64_t i = 0; i < size; ++i) {
        const int c = chunks_.next_byte();
        if (c < 0) fail("truncated: the file ends inside a collect event, with no end event");
        if (c <= ' ' || c >= 0x7F) fail(fmt::format("collection reason holds the non-printable byte 0x{:02x}", c));
        e.reason.push_back(static_cast<char>(c));
      }
      return;
    }
    case EventKind::End: return;
  }
}

void TraceReader::check_and_apply(TraceEvent& e) {
  switch (e.kind) {
    case EventKind::AllocObject:
    case EventKind::AllocRefArray:
    case EventKind::AllocScalarArray:
      if (!objects_.allocate(e.id, e.reference_slots(), e.offset))
        fail(fmt::format("object #{} allocated again without a collection since its allocation at byte {}", e.id,
                         objects_.find(e.id)->allocated_at));
      return;
    case EventKind::Store: {
      const TraceObjectTable::Entry* source = objects_.find(e.id);
      if (source == nullptr) fail(fmt::format("event out of order: store into #{}, which was never allocated", e.id));
      if (e.slot >= source->reference_slots)
        fail(fmt::format("store into slot {} of #{}, which has {} reference slots", e.slot, e.id,
                         source->reference_slots));
      if (e.target != kNullRef) check_allocated(e.target, "store target");
      return;
    }
    case EventKind::Roots:
      for (ObjectId r : e.roots) check_allocated(r, "root");
      return;
    case EventKind::Collection: objects_.collection(); return;
    case EventKind::End:
      ended_ = true;
      if (!chunks_.at_end()) {
        event_offset_ = chunks_.offset();
        fail("data after the end event");
      }
      return;
  }
}

}  // namespace gcvm::trace
