// CUDA memory for the CUDA backend (gc/device/cuda_backend.cpp): device buffers that
// grow, pinned host buffers, and host-to-device copies that use the fastest path the
// host memory allows.
//
// Copy paths, measured on the H100 machine's host link (DESIGN.md, performance notes):
// DMA from page-locked memory runs at about 55 GB/s; from pageable memory at 8.7-9.6
// GB/s; a host memcpy into a pinned buffer at 12.8 GB/s. So host memory that the
// mirror uploads is pinned where it lives (CudaHostPinner), a patch is packed straight
// into a pinned buffer (PinnedBuffer), and only memory that could not be pinned goes
// through PinnedStaging's two pinned chunks.
#pragma once

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <span>
#include <vector>

#include "gc/device/cuda_host_pinner.hpp"
#include "gc/device/device_backend.hpp"

namespace gcvm::cuda_memory {

inline void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw DeviceError(fmt::format("CUDA error in {}: {} ({})", what, cudaGetErrorString(status), cudaGetErrorName(status)));
}

/// A device allocation that grows by half again and frees itself.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (data_ != nullptr) cudaFree(data_);
  }
  /// Makes room for `bytes`. Where it must reallocate, the first `keep` bytes are
  /// copied to the new allocation on `stream` (device to device) before the old one
  /// is freed; everything else is undefined.
  void reserve(std::size_t bytes, const char* what, std::size_t keep = 0, cudaStream_t stream = nullptr) {
    if (bytes <= capacity_) return;
    const std::size_t grown = std::max(bytes, capacity_ + capacity_ / 2);
    void* fresh = nullptr;
    const cudaError_t status = cudaMalloc(&fresh, grown);
    if (status != cudaSuccess) {
      cudaGetLastError();
      throw DeviceError(fmt::format("device out of memory: cudaMalloc of {:.1f} MiB for {} failed ({})",
                                    grown / 1048576.0, what, cudaGetErrorString(status)));
    }
    keep = std::min(keep, capacity_);
    if (keep != 0) {
      check(cudaMemcpyAsync(fresh, data_, keep, cudaMemcpyDeviceToDevice, stream), what);
      check(cudaStreamSynchronize(stream), what);
    }
    if (data_ != nullptr) cudaFree(data_);
    data_ = fresh;
    capacity_ = grown;
  }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  std::size_t capacity() const { return capacity_; }

 private:
  void* data_ = nullptr;
  std::size_t capacity_ = 0;
};

/// Page-locked host memory (cudaMallocHost) that at least doubles when it grows
/// (page-locking costs about as much as writing the memory, so it should happen
/// rarely); contents are not kept when it grows.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer() {
    if (data_ != nullptr) cudaFreeHost(data_);
  }
  std::byte* reserve(std::size_t bytes, const char* what) {
    if (bytes > capacity_) {
      const std::size_t grown = std::max(bytes + bytes / 2, 2 * capacity_);
      if (data_ != nullptr) cudaFreeHost(data_);
      data_ = nullptr;
      capacity_ = 0;
      void* fresh = nullptr;
      const cudaError_t status = cudaMallocHost(&fresh, grown);
      if (status != cudaSuccess) {
        cudaGetLastError();
        throw DeviceError(fmt::format("host out of pinned memory: cudaMallocHost of {:.1f} MiB for {} failed ({})",
                                      grown / 1048576.0, what, cudaGetErrorString(status)));
      }
      data_ = static_cast<std::byte*>(fresh);
      capacity_ = grown;
    }
    return data_;
  }
  std::byte* data() const { return data_; }
  std::size_t capacity() const { return capacity_; }

 private:
  std::byte* data_ = nullptr;
  std::size_t capacity_ = 0;
};

/// Device-to-host reads of a pause (the level state, the marks, fallback queues)
/// through page-locked memory: on the H200 host a 256 KiB read into pageable memory
/// took 0.06 ms and one into pinned memory 0.013 ms, and a host memcpy of 256 KiB costs
/// less than the difference. A read into page-locked memory (a mark bitmap's storage,
/// page-locked once a CUDA backend opens: gc/heap/mark_word_allocator.hpp) goes
/// directly: copying GCBench's 246 KB of marks out of the buffer took 27-33 µs of each
/// warm pause on the H100 host. Other reads up to kBytes go through one pinned buffer,
/// allocated when the backend opens (page-locking takes milliseconds: not in a pause);
/// larger reads, where the memcpy would cost what the pinned copy saves, and every read
/// if the buffer cannot be had, go directly.
class PinnedReadback {
 public:
  static constexpr std::size_t kBytes = std::size_t{1} << 20;

