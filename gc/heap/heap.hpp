// The heap: SOA blocks (BlockAllocator), out-of-line array storage, and the CSR
// reference graph (RefGraph) that the markers read.
//
// Invariants:
// - Object id = block * 64 + slot = CSR vertex (DESIGN.md 1).
// - Every object's vertex has an edge range of exactly its reference count: a block
//   of a shape with R reference fields reserves capacity * R edges when it is
//   initialized (slot s owns [base + s*R, base + (s+1)*R)); a reference array reserves
//   `length` edges when it is allocated. Ranges are released when the block is freed
//   or the array is swept.
// - Barrier mode (the default): every reference store goes through `store_ref` /
//   `store_element`, which write the heap and call RefGraph::record_store, so the graph
//   is complete at all times (DESIGN.md 3). Rebuild mode skips the graph write; the
//   collector calls `rebuild_graph()` before marking. `verify_graph()` compares.
// - A generational heap (HeapConfig::promotion_age != 0) has Generations
//   (gc/heap/generations.hpp), and the same stores, in either mode, also call
//   Generations::record_store: the remembered set's write barrier.
// - used_bytes() = blocks in use * kBlockBytes + array element bytes <= limit_bytes().
//   An allocation that would exceed the limit returns kNullRef and changes nothing;
//   the caller decides to collect or report out of memory.
// - Fresh objects have null references and zero scalars. A block is initialized for
//   its shape once, when the allocator hands it out (every slot's fields set, its edge
//   range reserved null), so an object in a slot untouched since then
//   (block_allocator.hpp) is allocated without writing its fields or edges; only an
//   object in a slot that held an earlier object is initialized field by field and
//   has its out-edges nulled (which the graph's changes record, as for any store).
// - Lazy sweep (the concurrent plan, gc/heap/lazy_sweep.hpp): after `defer_sweep`,
//   the allocation slow paths sweep pending blocks before they take a fresh block or
//   give up on the limit; `finish_lazy_sweep` sweeps the rest. Objects in pending
//   blocks stay allocated (and counted in used_bytes()) until their block is swept.
// - A used-bytes watch (watch_used_bytes) is checked only where used_bytes() grows (a
//   fresh block, an array's storage), never on the allocation fast path, and fires at
//   most once per arming, from the allocating thread after the allocation succeeded.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "gc/heap/block_allocator.hpp"
#include "gc/heap/generations.hpp"
#include "gc/heap/lazy_sweep.hpp"
#include "gc/heap/mark_bitmap.hpp"
#include "gc/heap/shape.hpp"
#include "gc/heap/storage_releaser.hpp"
#include "gc/util/thread_pool.hpp"
#include "heapgraph/ref_graph.hpp"

namespace gcvm {

enum class RefGraphMode { Barrier, Rebuild };

struct HeapConfig {
  /// Heap limit in bytes; 0 means the whole id space (kMaxBlocks blocks).
  std::uint64_t limit_bytes = 0;
  RefGraphMode graph_mode = RefGraphMode::Barrier;
  std::uint64_t max_edges = RefGraph::kDefaultMaxEdges;
  /// Nonzero: the heap keeps generations (the generational plan), promoting young
  /// objects that survived this many collections.
  std::uint32_t promotion_age = 0;
};

class Heap {
 public:
  /// The longest array: its degree must fit the CSR's 32-bit degree.
  static constexpr std::uint64_t kMaxArrayLength = 0xFFFFFFFFull;

  explicit Heap(HeapConfig config = {});
  ~Heap();
  Heap(const Heap&) = delete;
  Heap& operator=(const Heap&) = delete;

  ShapeTable& shapes() { return shapes_; }
  const ShapeTable& shapes() const { return shapes_; }

  // --- allocation (kNullRef when the heap limit or id space is exhausted) ---
  ObjectId allocate(ShapeId shape) {
    const ShapeLayout& layout = shapes_.layout(shape);
    if (layout.shape.kind != ShapeKind::Object) reject_array_shape();
    BlockAllocator::Slot slot;
    if (!blocks_.take_from_cursor(shape, slot)) [[unlikely]]
      if ((slot = allocate_off_cursor(shape)).id == kNullRef) return kNullRef;
    if (!slot.untouched) initialize_object(slot.id, layout);
    return slot.id;
  }
  ObjectId allocate_ref_array(std::uint64_t length) { return allocate_array(ShapeTable::kRefArray, length); }
  ObjectId allocate_scalar_array(std::uint64_t length) { return allocate_array(ShapeTable::kScalarArray, length); }

