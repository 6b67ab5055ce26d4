// Allocation of contiguous edge ranges inside the CSR edge array.
//
// Only offsets are managed here; the storage is RefGraph's. A range is reserved when
// a block of a fixed shape (capacity * reference fields) or an array (its length) is
// allocated, and released when the block or array is freed. Freed ranges are kept in
// free lists by size class and reused first (last freed, first reused), so a
// steady-state heap keeps a steady edge array. Sizes up to kExactLimit are their own
// class (block reservations come in few distinct sizes); larger sizes are rounded up
// to four classes per power of two, wasting at most 25% on large arrays in exchange
// for reuse across nearby lengths. Every class has a dense index (class_index), and the
// free lists are a vector indexed by it: allocating and releasing a range (a sweep
// releases millions) costs no lookup, and releases into distinct classes touch
// distinct lists.
//
// Releasing in order on many threads (`release_in_order`): a sweep frees ranges block
// by block, and the free lists' order decides which ranges later allocations get. A
// parallel sweep records its ranges in batches (one per run of blocks); releasing the
// batches counts, on every thread, how many ranges of each class every batch holds,
// then places each batch's ranges at its own offsets in the lists, again on every
// thread; a caller that makes its batches on many threads counts each where it makes
// it (`count`: a parallel sweep's tasks count their own), and the release only places.
// The lists end exactly as releasing the ranges one by one, in the order asked
// (as found, or last found first), leaves them, whatever the threads and their timing.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace gcvm {

using EdgeIndex = std::uint64_t;

struct EdgeRange {
  EdgeIndex base = 0;
  std::uint64_t count = 0;  // as passed to `allocate`
};

class EdgeSpace {
 public:
  static constexpr std::uint64_t kExactLimit = 4096;
  /// Size classes in all: the exact ones (0 to kExactLimit), then four per power of two.
  static constexpr std::size_t kClassCount = kExactLimit + 1 + 4 * 64;

  /// Calls body(i) once for every i in [0, count), possibly on several threads at once,
  /// and returns when every call has returned (a thread pool's for-each).
  using ForEachIndex = std::function<void(std::uint64_t count, const std::function<void(std::uint64_t)>& body)>;

  explicit EdgeSpace(std::uint64_t max_edges) : max_edges_(max_edges), free_(kClassCount) {}

  /// Rounds a request up to its size class (what `allocate` really reserves).
  static std::uint64_t size_class(std::uint64_t count);
  /// The dense index of the class of `count`, below kClassCount.
  static std::size_t class_index(std::uint64_t count);

  /// A range of at least `count` slots; nullopt if the edge space is exhausted.
  std::optional<EdgeIndex> allocate(std::uint64_t count);
  /// Returns a range obtained from `allocate(count)` with the same count.
  void release(EdgeIndex base, std::uint64_t count);
  /// The order `release_in_order` releases in: batch after batch and in order within a
  /// batch, or the reverse (the last batch's last range first).
  enum class ReleaseOrder { InOrder, LastFirst };
  /// How many ranges of each size class one batch holds, and the slots they free.
  struct BatchCounts {
    std::vector<std::pair<std::uint32_t, std::uint64_t>> classes;  // (class index, ranges), first touched first
    std::uint64_t slots = 0;
  };
  /// Sets `counts` to those of `batch`; safe on many threads at once.
  static void count(std::span<const EdgeRange> batch, BatchCounts& counts);
  /// Releases every range of `batches`, leaving the free lists exactly as `release` of
  /// each range, in `order`, would; the work runs on the threads of `for_each` when
  /// there is enough of it.
  void release_in_order(std::span<const std::span<const EdgeRange>> batches, ReleaseOrder order,
                        const ForEachIndex& for_each);
  /// The same with batch i's counts (`count`) given in *counts[i], which it uses up;
  /// only the placing runs on `for_each`.
  void release_in_order(std::span<const std::span<const EdgeRange>> batches, std::span<BatchCounts* const> counts,
                        ReleaseOrder order, const ForEachIndex& for_each);

  /// One past the highest slot ever handed out: the edge array must be this long.
  std::uint64_t high_water() const { return high_water_; }
  /// Slots currently reserved (size classes included).
  std::uint64_t in_use() const { return in_use_; }
  std::uint64_t max_edges() const { return max_edges_; }

 private:
  /// Grows a list without writing the new entries: `release_in_order` sizes a list for
  /// every batch's ranges on one thread and the batches' threads then write them. Value-
  /// initialized, the sweep of a heap full of garbage (GCBench, some 28,000 ranges a
  /// collection) spent 25-29 µs on the H200 host zeroing a quarter megabyte on the one
  /// thread, lines the mutator had long evicted, before the threads wrote it again.
  template <typename T>
  struct UninitializedAllocator : std::allocator<T> {
    template <typename U>
    struct rebind {
      using other = UninitializedAllocator<U>;
    };
    using std::allocator<T>::allocator;
    template <typename U>
    void construct(U* p) noexcept {
      ::new (static_cast<void*>(p)) U;
    }
    template <typename U, typename... Args>
    void construct(U* p, Args&&... args) {
      ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
  };
  using FreeList = std::vector<EdgeIndex, UninitializedAllocator<EdgeIndex>>;

  std::uint64_t max_edges_;
  std::uint64_t high_water_ = 0;
  std::uint64_t in_use_ = 0;
  std::vector<FreeList> free_;  // by class_index
};

}  // namespace gcvm
