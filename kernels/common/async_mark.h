/* gpu-bfs's async mode: a breadth-first-like mark with no level barrier, for deep
 * heaps, written once in the dialect of portable.h (the level mode is bfs_mark.h).
 *
 * Why. A level-synchronous BFS pays one launch (or one grid-wide barrier) per BFS
 * level, about 19 µs on the H100; a compiler's heap has 325 levels, so the mark is
 * latency-bound however wide its middle levels are. Here one persistent launch marks
 * everything: work moves through one global array queue and never waits for a level.
 *
 * The queue. Every reachable object enters it once (claims are atomic, as in
 * bfs_mark.h), so an array of V slots never wraps; slots are GCVM_NULL_REF until
 * written. Producers reserve slots with one atomic add on ASYNC_TAIL per flush of a
 * group's staging buffer (Cederman et al.'s batching, ../papers). Consumers take
 * tickets: a group takes the next GROUP_SIZE slots with one atomic add on ASYNC_HEAD,
 * each thread owning one slot, and a thread processes its slot as soon as it is
 * written, whether or not its neighbours' are; the group takes new tickets when all of
 * its slots are taken. A taken slot is overwritten with GCVM_SLOT_TAKEN.
 *
 * Kept work. A group keeps up to GROUP_SIZE of the objects it discovered in a round in
 * work-group memory and scans them in the next round with the threads whose ticket
 * slot is not ready, publishing only the rest. A chain (a linked list, a deep narrow
 * part of a heap) then stays in one group and costs one round per object, with no
 * global queue traffic; wide frontiers still spread through the queue.
 *
 * A round. Each thread holds at most one object; the group walks the concatenated
 * references of all of them, plus one chunk of a huge object when fewer than half of
 * its threads have an object, one reference per thread per step (offsets from a
 * prefix sum over the degrees, the owner found by binary search: the flattened form of
 * Maas §5.2's wide-object handling). Every thread is busy whatever the degrees, reads
 * are coalesced within an object, and a round has one loop of steps: no loop with
 * barriers nests in another (PoCL's work-group compiler takes minutes over nested
 * ones). Huge objects (more than GCVM_CHUNK_SPLIT references) go to the chunk queue.
 * So the level mode's offsets=, vector= and wide= options do not apply here.
 *
 * Termination, and why nothing can deadlock. PENDING counts work items not yet done:
 * queued objects (raised when slots are reserved, before anyone can see them), kept
 * objects, chunks (raised when offered). A group lowers it by what it finished in a
 * round, in the same atomic add that raises it by what it kept (its unfinished items
 * keep PENDING above zero until then). Whatever a finished item produced was counted
 * before the item was uncounted, so PENDING = 0 means no work exists anywhere, and no
 * work can appear again: every group that sees 0 leaves. A thread waits for only two
 * things: a reserved queue or chunk slot, which the running thread that reserved it
 * writes without waiting for anything; and its own ticket slot, which is either below
 * the final ASYNC_TAIL (then written as above) or never written, and then PENDING
 * reaches 0. Tickets are held only by running groups, so work is never stranded in a
 * group that has not started (PoCL runs groups one after another); any grid size is
 * correct, and the grid is sized to the device's resident groups for speed only.
 *
 * Narrow tails (GCVM_BFS_FALLBACK): a group that finishes work in `narrow_rounds`
 * rounds in a row (one object or more each: hops along the narrow part) and sees
 * fewer than `threshold` items pending after each sets STOP. Each group then
 * publishes its kept objects to the queue and leaves after its round. What is left is
 * on the queue (slots below ASYNC_TAIL that are not GCVM_SLOT_TAKEN: gcvm_async_gather
 * collects them) and in the chunk queue (items CHUNK_HEAD to CHUNK_TAIL), and the host
 * finishes the mark on the CPU (gc/markers/cpu_finish.hpp).
 */
#ifndef GCVM_KERNELS_ASYNC_MARK_H
#define GCVM_KERNELS_ASYNC_MARK_H

#include "bfs_mark.h"

