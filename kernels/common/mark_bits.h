/* The mark bitmap's bits, as every device mark kernel claims them, in the dialect of
 * portable.h. Bit (id & 31) of word (id >> 5) is object id's mark (mark_layout.h).
 * A bit is only ever set during a mark, and only by an atomic OR, so the thread whose
 * OR found it clear is the one that claimed the object; a plain read that finds the
 * bit set proves the object claimed, and one that finds it clear (perhaps stale) only
 * costs the atomic that follows. */
#ifndef GCVM_KERNELS_MARK_BITS_H
#define GCVM_KERNELS_MARK_BITS_H

#include "mark_layout.h"
#include "portable.h"

/* 1 if target's mark bit reads as set (a plain read). */
GCVM_DEVICE int gcvm_marked(const GCVM_GLOBAL gcvm_u32* marks, gcvm_u32 target) {
  return (marks[target >> 5] & (1u << (target & 31u))) != 0u;
}

/* A claim in two halves, so that a thread can issue several atomics before it waits
 * for any: gcvm_claim_issue ORs target's bit into its word and returns the word as it
 * was; gcvm_claim_won says from that word whether this claim flipped the bit. */
GCVM_DEVICE gcvm_u32 gcvm_claim_issue(GCVM_GLOBAL gcvm_u32* marks, gcvm_u32 target) {
  return GCVM_ATOMIC_OR(marks + (target >> 5), 1u << (target & 31u));
}

GCVM_DEVICE int gcvm_claim_won(gcvm_u32 word_before, gcvm_u32 target) {
  return (word_before & (1u << (target & 31u))) == 0u;
}

/* 1 if this call's atomic flipped target's mark bit from 0 to 1. */
GCVM_DEVICE int gcvm_claim_atomic(GCVM_GLOBAL gcvm_u32* marks, gcvm_u32 target) {
  return gcvm_claim_won(gcvm_claim_issue(marks, target), target);
}

/* Adds the set bits of marks[0, words) to *total (the marked objects, counted where the
 * marks are rather than after their download): each thread counts a strided share of
 * the words, the group sums them in `group_total`, and one atomic a group adds that. */
GCVM_DEVICE void gcvm_count_marks(const GCVM_GLOBAL gcvm_u32* marks, gcvm_u32 words, GCVM_GLOBAL gcvm_u32* total,
                                  GCVM_LOCAL gcvm_u32* group_total) {
  if (GCVM_LOCAL_ID() == 0u) *group_total = 0u;
  GCVM_BARRIER();
  gcvm_u32 bits = 0u;
  const gcvm_u32 stride = GCVM_GROUP_COUNT() * GCVM_GROUP_SIZE;
  for (gcvm_u32 w = GCVM_GROUP_ID() * GCVM_GROUP_SIZE + GCVM_LOCAL_ID(); w < words; w += stride)
    bits += GCVM_POPCOUNT(marks[w]);
  if (bits != 0u) GCVM_ATOMIC_ADD(group_total, bits);
  GCVM_BARRIER();
  if (GCVM_LOCAL_ID() == 0u && *group_total != 0u) GCVM_ATOMIC_ADD(total, *group_total);
}

#endif
