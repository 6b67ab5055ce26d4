#include "heapgraph/import/hprof_importer.hpp"

#include <algorithm>
#include <limits>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "heapgraph/import/byte_reader.hpp"
#include "heapgraph/import/imported_object.hpp"
#include "heapgraph/import/progress_bar.hpp"

namespace gcvm {

namespace {

// Top-level record tags.
constexpr std::uint8_t kTagString = 0x01;
constexpr std::uint8_t kTagLoadClass = 0x02;
constexpr std::uint8_t kTagHeapDump = 0x0C;
constexpr std::uint8_t kTagHeapDumpSegment = 0x1C;
constexpr std::uint8_t kTagHeapDumpEnd = 0x2C;

// Heap dump sub-record tags.
constexpr std::uint8_t kRootUnknown = 0xFF;
constexpr std::uint8_t kRootJniGlobal = 0x01;
constexpr std::uint8_t kRootJniLocal = 0x02;
constexpr std::uint8_t kRootJavaFrame = 0x03;
constexpr std::uint8_t kRootNativeStack = 0x04;
constexpr std::uint8_t kRootStickyClass = 0x05;
constexpr std::uint8_t kRootThreadBlock = 0x06;
constexpr std::uint8_t kRootMonitorUsed = 0x07;
constexpr std::uint8_t kRootThreadObject = 0x08;
constexpr std::uint8_t kClassDump = 0x20;
constexpr std::uint8_t kInstanceDump = 0x21;
constexpr std::uint8_t kObjArrayDump = 0x22;
constexpr std::uint8_t kPrimArrayDump = 0x23;

constexpr std::uint8_t kTypeObject = 2;
constexpr std::uint8_t kWeakBit = 0x80;  // in flattened layouts: an object field not followed

constexpr std::string_view kReferenceClassName = "java/lang/ref/Reference";
constexpr std::string_view kReferentFieldName = "referent";

constexpr unsigned kMaxSuperclassDepth = 4096;
constexpr std::size_t kMaxLayoutFields = std::size_t{1} << 27;
constexpr std::uint32_t kUnresolved = std::numeric_limits<std::uint32_t>::max();

std::string hex(std::uint64_t id) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  do {
    out.insert(out.begin(), kDigits[id & 15]);
    id >>= 4;
  } while (id != 0);
  return "0x" + out;
}

struct FieldDesc {
  std::uint64_t name = 0;
  std::uint8_t type = 0;
};

struct ClassInfo {
  std::uint64_t id = 0;
  std::uint64_t super = 0;
  std::uint32_t fields_begin = 0, fields_count = 0;  // own instance fields, in field_pool_
  std::uint32_t ref_values = 0;                      // object-typed constant-pool entries and statics
  // Resolved on first use: the flattened instance layout (own fields, then the superclass's ...).
  std::uint32_t layout_begin = kUnresolved, layout_count = 0;
  std::uint32_t instance_refs = 0;
  std::uint64_t instance_bytes = 0;
};

enum class Pass { Collect = 1, Create = 2, Link = 3 };

class HprofImporter {
 public:
  HprofImporter(std::istream& in, const std::string& name, HeapSink& sink, const ImportOptions& options,
                ImportSummary& summary)
      : reader_(in, name), sink_(sink), options_(options), summary_(summary) {}

  void run() {
    summary_.format = "hprof";
    summary_.file_bytes = reader_.size();
    scan(Pass::Collect);
    build_index();
    resolve_weak_names();
    scan(Pass::Create);
    scan(Pass::Link);
    for (std::uint64_t h = 0; h < root_bits_.size(); ++h)
      if (root_bits_[h]) {
        sink_.add_root(h);
        ++summary_.roots;
      }
  }

 private:
  // ---- record level ----

