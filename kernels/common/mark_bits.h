/* The mark bitmap's bits, as every device mark kernel claims them, in the dialect of
 * portable.h. Bit (id & 31) of word (id >> 5) is object id's mark (mark_layout.h).
 * A bit is only ever set during a mark, and only by an atomic OR, so the thread whose
 * OR found it clear is the one that claimed the object; a plain read that finds the
 * bit set proves the object claimed, and one that finds it clear (perhaps stale) only
 * costs the atomic that follows. */
#ifndef GCVM_KERNELS_MARK_BITS_H
#define GCVM_KERNELS_MARK_BITS_H

#include "portable.h"

/* 1 if target's mark bit reads as set (a plain read). */
GCVM_DEVICE int gcvm_marked(const GCVM_GLOBAL gcvm_u32* marks, gcvm_u32 target) {
  return (marks[target >> 5] & (1u << (target & 31u))) != 0u;
}

/* 1 if this call's atomic flipped target's mark bit from 0 to 1. */
GCVM_DEVICE int gcvm_claim_atomic(GCVM_GLOBAL gcvm_u32* marks, gcvm_u32 target) {
  const gcvm_u32 bit = 1u << (target & 31u);
  return (GCVM_ATOMIC_OR(marks + (target >> 5), bit) & bit) == 0u;
}

#endif