  PinnedReadback() = default;
  PinnedReadback(const PinnedReadback&) = delete;
  PinnedReadback& operator=(const PinnedReadback&) = delete;
  ~PinnedReadback() {
    if (buffer_ != nullptr) cudaFreeHost(buffer_);
  }

  /// Allocates the buffer; false if it cannot be had (reads then go directly).
  bool prepare() {
    if (buffer_ == nullptr && cudaMallocHost(&buffer_, kBytes) != cudaSuccess) {
      cudaGetLastError();
      buffer_ = nullptr;
    }
    return buffer_ != nullptr;
  }

  /// One read: `bytes` (possibly none) from device memory `from` to host memory `to`.
  struct Read {
    void* to;
    const void* from;
    std::size_t bytes;
  };

  /// Copies `bytes` (possibly none) from device memory `from` to host memory `to` after
  /// all work enqueued on `stream`, and waits for that work and the copy.
  void read(void* to, const void* from, std::size_t bytes, cudaStream_t stream, const char* what) {
    const Read one{to, from, bytes};
    read(std::span<const Read>(&one, 1), stream, what);
  }

  /// The reads in order after all work enqueued on `stream`, with one wait for them
  /// all: each into page-locked memory (a mark bitmap's, gc/heap/mark_word_allocator.hpp)
  /// directly, each other that fits what is left of the buffer through it, the rest
  /// directly.
  void read(std::span<const Read> reads, cudaStream_t stream, const char* what) {
    std::size_t used = 0;
    staged_.clear();
    const CudaHostPinner& pinner = *CudaHostPinner::instance();
    for (const Read& r : reads) {
      if (r.bytes == 0) continue;
      const bool staged = buffer_ != nullptr && used + r.bytes <= kBytes && pinner.pinned_from(r.to) < r.bytes;
      std::byte* at = static_cast<std::byte*>(buffer_) + used;
      check(cudaMemcpyAsync(staged ? at : r.to, r.from, r.bytes, cudaMemcpyDeviceToHost, stream), what);
      if (staged) {
        staged_.push_back({r.to, at, r.bytes});
        used += (r.bytes + 63) / 64 * 64;
      }
    }
    check(cudaStreamSynchronize(stream), what);
    for (const Read& r : staged_) std::memcpy(r.to, r.from, r.bytes);
  }

 private:
  void* buffer_ = nullptr;
  std::vector<Read> staged_;  // of the last read: where each staged part goes
};

/// Host-to-device copies from pageable memory through pinned memory. cudaMemcpyAsync
/// from pageable memory reached only 0.7-1.9 GB/s for the mirror's uploads on the H100
/// host (docs/PERFORMANCE.md), so a large copy goes through two pinned chunks instead:
/// the host fills one while the copy engine drains the other. Small copies (a pause's
/// level state and roots) are packed one after another into a pinned buffer of their
/// own, which is reused from its start once the last copy from it is done: a small
/// copy from pageable memory costs the driver a staging step of its own. Small pieces
/// bound for one device range go together, with one copy. Every copy goes directly if
/// pinned memory cannot be had.
class PinnedStaging {
 public:
  static constexpr std::size_t kChunkBytes = std::size_t{8} << 20;
  static constexpr std::size_t kSmallBytes = std::size_t{256} << 10;

  PinnedStaging() = default;
  PinnedStaging(const PinnedStaging&) = delete;
  PinnedStaging& operator=(const PinnedStaging&) = delete;
  ~PinnedStaging() { release(); }

  /// Allocates the chunks now (page-locking takes milliseconds: better at start-up than
  /// in the first pause that stages a copy); false if they cannot be had.
  bool prepare() { return ready(); }

  /// Enqueues one copy on `stream` of `pieces`, one after another, to `to`: packed
  /// into the small copies' buffer when they are small together (one copy instead of
  /// one per piece: a pause's level state and roots), else each by `copy`. The pieces
  /// may be reused when this returns.
  void copy(void* to, std::span<const std::span<const std::byte>> pieces, cudaStream_t stream) {
    std::size_t bytes = 0;
    for (const auto& piece : pieces) bytes += piece.size();
    if (!ready() || bytes >= kSmallBytes) {
      auto* at = static_cast<std::byte*>(to);
      for (const auto& piece : pieces) {
        if (!piece.empty()) copy(at, piece.data(), piece.size(), stream);
        at += piece.size();
      }
      return;
    }
    if (bytes == 0) return;
    std::byte* at = small_space(bytes);
    std::size_t packed = 0;
    for (const auto& piece : pieces) {
      if (!piece.empty()) std::memcpy(at + packed, piece.data(), piece.size());
      packed += piece.size();
    }
    copy_small(to, at, bytes, stream);
  }

