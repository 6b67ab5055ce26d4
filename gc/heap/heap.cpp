#include "gc/heap/heap.hpp"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "gc/util/stopwatch.hpp"

namespace gcvm {

namespace {

std::uint32_t max_blocks_for(std::uint64_t limit_bytes) {
  if (limit_bytes == 0) return kMaxBlocks;
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(kMaxBlocks, (limit_bytes + kBlockBytes - 1) / kBlockBytes));
}

std::uint64_t element_bytes(ShapeId shape) { return shape == ShapeTable::kRefArray ? sizeof(ObjectId) : 8; }

}  // namespace

Heap::Heap(HeapConfig config)
    : config_(config),
      limit_bytes_(config.limit_bytes == 0 ? std::uint64_t{kMaxBlocks} * kBlockBytes : config.limit_bytes),
      blocks_(shapes_, max_blocks_for(config.limit_bytes)),
      graph_(std::uint64_t{max_blocks_for(config.limit_bytes)} * kSlotsPerBlock, config.max_edges),
      block_edge_base_(max_blocks_for(config.limit_bytes)),
      generations_(config.promotion_age != 0 ? std::make_unique<Generations>(config.promotion_age) : nullptr) {}

Heap::~Heap() {
  for (std::uint32_t b = 0; b < blocks_.high_water(); ++b) {
    const ShapeId shape = blocks_.shape_of_block(b);
    if (shape != ShapeTable::kRefArray && shape != ShapeTable::kScalarArray) continue;
    for (std::uint64_t w = blocks_.alloc_word(b); w != 0; w &= w - 1)
      std::free(reinterpret_cast<void*>(load_scalar(make_object_id(b, static_cast<std::uint32_t>(std::countr_zero(w))),
                                                    kArrayStorageField)));
  }
}

bool Heap::prepare_block(std::uint32_t block, ShapeId shape) {
  const ShapeLayout& layout = shapes_.layout(shape);
  const ObjectId first = make_object_id(block, 0);
  if (!block_edge_base_.grow_to(block + 1)) return false;
  const std::uint32_t refs = layout.shape.ref_fields;
  const std::uint64_t edges = std::uint64_t{layout.capacity} * refs;
  EdgeIndex base = 0;
  if (refs > 0) {
    const auto reserved = graph_.reserve_edges(edges);
    if (!reserved) return false;
    base = *reserved;
  }
  // Slots past the capacity get vertices too (degree 0), so the graph covers whole blocks.
  if (!graph_.assign_vertex_run(first, layout.capacity, base, refs) ||
      !graph_.grow_vertices(std::uint64_t{first} + kSlotsPerBlock)) {
    graph_.release_edges(base, edges);
    return false;
  }
  block_edge_base_[block] = base;
  return true;
}

void Heap::reject_array_shape() {
  throw std::invalid_argument("Heap::allocate takes object shapes; arrays come from allocate_*_array");
}

bool Heap::sweep_pending(ShapeId shape) {
  const Stopwatch clock;
  LazySweepTotals& totals = lazy_.totals();
  SweepDebt& debt = sweep_debts(1)[0];
  bool room = false;
  for (std::size_t b; !room && (b = lazy_.take_next()) != HierarchicalBitmap::npos;) {
    const auto block = static_cast<std::uint32_t>(b);
    totals.freed_objects += sweep_block(block, blocks_.alloc_word(block) & ~lazy_.doomed(block), debt);
    ++totals.blocks;
    const BlockState state = blocks_.state(block);
    room = shape != kNoShape &&
           (state == BlockState::Free || (state == BlockState::Active && blocks_.shape_of_block(block) == shape));
  }
  settle_sweep(debt);
  totals.ms += clock.elapsed_ms();
  return room;
}

void Heap::initialize_block_fields(std::uint32_t block, const ShapeLayout& layout, bool never_used) {
  std::byte* base = blocks_.block_data(block);
  std::memset(base, 0xFF, std::size_t{layout.shape.ref_fields} * layout.capacity * sizeof(ObjectId));
  static_assert(kNullRef == 0xFFFFFFFFu, "null references are all-ones bytes");
  if (!never_used)
    std::memset(base + layout.scalar_offset, 0, std::size_t{layout.shape.scalar_fields} * layout.capacity * 8);
}

BlockAllocator::Slot Heap::allocate_in_new_block(ShapeId shape) {
  if (!lazy_.idle() && sweep_pending(shape))
    if (const BlockAllocator::Slot slot = blocks_.allocate_in_active_block(shape); slot.id != kNullRef) return slot;
  if (used_bytes() + kBlockBytes > limit_bytes_) return {};
  const std::uint32_t high_water = blocks_.high_water();
  const auto block = blocks_.initialize_block(shape);
  if (!block) return {};
  if (!prepare_block(*block, shape)) {
    blocks_.abandon_block(*block);
    return {};
  }
  initialize_block_fields(*block, shapes_.layout(shape), *block >= high_water);
  const BlockAllocator::Slot slot = blocks_.allocate_in_block(*block);
  check_used_bytes_watch();
  return slot;
}

