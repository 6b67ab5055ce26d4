// The Boehm-Demers-Weiser collector (libgc) as a baseline heap: objects allocated in
// libgc's heap and collected by libgc's own (parallel) mark-sweep, measured with the
// same figures as gcvm's collectors. This file is the mechanism that `gcvm mark
// --gc=boehm` uses through BoehmSink, and that a guest-VM binding can use
// as is: objects with N reference and M scalar fields, reference arrays, scalar
// arrays, references as 64-bit pointers.
//
// Object layout: one header word, then the payload.
//   plain object   [header][ref 0 .. ref N-1][scalar 0 .. scalar M-1]
//   ref array      [header = length][element 0 ..]
//   scalar array   [header = length][element 0 ..]
// Headers carry a tag in bits 61-63; a tagged word is never a user-space address on
// x86-64 (canonical user addresses are below 2^47), so a header never keeps anything
// alive when libgc scans it conservatively. Bits 48-60 hold the heap's epoch (which
// BoehmHeap of the process allocated it), the rest the length of an array or the
// field counts of an object (up to 2^24 of each kind).
//
// Precision: libgc scans exactly the words that can hold references. Objects without
// references and scalar arrays are GC_MALLOC_ATOMIC (never scanned); objects with
// references and scalars are GC_MALLOC_EXPLICITLY_TYPED with a bitmap of their
// reference words; objects and arrays with references only are GC_MALLOC (every word
// scanned: the header is a tagged non-address, the rest are references). Roots live
// in one GC_MALLOC_UNCOLLECTABLE array that libgc always scans. What stays
// conservative is libgc's scan of thread stacks and registers and of static data:
// a stale pointer there can keep an unreachable object alive (reported, not hidden:
// BoehmCensus counts what libgc marked, and tests compare it with the serial marker).
// Builders therefore run on a scratch thread (`build_on_scratch_thread`).
//
// Mutators whose roots change between collections (the guest VM) install a root
// source instead of using the root array: libgc calls it at the start of every
// collection, allocation-triggered ones included (GC_set_push_other_roots, chained
// to libgc's own stack scan), and pushes exactly the words it reports. A collection
// listener sees every collection's figures and census, taken at GC_EVENT_END under
// libgc's lock; neither may allocate in libgc's heap or call into libgc.
//
// libgc is one per process: the first BoehmHeap initializes it (GC_THREADS build,
// marker count from --gc-threads via GC_set_markers_count before GC_INIT, which is
// libgc's only chance to take it); later BoehmHeaps share that collector and its
// marker count (`markers()` says which). Calls must come from the thread that
// created the first BoehmHeap or from a thread registered with libgc.
#pragma once

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

namespace gcvm {

/// Figures of one libgc collection (from GC_set_on_collection_event and GC_get_prof_stats).
struct BoehmCollection {
  double wall_ms = 0;        // GC_gcollect, call to return
  double pause_ms = 0;       // GC_EVENT_START .. GC_EVENT_END
  double mark_ms = 0;        // GC_EVENT_MARK_START .. GC_EVENT_MARK_END (world stopped)
  double reclaim_ms = 0;     // GC_EVENT_RECLAIM_START .. END (libgc sweeps lazily: the rest happens on allocation)
  double stop_world_ms = 0;  // GC_EVENT_PRE_STOP_WORLD .. POST_STOP_WORLD
  std::uint64_t gc_number = 0;
  std::uint64_t heap_bytes = 0;        // libgc heap size after the collection
  std::uint64_t free_bytes = 0;        // free bytes in that heap after it
  std::uint64_t in_use_before = 0;     // heap - free before the collection
  std::uint64_t reclaimed_bytes = 0;   // bytes_reclaimed_since_gc after it (approximate in libgc)
};

/// What libgc marked in the last collection: objects it found reachable.
struct BoehmCensus {
  std::uint64_t objects = 0;           // marked objects of this BoehmHeap
  std::uint64_t bytes = 0;             // their sizes as libgc allocated them (granule-rounded)
  std::uint64_t edges = 0;             // non-null references in them (serial marker's edges_traversed)
  /// Other marked objects of the process (root arrays excluded): libgc keeps objects on
  /// its thread-local free lists marked, and earlier BoehmHeaps' objects may survive.
  std::uint64_t foreign_objects = 0;
  double ms = 0;                       // time the census took (not part of the collection)
};

class BoehmHeap {
 public:
  /// Header bits 0-47: an array's length (the epoch and tag sit above them).
  static constexpr std::uint64_t kLengthMask = (std::uint64_t{1} << 48) - 1;
  /// Root source: appends the current roots (null or objects of this heap) to the vector.
  using RootSource = std::function<void(std::vector<std::uint64_t>&)>;
  using CollectionListener = std::function<void(const BoehmCollection&, const BoehmCensus&)>;

