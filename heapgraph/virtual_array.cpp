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
  std::swap(committed_, other.committed_);
  std::swap(pinner_, other.pinner_);
  std::swap(unpinner_, other.unpinner_);
  std::swap(segments_, other.segments_);
  std::swap(pinned_, other.pinned_);
}

bool AddressReservation::commit(std::size_t bytes) {
  if (bytes <= committed_) return true;
  if (base_ == nullptr || bytes > reserved_) return false;
  std::size_t target = round_up(bytes, kCommitStep);
  if (pinner_) target = std::max(target, round_up(committed_ + committed_ / 4, kCommitStep));
  target = std::min(target, reserved_);
  if (mprotect(base_ + committed_, target - committed_, PROT_READ | PROT_WRITE) != 0) return false;
  committed_ = target;
  if (pinner_) pin_committed();
  return true;
}

void AddressReservation::pin_with(std::shared_ptr<HostPinner> pinner) {
  if (!pinner || pinner == unpinner_ || base_ == nullptr) return;
  unpin_all();
  pinner_ = std::move(pinner);
  unpinner_ = pinner_;
  pin_committed();
}

void AddressReservation::pin_committed() {
  if (pinned_ >= committed_) return;
  if (!pinner_->pin(base_ + pinned_, committed_ - pinned_)) {
    pinner_.reset();
    return;
  }
  segments_.push_back(pinned_);
  pinned_ = committed_;
}

void AddressReservation::unpin_all() {
  for (auto it = segments_.rbegin(); it != segments_.rend(); ++it) unpinner_->unpin(base_ + *it);
  segments_.clear();
  pinned_ = 0;
  pinner_.reset();
  unpinner_.reset();
}

}  // namespace gcvm
