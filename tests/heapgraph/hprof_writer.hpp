// Writes small HPROF files for tests and fuzz seeds, record by record, with either
// identifier size. Values are big-endian as in the format; lengths are patched in.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace gcvm::test {

class HprofWriter {
 public:
  struct Static {
    std::uint64_t name;
    std::uint8_t type;
    std::uint64_t value;
  };
  struct Field {
    std::uint64_t name;
    std::uint8_t type;
  };

  explicit HprofWriter(unsigned id_size, std::string version = "JAVA PROFILE 1.0.2") : id_size_(id_size) {
    out_ += version;
    out_.push_back('\0');
    u4(id_size);
    u8(0x0123456789abcdefULL);
  }

  const std::string& bytes() const { return out_; }

  void u1(std::uint64_t v) { out_.push_back(static_cast<char>(v & 0xff)); }
  void u2(std::uint64_t v) { u1(v >> 8), u1(v); }
  void u4(std::uint64_t v) { u2(v >> 16), u2(v); }
  void u8(std::uint64_t v) { u4(v >> 32), u4(v); }
  void id(std::uint64_t v) { id_size_ == 4 ? u4(v) : u8(v); }
  void value(std::uint8_t type, std::uint64_t v) {
    switch (type) {
      case 2: id(v); break;
      case 4: case 8: u1(v); break;
      case 5: case 9: u2(v); break;
      case 6: case 10: u4(v); break;
      default: u8(v); break;
    }
  }

  void string_record(std::uint64_t string_id, const std::string& text) {
    begin_record(0x01);
    id(string_id);
    out_ += text;
    end_record();
  }
  void load_class(std::uint64_t class_id, std::uint64_t name_id) {
    begin_record(0x02);
    u4(1), id(class_id), u4(0), id(name_id);
    end_record();
  }
  /// A record this importer skips (e.g. 0x05 STACK TRACE).
  void other_record(std::uint8_t tag, const std::string& body) {
    begin_record(tag);
    out_ += body;
    end_record();
  }
  void begin_record(std::uint8_t tag) {
    u1(tag), u4(0);
    length_at_ = out_.size();
    u4(0);
  }
  void end_record() {
    const std::uint64_t length = out_.size() - length_at_ - 4;
    for (int i = 0; i < 4; ++i) out_[length_at_ + i] = static_cast<char>((length >> (24 - 8 * i)) & 0xff);
  }

  // Heap dump sub-records (between begin_record(0x0C or 0x1C) and end_record()).
  void root(std::uint8_t tag, std::uint64_t object) {
    u1(tag), id(object);
    switch (tag) {
      case 0x01: id(0x777); break;            // JNI global: ref id
      case 0x02: case 0x03: case 0x08: u4(1), u4(2); break;
      case 0x04: case 0x06: u4(1); break;
      default: break;
    }
  }
  void class_dump(std::uint64_t class_id, std::uint64_t super, std::uint64_t loader, std::uint64_t signers,
                  std::uint64_t domain, const std::vector<std::pair<std::uint8_t, std::uint64_t>>& constants,
                  const std::vector<Static>& statics, const std::vector<Field>& fields) {
    u1(0x20), id(class_id), u4(0), id(super), id(loader), id(signers), id(domain), id(0), id(0), u4(16);
    u2(constants.size());
    for (std::size_t i = 0; i < constants.size(); ++i) u2(i + 1), u1(constants[i].first), value(constants[i].first, constants[i].second);
    u2(statics.size());
    for (const auto& s : statics) id(s.name), u1(s.type), value(s.type, s.value);
    u2(fields.size());
    for (const auto& f : fields) id(f.name), u1(f.type);
  }
  /// An instance whose field values (already laid out own-class first) are `values`.
  void instance(std::uint64_t object, std::uint64_t class_id, const std::vector<std::pair<std::uint8_t, std::uint64_t>>& values) {
    u1(0x21), id(object), u4(0), id(class_id);
    std::uint64_t bytes = 0;
    for (const auto& v : values) bytes += v.first == 2 ? id_size_ : size(v.first);
    u4(bytes);
    for (const auto& v : values) value(v.first, v.second);
  }
  void obj_array(std::uint64_t object, std::uint64_t class_id, const std::vector<std::uint64_t>& elements) {
    u1(0x22), id(object), u4(0), u4(elements.size()), id(class_id);
    for (auto e : elements) id(e);
  }
  void prim_array(std::uint64_t object, std::uint8_t type, std::uint32_t length) {
    u1(0x23), id(object), u4(0), u4(length), u1(type);
    for (std::uint32_t i = 0; i < length; ++i) value(type, i);
  }

  static unsigned size(std::uint8_t type) {
    switch (type) {
      case 4: case 8: return 1;
      case 5: case 9: return 2;
      case 6: case 10: return 4;
      default: return 8;
    }
  }

 private:
  unsigned id_size_;
  std::string out_;
  std::size_t length_at_ = 0;
};

}  // namespace gcvm::test
