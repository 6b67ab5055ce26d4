#include "heapgraph/trace/trace_writer.hpp"

#include <algorithm>
#include <stdexcept>

#include "heapgraph/trace/crc32c.hpp"
#include "heapgraph/trace/varint.hpp"

namespace gcvm::trace {

namespace {

void put_u32le(char* out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
}

std::unique_ptr<std::ofstream> open_file(const std::string& path) {
  auto file = std::make_unique<std::ofstream>(path, std::ios::binary | std::ios::trunc);
  if (!*file) throw TraceWriteError(path + ": cannot create the trace file");
  return file;
}

}  // namespace

TraceWriter::TraceWriter(std::ostream& out, std::string name, TraceWriterOptions options)
    : out_(out), name_(std::move(name)), options_(options) {
  write_header();
}

TraceWriter::TraceWriter(const std::string& path, TraceWriterOptions options)
    : file_(open_file(path)), out_(*file_), name_(path), options_(options) {
  write_header();
}

void TraceWriter::write_header() {
  if (options_.chunk_payload == 0 || options_.chunk_payload > kMaxChunkPayload)
    throw std::invalid_argument("trace chunk payload must be 1.." + std::to_string(kMaxChunkPayload) + " bytes");
  char header[kFileHeaderBytes];
  std::copy(kMagic.begin(), kMagic.end(), header);
  put_u32le(header + kMagic.size(), kVersion);
  write_bytes(header, sizeof header);
}

TraceWriter::~TraceWriter() = default;

void TraceWriter::check_id(ObjectId id, const char* what) {
  if (id >= kIdLimit) throw std::invalid_argument(std::string("trace: ") + what + " id " + std::to_string(id) + " is outside the id space");
}

void TraceWriter::begin_event(EventKind kind) {
  if (ended_) throw std::logic_error("trace: event written after end()");
  pending_.push_back(static_cast<char>(kind));
}

void TraceWriter::put_id_delta(ObjectId id) {
  put_uvarint(pending_, zigzag_encode(static_cast<std::int64_t>(id) - static_cast<std::int64_t>(last_id_)));
  last_id_ = id;
}

void TraceWriter::finish_event() {
  ++totals_.events;
  if (pending_.size() >= options_.chunk_payload) flush_chunks(false);
}

void TraceWriter::allocate_object(ObjectId id, std::uint32_t ref_fields, std::uint32_t scalar_fields, std::uint64_t bytes) {
  check_id(id, "allocated");
  if (ref_fields > kMaxFields || scalar_fields > kMaxFields)
    throw std::invalid_argument("trace: object shape exceeds " + std::to_string(kMaxFields) + " fields");
  begin_event(EventKind::AllocObject);
  put_id_delta(id);
  put_uvarint(pending_, ref_fields);
  put_uvarint(pending_, scalar_fields);
  put_uvarint(pending_, bytes);
  finish_event();
}

void TraceWriter::allocate_array(EventKind kind, ObjectId id, std::uint64_t length, std::uint64_t bytes) {
  check_id(id, "allocated");
  if (length > kMaxArrayLength) throw std::invalid_argument("trace: array longer than " + std::to_string(kMaxArrayLength));
  begin_event(kind);
  put_id_delta(id);
  put_uvarint(pending_, length);
  put_uvarint(pending_, bytes);
  finish_event();
}

void TraceWriter::allocate_ref_array(ObjectId id, std::uint64_t length, std::uint64_t bytes) {
  allocate_array(EventKind::AllocRefArray, id, length, bytes);
}

void TraceWriter::allocate_scalar_array(ObjectId id, std::uint64_t length, std::uint64_t bytes) {
  allocate_array(EventKind::AllocScalarArray, id, length, bytes);
}

void TraceWriter::store_ref(ObjectId source, std::uint64_t slot, ObjectId target) {
  check_id(source, "store source");
  if (target != kNullRef) check_id(target, "store target");
  begin_event(EventKind::Store);
  put_id_delta(source);
  put_uvarint(pending_, slot);
  put_uvarint(pending_, target == kNullRef
                            ? 0
                            : zigzag_encode(static_cast<std::int64_t>(target) - static_cast<std::int64_t>(source)) + 1);
  finish_event();
}

void TraceWriter::roots(std::span<const ObjectId> roots) {
  std::uint64_t count = 0;
  for (ObjectId r : roots) {
    if (r == kNullRef) continue;
    check_id(r, "root");
    ++count;
  }
  begin_event(EventKind::Roots);
  put_uvarint(pending_, count);
  std::int64_t previous = 0;
  for (ObjectId r : roots) {
    if (r == kNullRef) continue;
    put_uvarint(pending_, zigzag_encode(static_cast<std::int64_t>(r) - previous));
    previous = r;
  }
  finish_event();
}

void TraceWriter::collection(std::string_view reason) {
  if (reason.empty() || reason.size() > kMaxReasonBytes ||
      !std::all_of(reason.begin(), reason.end(), [](char c) { return c > ' ' && c < 0x7F; }))
    throw std::invalid_argument("trace: collection reason must be 1.." + std::to_string(kMaxReasonBytes) +
                                " printable characters without spaces");
  begin_event(EventKind::Collection);
  put_uvarint(pending_, reason.size());
  pending_.append(reason);
  finish_event();
}

void TraceWriter::end() {
  begin_event(EventKind::End);
  ++totals_.events;
  ended_ = true;
  flush_chunks(true);
  out_.flush();
  if (!out_) throw TraceWriteError(name_ + ": cannot write the trace file");
}

void TraceWriter::flush_chunks(bool all) {
  std::size_t done = 0;
  while (pending_.size() - done >= options_.chunk_payload || (all && done < pending_.size())) {
    const auto size = static_cast<std::uint32_t>(std::min<std::size_t>(options_.chunk_payload, pending_.size() - done));
    char header[kChunkHeaderBytes];
    put_u32le(header, size);
    std::uint32_t crc = crc32c(0, header, 4);
    crc = crc32c(crc, pending_.data() + done, size);
    put_u32le(header + 4, crc);
    write_bytes(header, sizeof header);
    write_bytes(pending_.data() + done, size);
    done += size;
    ++totals_.chunks;
  }
  pending_.erase(0, done);
}

void TraceWriter::write_bytes(const char* data, std::size_t size) {
  out_.write(data, static_cast<std::streamsize>(size));
  if (!out_) throw TraceWriteError(name_ + ": cannot write the trace file");
  totals_.bytes += size;
}

}  // namespace gcvm::trace
