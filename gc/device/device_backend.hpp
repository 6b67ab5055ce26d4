// The device backend interface: what a GPU marker needs from CUDA or OpenCL, and
// nothing more. Policy (which kernels, in which order, when to fall back to the CPU)
// lives in the markers (gc/markers/gpu_*); mechanism (memory, copies, launches,
// timing) lives in the backends (gc/device/cuda_backend.cpp, opencl_backend.cpp),
// which both launch the same kernel source (kernels/common/*.h).
//
// Device memory of one backend instance: the graph mirror (begin, degree, edges:
// kernels/common/mark_layout.h), the mark bitmap, two frontier queues of one entry
// per vertex, and the level state with the roots after it (one buffer). The mirror
// persists between collections; everything else is per collection.
//
// Invariants:
// - After `reserve_graph(V, E, keep_v, keep_e)` the mirror can hold V vertices and E
//   edges (+ the vector padding), and its first keep_v vertices and keep_e edges are
//   what they were (an array that had to grow was copied on the device).
// - Every method either completes or throws DeviceError; a failed collection never
//   hands back a partial mark bitmap (the marker discards what it downloaded).
// - Operations run in order on one queue/stream; reads (`read_*`) wait for all
//   earlier work.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gc/heap/mark_bitmap.hpp"
#include "gc/markers/marker.hpp"
#include "kernels/common/mark_layout.h"
#include "kernels/common/patch_layout.h"
#include "heapgraph/host_pinning.hpp"
#include "heapgraph/object_id.hpp"