BlockAllocator::Slot Heap::allocate_off_cursor(ShapeId shape) {
  const BlockAllocator::Slot slot = blocks_.allocate_in_active_block(shape);
  return slot.id != kNullRef ? slot : allocate_in_new_block(shape);
}

ObjectId Heap::allocate_slot(ShapeId shape) {
  const BlockAllocator::Slot slot = allocate_off_cursor(shape);
  if (slot.id == kNullRef) return kNullRef;
  if (!slot.untouched) initialize_object(slot.id, shapes_.layout(shape));
  return slot.id;
}

ObjectId Heap::allocate_array(ShapeId shape, std::uint64_t length) {
  const std::uint64_t bytes = length * element_bytes(shape);
  if (length > kMaxArrayLength) return kNullRef;
  if (used_bytes() + bytes > limit_bytes_) {
    finish_lazy_sweep();
    if (used_bytes() + bytes > limit_bytes_) return kNullRef;
  }
  void* storage = nullptr;
  if (length > 0) {
    // Scalar elements start at zero: calloc takes a large block as fresh pages from the
    // system without writing them (they read as zero), so a large scalar array costs
    // its page faults when the program first touches each page, and only then.
    storage = shape == ShapeTable::kScalarArray ? std::calloc(bytes, 1) : std::malloc(bytes);
    if (storage == nullptr) return kNullRef;
  }
  std::optional<EdgeIndex> edges = EdgeIndex{0};
  if (shape == ShapeTable::kRefArray && !(edges = graph_.reserve_edges(length))) {
    std::free(storage);
    return kNullRef;
  }
  const ObjectId id = allocate_slot(shape);
  if (id == kNullRef) {
    if (shape == ShapeTable::kRefArray) graph_.release_edges(*edges, length);
    std::free(storage);
    return kNullRef;
  }
  array_bytes_ += bytes;
  store_scalar(id, kArrayLengthField, length);
  store_scalar(id, kArrayStorageField, reinterpret_cast<std::uint64_t>(storage));
  if (shape == ShapeTable::kRefArray) {
    std::fill_n(static_cast<ObjectId*>(storage), length, kNullRef);
    graph_.assign_vertex(id, *edges, static_cast<std::uint32_t>(length));
  } else {
    graph_.assign_vertex(id, 0, 0);
  }
  check_used_bytes_watch();
  return id;
}

void Heap::release_array(ObjectId array, SweepDebt& debt) {
  const ShapeId shape = shape_of(array);
  const std::uint64_t length = array_length(array);
  if (shape == ShapeTable::kRefArray) debt.edge_ranges.push_back({graph_.begin(array), length});
  if (void* storage = reinterpret_cast<void*>(load_scalar(array, kArrayStorageField))) debt.storage.push_back(storage);
  debt.array_bytes += length * element_bytes(shape);
}

template <typename MarkOf>
Heap::SweptRun Heap::sweep_run(std::uint32_t first, std::uint32_t last, MarkOf&& mark_of, SweepDebt& debt) {
  const BlockAllocator::RunSweep run = blocks_.sweep_blocks(
      first, last, mark_of, [&](std::uint32_t block, ShapeId shape, std::uint64_t dying, bool emptied) {
        if (shape == ShapeTable::kRefArray || shape == ShapeTable::kScalarArray)
          for (std::uint64_t w = dying; w != 0; w &= w - 1)
            release_array(make_object_id(block, static_cast<std::uint32_t>(std::countr_zero(w))), debt);
        if (!emptied) return;
        const ShapeLayout& layout = shapes_.layout(shape);
        if (layout.shape.ref_fields > 0)
          debt.edge_ranges.push_back({block_edge_base_[block], std::uint64_t{layout.capacity} * layout.shape.ref_fields});
      });
  debt.emptied_blocks += run.emptied_blocks;
  return SweptRun{run.objects_before, run.freed_objects};
}

Heap::SweptRun Heap::sweep_blocks(std::uint32_t first, std::uint32_t last, const std::uint64_t* mark_words,
                                  SweepDebt& debt) {
  return sweep_run(first, last, [mark_words](std::uint32_t block) { return mark_words[block]; }, debt);
}

std::uint32_t Heap::sweep_block(std::uint32_t block, std::uint64_t mark_word, SweepDebt& debt) {
  return static_cast<std::uint32_t>(
      sweep_run(block, block + 1, [mark_word](std::uint32_t) { return mark_word; }, debt).freed_objects);
}

