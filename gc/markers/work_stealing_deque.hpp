// A Chase-Lev work-stealing deque of 64-bit work items (Chase & Lev, SPAA 2005), with
// the C11 memory orders of Lê, Pop, Cohen and Zappa Nardelli, "Correct and Efficient
// Work-Stealing for Weak Memory Models" (PPoPP 2013, Fig. 1).
//
// One owner thread pushes and pops at the bottom (LIFO: depth-first, cache-warm);
// any other thread steals from the top (FIFO: the oldest, usually largest, work).
// Indices only grow: [top, bottom) are the items present. Every pushed item is
// returned exactly once, by one pop or one successful steal; when owner and thief
// race for the last item, the CAS on `top` decides.
//
// Slots are std::atomic<uint64_t> so a thief reading a slot that the owner is
// overwriting after wrap-around is not a data race (the thief's CAS then fails and the
// value is discarded). The ring grows by doubling on the owner's push; an outgrown
// ring may still be read by a thief that loaded the old pointer, so it is retired, not
// freed, until `reclaim()` is called at a quiescent point (no concurrent steal).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace gcvm {

class WorkStealingDeque {
 public:
  using Item = std::uint64_t;
  enum class Steal { Taken, Empty, Lost };

  explicit WorkStealingDeque(std::uint64_t initial_capacity = 1024) {
    std::uint64_t capacity = 16;
    while (capacity < initial_capacity) capacity *= 2;
    rings_.push_back(std::make_unique<Ring>(capacity));
    ring_.store(rings_.back().get(), std::memory_order_relaxed);
  }
  WorkStealingDeque(const WorkStealingDeque&) = delete;
  WorkStealingDeque& operator=(const WorkStealingDeque&) = delete;

  /// Owner only.
  void push(Item item) {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed);
    const std::int64_t t = top_.load(std::memory_order_acquire);
    Ring* ring = ring_.load(std::memory_order_relaxed);
    if (b - t > static_cast<std::int64_t>(ring->mask)) ring = grow(ring, t, b);
    ring->put(b, item);
    std::atomic_thread_fence(std::memory_order_release);
    bottom_.store(b + 1, std::memory_order_relaxed);
  }

  /// Owner only: the newest item, or false when the deque is empty.
  bool pop(Item& out) {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed) - 1;
    Ring* ring = ring_.load(std::memory_order_relaxed);
    bottom_.store(b, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    std::int64_t t = top_.load(std::memory_order_relaxed);
    if (t > b) {
      bottom_.store(b + 1, std::memory_order_relaxed);
      return false;
    }
    out = ring->get(b);
    if (t == b) {
      // The last item: a thief may be taking it right now.
      const bool won = top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed);
      bottom_.store(b + 1, std::memory_order_relaxed);
      return won;
    }
    return true;
  }

  /// Any thread: the oldest item (Taken), Empty, or Lost when another thread won the race.
  Steal steal(Item& out) {
    std::int64_t t = top_.load(std::memory_order_acquire);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    const std::int64_t b = bottom_.load(std::memory_order_acquire);
    if (t >= b) return Steal::Empty;
    const Ring* ring = ring_.load(std::memory_order_acquire);
    const Item item = ring->get(t);
    if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed))
      return Steal::Lost;
    out = item;
    return Steal::Taken;
  }

  /// A snapshot that may be stale by the time it is read: a hint for idle thieves.
  bool looks_empty() const {
    return bottom_.load(std::memory_order_relaxed) <= top_.load(std::memory_order_relaxed);
  }

  /// Frees outgrown rings. Only when no steal can be running (between phases).
  void reclaim() {
    if (rings_.size() > 1) rings_.erase(rings_.begin(), rings_.end() - 1);
  }
  std::uint64_t capacity() const { return ring_.load(std::memory_order_relaxed)->mask + 1; }

 private:
  struct Ring {
    explicit Ring(std::uint64_t capacity) : mask(capacity - 1), slots(new std::atomic<Item>[capacity]) {}
    Item get(std::int64_t i) const { return slots[static_cast<std::uint64_t>(i) & mask].load(std::memory_order_relaxed); }
    void put(std::int64_t i, Item item) { slots[static_cast<std::uint64_t>(i) & mask].store(item, std::memory_order_relaxed); }
    std::uint64_t mask;
    std::unique_ptr<std::atomic<Item>[]> slots;
  };

  Ring* grow(Ring* old, std::int64_t top, std::int64_t bottom) {
    rings_.push_back(std::make_unique<Ring>((old->mask + 1) * 2));
    Ring* ring = rings_.back().get();
    for (std::int64_t i = top; i < bottom; ++i) ring->put(i, old->get(i));
    ring_.store(ring, std::memory_order_release);
    return ring;
  }

  // top_ and bottom_ on separate cache lines: thieves hammer top_, the owner bottom_.
  alignas(64) std::atomic<std::int64_t> top_{0};
  alignas(64) std::atomic<std::int64_t> bottom_{0};
  alignas(64) std::atomic<Ring*> ring_{nullptr};
  std::vector<std::unique_ptr<Ring>> rings_;  // owner only; back() is the current ring
};

static_assert(std::atomic<WorkStealingDeque::Item>::is_always_lock_free, "deque slots must be lock-free atomics");

}  // namespace gcvm
