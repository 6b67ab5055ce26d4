#include "heapgraph/import/v8_importer.hpp"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <streambuf>
#include <vector>

#include "heapgraph/import/import_error.hpp"
#include "heapgraph/import/imported_object.hpp"
#include "heapgraph/import/progress_bar.hpp"

namespace gcvm {

namespace {

using nlohmann::json;

/// A read-only stream buffer over another stream that knows the absolute offset of
/// the next character (for error messages) and drives the progress bar.
class CountingBuffer final : public std::streambuf {
 public:
  CountingBuffer(std::istream& in, ProgressBar& progress) : in_(in), progress_(progress), chunk_(1 << 16) {}
  std::uint64_t offset() const { return chunk_start_ + static_cast<std::uint64_t>(gptr() - eback()); }

 protected:
  int_type underflow() override {
    chunk_start_ += static_cast<std::uint64_t>(egptr() - eback());
    in_.read(chunk_.data(), static_cast<std::streamsize>(chunk_.size()));
    const auto got = static_cast<std::size_t>(in_.gcount());
    setg(chunk_.data(), chunk_.data(), chunk_.data() + got);
    progress_.update(chunk_start_);
    return got == 0 ? traits_type::eof() : traits_type::to_int_type(chunk_[0]);
  }

 private:
  std::istream& in_;
  ProgressBar& progress_;
  std::vector<char> chunk_;
  std::uint64_t chunk_start_ = 0;
};

/// snapshot.meta, as far as the importer needs it.
struct Meta {
  std::vector<std::string> node_fields, edge_fields;
  std::vector<std::vector<std::string>> edge_types;
};

constexpr std::size_t kMaxMetaStrings = 4096;
constexpr std::size_t kMaxDepth = 256;
constexpr std::uint64_t kNone = std::numeric_limits<std::uint64_t>::max();
// The shortest possible edge in the file is "0,0,0," (with at least three fields).
constexpr std::uint64_t kMinEdgeBytes = 6;

class SnapshotReader final : public nlohmann::json_sax<json> {
 public:
  SnapshotReader(const std::string& name, std::uint64_t file_bytes, HeapSink& sink, ImportSummary& summary)
      : name_(name), file_bytes_(file_bytes), sink_(sink), summary_(summary) {}

  void begin_pass(const CountingBuffer* buffer) {
    buffer_ = buffer;
    stack_.clear();
    section_ = Section::None;
  }
  bool meta_done() const { return meta_done_; }
  bool nodes_done() const { return nodes_done_; }
  bool edges_done() const { return edges_done_; }
  std::uint64_t node_count() const { return edge_counts_.size(); }

  // nlohmann::json_sax
  bool null() override { return scalar(); }
  bool boolean(bool) override { return scalar(); }
  bool number_integer(number_integer_t) override { return number(kNone); }
  bool number_unsigned(number_unsigned_t value) override { return number(value); }
  bool number_float(number_float_t, const string_t&) override { return number(kNone); }
  bool binary(binary_t&) override { return scalar(); }
  bool string(string_t& value) override {
    if (section_ == Section::Meta) meta_string(value);
    return scalar();
  }
  bool start_object(std::size_t) override { return open(false); }
  bool start_array(std::size_t) override { return open(true); }
  bool key(string_t& key) override {
    stack_.back().key = key;
    if (stack_.size() == 1) section_ = section_for(key);
    return true;
  }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) override {
    std::string what = ex.what();
    if (const auto bracket = what.find("] "); what.starts_with("[json.exception") && bracket != std::string::npos)
      what = what.substr(bracket + 2);
    throw ImportError(name_, position > 0 ? position - 1 : 0, "malformed JSON: " + what);
  }

 private:
  enum class Section { None, Skip, Snapshot, Meta, Nodes, Edges };
  struct Frame {
    bool array = false;
    std::string key;
    std::uint64_t elements = 0;
  };

  std::uint64_t offset() const { return buffer_ ? buffer_->offset() : 0; }
  [[noreturn]] void fail(const std::string& what) const { throw ImportError(name_, offset(), what); }

  Section section_for(const std::string& key) const {
    if (key == "snapshot" && !meta_done_) return Section::Snapshot;
    if (key == "nodes" && meta_done_ && !nodes_done_) return Section::Nodes;
    if (key == "edges" && nodes_done_ && !edges_done_) return Section::Edges;
    return Section::Skip;
  }

  bool open(bool array) {
    if (stack_.empty() && array) fail("a heap snapshot is a JSON object, not an array");
    if (stack_.size() >= kMaxDepth) fail("JSON nested more than " + std::to_string(kMaxDepth) + " levels deep");
    if (!stack_.empty()) {
      if ((section_ == Section::Nodes || section_ == Section::Edges) && stack_.size() > 1)
        fail(std::string("\"") + (section_ == Section::Nodes ? "nodes" : "edges") + "\" must be a flat array of numbers");
      if (section_ == Section::Snapshot && stack_.size() == 2 && stack_.back().key == "meta") section_ = Section::Meta;
      ++stack_.back().elements;
    }
    stack_.push_back(Frame{array, {}, 0});
    if ((section_ == Section::Nodes || section_ == Section::Edges) && stack_.size() == 2 && !array)
      fail(std::string("\"") + (section_ == Section::Nodes ? "nodes" : "edges") + "\" must be an array");
    return true;
  }