  // --- field access (callers guarantee live objects and valid indices) ---
  ShapeId shape_of(ObjectId obj) const { return blocks_.shape_of_block(block_of(obj)); }
  ObjectId load_ref(ObjectId obj, std::uint32_t field) const { return *ref_field(obj, field); }
  void store_ref(ObjectId obj, std::uint32_t field, ObjectId target) {
    *ref_field(obj, field) = target;
    barrier(obj, field, target);
  }
  std::uint64_t load_scalar(ObjectId obj, std::uint32_t field) const { return *scalar_field(obj, field); }
  void store_scalar(ObjectId obj, std::uint32_t field, std::uint64_t value) { *scalar_field(obj, field) = value; }

  std::uint64_t array_length(ObjectId array) const { return load_scalar(array, kArrayLengthField); }
  ObjectId load_element(ObjectId array, std::uint64_t index) const { return ref_elements(array)[index]; }
  void store_element(ObjectId array, std::uint64_t index, ObjectId target) {
    ref_elements(array)[index] = target;
    barrier(array, static_cast<std::uint32_t>(index), target);
  }
  std::uint64_t load_scalar_element(ObjectId array, std::uint64_t index) const { return scalar_elements(array)[index]; }
  void store_scalar_element(ObjectId array, std::uint64_t index, std::uint64_t value) {
    scalar_elements(array)[index] = value;
  }

  // Field access at a precomputed byte offset (ShapeLayout::ref_offset / scalar_field_offset
  // of the object's shape), for callers that know the shape statically (the VM's typed
  // bytecode): no per-access layout lookup. Same contracts as the index forms above.
  ObjectId load_ref_at(ObjectId obj, std::uint32_t offset) const { return *ref_at(obj, offset); }
  void store_ref_at(ObjectId obj, std::uint32_t field, std::uint32_t offset, ObjectId target) {
    *ref_at(obj, offset) = target;
    barrier(obj, field, target);
  }
  std::uint64_t load_scalar_at(ObjectId obj, std::uint32_t offset) const { return *scalar_at(obj, offset); }
  void store_scalar_at(ObjectId obj, std::uint32_t offset, std::uint64_t value) { *scalar_at(obj, offset) = value; }

  bool is_live(ObjectId obj) const { return obj != kNullRef && blocks_.is_allocated(obj); }
  /// The object's size as traces and statistics count it: 4 bytes per reference field
  /// and 8 per scalar field; an array 16 (its header) plus 4 or 8 bytes per element.
  std::uint64_t object_bytes(ObjectId obj) const;
  /// Calls visit(id) for every live object, in id order.
  template <typename F>
  void for_each_object(F&& visit) const {
    for (std::uint32_t b = 0; b < blocks_.high_water(); ++b)
      for (std::uint64_t w = blocks_.alloc_word(b); w != 0; w &= w - 1)
        visit(make_object_id(b, static_cast<std::uint32_t>(__builtin_ctzll(w))));
  }