  /// `markers` = 0: libgc's default (every core); only the first BoehmHeap's value counts.
  explicit BoehmHeap(unsigned markers);
  ~BoehmHeap();
  BoehmHeap(const BoehmHeap&) = delete;
  BoehmHeap& operator=(const BoehmHeap&) = delete;

  /// Marker threads libgc collects with (the initiating thread included).
  static unsigned markers();

  // --- allocation: fresh objects have null references and zero scalars; throws
  //     HeapExhausted when libgc cannot get memory ---
  void* new_object(std::uint32_t ref_fields, std::uint32_t scalar_fields);
  void* new_ref_array(std::uint64_t length);
  void* new_scalar_array(std::uint64_t length);

  // --- access (callers guarantee objects of this heap and valid indices) ---
  static void** refs(void* object) { return static_cast<void**>(object) + 1; }
  /// Reference `slot` (field or element): objects and ref arrays alike.
  static void store_ref(void* object, std::uint64_t slot, void* target) { refs(object)[slot] = target; }
  static void* load_ref(void* object, std::uint64_t slot) { return refs(object)[slot]; }
  static std::uint64_t* scalars(void* object);  // scalar fields or scalar-array elements
  static std::uint64_t length(const void* array) { return *static_cast<const std::uint64_t*>(array) & kLengthMask; }

  // --- roots ---
  void add_root(void* object);
  void clear_roots();
  std::size_t root_count() const { return root_count_; }
  /// Installs (or, with an empty function, removes) the root source of every later
  /// collection. At most one BoehmHeap of the process has one at a time.
  void set_root_source(RootSource source);
  /// Installs (or removes) the listener of every later collection, automatic ones
  /// included. At most one BoehmHeap of the process has one at a time.
  void set_collection_listener(CollectionListener listener);

  /// Runs `build` (which allocates and links a heap) on a fresh thread registered with
  /// libgc, and rethrows what it throws. A builder leaves object addresses in its stack
  /// frames and registers, which libgc would scan conservatively if they were the
  /// collecting thread's; the scratch thread's stack is gone when it returns, so after
  /// the build only the roots (and what the caller itself holds) keep objects alive.
  void build_on_scratch_thread(const std::function<void()>& build);
  /// Caps libgc's heap (GC_set_max_heap_size); 0 = no cap.
  static void set_max_heap_bytes(std::uint64_t bytes);
  /// Allocation-triggered collections on or off (on by default).
  static void set_automatic(bool enabled);
  /// Drops libgc's warnings on stderr (its "Out of Memory! Returning NULL" included:
  /// callers report exhaustion themselves).
  static void silence_warnings();
  /// Bytes of libgc's heap not free (GC_get_heap_size - GC_get_free_bytes).
  static std::uint64_t in_use_bytes();
  /// One full collection (GC_gcollect).
  BoehmCollection collect();
  /// Counts what the last collection marked (walks libgc's heap under its lock).
  BoehmCensus census() const;
  /// Whether the last collection marked `object` (an object this heap allocated,
  /// possibly freed by that collection; no allocation may have happened since).
  static bool is_marked(const void* object);

  std::uint64_t objects_allocated() const { return objects_allocated_; }

 private:
  void* checked(void* memory, std::uint64_t bytes, const char* what);
  std::uint64_t typed_descriptor(std::uint32_t ref_fields, std::uint32_t scalar_fields);

  void** roots_ = nullptr;  // GC_MALLOC_UNCOLLECTABLE: [header][root 0 ..]
  std::size_t root_count_ = 0;
  std::size_t root_capacity_ = 0;
  std::unordered_map<std::uint64_t, std::uint64_t> descriptors_;  // refs << 32 | scalars -> GC_descr
  std::uint64_t objects_allocated_ = 0;
  std::uint64_t epoch_ = 0;  // header bits naming this heap
};

}  // namespace gcvm
