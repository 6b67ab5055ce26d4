// Allocation of contiguous edge ranges inside the CSR edge array.
//
// Only offsets are managed here; the storage is RefGraph's. A range is reserved when
// a block of a fixed shape (capacity * reference fields) or an array (its length) is
// allocated, and released when the block or array is freed. Freed ranges are kept in
// free lists by size class and reused first, so a steady-state heap keeps a steady
// edge array. Sizes up to kExactLimit are their own class (block reservations come in
// few distinct sizes); larger sizes are rounded up to four classes per power of two,
// wasting at most 25% on large arrays in exchange for reuse across nearby lengths.
// The exact classes' free lists are indexed by size, so that allocating and releasing
// a small range (a block's, or a small array's: a sweep releases millions) costs no
// hash lookup; the rounded classes live in a map.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

namespace gcvm {

using EdgeIndex = std::uint64_t;

class EdgeSpace {
 public:
  static constexpr std::uint64_t kExactLimit = 4096;

  explicit EdgeSpace(std::uint64_t max_edges) : max_edges_(max_edges), free_exact_(kExactLimit + 1) {}

  /// Rounds a request up to its size class (what `allocate` really reserves).
  static std::uint64_t size_class(std::uint64_t count);

  /// A range of at least `count` slots; nullopt if the edge space is exhausted.
  std::optional<EdgeIndex> allocate(std::uint64_t count);
  /// Returns a range obtained from `allocate(count)` with the same count.
  void release(EdgeIndex base, std::uint64_t count);

  /// One past the highest slot ever handed out: the edge array must be this long.
  std::uint64_t high_water() const { return high_water_; }
  /// Slots currently reserved (size classes included).
  std::uint64_t in_use() const { return in_use_; }
  std::uint64_t max_edges() const { return max_edges_; }

 private:
  /// The free list of size class `size`.
  std::vector<EdgeIndex>& free_list(std::uint64_t size) {
    return size <= kExactLimit ? free_exact_[size] : free_rounded_[size];
  }

  std::uint64_t max_edges_;
  std::uint64_t high_water_ = 0;
  std::uint64_t in_use_ = 0;
  std::vector<std::vector<EdgeIndex>> free_exact_;                         // by size, up to kExactLimit
  std::unordered_map<std::uint64_t, std::vector<EdgeIndex>> free_rounded_;  // by rounded size
};

}  // namespace gcvm