namespace gcvm {

/// A device call failed (driver error, out of memory, kernel fault).
class DeviceError : public MarkError {
 public:
  using MarkError::MarkError;
};

struct DeviceInfo {
  std::string backend;   // "cuda" or "opencl"
  unsigned index = 0;    // position within its backend's list (--device=BACKEND:INDEX)
  std::string platform;  // OpenCL platform or "CUDA <driver version>"
  std::string name;
  std::string type;      // "gpu", "cpu", "accelerator"
  std::uint64_t memory_bytes = 0;
  unsigned compute_units = 0;
  /// Work groups of GCVM_GROUP_SIZE threads that run at once on the whole device.
  unsigned resident_groups = 0;
};

/// The kernel parameters of one gpu-bfs collection (GCVM_BFS_* flags).
struct BfsLaunch {
  std::uint32_t flags = 0;
  std::uint32_t wide_threshold = 16;
  std::uint32_t fallback_threshold = 20;
  std::uint32_t fallback_min_level = 5;
  /// Levels mode: from level deep_fallback_level on, a level narrower than this (and no
  /// wider than the one before) also hands the rest to the CPU (0 = only the threshold above).
  std::uint32_t deep_fallback_threshold = 0;
  std::uint32_t deep_fallback_level = 0;
  std::uint32_t expand_batches = 0;  // levels mode: local expansion (bfs_mark.h), 0 = off
  std::uint32_t narrow_rounds = 64;  // async mode: narrow rounds in a row before the CPU takes over
  std::uint32_t groups = 0;  // work groups per level kernel, or of the async launch
};

/// The level state a mark begins with (mark_layout.h), as many words as precede the
/// roots in their shared buffer: every word zero, but the fallback level, which is
/// none. What both backends' begin_mark uploads ahead of the roots.
inline constexpr std::array<std::uint32_t, GCVM_STATE_ROOTS> initial_level_state() {
  std::array<std::uint32_t, GCVM_STATE_ROOTS> state{};
  state[GCVM_STATE_FALLBACK_LEVEL] = GCVM_NO_LEVEL;
  return state;
}

/// The u64 a device state (level, DFS or partition state) keeps in words `at` (low) and
/// `at + 1` (high).
inline std::uint64_t state_word64(std::span<const std::uint32_t> state, std::size_t at) {
  return std::uint64_t{state[at]} | (std::uint64_t{state[at + 1]} << 32);
}

/// The levels' one launch's time from the device clock it left in the level state
/// (DeviceBackend::launch_bfs_levels_together), in milliseconds.
inline double one_launch_ms(std::span<const std::uint32_t> state) {
  const std::uint64_t begin = state_word64(state, GCVM_STATE_CLOCK_BEGIN);
  const std::uint64_t end = state_word64(state, GCVM_STATE_CLOCK_END);
  return end > begin ? static_cast<double>(end - begin) / 1e6 : 0.0;
}

/// Items of the chunk queue of huge objects (mark_layout.h): enough for every object
/// of a graph of `edges` edge slots to be chunked in one collection, in chunks of
/// `chunk_edges` references (GCVM_CHUNK_EDGES, or GCVM_ASYNC_CHUNK_EDGES in async mode).
inline std::uint64_t chunk_queue_capacity(std::uint64_t edges, std::uint64_t chunk_edges = GCVM_CHUNK_EDGES) {
  return std::min<std::uint64_t>(3 * edges / (2 * chunk_edges) + 1, 0xFFFFFFFFull);
}

/// The kernel parameters of one gpu-dfs collection (GCVM_DFS_* flags).
struct DfsLaunch {
  std::uint32_t flags = 0;
  std::uint32_t local_stack = 0;     // hybrid-stack entries per thread, 0 = off
  std::uint32_t wide_threshold = 0;  // references above which the group scans an object
  std::uint32_t pool_slots = 1;      // donation pool slots (the buffer of begin_dfs)
  std::uint32_t chunk_edges = 0;     // chunk size of huge objects (GCVM_DFS_CHUNKS)
  std::uint32_t rounds_per_launch = 1;
  std::uint32_t steps = 1;           // objects a thread pops per round
  std::uint32_t groups = 0;          // work groups of every DFS launch of the collection
};

/// Sizes of lane mode's queue pool and per-lane chunk tables (mark_layout.h,
/// GCVM_LANE_CHUNK): every object enters one lane's log once, and each lane leaves at
/// most one chunk partly empty.
struct LanePoolSize {
  std::uint32_t table_chunks = 0;  // chunks one lane can own
  std::uint32_t pool_chunks = 0;   // chunks in the shared pool
};
inline LanePoolSize lane_pool_size(std::uint64_t vertices, std::uint32_t lanes) {
  const std::uint64_t chunks = (vertices + GCVM_LANE_CHUNK - 1) / GCVM_LANE_CHUNK;
  return {static_cast<std::uint32_t>(chunks + 1), static_cast<std::uint32_t>(chunks + lanes + 1)};
}

/// The mirror's three arrays on the device (kernels/common/mark_layout.h).
enum class MirrorArray : std::uint32_t { Begin = 0, Degree = 1, Edges = 2 };

/// Elements [begin, end) of one array.
struct ElementRange {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  friend bool operator==(const ElementRange&, const ElementRange&) = default;
};

/// Where the sections of a packed mirror patch lie in the backend's patch buffer
/// (byte offsets, each 8-byte aligned), as its section table at the buffer's start
/// also says (kernels/common/patch_layout.h, which describes the sections; the kernel
/// of kernels/common/memory_ops.h reads the table, so a backend needs only `bytes` and
/// `kernel_groups()`). The edge pairs of all segments lie one after another in
/// segment order, from the first segment's offset.
struct MirrorPatchLayout {
  struct Pairs {
    std::uint64_t offset = 0;
    std::uint64_t count = 0;
    std::uint64_t base = 0;
  };
  struct Runs {
    MirrorArray array = MirrorArray::Edges;
    std::uint64_t offset = 0;
    std::uint64_t count = 0;
  };
  /// Bytes of the section table of a patch with pairs in `segments` segments.
  static constexpr std::uint64_t section_table_bytes(std::uint64_t segments) {
    return GCVM_PATCH_TABLE_FIELDS(segments) * sizeof(std::uint64_t);
  }

  std::uint64_t bytes = 0;        // used bytes of the buffer, the section table included; 0: no patch
  std::uint64_t table_bytes = 0;  // the section table's, from offset 0
  std::vector<Pairs> edge_pairs;  // one per segment that has pairs
  std::uint64_t records_offset = 0;
  std::uint64_t record_count = 0;
  std::vector<Runs> runs;         // one per array that has runs

