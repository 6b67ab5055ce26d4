/* The layout contract of a mirror patch between the host, which packs it
 * (gc/device/mirror_plan.cpp, fill_mirror_patch), and the kernel that applies it
 * (memory_ops.h, gcvm_apply_patch), in plain C like mark_layout.h.
 *
 * A patch is one buffer of 32-bit words that describes itself: it opens with a
 * section table of u64 fields (indices below), and every section lies at the
 * 8-byte-aligned word offset the table gives:
 *   edge pairs    (u32 slot - base, u32 value), the pairs of every 2^32-slot segment
 *                 one after another in segment order; pair i belongs to the first
 *                 segment whose end is above i, and its slot is that segment's base
 *                 plus the pair's offset;
 *   vertex records (u32 vertex, u32 degree, u32 begin low, u32 begin high);
 *   run headers   (u64 destination word, u64 source word, u64 words) per array, the
 *                 source counting 32-bit words of the patch, the destination 32-bit
 *                 words of the array (two per vertex of the begin array);
 *   run values    where the run headers point.
 * The table is GCVM_PATCH_TABLE_FIELDS(segments) fields long: a fixed part and one
 * (end, base) entry per segment that has pairs. Sections never overlap in what they
 * write (each entry of the graph is in at most one of them), so the kernel applies
 * them in any order, all in one launch.
 */
#ifndef GCVM_KERNELS_PATCH_LAYOUT_H
#define GCVM_KERNELS_PATCH_LAYOUT_H

/* The mirror arrays, as the run fields index them (MirrorArray on the host). */
#define GCVM_PATCH_BEGIN 0
#define GCVM_PATCH_DEGREE 1
#define GCVM_PATCH_EDGES 2
#define GCVM_PATCH_ARRAYS 3

/* Indices into the u64 section table. */
#define GCVM_PATCH_PAIR_WORD 0    /* first word of the edge pairs */
#define GCVM_PATCH_PAIR_COUNT 1   /* pairs of every segment */
#define GCVM_PATCH_RECORD_WORD 2  /* first word of the vertex records */
#define GCVM_PATCH_RECORD_COUNT 3
#define GCVM_PATCH_RUN_WORD(array) (4 + 2 * (array))   /* first word of the array's run headers */
#define GCVM_PATCH_RUN_COUNT(array) (5 + 2 * (array))  /* runs into the array */
#define GCVM_PATCH_SEGMENT_COUNT (GCVM_PATCH_RUN_WORD(GCVM_PATCH_ARRAYS))
/* Per segment with pairs, in segment order: the index one past its last pair, its base slot. */
#define GCVM_PATCH_SEGMENT_END(segment) (GCVM_PATCH_SEGMENT_COUNT + 1 + 2 * (segment))
#define GCVM_PATCH_SEGMENT_BASE(segment) (GCVM_PATCH_SEGMENT_END(segment) + 1)
#define GCVM_PATCH_TABLE_FIELDS(segments) (GCVM_PATCH_SEGMENT_END(segments))

/* Work groups of one patch launch, at most (the kernel strides over its units). */
#define GCVM_PATCH_MAX_GROUPS 4096

#endif