struct gcvm_async_shared {
  struct gcvm_bfs_shared bfs;
  gcvm_u32 keep[GCVM_GROUP_SIZE]; /* kept objects, [0, keep_count) */
  gcvm_u32 keep_count;
  gcvm_u32 keep_taken; /* threads that asked for a kept object this round */
  gcvm_u32 ticket;     /* the first queue slot of this group's tickets */
  gcvm_u32 open_slots; /* this group's ticket slots not yet taken */
  gcvm_u32 processed;  /* objects scanned this round */
  gcvm_u32 narrow_rounds; /* rounds in a row with work while fewer than `threshold` items were pending */
  gcvm_u32 stop;
  gcvm_u32 exit_flag;
  gcvm_u32 refresh;       /* 1: every ticket slot is taken, take new tickets */
  gcvm_u32 kept_total;
};

/* Level 0 of async mode: claims the roots into the queue (ASYNC_TAIL, PENDING). */
GCVM_DEVICE void gcvm_bfs_async_seed(const GCVM_GLOBAL gcvm_u32* roots, gcvm_u32 root_count,
                                     GCVM_GLOBAL gcvm_u32* marks, GCVM_GLOBAL gcvm_u32* queue,
                                     GCVM_GLOBAL gcvm_u32* state, GCVM_LOCAL struct gcvm_bfs_shared* sh) {
  gcvm_bfs_init_shared(sh);
  const struct gcvm_out out = {queue, state + GCVM_STATE_ASYNC_TAIL, 0, state, 0u, 0u, state + GCVM_STATE_PENDING};
  gcvm_claim_roots(roots, (gcvm_u64)GCVM_GROUP_ID() * GCVM_GROUP_SIZE, root_count,
                   (gcvm_u64)GCVM_GROUP_COUNT() * GCVM_GROUP_SIZE, marks, sh, out);
}

/* Collective, at the end of a round: keeps up to GROUP_SIZE objects (those left
 * from before first, then the newest discoveries), publishes the rest, settles
 * PENDING, and decides whether the group leaves. `finished` = objects and chunks the
 * group completed this round. */
GCVM_DEVICE void gcvm_async_round_end(GCVM_LOCAL struct gcvm_async_shared* sh, struct gcvm_out out,
                                      GCVM_GLOBAL gcvm_u32* state, gcvm_u32 finished, gcvm_u32 flags,
                                      gcvm_u32 threshold, gcvm_u32 narrow_rounds) {
  GCVM_LOCAL struct gcvm_bfs_shared* b = &sh->bfs;
  const gcvm_u32 lid = GCVM_LOCAL_ID();
  if (lid == 0u) sh->stop = GCVM_VOLATILE_LOAD(state + GCVM_STATE_STOP);
  GCVM_BARRIER();
  const int stop = sh->stop != 0u;
  const gcvm_u32 taken = sh->keep_taken < sh->keep_count ? sh->keep_taken : sh->keep_count;
  const gcvm_u32 left = sh->keep_count - taken;
  const gcvm_u32 staged = b->stage_count;
  const gcvm_u32 room = stop ? 0u : GCVM_GROUP_SIZE - left;
  const gcvm_u32 kept = staged < room ? staged : room;
  const gcvm_u32 carried = lid < left ? sh->keep[taken + lid] : 0u;
  GCVM_BARRIER();
  if (lid < left) sh->keep[lid] = carried;
  if (lid < kept) sh->keep[left + lid] = b->stage[staged - kept + lid];
  /* On STOP the objects left over from before go out with the discoveries (they were
   * counted in PENDING when kept, so it is lowered again below). The stage holds at
   * most STAGE_SLACK + GROUP_SIZE entries here, so they fit. */
  const gcvm_u32 published = staged - kept;
  if (stop && lid < left) b->stage[published + lid] = carried;
  GCVM_BARRIER();
  if (lid == 0u) b->stage_count = published + (stop ? left : 0u);
  gcvm_stage_flush(b, out, 1);
  if (lid == 0u) {
    sh->keep_count = stop ? 0u : left + kept;
    sh->kept_total += kept;
    GCVM_GLOBAL_FENCE();
    const gcvm_u32 delta = kept - finished - (stop ? left : 0u); /* modulo 2^32 */
    if (delta != 0u) GCVM_ATOMIC_ADD(state + GCVM_STATE_PENDING, delta);
    int leave = stop;
    if (!leave && finished == 0u && sh->keep_count == 0u) {
      GCVM_GLOBAL_FENCE();
      leave = GCVM_VOLATILE_LOAD(state + GCVM_STATE_PENDING) == 0u;
    } else if (!leave && (flags & GCVM_BFS_FALLBACK) != 0u) {
      GCVM_GLOBAL_FENCE();
      const gcvm_u32 pending = GCVM_VOLATILE_LOAD(state + GCVM_STATE_PENDING);
      sh->narrow_rounds = pending < threshold ? sh->narrow_rounds + 1u : 0u;
      if (sh->narrow_rounds >= narrow_rounds) state[GCVM_STATE_STOP] = 1u;
    }
    sh->exit_flag = (gcvm_u32)leave;
    sh->refresh = sh->open_slots == 0u ? 1u : 0u;
  }
  GCVM_BARRIER();
}