  /// Work groups of the launch that applies the patch: one per GCVM_GROUP_SIZE pairs
  /// and records and one per run (memory_ops.h's units), at most GCVM_PATCH_MAX_GROUPS.
  std::uint32_t kernel_groups() const {
    std::uint64_t items = record_count;
    for (const Pairs& pairs : edge_pairs) items += pairs.count;
    std::uint64_t units = (items + GCVM_GROUP_SIZE - 1) / GCVM_GROUP_SIZE;
    for (const Runs& r : runs) units += r.count;
    return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(units, 1, GCVM_PATCH_MAX_GROUPS));
  }
};
static_assert(static_cast<std::uint32_t>(MirrorArray::Begin) == GCVM_PATCH_BEGIN &&
                  static_cast<std::uint32_t>(MirrorArray::Degree) == GCVM_PATCH_DEGREE &&
                  static_cast<std::uint32_t>(MirrorArray::Edges) == GCVM_PATCH_EDGES,
              "a patch's section table indexes its run fields by MirrorArray");

/// One partition's part of a multi-device mark (kernels/common/partition_mark.h,
/// gc/markers/partitioned_bfs_marker.hpp): its partition table and buffer sizes.
struct PartitionMarkSetup {
  std::uint32_t self = 0;
  /// bounds[K + 1], outbox offsets[K], outbox capacities[K] (partition_mark.h).
  std::vector<std::uint32_t> table;
  std::uint64_t mark_words = 0;      // 32-bit words of this partition's mark bitmap
  std::uint64_t sent_words = 0;      // 32-bit words of the sent filter (one bit per object id of the heap)
  std::uint64_t outbox_entries = 0;  // the outbox segments' capacities, summed
  std::uint32_t partitions() const { return static_cast<std::uint32_t>((table.size() - 1) / 3); }
};

