// Page-locking of a VirtualArray (heapgraph/virtual_array.hpp) through a HostPinner
// that records what it is asked: what is committed is pinned, later commit steps too,
// a refusal stops pinning, every pin is undone once; and a pin from another thread
// while the owner grows the array (a device that finished starting while the program
// runs) leaves the whole committed range pinned, in segments that neither overlap nor
// leave gaps.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "heapgraph/virtual_array.hpp"

namespace gcvm {

namespace {

class RecordingPinner final : public HostPinner {
 public:
  explicit RecordingPinner(std::chrono::milliseconds nap = {}, int refuse_after = -1)
      : nap_(nap), refuse_after_(refuse_after) {}
  bool pin(std::byte* base, std::size_t bytes) override {
    std::this_thread::sleep_for(nap_);
    const std::lock_guard lock(mutex_);
    if (refuse_after_ >= 0 && pins_ >= refuse_after_) return false;
    ++pins_;
    for (const auto& [start, length] : segments_)
      REQUIRE((base + bytes <= start || start + length <= base));  // never pinned twice
    segments_[base] = bytes;
    return true;
  }
  void unpin(std::byte* base) override {
    const std::lock_guard lock(mutex_);
    REQUIRE(segments_.erase(base) == 1);
  }
  /// Bytes pinned from `base` on without a gap.
  std::size_t contiguous_from(const std::byte* base) const {
    const std::lock_guard lock(mutex_);
    std::size_t bytes = 0;
    for (auto it = segments_.find(const_cast<std::byte*>(base)); it != segments_.end() && it->first == base + bytes;
         ++it)
      bytes += it->second;
    return bytes;
  }
  std::size_t segment_count() const {
    const std::lock_guard lock(mutex_);
    return segments_.size();
  }

 private:
  std::chrono::milliseconds nap_;
  int refuse_after_;
  mutable std::mutex mutex_;
  std::map<std::byte*, std::size_t> segments_;
  int pins_ = 0;
};

constexpr std::size_t kMiB = std::size_t{1} << 20;

}  // namespace

TEST_CASE("a pinned array pins what it commits from then on, and unpins everything when destroyed") {
  auto pinner = std::make_shared<RecordingPinner>();
  {
    VirtualArray<std::uint32_t> array(64 * kMiB);
    REQUIRE(array.grow_to(kMiB));
    CHECK(array.pinned_bytes() == 0);
    array.pin_with(pinner);
    CHECK(array.pinned_bytes() == array.committed_bytes());
    for (std::size_t n = 2 * kMiB; n <= 16 * kMiB; n += kMiB) {
      REQUIRE(array.grow_to(n));
      CHECK(array.pinned_bytes() == array.committed_bytes());
    }
    CHECK(pinner->contiguous_from(reinterpret_cast<const std::byte*>(array.data())) == array.committed_bytes());
    CHECK(pinner->segment_count() < 16);  // steps grow with the array: not one pin per grow_to
  }
  CHECK(pinner->segment_count() == 0);
}

TEST_CASE("a refused pin stops pinning; what was pinned stays pinned") {
  auto pinner = std::make_shared<RecordingPinner>(std::chrono::milliseconds(0), 1);
  VirtualArray<std::uint32_t> array(64 * kMiB);
  REQUIRE(array.grow_to(kMiB));
  array.pin_with(pinner);
  const std::size_t pinned = array.pinned_bytes();
  CHECK(pinned == array.committed_bytes());
  REQUIRE(array.grow_to(8 * kMiB));
  CHECK(array.pinned_bytes() == pinned);
  REQUIRE(array.grow_to(16 * kMiB));
  CHECK(array.pinned_bytes() == pinned);
  CHECK(pinner->segment_count() == 1);
}

TEST_CASE("a pin from another thread while the owner grows the array leaves all of it pinned, without overlaps") {
  for (int round = 0; round < 4; ++round) {
    CAPTURE(round);
    auto pinner = std::make_shared<RecordingPinner>(std::chrono::milliseconds(3));
    VirtualArray<std::uint32_t> array(256 * kMiB);
    REQUIRE(array.grow_to(kMiB));
    std::thread other([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(round));
      array.pin_with(pinner);
    });
    for (std::size_t n = kMiB; n <= 48 * kMiB; n += kMiB / 2) {
      REQUIRE(array.grow_to(n));
      array[n - 1] = static_cast<std::uint32_t>(n);  // the owner writes what it grew
    }
    other.join();
    CHECK(array.pinned_bytes() == array.committed_bytes());
    CHECK(pinner->contiguous_from(reinterpret_cast<const std::byte*>(array.data())) == array.committed_bytes());
    CHECK(array[48 * kMiB - 1] == 48 * kMiB);
  }
}

}  // namespace gcvm
