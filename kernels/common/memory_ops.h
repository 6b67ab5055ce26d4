/* Device memory helpers shared by the backends, in the dialect of portable.h: the
 * kernels that apply a mirror patch, and a fill. The OpenCL backend fills with
 * this kernel rather than clEnqueueFillBuffer, whose built-in kernel PoCL 5's CPU
 * device fails to compile (an assertion in its work-group compiler, seen on the GPU
 * machine's Ubuntu 24.04 PoCL 5.0).
 *
 * A mirror patch (gc/device/device_backend.hpp, MirrorPatchLayout) is one buffer of
 * 32-bit words holding sections at 8-byte-aligned word offsets: edge pairs (slot -
 * base, value), vertex records (vertex, degree, begin as two words) and runs (u64
 * headers: destination word, source word, words). Each kernel below applies one
 * section; sections never overlap in what they write (each entry of the graph is in
 * at most one of them), so their order does not matter. */
#ifndef GCVM_KERNELS_MEMORY_OPS_H
#define GCVM_KERNELS_MEMORY_OPS_H

#include "mark_layout.h"
#include "portable.h"

/* Runs: `count` headers at word `headers` of the patch, one group per run at a time. */
GCVM_DEVICE void gcvm_patch_runs(GCVM_GLOBAL gcvm_u32* destination, const GCVM_GLOBAL gcvm_u32* patch,
                                 gcvm_u64 headers, gcvm_u64 count) {
  const GCVM_GLOBAL gcvm_u64* runs = (const GCVM_GLOBAL gcvm_u64*)(patch + headers);
  for (gcvm_u64 r = GCVM_GROUP_ID(); r < count; r += GCVM_GROUP_COUNT()) {
    const gcvm_u64 to = runs[3u * r];
    const gcvm_u64 from = runs[3u * r + 1u];
    const gcvm_u64 words = runs[3u * r + 2u];
    for (gcvm_u64 k = GCVM_LOCAL_ID(); k < words; k += GCVM_GROUP_SIZE) destination[to + k] = patch[from + k];
  }
}

/* Edge pairs: `count` (slot - base, value) pairs from word `first` of the patch. */
GCVM_DEVICE void gcvm_patch_pairs(GCVM_GLOBAL gcvm_u32* edges, const GCVM_GLOBAL gcvm_u32* patch, gcvm_u64 first,
                                  gcvm_u64 count, gcvm_u64 base) {
  const gcvm_u64 stride = (gcvm_u64)GCVM_GROUP_COUNT() * GCVM_GROUP_SIZE;
  for (gcvm_u64 i = (gcvm_u64)GCVM_GROUP_ID() * GCVM_GROUP_SIZE + GCVM_LOCAL_ID(); i < count; i += stride)
    edges[base + patch[first + 2u * i]] = patch[first + 2u * i + 1u];
}

/* Vertex records: `count` (vertex, degree, begin low, begin high) from word `first`. */
GCVM_DEVICE void gcvm_patch_records(GCVM_GLOBAL gcvm_u64* begin, GCVM_GLOBAL gcvm_u32* degree,
                                    const GCVM_GLOBAL gcvm_u32* patch, gcvm_u64 first, gcvm_u64 count) {
  const gcvm_u64 stride = (gcvm_u64)GCVM_GROUP_COUNT() * GCVM_GROUP_SIZE;
  for (gcvm_u64 i = (gcvm_u64)GCVM_GROUP_ID() * GCVM_GROUP_SIZE + GCVM_LOCAL_ID(); i < count; i += stride) {
    const GCVM_GLOBAL gcvm_u32* record = patch + first + 4u * i;
    degree[record[0]] = record[1];
    begin[record[0]] = (gcvm_u64)record[2] | ((gcvm_u64)record[3] << 32);
  }
}

/* Sets words[i] to `even` for even i and `odd` for odd i, i < count (a 64-bit
 * pattern as two words; pass the same value twice for a 32-bit fill). */
GCVM_DEVICE void gcvm_fill_words(GCVM_GLOBAL gcvm_u32* words, gcvm_u64 count, gcvm_u32 even, gcvm_u32 odd) {
  const gcvm_u64 stride = (gcvm_u64)GCVM_GROUP_COUNT() * GCVM_GROUP_SIZE;
  for (gcvm_u64 i = (gcvm_u64)GCVM_GROUP_ID() * GCVM_GROUP_SIZE + GCVM_LOCAL_ID(); i < count; i += stride)
    words[i] = (i & 1u) != 0u ? odd : even;
}

#endif