/* Collective: visits the references of this thread's object `v` (GCVM_NULL_REF:
 * none) and of the chunk item `item` (GCVM_CHUNK_NONE: none, uniformly) with the
 * whole group; huge objects are offered to the chunk queue instead. */
GCVM_DEVICE void gcvm_async_scan(const GCVM_GLOBAL gcvm_u64* begin, const GCVM_GLOBAL gcvm_u32* degree,
                                 const GCVM_GLOBAL gcvm_u32* edges, GCVM_GLOBAL gcvm_u32* marks,
                                 GCVM_LOCAL struct gcvm_bfs_shared* sh, struct gcvm_out out,
                                 struct gcvm_chunk_queue chunks, gcvm_u32 v, gcvm_u64 item, gcvm_u32* traversed) {
  const gcvm_u32 lid = GCVM_LOCAL_ID();
  gcvm_u64 first = 0u;
  gcvm_u32 refs = 0u;
  if (v != GCVM_NULL_REF) {
    refs = degree[v];
    if (refs > GCVM_CHUNK_SPLIT) {
      gcvm_offer_chunks(chunks, v, refs);
      refs = 0u;
    } else {
      first = begin[v];
    }
  }
  gcvm_u64 chunk_from = 0u;
  gcvm_u64 chunk_end = 0u;
  if (item != GCVM_CHUNK_NONE) gcvm_chunk_edges(begin, degree, item, &chunk_from, &chunk_end);
  const gcvm_u32 chunk_refs = (gcvm_u32)(chunk_end - chunk_from);
  sh->wide_first[lid] = first;
  gcvm_exclusive_scan(sh, refs);
  const gcvm_u32 objects_total = sh->rounds;
  const gcvm_u32 total = objects_total + chunk_refs;
  for (gcvm_u32 base = 0u; base < total; base += GCVM_GROUP_SIZE) {
    const gcvm_u32 e = base + lid;
    if (e < objects_total) {
      const gcvm_u32 owner = gcvm_scan_owner(sh, e);
      gcvm_visit(marks, sh, edges[sh->wide_first[owner] + (e - sh->scan[owner])], traversed);
    } else if (e < total) {
      gcvm_visit(marks, sh, edges[chunk_from + (e - objects_total)], traversed);
    }
    gcvm_stage_flush(sh, out, 0);
  }
}

