// A growable array of trivially copyable elements that never moves.
//
// It reserves address space for `max_elements` up front (PROT_NONE, never counted
// against overcommit) and commits it in 2 MiB steps as `grow_to` asks. Committed
// memory reads as zero. Because the base address never changes, growing costs no
// copy and no transient double footprint: a 1-billion-edge CSR grows in place, and
// pointers handed to a device backend for pinned transfers stay valid.
//
// Pinning (host_pinning.hpp): once `pin_with` is called, what is committed is
// page-locked for device DMA, and so is every later commit step, until the
// reservation is destroyed, which unpins before it unmaps. While pinned, commit steps
// grow with the reservation (a quarter of what is committed, at least 2 MiB), so a
// growing array holds a few dozen pinned segments, not one per 2 MiB; those steps are
// real memory (pinning touches every page), at most a quarter more than committed.
// A refused pin stops pinning; what was pinned stays pinned. [0, pinned_bytes()) is
// pinned, in segments that never span a refused step.
//
// Threads: the owner grows the array on its thread; `pin_with` may come from another
// thread meanwhile (a device that finished starting while the program runs). Page-
// locking a large range takes milliseconds, so the pinning thread does not hold the
// owner's commits up while it pins: a commit step made while another thread pins is
// pinned by that thread before it returns, and the owner's commit then pins nothing
// itself. `pinned_bytes` and `committed_bytes` may be read from any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <type_traits>
#include <vector>

#include "heapgraph/host_pinning.hpp"

namespace gcvm {

/// Reserves and commits page-granular address space; the untyped core of VirtualArray.
class AddressReservation {
 public:
  AddressReservation() = default;
  explicit AddressReservation(std::size_t max_bytes);
  ~AddressReservation();
  AddressReservation(AddressReservation&& other) noexcept { swap(other); }
  AddressReservation& operator=(AddressReservation&& other) noexcept {
    swap(other);
    return *this;
  }
  AddressReservation(const AddressReservation&) = delete;
  AddressReservation& operator=(const AddressReservation&) = delete;

  /// Makes the first `bytes` readable and writable; false if the reservation is too
  /// small or the system refuses to commit.
  bool commit(std::size_t bytes);
  std::byte* data() const { return base_; }
  std::size_t committed_bytes() const { return committed_.load(std::memory_order_acquire); }
  std::size_t reserved_bytes() const { return reserved_; }

  /// Pins what is committed and every later commit step with `pinner` (a second call
  /// with the same pinner does nothing).
  void pin_with(std::shared_ptr<HostPinner> pinner);
  std::size_t pinned_bytes() const { return pinned_.load(std::memory_order_acquire); }

 private:
  /// Swaps everything but the mutex; neither reservation may be in use by another thread.
  void swap(AddressReservation& other) noexcept;
  /// Pins [pinned_, committed_), one segment per round, until nothing committed is left
  /// unpinned (the owner may commit more while the lock is released for a pin); stops
  /// pinning if refused. Called with `lock` held on mutex_; returns with it held.
  void pin_committed(std::unique_lock<std::mutex>& lock);
  void unpin_all();
  std::mutex mutex_;  // commit and pin state; not held while a range is being pinned
  std::byte* base_ = nullptr;
  std::size_t reserved_ = 0;
  std::atomic<std::size_t> committed_ = 0;
  std::shared_ptr<HostPinner> pinner_;  // null: not pinning
  std::shared_ptr<HostPinner> unpinner_;  // the pinner of `segments_` (kept after a refusal)
  std::vector<std::size_t> segments_;   // byte offsets where pinned segments start
  std::atomic<std::size_t> pinned_ = 0;
  bool pinning_ = false;  // a thread is pinning with mutex_ released
};

template <typename T>
class VirtualArray {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  VirtualArray() = default;
  explicit VirtualArray(std::size_t max_elements) : memory_(max_elements * sizeof(T)) {}

  /// Ensures `count` elements are usable; new elements are zero. False on failure.
  bool grow_to(std::size_t count) {
    if (count <= size_) return true;
    if (!memory_.commit(count * sizeof(T))) return false;
    size_ = count;
    return true;
  }
  std::size_t size() const { return size_; }
  std::size_t max_size() const { return memory_.reserved_bytes() / sizeof(T); }
  std::size_t committed_bytes() const { return memory_.committed_bytes(); }
  /// See AddressReservation::pin_with. Pinning changes no element.
  void pin_with(std::shared_ptr<HostPinner> pinner) { memory_.pin_with(std::move(pinner)); }
  std::size_t pinned_bytes() const { return memory_.pinned_bytes(); }

  T* data() { return reinterpret_cast<T*>(memory_.data()); }
  const T* data() const { return reinterpret_cast<const T*>(memory_.data()); }
  T& operator[](std::size_t i) { return data()[i]; }
  const T& operator[](std::size_t i) const { return data()[i]; }
  std::span<T> span() { return {data(), size_}; }
  std::span<const T> span() const { return {data(), size_}; }

 private:
  AddressReservation memory_;
  std::size_t size_ = 0;
};

}  // namespace gcvm
