/* The partitioned mark: one partition of a heap spread over several devices
 * (gc/markers/partitioned_bfs_marker.hpp drives it, docs/multi-gpu.md has the design),
 * written once in the dialect of portable.h and compiled for CUDA and OpenCL.
 *
 * A partition owns the objects [lo, hi) (whole blocks, so lo is a multiple of 64 and
 * its mark words line up with the heap's). Its device holds the partition's rows of
 * the CSR with local vertex numbers (object lo is vertex 0) and local edge slots; the
 * targets in the edge array are global object ids. The mark is level-synchronous:
 *
 *   claim (queue q): every id of the inbox (global ids: roots, or references other
 *     partitions found) is claimed in the partition's mark bitmap; the ones it flips
 *     enter frontier queue q as local vertices. It also clears the other queue's count
 *     and every outbox count, which the host read before the exchange.
 *   scan (round r): every object of queue r % 2 is scanned; a reference to an object
 *     of this partition is claimed and enters queue (r + 1) % 2; a reference to
 *     another partition's object goes, once per mark (the sent filter, one bit per
 *     object id of the heap), to the outbox segment of its owner.
 *
 * One thread takes one object of the frontier; objects of at least GCVM_GROUP_SIZE
 * references are scanned by the whole group instead, one reference per thread. Every
 * reachable object is claimed once, by its owner, and scanned once, so the edge count
 * equals the serial marker's (DESIGN.md invariant 4) and an outbox segment for peer q
 * never holds more than q's object count.
 *
 * The partition table (`table`, u32 words): bounds[K + 1] (partition p owns
 * [bounds[p], bounds[p + 1])), then the outbox segments' offsets[K] and capacities[K].
 */
#ifndef GCVM_KERNELS_PARTITION_MARK_H
#define GCVM_KERNELS_PARTITION_MARK_H

#include "mark_layout.h"
#include "partition_layout.h"
#include "portable.h"

struct gcvm_part_shared {
  gcvm_u32 wide[GCVM_GROUP_SIZE];
  gcvm_u32 wide_count;
};

/* The partition that owns global object `id` (a binary search of the bounds). */
GCVM_DEVICE gcvm_u32 gcvm_part_owner(GCVM_GLOBAL const gcvm_u32* table, gcvm_u32 partitions, gcvm_u32 id) {
  gcvm_u32 low = 0;
  gcvm_u32 high = partitions; /* table[low] <= id < table[high] */
  while (high - low > 1) {
    const gcvm_u32 middle = (low + high) / 2;
    if (id >= table[middle]) low = middle;
    else high = middle;
  }
  return low;
}

/* Claims local vertex `vertex` in `marks`; true for the thread that set the bit. */
GCVM_DEVICE int gcvm_part_claim_bit(GCVM_GLOBAL gcvm_u32* marks, gcvm_u32 vertex) {
  const gcvm_u32 bit = 1u << (vertex & 31u);
  GCVM_GLOBAL gcvm_u32* word = marks + (vertex >> 5);
  if ((GCVM_VOLATILE_LOAD(word) & bit) != 0) return 0;
  return (GCVM_ATOMIC_OR(word, bit) & bit) == 0;
}

/* Appends local vertex `vertex` to the frontier queue `queue` (count `count`). */
GCVM_DEVICE void gcvm_part_enqueue(GCVM_GLOBAL gcvm_u32* queue, GCVM_GLOBAL gcvm_u32* count, gcvm_u32 capacity,
                                   GCVM_GLOBAL gcvm_u32* state, gcvm_u32 vertex) {
  const gcvm_u32 slot = GCVM_ATOMIC_ADD(count, 1u);
  if (slot < capacity) queue[slot] = vertex;
  else GCVM_ATOMIC_OR(state + GCVM_PART_OVERFLOW, 1u);
}

/* One reference `target` read from an object of partition `self`; 1 if it points
 * into another partition. */