  /// Enqueues the copy on `stream`; `from` may be reused when this returns.
  void copy(void* to, const void* from, std::size_t bytes, cudaStream_t stream) {
    if (!ready()) {
      check(cudaMemcpyAsync(to, from, bytes, cudaMemcpyHostToDevice, stream), "a host-to-device copy");
      return;
    }
    if (bytes < kSmallBytes) {
      std::byte* at = small_space(bytes);
      std::memcpy(at, from, bytes);
      copy_small(to, at, bytes, stream);
      return;
    }
    std::size_t i = 0;
    for (std::size_t done = 0; done < bytes; done += kChunkBytes, i ^= 1) {
      const std::size_t n = std::min(kChunkBytes, bytes - done);
      check(cudaEventSynchronize(drained_[i]), "a staged host-to-device copy");  // chunk i is free again
      std::memcpy(chunks_[i], static_cast<const std::byte*>(from) + done, n);
      check(cudaMemcpyAsync(static_cast<std::byte*>(to) + done, chunks_[i], n, cudaMemcpyHostToDevice, stream),
            "a staged host-to-device copy");
      check(cudaEventRecord(drained_[i], stream), "a staged host-to-device copy");
    }
  }

 private:
  /// Room for `bytes` (< kSmallBytes) in the small copies' buffer, from its start again
  /// once every earlier small copy is done when the rest is too short.
  std::byte* small_space(std::size_t bytes) {
    if (small_used_ + bytes > kSmallBytes) {
      check(cudaEventSynchronize(small_drained_), "a small host-to-device copy");  // every earlier one is done
      small_used_ = 0;
    }
    std::byte* at = static_cast<std::byte*>(small_) + small_used_;
    small_used_ += (bytes + 63) / 64 * 64;
    return at;
  }
  /// Enqueues the copy of `bytes` at `at` in the small copies' buffer to `to`.
  void copy_small(void* to, const std::byte* at, std::size_t bytes, cudaStream_t stream) {
    check(cudaMemcpyAsync(to, at, bytes, cudaMemcpyHostToDevice, stream), "a small host-to-device copy");
    check(cudaEventRecord(small_drained_, stream), "a small host-to-device copy");
  }
  bool ready() {
    if (tried_) return usable_;
    tried_ = true;
    for (std::size_t i = 0; i < 2; ++i)
      if (cudaMallocHost(&chunks_[i], kChunkBytes) != cudaSuccess ||
          cudaEventCreateWithFlags(&drained_[i], cudaEventDisableTiming) != cudaSuccess) {
        cudaGetLastError();
        release();
        return false;
      }
    if (cudaMallocHost(&small_, kSmallBytes) != cudaSuccess ||
        cudaEventCreateWithFlags(&small_drained_, cudaEventDisableTiming) != cudaSuccess) {
      cudaGetLastError();
      release();
      return false;
    }
    usable_ = true;
    return true;
  }
  void release() {
    for (std::size_t i = 0; i < 2; ++i) {
      if (drained_[i] != nullptr) {
        cudaEventSynchronize(drained_[i]);
        cudaEventDestroy(drained_[i]);
      }
      if (chunks_[i] != nullptr) cudaFreeHost(chunks_[i]);
      drained_[i] = nullptr;
      chunks_[i] = nullptr;
    }
    if (small_drained_ != nullptr) {
      cudaEventSynchronize(small_drained_);
      cudaEventDestroy(small_drained_);
    }
    if (small_ != nullptr) cudaFreeHost(small_);
    small_drained_ = nullptr;
    small_ = nullptr;
    small_used_ = 0;
    usable_ = false;
  }

  std::array<void*, 2> chunks_{};
  std::array<cudaEvent_t, 2> drained_{};
  void* small_ = nullptr;                 // small copies, packed
  cudaEvent_t small_drained_ = nullptr;   // after the last small copy
  std::size_t small_used_ = 0;
  bool tried_ = false;
  bool usable_ = false;
};

}  // namespace gcvm::cuda_memory
