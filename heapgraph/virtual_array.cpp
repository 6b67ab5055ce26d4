#include "heapgraph/virtual_array.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <utility>

namespace gcvm {

namespace {
constexpr std::size_t kCommitStep = std::size_t{2} << 20;
constexpr std::size_t round_up(std::size_t n, std::size_t step) { return (n + step - 1) / step * step; }
}  // namespace

AddressReservation::AddressReservation(std::size_t max_bytes) {
  const std::size_t bytes = round_up(max_bytes == 0 ? 1 : max_bytes, kCommitStep);
  void* p = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return;
  base_ = static_cast<std::byte*>(p);
  reserved_ = bytes;
  // Large heaps and graphs are walked at random by markers: 2 MiB pages cut TLB misses
  // and page faults. Advisory only; where THP is off nothing changes.
  if (bytes >= kCommitStep) madvise(base_, bytes, MADV_HUGEPAGE);
}

AddressReservation::~AddressReservation() {
  unpin_all();
  if (base_ != nullptr) munmap(base_, reserved_);
}

void AddressReservation::swap(AddressReservation& other) noexcept {
  std::swap(base_, other.base_);
  std::swap(reserved_, other.reserved_);
  committed_.store(other.committed_.exchange(committed_.load()));
  std::swap(pinner_, other.pinner_);
  std::swap(unpinner_, other.unpinner_);
  std::swap(segments_, other.segments_);
  pinned_.store(other.pinned_.exchange(pinned_.load()));
  std::swap(pinning_, other.pinning_);
}

bool AddressReservation::commit(std::size_t bytes) {
  if (bytes <= committed_.load(std::memory_order_relaxed)) return true;
  if (base_ == nullptr || bytes > reserved_) return false;
  std::unique_lock lock(mutex_);
  const std::size_t committed = committed_.load(std::memory_order_relaxed);
  std::size_t target = round_up(bytes, kCommitStep);
  if (pinner_) target = std::max(target, round_up(committed + committed / 4, kCommitStep));
  target = std::min(target, reserved_);
  if (mprotect(base_ + committed, target - committed, PROT_READ | PROT_WRITE) != 0) return false;
  committed_.store(target, std::memory_order_release);
  if (pinner_ && !pinning_) pin_committed(lock);
  return true;
}

void AddressReservation::pin_with(std::shared_ptr<HostPinner> pinner) {
  std::unique_lock lock(mutex_);
  if (!pinner || pinner == unpinner_ || base_ == nullptr || pinning_) return;
  unpin_all();
  pinner_ = std::move(pinner);
  unpinner_ = pinner_;
  pin_committed(lock);
}

void AddressReservation::pin_committed(std::unique_lock<std::mutex>& lock) {
  pinning_ = true;
  while (pinner_ && pinned_.load(std::memory_order_relaxed) < committed_.load(std::memory_order_relaxed)) {
    const std::size_t from = pinned_.load(std::memory_order_relaxed);
    const std::size_t to = committed_.load(std::memory_order_relaxed);
    const std::shared_ptr<HostPinner> pinner = pinner_;
    lock.unlock();
    const bool pinned = pinner->pin(base_ + from, to - from);
    lock.lock();
    if (!pinned) {
      pinner_.reset();
      break;
    }
    segments_.push_back(from);
    pinned_.store(to, std::memory_order_release);
  }
  pinning_ = false;
}

void AddressReservation::unpin_all() {
  for (auto it = segments_.rbegin(); it != segments_.rend(); ++it) unpinner_->unpin(base_ + *it);
  segments_.clear();
  pinned_.store(0, std::memory_order_release);
  pinner_.reset();
  unpinner_.reset();
}

}  // namespace gcvm