  void read_header() {
    std::string version;
    for (std::uint8_t c = reader_.u1(); c != 0; c = reader_.u1()) {
      if (version.size() >= 32) reader_.fail("the HPROF header is not terminated by a NUL byte");
      version.push_back(c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?');  // printable in messages
    }
    if (!version.starts_with("JAVA PROFILE 1.0.")) reader_.fail_at(0, "not an HPROF file (header '" + version + "')");
    const std::uint64_t at = reader_.offset();
    id_size_ = reader_.u4();
    if (id_size_ != 4 && id_size_ != 8)
      reader_.fail_at(at, "identifier size " + std::to_string(id_size_) + " (HPROF ids are 4 or 8 bytes)");
    summary_.id_size = id_size_;
    reader_.u8();  // timestamp
  }

  void scan(Pass pass) {
    pass_ = pass;
    reader_.rewind();
    ProgressBar progress(reader_.name() + ": reading HPROF (pass " + std::to_string(static_cast<int>(pass)) + "/3)",
                         reader_.size(), options_.progress);
    progress_ = &progress;
    read_header();
    current_ = 0;
    bool saw_heap_dump = false, segments_open = false;
    while (!reader_.at_limit()) {
      const std::uint64_t start = reader_.offset();
      const std::uint8_t tag = reader_.u1();
      reader_.u4();  // time
      const std::uint32_t length = reader_.u4();
      if (length > reader_.remaining())
        reader_.fail_at(start, "record (tag " + hex(tag) + ") of " + std::to_string(length) + " bytes, but only " +
                                   std::to_string(reader_.remaining()) + " are left in the file");
      const std::uint64_t end = reader_.offset() + length;
      const std::uint64_t file_limit = reader_.set_limit(end, tag == kTagHeapDumpSegment ? "its HEAP_DUMP_SEGMENT" : "its record");
      if (tag == kTagHeapDump || tag == kTagHeapDumpSegment) {
        saw_heap_dump = true;
        segments_open = tag == kTagHeapDumpSegment || segments_open;
        while (!reader_.at_limit()) sub_record();
      } else if (tag == kTagHeapDumpEnd) {
        segments_open = false;
      } else if (tag == kTagString && pass == Pass::Collect) {
        string_record(length);
      } else if (tag == kTagLoadClass && pass == Pass::Collect) {
        reader_.u4();  // class serial
        const std::uint64_t class_id = id();
        reader_.u4();  // stack trace serial
        load_class_.emplace_back(class_id, id());
      }
      reader_.skip(end - reader_.offset());
      reader_.restore_limit(file_limit, "the file");
      progress.update(reader_.offset());
    }
    if (!saw_heap_dump) reader_.fail("the file holds no HEAP_DUMP or HEAP_DUMP_SEGMENT record (truncated?)");
    if (segments_open) reader_.fail("the heap dump segments are not followed by HEAP_DUMP_END (truncated?)");
    if (pass == Pass::Create && current_ != ids_count_)
      reader_.fail("the file changed between passes");
  }

  void string_record(std::uint32_t length) {
    if (length < id_size_) reader_.fail("STRING record shorter than an identifier");
    const std::uint64_t string_id = id();
    const std::uint64_t chars = length - id_size_;
    if (chars != kReferenceClassName.size() && chars != kReferentFieldName.size()) return;
    std::string text;
    reader_.bytes(chars, text);
    if (text == kReferenceClassName) reference_class_names_.insert(string_id);
    if (text == kReferentFieldName) referent_names_.insert(string_id);
  }

  // ---- heap dump sub-records ----

  std::uint64_t id() { return reader_.uint(id_size_); }

  unsigned value_size(std::uint8_t type, std::uint64_t at) const {
    switch (type) {
      case kTypeObject: return id_size_;
      case 4: case 8: return 1;    // boolean, byte
      case 5: case 9: return 2;    // char, short
      case 6: case 10: return 4;   // float, int
      case 7: case 11: return 8;   // double, long
      default: reader_.fail_at(at, "invalid basic type " + std::to_string(type));
    }
  }

  void sub_record() {
    const std::uint64_t start = reader_.offset();
    const std::uint8_t tag = reader_.u1();
    progress_->update(start);
    switch (tag) {
      case kRootUnknown: case kRootStickyClass: case kRootMonitorUsed: return root(0);
      case kRootJniGlobal: return root(id_size_);
      case kRootNativeStack: case kRootThreadBlock: return root(4);
      case kRootJniLocal: case kRootJavaFrame: case kRootThreadObject: return root(8);
      case kClassDump: return class_dump(start);
      case kInstanceDump: return instance_dump(start);
      case kObjArrayDump: return obj_array_dump(start);
      case kPrimArrayDump: return prim_array_dump(start);
      default: reader_.fail_at(start, "unknown heap dump sub-record tag " + hex(tag));
    }
  }

  void root(unsigned extra_bytes) {
    const std::uint64_t object = id();
    reader_.skip(extra_bytes);
    if (pass_ != Pass::Link) return;
    ++summary_.root_records;
    const SinkHandle h = lookup(object);
    if (h == kNoHandle)
      ++summary_.roots_dropped;
    else
      root_bits_[h] = true;
  }

  /// Pass 1 records the object; pass 2 creates it; pass 3 returns its handle.
  SinkHandle object(std::uint64_t object_id, std::uint64_t start, std::uint64_t ref_slots, std::uint64_t bytes) {
    if (pass_ == Pass::Collect) {
      if (ids_.size() >= std::numeric_limits<std::uint32_t>::max() - 1) reader_.fail_at(start, "more than 2^32-2 objects");
      ids_.push_back(object_id);
      return kNoHandle;
    }
    const SinkHandle h = current_++;
    if (pass_ == Pass::Create) {
      if (lookup(object_id) != h) reader_.fail_at(start, "object id " + hex(object_id) + " appears twice");
      const SinkHandle created = create_imported_object(sink_, ref_slots, bytes);
      if (created != h) reader_.fail_at(start, "the heap sink numbered an object out of order");
      summary_.bytes += bytes;
    }
    return h;
  }

  void store(SinkHandle source, std::uint64_t slot, std::uint64_t target_id) {
    if (target_id == 0) return;
    const SinkHandle target = lookup(target_id);
    if (target == kNoHandle) {
      ++summary_.edges_dropped;
      return;
    }
    sink_.store_ref(source, slot, target);
    ++summary_.edges_kept;
  }

  void class_dump(std::uint64_t start) {
    const std::uint64_t class_id = id();
    reader_.u4();  // stack trace serial
    std::uint64_t header[6];
    for (auto& h : header) h = id();  // super, loader, signers, protection domain, 2 reserved
    reader_.u4();                     // instance size in the VM
    ClassInfo info;
    info.id = class_id;
    info.super = header[0];
    std::vector<std::uint64_t> refs;  // pass 3: the referenced ids in slot order after the header
    auto values = [&](bool has_name) {
      const std::uint16_t count = reader_.u2();
      for (std::uint16_t i = 0; i < count; ++i) {
        if (has_name) id(); else reader_.u2();  // static field name / constant-pool index
        const std::uint64_t at = reader_.offset();
        const std::uint8_t type = reader_.u1();
        const unsigned size = value_size(type, at);
        if (type != kTypeObject) {
          reader_.skip(size);
          continue;
        }
        ++info.ref_values;
        const std::uint64_t value = id();
        if (pass_ == Pass::Link) refs.push_back(value);
      }
    };
    values(false);  // constant pool
    values(true);   // static fields
    const std::uint16_t field_count = reader_.u2();
    info.fields_begin = static_cast<std::uint32_t>(field_pool_.size());
    info.fields_count = field_count;
    for (std::uint16_t i = 0; i < field_count; ++i) {
      FieldDesc field;
      field.name = id();
      const std::uint64_t at = reader_.offset();
      field.type = reader_.u1();
      value_size(field.type, at);
      if (pass_ == Pass::Collect) field_pool_.push_back(field);
    }
    if (pass_ == Pass::Collect) {
      if (field_pool_.size() > kMaxLayoutFields) reader_.fail_at(start, "the class dumps declare too many fields");
      class_index_.emplace(class_id, static_cast<std::uint32_t>(classes_.size()));
      classes_.push_back(info);
    }
    const SinkHandle h = object(class_id, start, 4 + std::uint64_t{info.ref_values}, reader_.offset() - start);
    if (pass_ != Pass::Link) return;
    for (unsigned slot = 0; slot < 4; ++slot) store(h, slot, header[slot]);
    for (std::size_t i = 0; i < refs.size(); ++i) store(h, 4 + i, refs[i]);
  }

  void instance_dump(std::uint64_t start) {
    const std::uint64_t object_id = id();
    reader_.u4();  // stack trace serial
    const std::uint64_t class_id = id();
    const std::uint32_t data_bytes = reader_.u4();
    if (data_bytes > reader_.remaining())
      reader_.fail("instance data of " + std::to_string(data_bytes) + " bytes runs past the end of its segment");
    if (pass_ == Pass::Collect) {
      object(object_id, start, 0, 0);
      reader_.skip(data_bytes);
      return;
    }
    const ClassInfo& cls = resolved_class(class_id, start);
    if (cls.instance_bytes != data_bytes)
      reader_.fail_at(start, "instance " + hex(object_id) + " has " + std::to_string(data_bytes) +
                                 " bytes of fields; its class " + hex(class_id) + " describes " +
                                 std::to_string(cls.instance_bytes));
    const SinkHandle h = object(object_id, start, 1 + std::uint64_t{cls.instance_refs}, reader_.offset() - start + data_bytes);
    if (pass_ == Pass::Create) {
      reader_.skip(data_bytes);
      return;
    }
    store(h, 0, class_id);
    std::uint64_t slot = 1;
    for (std::uint32_t i = 0; i < cls.layout_count; ++i) {
      const std::uint8_t type = layout_pool_[cls.layout_begin + i];
      if ((type & ~kWeakBit) != kTypeObject) {
        reader_.skip(value_size(type, 0));
        continue;
      }
      const std::uint64_t target = id();
      if ((type & kWeakBit) && target != 0)
        ++summary_.edges_weak;
      else
        store(h, slot, target);
      ++slot;
    }
  }

  void obj_array_dump(std::uint64_t start) {
    const std::uint64_t object_id = id();
    reader_.u4();  // stack trace serial
    const std::uint32_t length = reader_.u4();
    const std::uint64_t class_id = id();
    if (std::uint64_t{length} * id_size_ > reader_.remaining())
      reader_.fail("object array of " + std::to_string(length) + " elements runs past the end of its segment");
    const std::uint64_t bytes = reader_.offset() - start + std::uint64_t{length} * id_size_;
    const SinkHandle h = pass_ == Pass::Create ? current_ : object(object_id, start, 0, 0);
    if (pass_ == Pass::Create) {
      if (lookup(object_id) != h) reader_.fail_at(start, "object id " + hex(object_id) + " appears twice");
      if (sink_.new_ref_array(std::uint64_t{length} + 1) != h) reader_.fail_at(start, "the heap sink numbered an object out of order");
      ++current_;
      summary_.bytes += bytes;
    }
    if (pass_ != Pass::Link) {
      reader_.skip(std::uint64_t{length} * id_size_);
      return;
    }
    store(h, 0, class_id);
    for (std::uint64_t i = 0; i < length; ++i) store(h, i + 1, id());
  }

  void prim_array_dump(std::uint64_t start) {
    const std::uint64_t object_id = id();
    reader_.u4();  // stack trace serial
    const std::uint32_t length = reader_.u4();
    const std::uint64_t at = reader_.offset();
    const std::uint8_t type = reader_.u1();
    if (type == kTypeObject) reader_.fail_at(at, "primitive array of element type 'object'");
    const std::uint64_t data = std::uint64_t{length} * value_size(type, at);
    if (data > reader_.remaining())
      reader_.fail("primitive array of " + std::to_string(length) + " elements runs past the end of its segment");
    object(object_id, start, 0, reader_.offset() - start + data);
    reader_.skip(data);
  }

  // ---- between passes ----

  void build_index() {
    // Sorting (id, handle) pairs in place is several times faster than sorting handles
    // by an indirect key; dumps written in address order are already sorted.
    std::vector<std::pair<std::uint64_t, std::uint32_t>> keyed(ids_.size());
    for (std::size_t i = 0; i < ids_.size(); ++i) keyed[i] = {ids_[i], static_cast<std::uint32_t>(i)};
    ids_ = {};
    if (!std::is_sorted(keyed.begin(), keyed.end())) std::sort(keyed.begin(), keyed.end());
    sorted_ids_.resize(keyed.size());
    handles_.resize(keyed.size());
    for (std::size_t i = 0; i < keyed.size(); ++i) {
      sorted_ids_[i] = keyed[i].first;
      handles_[i] = keyed[i].second;
    }
    keyed = {};
    build_buckets();
    summary_.objects = sorted_ids_.size();
    root_bits_.assign(sorted_ids_.size(), false);
    ids_count_ = sorted_ids_.size();
  }

  SinkHandle lookup(std::uint64_t object_id) const {
    if (sorted_ids_.empty() || object_id < sorted_ids_.front() || object_id > sorted_ids_.back()) return kNoHandle;
    const std::uint64_t bucket = (object_id - sorted_ids_.front()) >> bucket_shift_;
    const auto first = sorted_ids_.begin() + bucket_start_[bucket];
    const auto last = sorted_ids_.begin() + bucket_start_[bucket + 1];
    const auto it = std::lower_bound(first, last, object_id);
    if (it == last || *it != object_id) return kNoHandle;
    return handles_[static_cast<std::size_t>(it - sorted_ids_.begin())];
  }

  // Ids are heap addresses, spread over a range: one bucket per 2^shift ids of the range
  // (about one object per bucket) turns a lookup into one or two cache misses, where a
  // binary search over tens of millions of ids would take ~25. Skewed ids only make
  // the in-bucket binary search longer.
  void build_buckets() {
    bucket_shift_ = 0;
    if (sorted_ids_.empty()) return;
    const std::uint64_t span = sorted_ids_.back() - sorted_ids_.front();
    const std::uint64_t buckets_wanted = std::max<std::uint64_t>(1, sorted_ids_.size());
    while (bucket_shift_ < 63 && (span >> bucket_shift_) >= buckets_wanted) ++bucket_shift_;
    const std::uint64_t buckets = (span >> bucket_shift_) + 1;
    bucket_start_.assign(buckets + 1, 0);
    for (std::uint64_t id : sorted_ids_) ++bucket_start_[((id - sorted_ids_.front()) >> bucket_shift_) + 1];
    for (std::uint64_t b = 0; b < buckets; ++b) bucket_start_[b + 1] += bucket_start_[b];
  }

  void resolve_weak_names() {
    if (options_.weak_refs != WeakRefs::Weak) return;
    for (const auto& [class_id, name_id] : load_class_)
      if (reference_class_names_.count(name_id)) reference_classes_.insert(class_id);
  }

  const ClassInfo& resolved_class(std::uint64_t class_id, std::uint64_t at) {
    if (last_class_ != nullptr && last_class_->id == class_id) return *last_class_;
    const auto found = class_index_.find(class_id);
    if (found == class_index_.end())
      reader_.fail_at(at, "instance of class " + hex(class_id) + ", which has no CLASS_DUMP in the file");
    ClassInfo& cls = classes_[found->second];
    if (cls.layout_begin != kUnresolved) return *(last_class_ = &cls);
    cls.layout_begin = static_cast<std::uint32_t>(layout_pool_.size());
    std::uint64_t current = class_id;
    for (unsigned depth = 0; current != 0; ++depth) {
      const auto it = class_index_.find(current);
      if (it == class_index_.end()) break;  // superclass not dumped: its fields are unknown
      if (depth >= kMaxSuperclassDepth)
        reader_.fail_at(at, "class " + hex(class_id) + " has a superclass chain longer than " +
                                std::to_string(kMaxSuperclassDepth) + " (a cycle?)");
      const ClassInfo& c = classes_[it->second];
      const bool is_reference = reference_classes_.count(c.id) != 0;
      for (std::uint32_t i = 0; i < c.fields_count; ++i) {
        const FieldDesc& f = field_pool_[c.fields_begin + i];
        const bool weak = is_reference && f.type == kTypeObject && referent_names_.count(f.name) != 0;
        layout_pool_.push_back(static_cast<std::uint8_t>(f.type | (weak ? kWeakBit : 0)));
        cls.instance_refs += f.type == kTypeObject;
        cls.instance_bytes += value_size(f.type, at);
      }
      if (layout_pool_.size() > kMaxLayoutFields) reader_.fail_at(at, "the flattened class layouts are too large");
      current = c.super;
    }
    cls.layout_count = static_cast<std::uint32_t>(layout_pool_.size() - cls.layout_begin);
    last_class_ = &cls;
    return cls;
  }

  ByteReader reader_;
  HeapSink& sink_;
  const ImportOptions& options_;
  ImportSummary& summary_;
  ProgressBar* progress_ = nullptr;
  Pass pass_ = Pass::Collect;
  unsigned id_size_ = 8;
  SinkHandle current_ = 0;  // passes 2 and 3: the handle of the next object in file order

  std::vector<std::uint64_t> ids_;         // pass 1: object ids in file order
  std::vector<std::uint64_t> sorted_ids_;  // then: sorted ids ...
  std::vector<std::uint32_t> handles_;     // ... and the handle of each
  std::vector<std::uint32_t> bucket_start_;  // first index in sorted_ids_ of each id bucket
  unsigned bucket_shift_ = 0;
  std::uint64_t ids_count_ = 0;
  std::vector<bool> root_bits_;

  std::vector<ClassInfo> classes_;
  const ClassInfo* last_class_ = nullptr;  // instances of one class often come in runs
  std::unordered_map<std::uint64_t, std::uint32_t> class_index_;
  std::vector<FieldDesc> field_pool_;
  std::vector<std::uint8_t> layout_pool_;

  std::unordered_set<std::uint64_t> reference_class_names_, referent_names_, reference_classes_;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> load_class_;  // (class id, name string id)
};

}  // namespace

ImportSummary import_hprof(std::istream& in, const std::string& name, HeapSink& sink, const ImportOptions& options) {
  ImportSummary summary;
  HprofImporter importer(in, name, sink, options, summary);
  importer.run();
  return summary;
}

}  // namespace gcvm