GCVM_DEVICE gcvm_u32 gcvm_part_visit(gcvm_u32 target, gcvm_u32 self, gcvm_u32 partitions,
                                 GCVM_GLOBAL const gcvm_u32* table, GCVM_GLOBAL gcvm_u32* marks,
                                 GCVM_GLOBAL gcvm_u32* sent, GCVM_GLOBAL gcvm_u32* out_queue,
                                 gcvm_u32 queue_capacity, GCVM_GLOBAL gcvm_u32* outbox, GCVM_GLOBAL gcvm_u32* state,
                                 gcvm_u32 out_index) {
  const gcvm_u32 lo = table[self];
  if (target >= lo && target < table[self + 1]) {
    if (gcvm_part_claim_bit(marks, target - lo))
      gcvm_part_enqueue(out_queue, state + GCVM_PART_COUNT + out_index, queue_capacity, state, target - lo);
    return 0;
  }
  if (!gcvm_part_claim_bit(sent, target)) return 1; /* already on its way to its owner */
  const gcvm_u32 owner = gcvm_part_owner(table, partitions, target);
  GCVM_GLOBAL const gcvm_u32* offsets = table + partitions + 1;
  GCVM_GLOBAL const gcvm_u32* capacities = offsets + partitions;
  const gcvm_u32 slot = GCVM_ATOMIC_ADD(state + GCVM_PART_OUT_COUNT + owner, 1u);
  if (slot < capacities[owner]) outbox[offsets[owner] + slot] = target;
  else GCVM_ATOMIC_OR(state + GCVM_PART_OVERFLOW, 1u);
  return 1;
}

/* References first + k for k = from, from + step, ... below d of an object of
   partition `self`, each visited; returns how many were not null, and adds to *remote
   how many of them point into another partition. */
GCVM_DEVICE gcvm_u64 gcvm_part_visit_edges(GCVM_GLOBAL const gcvm_u32* edges, gcvm_u64 first, gcvm_u32 from,
                                           gcvm_u32 d, gcvm_u32 step, gcvm_u32 self, gcvm_u32 partitions,
                                           GCVM_GLOBAL const gcvm_u32* table, GCVM_GLOBAL gcvm_u32* marks,
                                           GCVM_GLOBAL gcvm_u32* sent, GCVM_GLOBAL gcvm_u32* out_queue,
                                           gcvm_u32 queue_capacity, GCVM_GLOBAL gcvm_u32* outbox,
                                           GCVM_GLOBAL gcvm_u32* state, gcvm_u32 out_index, gcvm_u64* remote) {
  gcvm_u64 read = 0;
  for (gcvm_u32 k = from; k < d; k += step) {
    const gcvm_u32 target = edges[first + k];
    if (target == GCVM_NULL_REF) continue;
    ++read;
    *remote += gcvm_part_visit(target, self, partitions, table, marks, sent, out_queue, queue_capacity, outbox, state,
                               out_index);
  }
  return read;
}

/* Claims inbox entries [0, count) into queue `queue_index`; see the header comment. */
GCVM_DEVICE void gcvm_part_claim(GCVM_GLOBAL const gcvm_u32* inbox, gcvm_u32 count, gcvm_u32 self,
                                 gcvm_u32 partitions, GCVM_GLOBAL const gcvm_u32* table, GCVM_GLOBAL gcvm_u32* marks,
                                 GCVM_GLOBAL gcvm_u32* queue, gcvm_u32 queue_capacity, GCVM_GLOBAL gcvm_u32* state,
                                 gcvm_u32 queue_index) {
  const gcvm_u32 lo = table[self];
  const gcvm_u32 hi = table[self + 1];
  const gcvm_u32 stride = GCVM_GROUP_COUNT() * GCVM_GROUP_SIZE;
  const gcvm_u32 first = GCVM_GROUP_ID() * GCVM_GROUP_SIZE + GCVM_LOCAL_ID();
  if (first == 0) {
    state[GCVM_PART_COUNT + (queue_index ^ 1u)] = 0;
    for (gcvm_u32 q = 0; q < partitions; ++q) state[GCVM_PART_OUT_COUNT + q] = 0;
  }
  for (gcvm_u32 i = first; i < count; i += stride) {
    const gcvm_u32 id = inbox[i];
    if (id < lo || id >= hi) continue; /* null roots, and nothing else, fall here */
    if (gcvm_part_claim_bit(marks, id - lo))
      gcvm_part_enqueue(queue, state + GCVM_PART_COUNT + queue_index, queue_capacity, state, id - lo);
  }
}