std::span<Heap::SweepDebt> Heap::sweep_debts(std::size_t count) {
  if (sweep_debts_.size() < count) sweep_debts_.resize(count);
  return std::span<SweepDebt>(sweep_debts_).first(count);
}

void Heap::settle_sweep(std::span<SweepDebt> debts, ThreadPool* pool) {
  std::vector<std::span<const EdgeRange>> ranges;
  ranges.reserve(debts.size());
  for (const SweepDebt& debt : debts) ranges.emplace_back(debt.edge_ranges);
  const auto on_pool = [pool](std::uint64_t count, const std::function<void(std::uint64_t)>& body) {
    for_each_task(pool, count, body);
  };
  if (std::ranges::all_of(debts, [](const SweepDebt& debt) { return debt.edges_counted; })) {
    std::vector<EdgeSpace::BatchCounts*> counts;
    counts.reserve(debts.size());
    for (SweepDebt& debt : debts) counts.push_back(&debt.edge_counts);
    graph_.release_edges_in_order(ranges, counts, EdgeSpace::ReleaseOrder::LastFirst, on_pool);
  } else {
    graph_.release_edges_in_order(ranges, EdgeSpace::ReleaseOrder::LastFirst, on_pool);
  }
  for (SweepDebt& debt : debts) {
    releaser_.release(debt.storage);
    array_bytes_ -= debt.array_bytes;
    blocks_.count_emptied_blocks(debt.emptied_blocks);
    debt.edge_ranges.clear();
    debt.edges_counted = false;
    debt.array_bytes = 0;
    debt.emptied_blocks = 0;
  }
}

namespace {

/// Calls check(obj, slot, heap_value) for every reference slot of every live object.
template <typename Heapish, typename F>
void for_each_reference_slot(const Heapish& heap, F&& check) {
  heap.for_each_object([&](ObjectId obj) {
    const ShapeId shape = heap.shape_of(obj);
    if (shape == ShapeTable::kScalarArray) return;
    if (shape == ShapeTable::kRefArray) {
      const std::uint64_t length = heap.array_length(obj);
      for (std::uint64_t i = 0; i < length; ++i) check(obj, i, heap.load_element(obj, i));
      return;
    }
    const std::uint32_t refs = heap.shapes().layout(shape).shape.ref_fields;
    for (std::uint32_t f = 0; f < refs; ++f) check(obj, std::uint64_t{f}, heap.load_ref(obj, f));
  });
}

}  // namespace

std::uint64_t Heap::object_bytes(ObjectId obj) const {
  const Shape& s = shapes_.layout(shape_of(obj)).shape;
  switch (s.kind) {
    case ShapeKind::Object: return std::uint64_t{s.ref_fields} * sizeof(ObjectId) + std::uint64_t{s.scalar_fields} * 8;
    case ShapeKind::RefArray: return 16 + array_length(obj) * sizeof(ObjectId);
    case ShapeKind::ScalarArray: return 16 + array_length(obj) * 8;
  }
  return 0;
}

void Heap::rebuild_graph() {
  for_each_reference_slot(*this, [&](ObjectId obj, std::uint64_t slot, ObjectId value) {
    graph_.set_edge(graph_.begin(obj) + slot, value);
  });
}

std::string Heap::verify_graph() const {
  std::string report;
  std::uint64_t mismatches = 0;
  auto note = [&](const std::string& line) {
    if (++mismatches <= 8) report += line + "\n";
  };
  for_each_object([&](ObjectId obj) {
    const ShapeId shape = shape_of(obj);
    const std::uint64_t expected = shape == ShapeTable::kRefArray      ? array_length(obj)
                                   : shape == ShapeTable::kScalarArray ? 0
                                                                       : shapes_.layout(shape).shape.ref_fields;
    if (graph_.degree(obj) != expected)
      note("object " + std::to_string(obj) + ": degree " + std::to_string(graph_.degree(obj)) + ", heap has " +
           std::to_string(expected) + " references");
    else if (graph_.begin(obj) + expected > graph_.edge_count())
      note("object " + std::to_string(obj) + ": edge range ends past the edge array");
  });
  if (mismatches == 0)
    for_each_reference_slot(*this, [&](ObjectId obj, std::uint64_t slot, ObjectId value) {
      const ObjectId edge = graph_.edge_data()[graph_.begin(obj) + slot];
      if (edge != value)
        note("object " + std::to_string(obj) + " reference " + std::to_string(slot) + ": graph has " +
             std::to_string(edge) + ", heap has " + std::to_string(value));
    });
  if (mismatches > 8) report += "... " + std::to_string(mismatches - 8) + " more\n";
  return report;
}

}  // namespace gcvm