/* The async mark: one launch, every group running until no work is pending (or STOP). */
GCVM_DEVICE void gcvm_bfs_async(const GCVM_GLOBAL gcvm_u64* begin, const GCVM_GLOBAL gcvm_u32* degree,
                                const GCVM_GLOBAL gcvm_u32* edges, GCVM_GLOBAL gcvm_u32* marks,
                                GCVM_GLOBAL gcvm_u32* queue, gcvm_u32 capacity, GCVM_GLOBAL gcvm_u64* chunk_items,
                                gcvm_u32 chunk_capacity, GCVM_GLOBAL gcvm_u32* state, gcvm_u32 flags,
                                gcvm_u32 fallback_threshold, gcvm_u32 narrow_rounds,
                                GCVM_LOCAL struct gcvm_async_shared* sh) {
  GCVM_LOCAL struct gcvm_bfs_shared* b = &sh->bfs;
  const gcvm_u32 lid = GCVM_LOCAL_ID();
  gcvm_bfs_init_shared(b);
  if (lid == 0u) {
    sh->keep_count = 0u;
    sh->narrow_rounds = 0u;
    sh->kept_total = 0u;
    sh->ticket = GCVM_ATOMIC_ADD(state + GCVM_STATE_ASYNC_HEAD, (gcvm_u32)GCVM_GROUP_SIZE);
  }
  GCVM_BARRIER();
  const struct gcvm_out out = {queue, state + GCVM_STATE_ASYNC_TAIL, 0, state, 0u, 0u, state + GCVM_STATE_PENDING};
  const struct gcvm_chunk_queue chunks = {chunk_items, state, state + GCVM_STATE_PENDING, chunk_capacity};
  gcvm_u32 slot = sh->ticket + lid;
  int waiting = slot < capacity && sh->ticket < capacity;
  gcvm_u32 traversed = 0u;
  gcvm_u32 rounds = 0u;
  for (;;) {
    /* This thread's object: its ticket slot if written, else a kept object. */
    gcvm_u32 v = GCVM_NULL_REF;
    if (waiting) {
      const gcvm_u32 seen = GCVM_VOLATILE_LOAD(queue + slot);
      if (seen != GCVM_NULL_REF) {
        v = seen;
        queue[slot] = GCVM_SLOT_TAKEN;
        waiting = 0;
      }
    }
    if (lid == 0u) {
      sh->keep_taken = 0u;
      sh->processed = 0u;
      sh->open_slots = 0u;
    }
    GCVM_BARRIER();
    if (v == GCVM_NULL_REF) {
      const gcvm_u32 k = GCVM_ATOMIC_ADD(&sh->keep_taken, 1u);
      if (k < sh->keep_count) v = sh->keep[k];
    }
    if (v != GCVM_NULL_REF) GCVM_ATOMIC_ADD(&sh->processed, 1u);
    if (waiting) GCVM_ATOMIC_ADD(&sh->open_slots, 1u);
    GCVM_BARRIER();
    if (lid == 0u) b->chunk_item = sh->processed < GCVM_GROUP_SIZE / 2u ? gcvm_take_chunk(chunks) : GCVM_CHUNK_NONE;
    GCVM_BARRIER();
    const gcvm_u64 item = b->chunk_item;
    gcvm_async_scan(begin, degree, edges, marks, b, out, chunks, v, item, &traversed);
    if (lid == 0u && item != GCVM_CHUNK_NONE) ++b->chunks;
    ++rounds;
    gcvm_async_round_end(sh, out, state, sh->processed + (item != GCVM_CHUNK_NONE ? 1u : 0u), flags,
                         fallback_threshold, narrow_rounds);
    if (sh->exit_flag != 0u) break;
    /* New tickets once every slot of the last ones is taken. The barrier is
     * unconditional: PoCL mishandles barriers under branches, even uniform ones. */
    const int refresh = sh->refresh != 0u;
    if (lid == 0u && refresh)
      sh->ticket = GCVM_VOLATILE_LOAD(state + GCVM_STATE_ASYNC_HEAD) < capacity
                       ? GCVM_ATOMIC_ADD(state + GCVM_STATE_ASYNC_HEAD, (gcvm_u32)GCVM_GROUP_SIZE)
                       : capacity;
    GCVM_BARRIER();
    if (refresh) {
      slot = sh->ticket + lid;
      waiting = sh->ticket < capacity && slot < capacity;
    }
  }
  gcvm_add_traversed(b, state, traversed);
  if (lid == 0u) {
    GCVM_ATOMIC_MAX(state + GCVM_STATE_ROUNDS, rounds);
    if (sh->kept_total != 0u) GCVM_ATOMIC_ADD(state + GCVM_STATE_KEPT, sh->kept_total);
  }
}

/* After a STOP: appends every queue slot below `tail` that was written but not taken
 * to out[1 ..] through the counter out[0] (the host sized `out` from PENDING). */
GCVM_DEVICE void gcvm_async_gather(const GCVM_GLOBAL gcvm_u32* queue, gcvm_u32 tail, GCVM_GLOBAL gcvm_u32* out,
                                   gcvm_u32 capacity) {
  const gcvm_u32 stride = GCVM_GROUP_COUNT() * GCVM_GROUP_SIZE;
  for (gcvm_u32 i = GCVM_GROUP_ID() * GCVM_GROUP_SIZE + GCVM_LOCAL_ID(); i < tail; i += stride) {
    const gcvm_u32 v = queue[i];
    if (v == GCVM_SLOT_TAKEN || v == GCVM_NULL_REF) continue;
    const gcvm_u32 at = GCVM_ATOMIC_ADD(out, 1u);
    if (at < capacity) out[1u + at] = v;
  }
}

#endif