  bool close() {
    if (stack_.size() == 2 && section_ == Section::Nodes) finish_nodes();
    if (stack_.size() == 2 && section_ == Section::Edges) finish_edges();
    if (stack_.size() == 3 && section_ == Section::Meta) {
      section_ = Section::Snapshot;
      finish_meta();
    }
    if (stack_.size() == 2 && section_ == Section::Snapshot && !meta_done_)
      fail("\"snapshot\" has no \"meta\" object describing the node and edge fields");
    stack_.pop_back();
    if (stack_.size() == 1) section_ = Section::None;
    return true;
  }

  bool scalar() {
    if (stack_.empty()) fail("a heap snapshot is a JSON object");
    if (section_ == Section::Nodes || section_ == Section::Edges)
      fail(std::string("\"") + (section_ == Section::Nodes ? "nodes" : "edges") + "\" must hold only non-negative integers");
    ++stack_.back().elements;
    return true;
  }

  void meta_string(const std::string& value) {
    // Paths: meta.node_fields[i], meta.edge_fields[i], meta.edge_types[i] or meta.edge_types[i][j].
    const std::size_t depth = stack_.size();
    if (depth < 4 || !stack_[2].key.size()) return;
    const std::string& field = stack_[2].key;
    if (meta_strings_++ > kMaxMetaStrings) fail("snapshot.meta holds more than " + std::to_string(kMaxMetaStrings) + " strings");
    if (depth == 4 && stack_[3].array) {
      if (field == "node_fields") meta_.node_fields.push_back(value);
      if (field == "edge_fields") meta_.edge_fields.push_back(value);
      if (field == "edge_types") meta_.edge_types.push_back({value});
    } else if (depth == 5 && stack_[3].array && stack_[4].array && field == "edge_types") {
      meta_.edge_types.resize(stack_[3].elements);
      meta_.edge_types.back().push_back(value);
    }
  }

  static std::uint64_t index_of(const std::vector<std::string>& names, std::string_view name) {
    const auto it = std::find(names.begin(), names.end(), name);
    return it == names.end() ? kNone : static_cast<std::uint64_t>(it - names.begin());
  }

  void finish_meta() {
    node_field_count_ = meta_.node_fields.size();
    edge_field_count_ = meta_.edge_fields.size();
    edge_count_field_ = index_of(meta_.node_fields, "edge_count");
    self_size_field_ = index_of(meta_.node_fields, "self_size");
    edge_type_field_ = index_of(meta_.edge_fields, "type");
    to_node_field_ = index_of(meta_.edge_fields, "to_node");
    if (edge_count_field_ == kNone) fail("snapshot.meta.node_fields does not name \"edge_count\"");
    if (edge_type_field_ == kNone || to_node_field_ == kNone)
      fail("snapshot.meta.edge_fields must name \"type\" and \"to_node\"");
    if (edge_type_field_ < meta_.edge_types.size())
      weak_type_ = index_of(meta_.edge_types[edge_type_field_], "weak");
    meta_done_ = true;
  }

  bool number(std::uint64_t value) {
    if (stack_.empty()) fail("a heap snapshot is a JSON object");
    if (section_ != Section::Nodes && section_ != Section::Edges) return scalar();
    if (stack_.size() != 2) fail(std::string("\"") + (section_ == Section::Nodes ? "nodes" : "edges") + "\" must be an array");
    if (value == kNone) fail("expected a non-negative integer");
    // The field index within the current node or edge, without a division per number.
    const std::uint64_t field = stack_.back().elements++ == 0 ? (field_ = 0) : field_;
    const std::uint64_t fields = section_ == Section::Nodes ? node_field_count_ : edge_field_count_;
    field_ = field + 1 == fields ? 0 : field + 1;
    if (section_ == Section::Nodes)
      node_value(field, value);
    else
      edge_value(field, value);
    return true;
  }

  void node_value(std::uint64_t field, std::uint64_t value) {
    if (field == edge_count_field_) node_edges_ = value;
    if (field == self_size_field_) node_bytes_ = value;
    if (field + 1 < node_field_count_) return;
    if (edge_counts_.size() >= std::numeric_limits<std::uint32_t>::max()) fail("more than 2^32-1 nodes");
    declared_edges_ += node_edges_;
    if (node_edges_ > file_bytes_ / kMinEdgeBytes || declared_edges_ > file_bytes_ / kMinEdgeBytes)
      fail("node " + std::to_string(edge_counts_.size()) + " declares " + std::to_string(node_edges_) +
           " edges, more than the file could hold");
    edge_counts_.push_back(static_cast<std::uint32_t>(node_edges_));
    create_imported_object(sink_, node_edges_, node_bytes_);
    summary_.bytes += node_bytes_;
    node_edges_ = node_bytes_ = 0;
  }