  // --- the collector's side ---
  const RefGraph& graph() const { return graph_; }
  RefGraph& graph() { return graph_; }
  const BlockAllocator& blocks() const { return blocks_; }
  RefGraphMode graph_mode() const { return config_.graph_mode; }
  /// The generations of a generational heap; null otherwise.
  Generations* generations() { return generations_.get(); }
  const Generations* generations() const { return generations_.get(); }
  /// Rebuild mode: rewrites every live object's edges from its fields (only slots
  /// that change are marked in the graph's changes).
  void rebuild_graph();
  /// Compares the graph with the heap; empty if equal, else the first mismatches.
  std::string verify_graph() const;
  /// What block sweeps leave for `settle_sweep`: the CSR edge ranges to release, in
  /// the order they were found, the array bytes freed and the blocks emptied. The edge
  /// space's free lists and the heap's counters are shared, so block sweeps record
  /// these instead of releasing them; settling the debts of a parallel sweep in run
  /// order then leaves exactly what the serial sweep leaves, and the shared counters
  /// change once per debt, not once per block. A debt has cache lines of its own: the
  /// parallel sweep's tasks fill theirs side by side.
  struct alignas(64) SweepDebt {
    std::vector<EdgeRange> edge_ranges;
    /// edge_ranges' size classes, where the sweep counted them (count_edge_ranges)
    EdgeSpace::BatchCounts edge_counts;
    bool edges_counted = false;
    std::vector<void*> storage;  // of the arrays freed, for the storage releaser
    std::uint64_t array_bytes = 0;
    std::uint32_t emptied_blocks = 0;
  };
  /// Sweep of blocks [first, last) (gc/heap/sweep.cpp drives it): frees the slots
  /// whose bit in `mark_words` (a word per block, indexed by block) is clear, and their
  /// array storage, and records their edge ranges in `debt` (with the blocks it
  /// emptied: blocks_in_use() counts them until the debt is settled). Safe to call
  /// concurrently for disjoint runs (BlockAllocator::sweep_blocks; freed array storage
  /// is only recorded); nothing else may run on the heap meanwhile.
  struct SweptRun {
    std::uint64_t objects_before = 0;  // allocated in the run before the sweep
    std::uint64_t freed_objects = 0;
  };
  SweptRun sweep_blocks(std::uint32_t first, std::uint32_t last, const std::uint64_t* mark_words, SweepDebt& debt);
  /// The same for one block, whose slots outside `mark_word` are freed. Returns the
  /// number of objects freed.
  std::uint32_t sweep_block(std::uint32_t block, std::uint64_t mark_word, SweepDebt& debt);
  /// Counts the size classes of the edge ranges `debt` records so far (by the thread
  /// that swept its blocks: a parallel sweep's tasks count their own, and settling them
  /// only places the ranges; EdgeSpace::release_in_order).
  static void count_edge_ranges(SweepDebt& debt) {
    EdgeSpace::count(debt.edge_ranges, debt.edge_counts);
    debt.edges_counted = true;
  }
  /// Releases what `debts` record and empties them: edge ranges last found first (the
  /// last debt's last range first), on the threads of `pool` when there are many
  /// (EdgeSpace::release_in_order); the edge space's free lists are stacks and the
  /// allocator takes the lowest free block first, so a block emptied and taken again
  /// for a shape with as many edges gets back the range it had, and its vertices do not
  /// change (nothing for a device mirror to copy). Then the freed arrays' storage goes
  /// to the storage releaser (storage_releaser.hpp), which returns it to malloc after
  /// the pause: last, so that the releaser's frees do not compete with the edge ranges'
  /// release for the memory system. After the block sweeps, on one thread.
  void settle_sweep(std::span<SweepDebt> debts, ThreadPool* pool = nullptr);
  void settle_sweep(SweepDebt& debt) { settle_sweep(std::span<SweepDebt>(&debt, 1)); }
  /// `count` empty debts for a sweep, kept by the heap from sweep to sweep: settling
  /// empties them but their vectors keep their capacity, so a sweep that records tens
  /// of thousands of edge ranges does not grow (and copy, and fault in) its lists again.
  std::span<SweepDebt> sweep_debts(std::size_t count);
  /// Waits until the storage of every array swept so far is back with malloc.
  void drain_released_storage() { releaser_.drain(); }
  /// Called once after a sweep: allocation restarts from the lowest active blocks.
  void reset_allocation_cursors() { blocks_.reset_cursors(); }
  /// Lazy sweep: the `doomed` slots (DoomedSlots::compute) are freed later, by the
  /// allocator or `finish_lazy_sweep`; returns how many. Constant time (`doomed` gets
  /// spent storage back). Only when no lazy sweep is pending.
  std::uint64_t defer_sweep(DoomedSlots& doomed) { return lazy_.begin(doomed); }
  /// Sweeps every pending block (a no-op when none is).
  void finish_lazy_sweep() {
    if (!lazy_.idle()) sweep_pending(kNoShape);
  }
  bool lazy_sweep_pending() const { return !lazy_.idle(); }
  /// What the lazy sweep did since the last call.
  LazySweepTotals take_lazy_sweep_totals() { return lazy_.take_totals(); }

  std::uint64_t used_bytes() const { return std::uint64_t{blocks_.blocks_in_use()} * kBlockBytes + array_bytes_; }
  std::uint64_t limit_bytes() const { return limit_bytes_; }
  std::uint64_t array_bytes() const { return array_bytes_; }

  /// Calls `reached` once, from the first allocation that takes a fresh block or an
  /// array's storage and leaves used_bytes() at or above `bytes`, then disarms; a later
  /// call replaces the armed watch. The collector's foresight of its next pause: the
  /// heap only reports how full it is (gc/plans/sweep_pool_waker.hpp decides what for).
  void watch_used_bytes(std::uint64_t bytes, std::function<void()> reached) {
    watch_bytes_ = bytes;
    watch_reached_ = std::move(reached);
  }
  void disarm_used_bytes_watch() { watch_bytes_ = kUnwatched; }