/// Device addresses of a partition's exchange buffers, and the stream that orders
/// work on them (CUDA; what an NCCL communicator sends from and receives into).
struct PartitionBuffers {
  void* outbox = nullptr;
  void* inbox = nullptr;
  void* stream = nullptr;  // cudaStream_t
  int device = -1;         // CUDA device ordinal
};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  virtual const DeviceInfo& info() const = 0;
  /// Makes this backend's device current for the calling thread (CUDA's current device
  /// is per thread): a concurrent mark's thread calls it before its first device call.
  virtual void make_current() {}

  // --- the graph mirror (gc/device/graph_mirror.hpp decides what to copy) ---
  /// Makes room for `vertices` and `edges` (+ the vector padding), keeping the first
  /// `keep_vertices` and `keep_edges` entries where the arrays must move to grow.
  virtual void reserve_graph(std::uint64_t vertices, std::uint64_t edges, std::uint64_t keep_vertices,
                             std::uint64_t keep_edges) = 0;
  /// The pinner that page-locks host memory for this backend's DMA, or null where the
  /// platform cannot pin existing memory (heapgraph/host_pinning.hpp).
  virtual std::shared_ptr<HostPinner> host_pinner() = 0;
  /// Enqueues copies of element ranges of the host array `host` (the whole array, of
  /// `array`'s element type) into the same ranges of the mirror array: by DMA straight
  /// from the host where its memory is pinned, else through the backend's staging.
  virtual void upload_ranges(MirrorArray array, const void* host, std::span<const ElementRange> ranges) = 0;
  /// Host memory for a packed patch of at least `bytes` bytes (pinned where the backend
  /// can pin), which holds its pieces one after another (gc/device/mirror_plan.hpp);
  /// valid until the next call. Waits for the last patch's copies first.
  virtual std::span<std::byte> patch_buffer(std::uint64_t bytes) = 0;
  /// The most bytes patch_buffer gives without staging them (its page-locked buffer's
  /// size where the backend keeps one; the default: any number). A larger patch is
  /// handed over in parts of whole pieces that fit, each part's buffer got in turn
  /// (each waits for the last part's copies), and its size is passed to
  /// want_patch_buffer.
  virtual std::uint64_t patch_buffer_capacity() const { return std::numeric_limits<std::uint64_t>::max(); }
  /// A patch of `bytes` did not fit the page-locked patch buffer: grow_patch_buffer may
  /// grow it toward that size after the pause. The default does nothing.
  virtual void want_patch_buffer(std::uint64_t bytes) { (void)bytes; }
  /// After the pause (nothing of the device is in use): grows the page-locked patch
  /// buffer toward the largest patch that did not fit it since the last call, where the
  /// backend keeps one (page-locking costs about as much as writing the memory, so a
  /// patch that does not fit goes in parts, or a piece larger than the buffer is
  /// staged, and the buffer grows here, outside the pause). The default does nothing.
  virtual void grow_patch_buffer() {}
  /// Enqueues one copy of the piece of the patch buffer at byte `offset` (its
  /// layout.bytes, from its section table on) and the one kernel launch that applies
  /// every section of it; the host goes on writing the buffer's later pieces meanwhile.
  /// A backend may hold a small patch at offset 0 back and apply it, read from the
  /// page-locked buffer, in one launch with begin_mark's and begin_chunks' steps before
  /// whatever it enqueues next (the CUDA backend's pause setup); either way it is applied
  /// before anything enqueued after it. (The pieces of a patch change disjoint entries.)
  virtual void apply_patch(const MirrorPatchLayout& layout, std::uint64_t offset) = 0;
  /// Waits until every enqueued upload and patch is applied.
  virtual void finish_sync() = 0;
  /// Launches now what apply_patch, begin_mark and begin_chunks hold back (nothing
  /// where the backend holds nothing back): for a caller with host work to do before its
  /// next launch, so that the device applies a held-back patch meanwhile.
  virtual void launch_held_back() {}

  // --- one collection ---
  /// Uploads the cleared level state and the roots with one copy (they share a
  /// buffer: mark_layout.h, GCVM_STATE_ROOTS) and sets the mark bitmap (`mark_words`
  /// 32-bit words) to `premarked` (64-bit words, MarkRequest::premarked; zero beyond it).
  /// The copy of the state and roots and the clearing may be held back as apply_patch's
  /// may (with the same guarantee).
  virtual void begin_mark(std::span<const ObjectId> roots, std::uint64_t mark_words,
                          std::span<const std::uint64_t> premarked) = 0;
  /// Claims the first `root_count` roots of begin_mark's into the first level's queue
  /// and sets the bits of the `marked_count` after them (objects the host marked and
  /// scanned: its head start, gc/markers/head_start.hpp), which it does not queue.
  virtual void launch_bfs_seed(std::uint32_t root_count, std::uint32_t marked_count, std::uint32_t groups) = 0;
  virtual void launch_bfs_level(std::uint32_t level, const BfsLaunch& launch) = 0;
  /// Levels mode in one launch (bfs_mark.h, gcvm_bfs_levels_together), where the device
  /// has a grid-wide barrier: the most groups such a launch may have (every one of them
  /// resident at once), or 0 where it has none (OpenCL).
  virtual std::uint32_t bfs_levels_together_groups() const { return 0; }
  /// The seed (as launch_bfs_seed's) and every level from 1 until the mark is over
  /// (with a fallback: the level that decided it), in one launch of `launch.groups`
  /// groups (at most bfs_levels_together_groups()), which then counts the `mark_words`
  /// 32-bit mark words' set bits into state[GCVM_STATE_MARKED] (read_state_and_marks
  /// does not count them again) and leaves in state[GCVM_STATE_OVER_AT] the level at
  /// which the mark was over. Only where bfs_levels_together_groups() is not 0. What
  /// apply_patch, begin_mark and begin_chunks hold back runs in the same launch, before
  /// the seed, and the launch times itself: the device's clock in nanoseconds when the
  /// seed began and when its last group was done, in state[GCVM_STATE_CLOCK_BEGIN] and
  /// state[GCVM_STATE_CLOCK_END] (u64 words; one_launch_ms), without the setup.
  virtual void launch_bfs_levels_together(std::uint32_t root_count, std::uint32_t marked_count,
                                          std::uint64_t mark_words, const BfsLaunch& launch) {
    (void)root_count, (void)marked_count, (void)mark_words, (void)launch;
    throw DeviceError("gpu-bfs: this device has no grid-wide barrier for the levels in one launch");
  }
  /// Levels mode's bitmap frontier (bfs_mark.h, gcvm_bfs_frontier): copies the mark
  /// bitmap's `mark_words` words to the snapshot a launch with GCVM_BFS_BITMAP_OUT
  /// starts from.
  virtual void snapshot_marks(std::uint64_t mark_words) = 0;
  /// Builds queue `level` from the bits set since the snapshot, in ascending order
  /// within tiles, and brings the snapshot up to date (a work group for every
  /// GCVM_GROUP_SIZE words); after the launch of level - 1 that had GCVM_BFS_BITMAP_OUT.
  virtual void launch_bfs_frontier(std::uint32_t level, std::uint64_t mark_words) = 0;
  /// Lane mode (sms=split): `launch.groups` independent BFS lanes over slices of the
  /// roots, the whole mark in one launch.
  virtual void launch_bfs_lanes(std::uint32_t root_count, const BfsLaunch& launch) = 0;
  /// Makes room for and empties the chunk queue of huge objects: `capacity` items
  /// (chunk_queue_capacity). Both gpu-bfs modes, after begin_mark.
  virtual void begin_chunks(std::uint64_t capacity) = 0;
  /// Chunk-queue items [from, to), after all launched work finished.
  virtual std::vector<std::uint64_t> read_chunk_items(std::uint32_t from, std::uint32_t to) = 0;
  /// Async mode (kernels/common/async_mark.h), after begin_mark and begin_chunks: fills
  /// the queue (one slot per vertex) with GCVM_NULL_REF and claims the roots into it.
  virtual void launch_bfs_async_seed(std::uint32_t root_count, std::uint32_t groups) = 0;
  /// The async mark: one launch of `launch.groups` groups.
  virtual void launch_bfs_async(const BfsLaunch& launch) = 0;
  /// After an async STOP: the queue slots below `tail` that were written and not taken
  /// (at most `capacity` of them; the caller sizes it from GCVM_STATE_PENDING).
  virtual std::vector<ObjectId> gather_async_queue(std::uint32_t tail, std::uint32_t capacity) = 0;
  /// Work groups of the async kernel that run at once on the whole device.
  virtual std::uint32_t async_resident_groups() const = 0;
  /// The level state words (GCVM_STATE_WORDS), after all launched work finished.
  virtual std::vector<std::uint32_t> read_state() = 0;
  /// Queue entries [0, count) of the queue that level `level` reads.
  virtual std::vector<ObjectId> read_level_queue(std::uint32_t level, std::uint32_t count) = 0;
  /// The mark bitmap as 64-bit words (invariant 2).
  virtual void read_marks(std::uint64_t* words, std::uint64_t word_count) = 0;
  /// read_state and read_marks in one wait for the device: the marks as they are when
  /// all launched work finished (a caller whose mark goes on reads them again later),
  /// and state[GCVM_STATE_MARKED] their set bits, counted on the device by the CUDA and
  /// OpenCL backends, or by the levels' one launch where it ran (a host count of the
  /// downloaded words cost 25-50 µs of a warm GCBench pause on the H100 host). At most
  /// once per begin_mark: the count adds to the word begin_mark cleared. The default
  /// reads one after the other and counts on the host.
  virtual std::vector<std::uint32_t> read_state_and_marks(std::uint64_t* words, std::uint64_t word_count) {
    std::vector<std::uint32_t> state = read_state();
    read_marks(words, word_count);
    state[GCVM_STATE_MARKED] = static_cast<std::uint32_t>(MarkBitmap::count_bits({words, word_count}));
    return state;
  }

  // --- timing on the device's own clock ---
  /// Starts a device-side interval after all work enqueued so far.
  virtual void timer_start() = 0;
  /// Ends the interval after all work enqueued so far, without waiting (so that reads
  /// enqueued next stay out of it); a later call moves the end.
  virtual void timer_end() = 0;
  /// Ends the interval after all work enqueued so far unless timer_end ended it since
  /// timer_start, waits, returns milliseconds.
  virtual double timer_stop_ms() = 0;
  /// Device bytes held by this backend (mirror, queues, bitmap, state).
  virtual std::uint64_t device_bytes() const = 0;
  /// Device-to-device copy bandwidth in bytes/s, measured by copying `bytes` (for the
  /// benchmarks' bandwidth floor).
  virtual double copy_bandwidth(std::uint64_t bytes) = 0;

  // --- gpu-dfs (kernels/common/dfs_mark.h), after begin_mark ---
  /// Makes room for and resets the DFS stack storage (one word per vertex, all
  /// GCVM_DFS_NOT_IN_STACK), `threads` saved tops, `pool_slots` pool slots, the
  /// chunk table and the DFS state words.
  virtual void begin_dfs(std::uint64_t vertices, std::uint32_t threads, std::uint32_t pool_slots) = 0;
  virtual void launch_dfs_seed(std::uint32_t root_count, const DfsLaunch& launch) = 0;
  /// Launch number `index` (0, 1, ...) of the DFS run kernel.
  virtual void launch_dfs_run(std::uint32_t index, const DfsLaunch& launch) = 0;
  /// The DFS state words (GCVM_DFS_STATE_WORDS), after all launched work finished.
  virtual std::vector<std::uint32_t> read_dfs_state() = 0;
  /// Work groups of the DFS run kernel that run at once on the whole device.
  virtual std::uint32_t dfs_resident_groups() const = 0;
  /// Device bytes of the DFS stacks: stack storage, saved tops, pool and chunk table.
  virtual std::uint64_t dfs_stack_bytes() const = 0;
  /// After the DFS launches (the same `groups`): every entry of the threads' saved
  /// linked stacks, i.e. objects marked but not yet scanned, gathered on the device
  /// (gcvm_dfs_gather); std::nullopt when there are more than `capacity`.
  virtual std::optional<std::vector<ObjectId>> gather_dfs_stacks(std::uint32_t groups, std::uint32_t capacity) = 0;

  // --- one partition of a multi-device mark (kernels/common/partition_mark.h) ---
  // The mirror holds the partition's rows (local vertices).
  /// Sizes the partition's buffers, uploads its table, sets its mark bitmap to
  /// `premarked` (this partition's words; zero beyond them), clears the sent filter
  /// and the partition state.
  virtual void begin_partition_mark(const PartitionMarkSetup& setup, std::span<const std::uint64_t> premarked) = 0;
  /// Makes room in the inbox for `entries` ids (contents not kept).
  virtual void reserve_partition_inbox(std::uint64_t entries) = 0;
  /// Writes `ids` into the inbox from entry `offset`.
  virtual void write_partition_inbox(std::uint64_t offset, std::span<const ObjectId> ids) = 0;
  /// Outbox entries [offset, offset + count), after all launched work finished.
  virtual std::vector<ObjectId> read_partition_outbox(std::uint64_t offset, std::uint64_t count) = 0;
  /// Claims inbox entries [0, count) into frontier queue `queue` (0 or 1).
  virtual void launch_partition_claim(std::uint32_t queue, std::uint32_t count, std::uint32_t groups) = 0;
  /// Scans the frontier of round `round` (queue round % 2).
  virtual void launch_partition_scan(std::uint32_t round, std::uint32_t groups) = 0;
  /// The partition state words (GCVM_PART_STATE_WORDS), after all launched work finished.
  virtual std::vector<std::uint32_t> read_partition_state() = 0;
  /// The exchange buffers' device addresses (CUDA); the default has none.
  virtual PartitionBuffers partition_buffers() { return {}; }
};

}  // namespace gcvm
