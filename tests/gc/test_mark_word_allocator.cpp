// Mark bitmaps' storage (gc/heap/mark_word_allocator.hpp): pinned once a pinner is
// installed, when large enough, page-aligned, and unpinned by the pinner that pinned
// it before it is freed.
#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <memory>

#include "gc/heap/mark_bitmap.hpp"

using namespace gcvm;

namespace {

class RecordingPinner final : public HostPinner {
 public:
  explicit RecordingPinner(bool accept) : accept_(accept) {}
  bool pin(std::byte* base, std::size_t bytes) override {
    ++pins;
    if (!accept_) return false;
    CHECK(reinterpret_cast<std::uintptr_t>(base) % 4096 == 0);
    CHECK(bytes % 4096 == 0);
    CHECK(pinned.emplace(base, bytes).second);
    return true;
  }
  void unpin(std::byte* base) override { CHECK(pinned.erase(base) == 1); }
  std::map<std::byte*, std::size_t> pinned;
  int pins = 0;

 private:
  bool accept_;
};

}  // namespace

TEST_CASE("mark bitmaps of 64 KiB and more are pinned by the installed pinner and unpinned when freed") {
  const auto pinner = std::make_shared<RecordingPinner>(true);
  const auto before = install_mark_word_pinner(pinner);
  {
    MarkBitmap small;
    small.reset(kPinnedMarkWordBytes / 8 - 1);
    CHECK(pinner->pins == 0);
    MarkBitmap large;
    large.reset(kPinnedMarkWordBytes / 8 + 3);
    CHECK(pinner->pins == 1);
    REQUIRE(pinner->pinned.size() == 1);
    const auto& [base, bytes] = *pinner->pinned.begin();
    CHECK(reinterpret_cast<std::byte*>(large.words().data()) == base);
    CHECK(bytes >= large.words().size() * 8);
    CHECK(large.count() == 0);
    // Growing moves the words: the old storage is unpinned, the new one pinned.
    large.reset(kPinnedMarkWordBytes / 2);
    CHECK(pinner->pinned.size() == 1);
    CHECK(reinterpret_cast<std::byte*>(large.words().data()) == pinner->pinned.begin()->first);
    // A copy has storage of its own, pinned too; equal words compare equal.
    large.test_and_set(12345);
    const MarkBitmap copy = large;
    CHECK(pinner->pinned.size() == 2);
    CHECK(copy == large);
    // Allocated with another pinner installed, or none: freed by the one that pinned it.
    install_mark_word_pinner(nullptr);
    MarkBitmap plain;
    plain.reset(kPinnedMarkWordBytes / 8 * 2);
    CHECK(pinner->pinned.size() == 2);
  }
  CHECK(pinner->pinned.empty());
  // A pinner that refuses leaves the storage plain, and nothing is unpinned.
  const auto refusing = std::make_shared<RecordingPinner>(false);
  install_mark_word_pinner(refusing);
  {
    MarkBitmap large;
    large.reset(kPinnedMarkWordBytes / 8 * 4);
    CHECK(refusing->pins == 1);
    CHECK(large.test_and_set(7));
  }
  install_mark_word_pinner(before);
}
