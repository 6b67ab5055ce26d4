// `gcvm trace dump FILE` (every event as one line of text, with its byte offset) and
// `gcvm trace stats FILE` (counts and sizes). Both stream: memory does not grow with
// the trace beyond the reader's table of recorded ids.
#include <fmt/format.h>

#include <array>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "heapgraph/trace/trace_reader.hpp"
#include "vm/cli/commands.hpp"

namespace gcvm::cli {

namespace {

struct TraceArgs {
  std::string file;
  std::string format = "text";
};

int run_dump(const TraceArgs& args) {
  trace::TraceReader reader(args.file);
  trace::TraceEvent e;
  while (reader.next(e)) fmt::print("{} {}\n", e.offset, trace::describe(e));
  return kExitOk;
}

struct TraceCounts {
  std::array<std::uint64_t, trace::kEventKinds> events{};
  std::uint64_t objects = 0;
  std::uint64_t arrays = 0;
  std::uint64_t allocated_bytes = 0;
  std::uint64_t stores = 0;
  std::uint64_t null_stores = 0;
  std::uint64_t collections = 0;
  std::uint64_t root_snapshots = 0;
  std::uint64_t final_roots = 0;
  std::uint64_t max_roots = 0;
};

int run_stats(const TraceArgs& args) {
  trace::TraceReader reader(args.file);
  TraceCounts c;
  std::uint64_t total = 0;
  trace::TraceEvent e;
  while (reader.next(e)) {
    ++total;
    ++c.events[static_cast<int>(e.kind)];
    if (e.is_allocation()) {
      ++c.objects;
      c.arrays += e.kind != trace::EventKind::AllocObject;
      c.allocated_bytes += e.bytes;
    } else if (e.kind == trace::EventKind::Store) {
      ++c.stores;
      c.null_stores += e.target == kNullRef;
    } else if (e.kind == trace::EventKind::Roots) {
      ++c.root_snapshots;
      c.final_roots = e.roots.size();
      c.max_roots = std::max<std::uint64_t>(c.max_roots, e.roots.size());
    } else if (e.kind == trace::EventKind::Collection) {
      ++c.collections;
    }
  }
  const std::uint64_t file_bytes = reader.bytes_read();
  const double per_event = total > 0 ? static_cast<double>(file_bytes) / static_cast<double>(total) : 0.0;
  if (args.format == "json") {
    nlohmann::json kinds = nlohmann::json::object();
    for (int k = 0; k < trace::kEventKinds; ++k)
      kinds[std::string(trace::event_kind_name(static_cast<trace::EventKind>(k)))] = c.events[k];
    const nlohmann::json out = {
        {"command", "trace stats"},  {"trace", args.file},
        {"events", total},           {"events_by_kind", kinds},
        {"objects", c.objects},      {"arrays", c.arrays},
        {"allocated_bytes", c.allocated_bytes},
        {"stores", c.stores},        {"null_stores", c.null_stores},
        {"collections", c.collections},
        {"root_snapshots", c.root_snapshots},
        {"final_roots", c.final_roots},
        {"max_roots", c.max_roots},  {"distinct_ids", reader.objects().size()},
        {"file_bytes", file_bytes},  {"bytes_per_event", per_event},
        {"chunks", reader.chunks()},
    };
    fmt::print("{}\n", out.dump());
    return kExitOk;
  }
  fmt::print("trace {}: {} bytes in {} chunks, {} events ({:.2f} bytes per event)\n", args.file, file_bytes,
             reader.chunks(), total, per_event);
  for (int k = 0; k < trace::kEventKinds; ++k)
    fmt::print("  {:<20} {}\n", trace::event_kind_name(static_cast<trace::EventKind>(k)), c.events[k]);
  fmt::print("objects allocated: {} ({} arrays), {} bytes; {} distinct ids\n", c.objects, c.arrays,
             c.allocated_bytes, reader.objects().size());
  fmt::print("stores: {} ({} null)\n", c.stores, c.null_stores);
  fmt::print("collections: {}\n", c.collections);
  fmt::print("roots: {} snapshots, {} in the last, at most {}\n", c.root_snapshots, c.final_roots, c.max_roots);
  return kExitOk;
}

}  // namespace

std::function<int()> register_trace_command(CLI::App& app) {
  auto args = std::make_shared<TraceArgs>();
  CLI::App* cmd = app.add_subcommand("trace", "Inspect a heap trace (docs/trace-format.md)");
  cmd->require_subcommand(1);
  CLI::App* dump = cmd->add_subcommand("dump", "Print every event as text, one per line, with its byte offset");
  dump->add_option("file", args->file, "Trace file")->required();
  CLI::App* stats = cmd->add_subcommand("stats", "Count events, objects, stores, collections, roots and bytes");
  stats->add_option("file", args->file, "Trace file")->required();
  stats->add_option("--format", args->format, "Output format")->check(CLI::IsMember({"text", "json"}));
  return [args, dump] { return dump->parsed() ? run_dump(*args) : run_stats(*args); };
}

}  // namespace gcvm::cli
