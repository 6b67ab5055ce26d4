/* Device memory helpers shared by the backends, in the dialect of portable.h: the
 * mirror's scatter of packed dirty ranges, and a fill. The OpenCL backend fills with
 * this kernel rather than clEnqueueFillBuffer, whose built-in kernel PoCL 5's CPU
 * device fails to compile (an assertion in its work-group compiler, seen on the GPU
 * machine's Ubuntu 24.04 PoCL 5.0). */
#ifndef GCVM_KERNELS_MEMORY_OPS_H
#define GCVM_KERNELS_MEMORY_OPS_H

#include "mark_layout.h"
#include "portable.h"

/* Mirror sync: copies packed dirty ranges into place. `ranges` holds triples
 * (destination word, source word, words), one group per range at a time. */
GCVM_DEVICE void gcvm_scatter_ranges(GCVM_GLOBAL gcvm_u32* destination, const GCVM_GLOBAL gcvm_u32* packed,
                                     const GCVM_GLOBAL gcvm_u64* ranges, gcvm_u32 range_count) {
  for (gcvm_u32 r = GCVM_GROUP_ID(); r < range_count; r += GCVM_GROUP_COUNT()) {
    const gcvm_u64 to = ranges[3u * r];
    const gcvm_u64 from = ranges[3u * r + 1u];
    const gcvm_u64 words = ranges[3u * r + 2u];
    for (gcvm_u64 k = GCVM_LOCAL_ID(); k < words; k += GCVM_GROUP_SIZE) destination[to + k] = packed[from + k];
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
