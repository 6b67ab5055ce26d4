#include "gc/boehm/boehm_heap.hpp"

#define GC_THREADS 1
#include <gc/gc.h>
#include <gc/gc_mark.h>
#include <gc/gc_typed.h>

#include <chrono>
#include <cstring>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "gc/heap/heap_materializer.hpp"
#include "gc/util/stopwatch.hpp"

namespace gcvm {

namespace {

// Header: tag (bits 61-63) | heap epoch (bits 48-60) | payload (bits 0-47): the length
// of an array, or ref fields (bits 24-47) and scalar fields (bits 0-23) of an object.
// The epoch tells this BoehmHeap's objects from those of earlier ones in the process.
constexpr std::uint64_t kTagMask = std::uint64_t{7} << 61;
constexpr std::uint64_t kObjectTag = std::uint64_t{4} << 61;
constexpr std::uint64_t kRefArrayTag = std::uint64_t{5} << 61;
constexpr std::uint64_t kScalarArrayTag = std::uint64_t{6} << 61;
constexpr std::uint64_t kRootArrayTag = std::uint64_t{7} << 61;
constexpr unsigned kEpochShift = 48;
constexpr std::uint64_t kEpochMask = std::uint64_t{0x1FFF} << kEpochShift;
constexpr std::uint64_t kLengthMask = BoehmHeap::kLengthMask;
static_assert(kLengthMask == (std::uint64_t{1} << kEpochShift) - 1, "the length sits below the epoch");
constexpr std::uint64_t kFieldMask = (std::uint64_t{1} << 24) - 1;
/// Arrays at least this big are allocated "ignore off page": libgc then only honours
/// pointers to their first page, which all our references are.
constexpr std::uint64_t kLargeBytes = 64 * 1024;

static_assert(sizeof(void*) == sizeof(std::uint64_t), "BoehmHeap stores references as 64-bit words");
static_assert(sizeof(GC_word) == sizeof(std::uint64_t));

std::uint64_t& header(void* object) { return *static_cast<std::uint64_t*>(object); }

/// Collection event times, written by libgc's callback in the collecting thread
/// (under libgc's lock) and read by `collect` after GC_gcollect has returned.
struct EventClock {
  using Time = std::chrono::steady_clock::time_point;
  Time at[GC_EVENT_THREAD_UNSUSPENDED + 1];
  bool seen[GC_EVENT_THREAD_UNSUSPENDED + 1];
  double between(GC_EventType from, GC_EventType to) const {
    if (!seen[from] || !seen[to]) return 0;
    return std::chrono::duration<double, std::milli>(at[to] - at[from]).count();
  }
};
EventClock g_events;
unsigned g_markers = 0;
std::uint64_t g_heaps = 0;

/// The root source and collection listener of the process (one BoehmHeap at a time).
BoehmHeap::RootSource g_root_source;
std::vector<std::uint64_t> g_root_words;  // what the source reported for the running collection
std::uint64_t g_root_source_epoch = 0;
GC_push_other_roots_proc g_libgc_push_other_roots = nullptr;  // what push_source_roots chains to
bool g_push_installed = false;
BoehmHeap::CollectionListener g_listener;
std::uint64_t g_listener_epoch = 0;
std::uint64_t g_in_use_at_start = 0;

void GC_CALLBACK push_source_roots() {
  g_root_words.clear();
  if (g_root_source) g_root_source(g_root_words);
  if (!g_root_words.empty()) GC_push_all(g_root_words.data(), g_root_words.data() + g_root_words.size());
  if (g_libgc_push_other_roots != nullptr) g_libgc_push_other_roots();
}

/// The event times of the collection that just ended, into `gc`.
void read_event_times(BoehmCollection& gc) {
  gc.pause_ms = g_events.between(GC_EVENT_START, GC_EVENT_END);
  gc.mark_ms = g_events.between(GC_EVENT_MARK_START, GC_EVENT_MARK_END);
  gc.reclaim_ms = g_events.between(GC_EVENT_RECLAIM_START, GC_EVENT_RECLAIM_END);
  gc.stop_world_ms = g_events.between(GC_EVENT_PRE_STOP_WORLD, GC_EVENT_POST_STOP_WORLD);
}

void read_heap_after(BoehmCollection& gc, const GC_prof_stats_s& after) {
  gc.gc_number = after.gc_no;
  gc.heap_bytes = after.heapsize_full;
  gc.free_bytes = after.free_bytes_full;
  gc.reclaimed_bytes = after.bytes_reclaimed_since_gc;
}

void take_census_locked(void* data);

void GC_CALLBACK on_event(GC_EventType event) {
  if (event > GC_EVENT_THREAD_UNSUSPENDED) return;
  if (event == GC_EVENT_START) {
    for (bool& seen : g_events.seen) seen = false;
    if (g_listener) {
      GC_prof_stats_s before{};
      GC_get_prof_stats_unsafe(&before, sizeof(before));
      g_in_use_at_start = before.heapsize_full - before.free_bytes_full;
    }
  }
  g_events.at[event] = std::chrono::steady_clock::now();
  g_events.seen[event] = true;
  if (event == GC_EVENT_END && g_listener) {
    BoehmCollection gc;
    read_event_times(gc);
    gc.wall_ms = gc.pause_ms;
    gc.in_use_before = g_in_use_at_start;
    GC_prof_stats_s after{};
    GC_get_prof_stats_unsafe(&after, sizeof(after));
    read_heap_after(gc, after);
    BoehmCensus census;
    take_census_locked(&census);
    g_listener(gc, census);
  }
}

GC_prof_stats_s prof_stats() {
  GC_prof_stats_s stats{};
  GC_get_prof_stats(&stats, sizeof(stats));
  return stats;
}

struct CensusRequest {
  BoehmCensus census;
  std::uint64_t epoch = 0;
};

void GC_CALLBACK count_marked(void* object, std::size_t bytes, void* data) {
  auto& request = *static_cast<CensusRequest*>(data);
  BoehmCensus& census = request.census;
  const std::uint64_t h = header(object);
  const std::uint64_t tag = h & kTagMask;
  if (tag == kRootArrayTag) return;
  if ((tag != kObjectTag && tag != kRefArrayTag && tag != kScalarArrayTag) || (h & kEpochMask) != request.epoch) {
    ++census.foreign_objects;
    return;
  }
  std::uint64_t ref_words = 0;
  if (tag == kObjectTag)
    ref_words = ((h & kLengthMask) >> 24) & kFieldMask;
  else if (tag == kRefArrayTag)
    ref_words = h & kLengthMask;
  ++census.objects;
  census.bytes += bytes;
  void* const* refs = BoehmHeap::refs(object);
  for (std::uint64_t i = 0; i < ref_words; ++i) census.edges += refs[i] != nullptr;
}

void* GC_CALLBACK test_mark(void* object) {
  // A block freed as a whole has no mark bits any more; GC_base says so first.
  return GC_base(object) == object && GC_is_marked(object) ? object : nullptr;
}

void* GC_CALLBACK take_census(void* data) {
  GC_enumerate_reachable_objects_inner(count_marked, data);
  return nullptr;
}

/// The listener's census, under libgc's lock (at GC_EVENT_END).
void take_census_locked(void* data) {
  CensusRequest request;
  request.epoch = g_listener_epoch;
  const Stopwatch clock;
  GC_enumerate_reachable_objects_inner(count_marked, &request);
  request.census.ms = clock.elapsed_ms();
  *static_cast<BoehmCensus*>(data) = request.census;
}

/// Zeroes the stack below the caller: frames of earlier, deeper calls (a heap builder)
/// leave stale object addresses there, which the collector's own frames would reuse
/// without overwriting and libgc would then scan conservatively.
[[gnu::noinline]] void scrub_stack_below() {
  constexpr std::size_t kWords = 32 * 1024;
  std::uint64_t scratch[kWords];
  volatile std::uint64_t* words = scratch;
  for (std::size_t i = 0; i < kWords; ++i) words[i] = 0;
}

}  // namespace

BoehmHeap::BoehmHeap(unsigned markers) {
  if (!GC_is_init_called()) {
    if (markers != 0) GC_set_markers_count(markers);
    GC_INIT();
    GC_set_on_collection_event(on_event);
    GC_start_mark_threads();
    GC_allow_register_threads();
    g_markers = static_cast<unsigned>(GC_get_parallel()) + 1;
  }
  epoch_ = (++g_heaps << kEpochShift) & kEpochMask;
  root_capacity_ = 1024;
  roots_ = static_cast<void**>(checked(GC_MALLOC_UNCOLLECTABLE((1 + root_capacity_) * sizeof(void*)),
                                       (1 + root_capacity_) * sizeof(void*), "root array"));
  header(roots_) = kRootArrayTag;
}

BoehmHeap::~BoehmHeap() {
  if (g_listener && g_listener_epoch == epoch_) set_collection_listener(nullptr);
  if (g_root_source && g_root_source_epoch == epoch_) set_root_source(nullptr);
  GC_FREE(roots_);
}

unsigned BoehmHeap::markers() { return g_markers; }

void* BoehmHeap::checked(void* memory, std::uint64_t bytes, const char* what) {
  if (memory == nullptr)
    throw HeapExhausted("libgc could not allocate a " + std::string(what) + " of " + std::to_string(bytes) + " bytes");
  return memory;
}

std::uint64_t BoehmHeap::typed_descriptor(std::uint32_t ref_fields, std::uint32_t scalar_fields) {
  const std::uint64_t key = (std::uint64_t{ref_fields} << 32) | scalar_fields;
  if (auto found = descriptors_.find(key); found != descriptors_.end()) return found->second;
  const std::uint64_t words = 1 + std::uint64_t{ref_fields} + scalar_fields;
  std::vector<GC_word> bitmap((words + GC_WORDSZ - 1) / GC_WORDSZ, 0);
  for (std::uint64_t w = 1; w <= ref_fields; ++w) GC_set_bit(bitmap.data(), w);
  const GC_descr descriptor = GC_make_descriptor(bitmap.data(), words);
  descriptors_.emplace(key, descriptor);
  return descriptor;
}

void* BoehmHeap::new_object(std::uint32_t ref_fields, std::uint32_t scalar_fields) {
  if (ref_fields > kFieldMask || scalar_fields > kFieldMask)
    throw HeapExhausted("an object of " + std::to_string(ref_fields) + " references and " +
                        std::to_string(scalar_fields) + " scalars exceeds BoehmHeap's 2^24 fields per kind");
  const std::uint64_t bytes = (1 + std::uint64_t{ref_fields} + scalar_fields) * sizeof(std::uint64_t);
  void* object = nullptr;
  if (ref_fields == 0) {
    object = checked(GC_MALLOC_ATOMIC(bytes), bytes, "scalar object");
    std::memset(object, 0, bytes);
  } else if (scalar_fields == 0) {
    object = checked(GC_MALLOC(bytes), bytes, "object");
  } else {
    object = checked(GC_MALLOC_EXPLICITLY_TYPED(bytes, typed_descriptor(ref_fields, scalar_fields)), bytes, "object");
  }
  header(object) = kObjectTag | epoch_ | (std::uint64_t{ref_fields} << 24) | scalar_fields;
  ++objects_allocated_;
  return object;
}

void* BoehmHeap::new_ref_array(std::uint64_t length) {
  if (length > kLengthMask) throw HeapExhausted("an array of " + std::to_string(length) + " elements is too long");
  const std::uint64_t bytes = (1 + length) * sizeof(void*);
  void* array = checked(bytes >= kLargeBytes ? GC_MALLOC_IGNORE_OFF_PAGE(bytes) : GC_MALLOC(bytes), bytes,
                        "reference array");
  header(array) = kRefArrayTag | epoch_ | length;
  ++objects_allocated_;
  return array;
}

void* BoehmHeap::new_scalar_array(std::uint64_t length) {
  if (length > kLengthMask) throw HeapExhausted("an array of " + std::to_string(length) + " elements is too long");
  const std::uint64_t bytes = (1 + length) * sizeof(std::uint64_t);
  void* array = checked(bytes >= kLargeBytes ? GC_MALLOC_ATOMIC_IGNORE_OFF_PAGE(bytes) : GC_MALLOC_ATOMIC(bytes),
                        bytes, "scalar array");
  std::memset(array, 0, bytes);
  header(array) = kScalarArrayTag | epoch_ | length;
  ++objects_allocated_;
  return array;
}

std::uint64_t* BoehmHeap::scalars(void* object) {
  auto* words = static_cast<std::uint64_t*>(object);
  const std::uint64_t h = words[0];
  if ((h & kTagMask) == kObjectTag) return words + 1 + (((h & kLengthMask) >> 24) & kFieldMask);
  return words + 1;
}

void BoehmHeap::add_root(void* object) {
  if (root_count_ == root_capacity_) {
    const std::size_t capacity = root_capacity_ * 2;
    const std::uint64_t bytes = (1 + capacity) * sizeof(void*);
    auto** grown = static_cast<void**>(checked(GC_MALLOC_UNCOLLECTABLE(bytes), bytes, "root array"));
    std::memcpy(grown, roots_, (1 + root_count_) * sizeof(void*));
    GC_FREE(roots_);
    roots_ = grown;
    root_capacity_ = capacity;
  }
  roots_[1 + root_count_++] = object;
}

void BoehmHeap::clear_roots() {
  std::memset(roots_ + 1, 0, root_count_ * sizeof(void*));
  root_count_ = 0;
}

void BoehmHeap::build_on_scratch_thread(const std::function<void()>& build) {
  std::exception_ptr error;
  std::thread scratch([&] {
    GC_stack_base base{};
    GC_get_stack_base(&base);
    GC_register_my_thread(&base);
    try {
      build();
    } catch (...) {
      error = std::current_exception();
    }
    GC_unregister_my_thread();
  });
  scratch.join();
  if (error) std::rethrow_exception(error);
}

void BoehmHeap::set_root_source(RootSource source) {
  g_root_source = std::move(source);
  g_root_source_epoch = epoch_;
  if (g_root_source && !g_push_installed) {
    g_libgc_push_other_roots = GC_get_push_other_roots();  // null unless another library set one
    GC_set_push_other_roots(push_source_roots);
    g_push_installed = true;
  } else if (!g_root_source && g_push_installed) {
    GC_set_push_other_roots(g_libgc_push_other_roots);
    g_libgc_push_other_roots = nullptr;
    g_push_installed = false;
    g_root_words = {};
  }
}

void BoehmHeap::set_collection_listener(CollectionListener listener) {
  g_listener = std::move(listener);
  g_listener_epoch = epoch_;
}

void BoehmHeap::silence_warnings() { GC_set_warn_proc(GC_ignore_warn_proc); }

std::uint64_t BoehmHeap::in_use_bytes() { return GC_get_heap_size() - GC_get_free_bytes(); }

void BoehmHeap::set_max_heap_bytes(std::uint64_t bytes) { GC_set_max_heap_size(bytes); }

void BoehmHeap::set_automatic(bool enabled) {
  if (enabled)
    GC_enable();
  else
    GC_disable();
}

BoehmCollection BoehmHeap::collect() {
  BoehmCollection result;
  const GC_prof_stats_s before = prof_stats();
  result.in_use_before = before.heapsize_full - before.free_bytes_full;
  scrub_stack_below();
  const Stopwatch clock;
  GC_gcollect();
  result.wall_ms = clock.elapsed_ms();
  read_event_times(result);
  read_heap_after(result, prof_stats());
  return result;
}

BoehmCensus BoehmHeap::census() const {
  CensusRequest request;
  request.epoch = epoch_;
  const Stopwatch clock;
  GC_call_with_alloc_lock(take_census, &request);
  request.census.ms = clock.elapsed_ms();
  return request.census;
}

}  // namespace gcvm

namespace gcvm {

bool BoehmHeap::is_marked(const void* object) {
  return GC_call_with_alloc_lock(test_mark, const_cast<void*>(object)) != nullptr;
}

}  // namespace gcvm