 private:
  static constexpr std::uint64_t kUnwatched = std::numeric_limits<std::uint64_t>::max();
  /// After an allocation that grew used_bytes(): fires the watch if it is reached.
  void check_used_bytes_watch() {
    if (used_bytes() >= watch_bytes_) [[unlikely]] {
      watch_bytes_ = kUnwatched;
      watch_reached_();
    }
  }
  [[noreturn]] static void reject_array_shape();
  /// The write barrier of every reference store (after the heap write).
  void barrier(ObjectId holder, std::uint32_t slot, ObjectId target) {
    if (config_.graph_mode == RefGraphMode::Barrier) graph_.record_store(holder, slot, target);
    if (generations_ != nullptr) generations_->record_store(holder, target);
  }
  static constexpr ShapeId kNoShape = static_cast<ShapeId>(-1);
  /// Past the cursor block: a slot in another active block, else `allocate_in_new_block`.
  BlockAllocator::Slot allocate_off_cursor(ShapeId shape);
  /// Slow path: a slot freed by the lazy sweep, else a fresh block for `shape` (edge
  /// ranges reserved, every slot's fields initialized), then a slot in it.
  BlockAllocator::Slot allocate_in_new_block(ShapeId shape);
  /// Sweeps pending blocks in order until one has room for `shape` or is free
  /// (kNoShape: all of them); true if it stopped at such a block.
  bool sweep_pending(ShapeId shape);
  ObjectId allocate_slot(ShapeId shape);
  /// Null references and zero scalars in every slot of a block just initialized for
  /// `layout` (its edges are null already: reserve_edges nulls them). A block above
  /// the old high-water mark was never used: its storage still reads as zero
  /// (virtual_array.hpp), so only its references are written.
  void initialize_block_fields(std::uint32_t block, const ShapeLayout& layout, bool never_used);
  /// Null references, zero scalars, null out-edges (barrier mode) of an object whose
  /// slot held an earlier object.
  void initialize_object(ObjectId id, const ShapeLayout& layout) {
    std::byte* base = blocks_.block_data(block_of(id));
    const std::uint32_t slot = slot_of(id);
    auto* refs = reinterpret_cast<std::uint32_t*>(base) + slot;
    for (std::uint32_t f = 0; f < layout.shape.ref_fields; ++f) refs[std::size_t{f} * layout.capacity] = kNullRef;
    auto* scalars = reinterpret_cast<std::uint64_t*>(base + layout.scalar_offset) + slot;
    for (std::uint32_t f = 0; f < layout.shape.scalar_fields; ++f) scalars[std::size_t{f} * layout.capacity] = 0;
    if (config_.graph_mode == RefGraphMode::Barrier && layout.shape.ref_fields > 0) graph_.clear_out_edges(id);
  }
  ObjectId allocate_array(ShapeId shape, std::uint64_t length);
  bool prepare_block(std::uint32_t block, ShapeId shape);
  void release_array(ObjectId array, SweepDebt& debt);
  template <typename MarkOf>
  SweptRun sweep_run(std::uint32_t first, std::uint32_t last, MarkOf&& mark_of, SweepDebt& debt);
  std::uint32_t* ref_at(ObjectId obj, std::uint32_t offset) const {
    auto* base = const_cast<std::byte*>(blocks_.block_data(block_of(obj))) + offset;
    return reinterpret_cast<std::uint32_t*>(base) + slot_of(obj);
  }
  std::uint64_t* scalar_at(ObjectId obj, std::uint32_t offset) const {
    auto* base = const_cast<std::byte*>(blocks_.block_data(block_of(obj))) + offset;
    return reinterpret_cast<std::uint64_t*>(base) + slot_of(obj);
  }
  // Inline: array headers and the collector's side reach fields through these.
  std::uint32_t* ref_field(ObjectId obj, std::uint32_t field) const {
    const std::uint32_t block = block_of(obj);
    const ShapeLayout& layout = shapes_.layout(blocks_.shape_of_block(block));
    auto* base = const_cast<std::byte*>(blocks_.block_data(block)) + layout.ref_offset(field);
    return reinterpret_cast<std::uint32_t*>(base) + slot_of(obj);
  }
  std::uint64_t* scalar_field(ObjectId obj, std::uint32_t field) const {
    const std::uint32_t block = block_of(obj);
    const ShapeLayout& layout = shapes_.layout(blocks_.shape_of_block(block));
    auto* base = const_cast<std::byte*>(blocks_.block_data(block)) + layout.scalar_field_offset(field);
    return reinterpret_cast<std::uint64_t*>(base) + slot_of(obj);
  }
  ObjectId* ref_elements(ObjectId array) const {
    return reinterpret_cast<ObjectId*>(load_scalar(array, kArrayStorageField));
  }
  std::uint64_t* scalar_elements(ObjectId array) const {
    return reinterpret_cast<std::uint64_t*>(load_scalar(array, kArrayStorageField));
  }

  HeapConfig config_;
  std::uint64_t limit_bytes_;
  ShapeTable shapes_;
  BlockAllocator blocks_;
  RefGraph graph_;
  VirtualArray<EdgeIndex> block_edge_base_;
  std::unique_ptr<Generations> generations_;
  LazySweep lazy_;
  std::vector<SweepDebt> sweep_debts_;  // see sweep_debts
  StorageReleaser releaser_;  // frees swept arrays' storage after the pause
  std::uint64_t array_bytes_ = 0;
  std::uint64_t watch_bytes_ = kUnwatched;  // watch_used_bytes
  std::function<void()> watch_reached_;
};

}  // namespace gcvm
