#include "gc/heap/mark_word_allocator.hpp"

#include <mutex>
#include <new>
#include <unordered_map>
#include <utility>

namespace gcvm {

namespace {

constexpr std::size_t kPage = 4096;

struct Pinning {
  std::mutex mutex;
  std::shared_ptr<HostPinner> pinner;
  std::unordered_map<void*, std::shared_ptr<HostPinner>> pinned;  // allocations pinned, by whom, until freed
};

Pinning& pinning() {
  static Pinning state;
  return state;
}

std::size_t page_rounded(std::size_t bytes) { return (bytes + kPage - 1) / kPage * kPage; }

}  // namespace

std::shared_ptr<HostPinner> install_mark_word_pinner(std::shared_ptr<HostPinner> pinner) {
  Pinning& state = pinning();
  const std::lock_guard lock(state.mutex);
  return std::exchange(state.pinner, std::move(pinner));
}

namespace mark_words_detail {

void* allocate(std::size_t bytes) {
  if (bytes < kPinnedMarkWordBytes) return ::operator new(bytes);
  const std::size_t pages = page_rounded(bytes);
  void* p = ::operator new(pages, std::align_val_t{kPage});
  Pinning& state = pinning();
  const std::lock_guard lock(state.mutex);
  if (state.pinner && state.pinner->pin(static_cast<std::byte*>(p), pages)) state.pinned.emplace(p, state.pinner);
  return p;
}

void deallocate(void* p, std::size_t bytes) noexcept {
  if (bytes < kPinnedMarkWordBytes) {
    ::operator delete(p);
    return;
  }
  {
    Pinning& state = pinning();
    const std::lock_guard lock(state.mutex);
    if (const auto it = state.pinned.find(p); it != state.pinned.end()) {
      it->second->unpin(static_cast<std::byte*>(p));
      state.pinned.erase(it);
    }
  }
  ::operator delete(p, std::align_val_t{kPage});
}

}  // namespace mark_words_detail

}  // namespace gcvm