/* Scans the frontier of round `round`; see the header comment. */
GCVM_DEVICE void gcvm_part_scan(GCVM_GLOBAL const gcvm_u64* begin, GCVM_GLOBAL const gcvm_u32* degree,
                                GCVM_GLOBAL const gcvm_u32* edges, gcvm_u32 self, gcvm_u32 partitions,
                                GCVM_GLOBAL const gcvm_u32* table, GCVM_GLOBAL gcvm_u32* marks,
                                GCVM_GLOBAL gcvm_u32* sent, GCVM_GLOBAL const gcvm_u32* in_queue,
                                GCVM_GLOBAL gcvm_u32* out_queue, gcvm_u32 queue_capacity,
                                GCVM_GLOBAL gcvm_u32* outbox, GCVM_GLOBAL gcvm_u32* state, gcvm_u32 round,
                                GCVM_LOCAL struct gcvm_part_shared* shared) {
  const gcvm_u32 in_index = round & 1u;
  const gcvm_u32 out_index = in_index ^ 1u;
  const gcvm_u32 count = GCVM_VOLATILE_LOAD(state + GCVM_PART_COUNT + in_index);
  const gcvm_u32 lid = GCVM_LOCAL_ID();
  gcvm_u64 read = 0;
  gcvm_u64 remote = 0;
  gcvm_u32 scanned = 0;
  for (gcvm_u32 base = GCVM_GROUP_ID() * GCVM_GROUP_SIZE; base < count; base += GCVM_GROUP_COUNT() * GCVM_GROUP_SIZE) {
    if (lid == 0) shared->wide_count = 0;
    GCVM_BARRIER();
    const gcvm_u32 i = base + lid;
    if (i < count) {
      const gcvm_u32 v = in_queue[i];
      const gcvm_u32 d = degree[v];
      ++scanned;
      if (d >= GCVM_GROUP_SIZE) {
        shared->wide[GCVM_ATOMIC_ADD(&shared->wide_count, 1u)] = v;
      } else {
        read += gcvm_part_visit_edges(edges, begin[v], 0u, d, 1u, self, partitions, table, marks, sent, out_queue,
                                      queue_capacity, outbox, state, out_index, &remote);
      }
    }
    GCVM_BARRIER();
    const gcvm_u32 wide_count = shared->wide_count;
    for (gcvm_u32 w = 0; w < wide_count; ++w) {
      const gcvm_u32 v = shared->wide[w];
      read += gcvm_part_visit_edges(edges, begin[v], lid, degree[v], GCVM_GROUP_SIZE, self, partitions, table, marks,
                                    sent, out_queue, queue_capacity, outbox, state, out_index, &remote);
    }
    GCVM_BARRIER();
  }
  if (read != 0) GCVM_ATOMIC_ADD64((GCVM_GLOBAL gcvm_u64*)(state + GCVM_PART_EDGES_LO), read);
  if (remote != 0) GCVM_ATOMIC_ADD64((GCVM_GLOBAL gcvm_u64*)(state + GCVM_PART_REMOTE_LO), remote);
  if (scanned != 0) GCVM_ATOMIC_ADD(state + GCVM_PART_SCANNED, scanned);
}

#endif
