// What the heap importers take and report. Every importer fills any HeapSink with the
// same conventions (see docs/heap-import.md):
//   - handles are created in the order the objects appear in the file;
//   - an object's reference slots are fixed at creation; a slot whose target is null,
//     weak (where weak references are not followed) or missing from the file stays
//     null;
//   - roots are added after every object exists, each at most once, in handle order.
#pragma once

#include <cstdint>
#include <string>

namespace gcvm {

/// How java.lang.ref.Reference.referent (HPROF) is treated; V8 weak edges are always weak.
enum class WeakRefs { Strong, Weak };

struct ImportOptions {
  WeakRefs weak_refs = WeakRefs::Strong;
  /// Draw a progress bar on stderr; it is drawn only when stderr is a terminal.
  bool progress = true;
};

/// What an import produced. `edges_*` count non-null references found in the file:
/// kept (stored in the sink), dropped (target id not in the file), weak (not stored).
struct ImportSummary {
  std::string format;  // "hprof" or "v8"
  std::uint64_t objects = 0;
  std::uint64_t edges_kept = 0;
  std::uint64_t edges_dropped = 0;
  std::uint64_t edges_weak = 0;
  std::uint64_t roots = 0;          // distinct rooted objects
  std::uint64_t root_records = 0;   // root records read (duplicates and dropped included)
  std::uint64_t roots_dropped = 0;  // root records naming an id not in the file
  /// HPROF: bytes of the objects' sub-records in the dump; V8: the nodes' self_size.
  std::uint64_t bytes = 0;
  std::uint64_t file_bytes = 0;
  unsigned id_size = 0;  // HPROF identifier size (4 or 8); 0 for V8
  double bytes_per_object() const { return objects ? static_cast<double>(bytes) / static_cast<double>(objects) : 0.0; }
};

}  // namespace gcvm
