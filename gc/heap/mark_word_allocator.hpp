// The storage of mark bitmaps (MarkBitmap), page-locked for a device's copy engines
// once a device backend installs its HostPinner (`install_mark_word_pinner`), so that a
// device marker downloads the marks straight into the bitmap it returns: on the H100
// host, copying GCBench's 246 KB of marks out of a pinned staging buffer took 27-33 µs
// of each warm gpu-bfs pause.
//
// Invariants: an allocation of at least kPinnedMarkWordBytes made while a pinner is
// installed is page-aligned and page-rounded (two pins never share a page) and pinned;
// every pinned allocation is unpinned, by the pinner that pinned it, before it is
// freed. A pin the pinner refuses leaves the allocation plain, as smaller
// allocations and all those made without a pinner are: a device read into plain memory
// stages as before. Allocation is rare (a bitmap keeps its storage from collection to
// collection and grows with the heap), and pinning costs about as much as writing the
// memory once, so it is paid when the heap grows, not at every pause.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "heapgraph/host_pinning.hpp"

namespace gcvm {

/// Allocations this large or larger are pinned (a bitmap of 8,192 blocks, 512 K objects).
inline constexpr std::size_t kPinnedMarkWordBytes = std::size_t{64} << 10;

/// Pins mark bitmaps allocated from now on with `pinner` (null: none); returns the
/// pinner installed before. Thread-safe.
std::shared_ptr<HostPinner> install_mark_word_pinner(std::shared_ptr<HostPinner> pinner);

namespace mark_words_detail {
void* allocate(std::size_t bytes);
void deallocate(void* p, std::size_t bytes) noexcept;
}  // namespace mark_words_detail

/// A std::allocator for the words of a mark bitmap, with the pinning above.
template <typename T>
struct MarkWordAllocator {
  using value_type = T;
  MarkWordAllocator() = default;
  template <typename U>
  explicit MarkWordAllocator(const MarkWordAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) { return static_cast<T*>(mark_words_detail::allocate(n * sizeof(T))); }
  void deallocate(T* p, std::size_t n) noexcept { mark_words_detail::deallocate(p, n * sizeof(T)); }
  friend bool operator==(const MarkWordAllocator&, const MarkWordAllocator&) { return true; }
};

}  // namespace gcvm
