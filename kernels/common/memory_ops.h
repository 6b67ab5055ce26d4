/* Device memory helpers shared by the backends, in the dialect of portable.h: the
 * kernel that applies a mirror patch, a fill and a copy (the CUDA backend's pause
 * setup, kernels/cuda/mark_kernels.cu, runs all three in one launch). The OpenCL
 * backend fills with this kernel rather than clEnqueueFillBuffer, whose built-in
 * kernel PoCL 5's CPU device fails to compile (an assertion in its work-group
 * compiler, seen on the GPU machine's Ubuntu 24.04 PoCL 5.0).
 *
 * A mirror patch (patch_layout.h) describes itself: its section table says where its
 * edge pairs (of every segment), vertex records and runs (into all three arrays) lie,
 * so one launch applies all of it, whatever the number of segments. Sections never
 * overlap in what they write (each entry of the graph is in at most one of them), so
 * their order, and how the groups share them out, does not matter. */
#ifndef GCVM_KERNELS_MEMORY_OPS_H
#define GCVM_KERNELS_MEMORY_OPS_H

#include "mark_layout.h"
#include "patch_layout.h"
#include "portable.h"

/* Applies the patch at `patch` to the mirror arrays. Its work is cut into units: a
 * block of GCVM_GROUP_SIZE items (the edge pairs, then the vertex records; one item a
 * thread), or one run (its words copied by the group's threads). Group g of a grid of
 * G takes units g, g + G, g + 2G, ..., so a grid of any size applies the whole patch;
 * one group per unit (at most GCVM_PATCH_MAX_GROUPS) is what the host launches. No
 * barriers: every thread's work is its own. */
GCVM_DEVICE void gcvm_apply_patch(GCVM_GLOBAL gcvm_u64* begin, GCVM_GLOBAL gcvm_u32* degree,
                                  GCVM_GLOBAL gcvm_u32* edges, const GCVM_GLOBAL gcvm_u32* patch) {
  /* The table's fields are read into registers once, all of them together: the stores
   * below may alias the patch as far as the compiler knows, and a patch read across the
   * link (the CUDA backend's pause setup reads it from page-locked host memory) pays a
   * round trip of the link for every read that waits on another. */
  const GCVM_GLOBAL gcvm_u64* table = (const GCVM_GLOBAL gcvm_u64*)patch;
  const gcvm_u64 pair_word = table[GCVM_PATCH_PAIR_WORD];
  const gcvm_u64 pairs = table[GCVM_PATCH_PAIR_COUNT];
  const gcvm_u64 record_word = table[GCVM_PATCH_RECORD_WORD];
  const gcvm_u64 items = pairs + table[GCVM_PATCH_RECORD_COUNT];
  const gcvm_u64 segments = table[GCVM_PATCH_SEGMENT_COUNT];
  const gcvm_u64 item_units = (items + GCVM_GROUP_SIZE - 1u) / GCVM_GROUP_SIZE;
  gcvm_u64 run_word[GCVM_PATCH_ARRAYS];
  gcvm_u64 run_count[GCVM_PATCH_ARRAYS];
  gcvm_u64 units = item_units;
  for (gcvm_u32 a = 0u; a < GCVM_PATCH_ARRAYS; ++a) {
    run_word[a] = table[GCVM_PATCH_RUN_WORD(a)];
    run_count[a] = table[GCVM_PATCH_RUN_COUNT(a)];
    units += run_count[a];
  }

  /* The segment of this thread's pairs: its items only increase, and so do their
   * segments, so it only moves forward. */
  gcvm_u64 segment = 0u;
  gcvm_u64 segment_end = segments != 0u ? table[GCVM_PATCH_SEGMENT_END(0u)] : 0u;
  gcvm_u64 segment_base = segments != 0u ? table[GCVM_PATCH_SEGMENT_BASE(0u)] : 0u;
  for (gcvm_u64 unit = GCVM_GROUP_ID(); unit < units; unit += GCVM_GROUP_COUNT()) {
    if (unit < item_units) {
      const gcvm_u64 i = unit * GCVM_GROUP_SIZE + GCVM_LOCAL_ID();
      if (i < pairs) {
        while (i >= segment_end && segment + 1u < segments) {
          ++segment;
          segment_end = table[GCVM_PATCH_SEGMENT_END(segment)];
          segment_base = table[GCVM_PATCH_SEGMENT_BASE(segment)];
        }
        const GCVM_GLOBAL gcvm_u32* pair = patch + pair_word + 2u * i;
        edges[segment_base + pair[0]] = pair[1];
      } else if (i < items) {
        const GCVM_GLOBAL gcvm_u32* record = patch + record_word + 4u * (i - pairs);
        degree[record[0]] = record[1];
        begin[record[0]] = (gcvm_u64)record[2] | ((gcvm_u64)record[3] << 32);
      }
    } else {
      /* Run r of all the arrays' runs, in array order. */
      gcvm_u64 r = unit - item_units;
      gcvm_u32 array = 0u;
      while (array + 1u < GCVM_PATCH_ARRAYS && r >= run_count[array]) {
        r -= run_count[array];
        ++array;
      }
      GCVM_GLOBAL gcvm_u32* destination = array == GCVM_PATCH_BEGIN    ? (GCVM_GLOBAL gcvm_u32*)begin
                                          : array == GCVM_PATCH_DEGREE ? degree
                                                                       : edges;
      const GCVM_GLOBAL gcvm_u64* header = (const GCVM_GLOBAL gcvm_u64*)(patch + run_word[array]) + 3u * r;
      const gcvm_u64 to = header[0];
      const gcvm_u64 from = header[1];
      const gcvm_u64 words = header[2];
      for (gcvm_u64 k = GCVM_LOCAL_ID(); k < words; k += GCVM_GROUP_SIZE) destination[to + k] = patch[from + k];
    }
  }
}

/* Sets words[i] to `even` for even i and `odd` for odd i, i < count (a 64-bit
 * pattern as two words; pass the same value twice for a 32-bit fill). */
GCVM_DEVICE void gcvm_fill_words(GCVM_GLOBAL gcvm_u32* words, gcvm_u64 count, gcvm_u32 even, gcvm_u32 odd) {
  const gcvm_u64 stride = (gcvm_u64)GCVM_GROUP_COUNT() * GCVM_GROUP_SIZE;
  for (gcvm_u64 i = (gcvm_u64)GCVM_GROUP_ID() * GCVM_GROUP_SIZE + GCVM_LOCAL_ID(); i < count; i += stride)
    words[i] = (i & 1u) != 0u ? odd : even;
}

/* Copies `count` words from `from` to `to`, the grid's threads side by side. */
GCVM_DEVICE void gcvm_copy_words(GCVM_GLOBAL gcvm_u32* to, const GCVM_GLOBAL gcvm_u32* from, gcvm_u64 count) {
  const gcvm_u64 stride = (gcvm_u64)GCVM_GROUP_COUNT() * GCVM_GROUP_SIZE;
  for (gcvm_u64 i = (gcvm_u64)GCVM_GROUP_ID() * GCVM_GROUP_SIZE + GCVM_LOCAL_ID(); i < count; i += stride)
    to[i] = from[i];
}

#endif