  void finish_nodes() {
    if (stack_.back().elements % node_field_count_ != 0)
      fail("\"nodes\" holds " + std::to_string(stack_.back().elements) + " numbers, not a multiple of the " +
           std::to_string(node_field_count_) + " node fields");
    nodes_done_ = true;
    summary_.objects = edge_counts_.size();
  }

  void edge_value(std::uint64_t field, std::uint64_t value) {
    if (field == edge_type_field_) edge_type_ = value;
    if (field == to_node_field_) edge_to_ = value;
    if (field + 1 < edge_field_count_) return;
    while (source_ < edge_counts_.size() && slot_ == edge_counts_[source_]) {
      ++source_;
      slot_ = 0;
    }
    if (source_ == edge_counts_.size())
      fail("more edges than the nodes' edge counts declare (" + std::to_string(declared_edges_) + ")");
    if (edge_type_ == weak_type_) {
      ++summary_.edges_weak;
    } else {
      if (edge_to_ % node_field_count_ != 0 || edge_to_ / node_field_count_ >= edge_counts_.size())
        fail("edge to_node " + std::to_string(edge_to_) + " is not the start of a node");
      sink_.store_ref(source_, slot_, edge_to_ / node_field_count_);
      ++summary_.edges_kept;
    }
    ++slot_;
    ++edges_seen_;
  }

  void finish_edges() {
    if (stack_.back().elements % edge_field_count_ != 0)
      fail("\"edges\" holds " + std::to_string(stack_.back().elements) + " numbers, not a multiple of the " +
           std::to_string(edge_field_count_) + " edge fields");
    if (edges_seen_ != declared_edges_)
      fail("\"edges\" holds " + std::to_string(edges_seen_) + " edges; the nodes declare " +
           std::to_string(declared_edges_));
    edges_done_ = true;
  }

  const std::string& name_;
  std::uint64_t file_bytes_;
  HeapSink& sink_;
  ImportSummary& summary_;
  const CountingBuffer* buffer_ = nullptr;

  std::vector<Frame> stack_;
  Section section_ = Section::None;
  Meta meta_;
  std::size_t meta_strings_ = 0;
  bool meta_done_ = false, nodes_done_ = false, edges_done_ = false;
  std::uint64_t node_field_count_ = 0, edge_field_count_ = 0;
  std::uint64_t edge_count_field_ = kNone, self_size_field_ = kNone, edge_type_field_ = kNone, to_node_field_ = kNone;
  std::uint64_t weak_type_ = kNone;

  std::vector<std::uint32_t> edge_counts_;  // per node, the only per-object state
  std::uint64_t field_ = 0;                 // field index of the next number in "nodes" or "edges"
  std::uint64_t node_edges_ = 0, node_bytes_ = 0, declared_edges_ = 0;
  std::uint64_t edge_type_ = 0, edge_to_ = 0, source_ = 0, slot_ = 0, edges_seen_ = 0;
};

}  // namespace

ImportSummary import_v8_snapshot(std::istream& in, const std::string& name, HeapSink& sink,
                                 const ImportOptions& options) {
  ImportSummary summary;
  summary.format = "v8";
  in.clear();
  in.seekg(0, std::ios::end);
  const auto end = in.tellg();
  if (!in || end < 0) throw ImportError(name, 0, "cannot read the file (not a seekable regular file)");
  summary.file_bytes = static_cast<std::uint64_t>(end);

  SnapshotReader reader(name, summary.file_bytes, sink, summary);
  for (int pass = 1; !reader.edges_done(); ++pass) {
    const bool had_meta = reader.meta_done(), had_nodes = reader.nodes_done();
    in.clear();
    in.seekg(0);
    ProgressBar progress(name + ": reading V8 snapshot (pass " + std::to_string(pass) + ")", summary.file_bytes,
                         options.progress);
    CountingBuffer buffer(in, progress);
    std::istream counted(&buffer);
    reader.begin_pass(&buffer);
    json::sax_parse(counted, &reader);
    const bool progressed = reader.meta_done() != had_meta || reader.nodes_done() != had_nodes || reader.edges_done();
    if (!progressed) {
      const char* missing = !reader.meta_done() ? "\"snapshot\" with \"meta\"" : !reader.nodes_done() ? "\"nodes\"" : "\"edges\"";
      throw ImportError(name, summary.file_bytes, std::string("the snapshot has no ") + missing + " section");
    }
  }
  if (reader.node_count() > 0) {
    sink.add_root(0);
    summary.roots = summary.root_records = 1;
  }
  return summary;
}

}  // namespace gcvm
