/* The parallel depth-first mark of FastCollect (Abhinav and Nasre, §3.2 and §4),
 * written once in the dialect of portable.h and compiled for CUDA and OpenCL.
 *
 * Every thread runs a DFS from the roots it was given (root i goes to thread
 * i mod T). An object belongs to the one thread whose claim flipped its mark bit, so
 * each reachable object is scanned exactly once and the edge count equals the serial
 * marker's (DESIGN.md invariant 4).
 *
 * Stacks. The space-efficient stack (Alg. 1-2): one u32 of `storage` per object, and
 * every thread's stack is a linked list threaded through it (storage[v] is the entry
 * below v, GCVM_DFS_BOTTOM at the bottom, GCVM_DFS_NOT_IN_STACK when v is in no
 * stack). Stack memory is V words whatever the number of threads. The hybrid stack
 * (§4.1) puts the first `local_cap` entries of each thread's stack in work-group
 * memory; a push that finds them full goes to the linked stack, a pop takes local
 * entries first, so the local part refills itself from new discoveries. In contrast
 * to the paper (128 work-items per group, 128 entries each), groups have
 * GCVM_GROUP_SIZE (256) threads and at most GCVM_DFS_LOCAL_MAX (32) entries each,
 * 32 KiB of the 48 KiB of static shared memory a CUDA block may have.
 *
 * Rounds. A group works in rounds separated by barriers: each thread pops up to
 * `steps` objects; then (GCVM_DFS_BALANCE) the whole group scans the objects
 * with more than `wide_threshold` references that its threads met in the round, one
 * reference (or vector) per thread, so a huge object costs degree / group size steps
 * and its targets end up on 256 stacks, and (GCVM_DFS_CHUNKS) one chunk of
 * `chunk_edges` references of some huge object (more than 2 chunks) that any group
 * offered in the chunk table, taken by thread 0 at the end of the previous round, so
 * one huge array is scanned by every group at once, not by one; then threads donate
 * and steal work. Every barrier is unconditional: with a barrier under a (uniform)
 * `if`, PoCL 3.1 counted thread 0's work in that region once per work-item.
 *
 * Load balancing, in contrast to the paper. Alg. 5 lets an idle thread take any
 * object it finds in its area of the stack storage; that object is still linked into
 * its owner's chain, so taking it cuts the owner's stack (the entries below are lost
 * to it) or lets two threads scan it. gcvm keeps every chain owned by one thread and
 * moves whole chains through a pool of P slots instead: a busy thread, when threads
 * are hungry (state HUNGRY > 0) and the pool is less than half full, donates all of
 * its linked stack but its top entry in O(1) (cut the chain below the top, publish the
 * rest with one compare-and-swap into a free slot), or half of its local entries as a
 * new chain; an idle thread probes its area of the pool (GCVM_DFS_PROBES slots per
 * round, moving on each round) and takes a chain with one atomic exchange. This is
 * work stealing between threads, warps and groups (the paper's open problem, §4.2):
 * a deep tree or a bushy object is split as soon as anyone is idle. A single linked
 * list remains sequential: it has no parallelism to find.
 *
 * Termination, and why nothing can deadlock. No thread ever waits for another thread
 * or group except at work-group barriers, which every thread of the group reaches
 * with uniform loop bounds. A group returns when none of its threads has work and
 * either no group is busy (state ACTIVE; a group counts itself busy before its first
 * round) and the pool is empty, after at least GCVM_DFS_IDLE_MIN_ROUNDS idle rounds,
 * or it has looked for work for GCVM_DFS_IDLE_ROUNDS rounds; a busy group returns after `rounds_per_launch` rounds.
 * On return every thread moves its local entries to its linked stack and saves its
 * top in tops[gid]. The host relaunches (in doubling batches) until a launch ends
 * with no thread holding work (pending[L] = 0), an empty pool and no huge object with
 * chunks left (state CHUNKS_OPEN = 0): then no work exists anywhere, because between
 * launches all work is on a saved stack, in the pool or in the chunk table. The host
 * may instead stop early (fallback=<threshold>:<min>): when a launch leaves fewer than
 * `threshold` threads with work and the pool and chunk table are empty, all pending
 * work is on the saved stacks, so gcvm_dfs_gather copies their entries (marked, not
 * yet scanned) to a short array and the CPU finishes the mark from them. Groups need not be co-resident (PoCL runs the work-items of a group one after
 * another between barriers, and not all groups at once), so the grid may be any
 * size; it is sized to the device's resident groups for speed only.
 *
 * Marks are bits of the mark bitmap (invariant 2) set with an atomic OR, in contrast
 * to the paper's compare-and-swap on a per-object integer; GCVM_DFS_CHECKED is the
 * paper's atomic optimization (§4.4): a plain read of the word first, the atomic only
 * when the bit is clear. GCVM_DFS_VECTOR reads references as aligned 16-byte vectors
 * (§4.3) from the padded edge array. Entries of `storage` written by one thread and
 * read by another (donated chains) are published with a global fence before the
 * compare-and-swap and read with volatile loads after the exchange.
 */
#ifndef GCVM_KERNELS_DFS_MARK_H
#define GCVM_KERNELS_DFS_MARK_H

#include "mark_bits.h"
#include "mark_layout.h"
#include "portable.h"

struct gcvm_dfs_shared {
  gcvm_u32 local_stack[GCVM_DFS_LOCAL_MAX * GCVM_GROUP_SIZE]; /* entry i of thread t at i * GROUP + t */
  gcvm_u32 wide_vertex[GCVM_GROUP_SIZE];
  gcvm_u32 wide_count;
  gcvm_u32 busy;       /* threads with work after this round */
  gcvm_u32 hungry;     /* this group's contribution to state HUNGRY */
  gcvm_u32 active;     /* 1 while this group is counted in state ACTIVE */
  gcvm_u32 exit_flag;
  gcvm_u32 traversed;
  gcvm_u32 donations;
  gcvm_u32 steals;
  gcvm_u32 chunk_vertex; /* the huge object whose chunk the group scans this round */
  gcvm_u32 chunk_index;
  gcvm_u32 chunk_hint;   /* a chunk-table slot seen open this round, or GCVM_DFS_NO_VERTEX */
  gcvm_u32 chunks;
};

/* One thread's stack: `top` of its linked part, `count` entries in local memory. */
struct gcvm_dfs_stack {
  gcvm_u32 top;
  gcvm_u32 count;
  gcvm_u32 cap;
};

/* 1 if this call flipped target's mark bit from 0 to 1; with GCVM_DFS_CHECKED, no
 * atomic when the bit reads as set. */
GCVM_DEVICE int gcvm_dfs_claim(GCVM_GLOBAL gcvm_u32* marks, gcvm_u32 target, gcvm_u32 flags) {
  if ((flags & GCVM_DFS_CHECKED) != 0u && gcvm_marked(marks, target)) return 0;
  return gcvm_claim_atomic(marks, target);
}

/* Alg. 1 on the linked part: v goes on top of the chain whose top is *top. */
GCVM_DEVICE void gcvm_dfs_link(GCVM_GLOBAL gcvm_u32* storage, gcvm_u32* top, gcvm_u32 v) {
  storage[v] = *top == GCVM_DFS_EMPTY ? GCVM_DFS_BOTTOM : *top;
  *top = v;
}

GCVM_DEVICE void gcvm_dfs_push(GCVM_GLOBAL gcvm_u32* storage, GCVM_LOCAL struct gcvm_dfs_shared* sh,
                               struct gcvm_dfs_stack* s, gcvm_u32 v) {
  if (s->count < s->cap) {
    sh->local_stack[s->count * GCVM_GROUP_SIZE + GCVM_LOCAL_ID()] = v;
    ++s->count;
  } else {
    gcvm_dfs_link(storage, &s->top, v);
  }
}

GCVM_DEVICE int gcvm_dfs_empty(const struct gcvm_dfs_stack* s) { return s->count == 0u && s->top == GCVM_DFS_EMPTY; }

/* Alg. 2 (local entries first). The stack must not be empty. */
GCVM_DEVICE gcvm_u32 gcvm_dfs_pop(GCVM_GLOBAL gcvm_u32* storage, GCVM_LOCAL struct gcvm_dfs_shared* sh,
                                  struct gcvm_dfs_stack* s) {
  if (s->count != 0u) {
    --s->count;
    return sh->local_stack[s->count * GCVM_GROUP_SIZE + GCVM_LOCAL_ID()];
  }
  const gcvm_u32 v = s->top;
  const gcvm_u32 next = GCVM_VOLATILE_LOAD(storage + v);
  storage[v] = GCVM_DFS_NOT_IN_STACK;
  s->top = next == GCVM_DFS_BOTTOM ? GCVM_DFS_EMPTY : next;
  return v;
}

GCVM_DEVICE void gcvm_dfs_visit(GCVM_GLOBAL gcvm_u32* marks, GCVM_GLOBAL gcvm_u32* storage,
                                GCVM_LOCAL struct gcvm_dfs_shared* sh, struct gcvm_dfs_stack* s, gcvm_u32 target,
                                gcvm_u32 flags, gcvm_u32* traversed) {
  if (target == GCVM_NULL_REF) return;
  ++*traversed;
  if (gcvm_dfs_claim(marks, target, flags)) gcvm_dfs_push(storage, sh, s, target);
}

/* Visits the references of aligned vector `w` that lie in [first, end). */
GCVM_DEVICE void gcvm_dfs_visit_vector(const GCVM_GLOBAL gcvm_u32* edges, GCVM_GLOBAL gcvm_u32* marks,
                                       GCVM_GLOBAL gcvm_u32* storage, GCVM_LOCAL struct gcvm_dfs_shared* sh,
                                       struct gcvm_dfs_stack* s, gcvm_u64 w, gcvm_u64 first, gcvm_u64 end,
                                       gcvm_u32 flags, gcvm_u32* traversed) {
  const gcvm_u32x4 v = ((const GCVM_GLOBAL gcvm_u32x4*)edges)[w];
  const gcvm_u64 e = w * 4u;
  if (e >= first && e < end) gcvm_dfs_visit(marks, storage, sh, s, v.x, flags, traversed);
  if (e + 1u >= first && e + 1u < end) gcvm_dfs_visit(marks, storage, sh, s, v.y, flags, traversed);
  if (e + 2u >= first && e + 2u < end) gcvm_dfs_visit(marks, storage, sh, s, v.z, flags, traversed);
  if (e + 3u >= first && e + 3u < end) gcvm_dfs_visit(marks, storage, sh, s, v.w, flags, traversed);
}

/* Scans edges [first, first + refs) of one object by this thread alone. */
GCVM_DEVICE void gcvm_dfs_scan(const GCVM_GLOBAL gcvm_u32* edges, GCVM_GLOBAL gcvm_u32* marks,
                               GCVM_GLOBAL gcvm_u32* storage, GCVM_LOCAL struct gcvm_dfs_shared* sh,
                               struct gcvm_dfs_stack* s, gcvm_u64 first, gcvm_u32 refs, gcvm_u32 flags,
                               gcvm_u32* traversed) {
  const gcvm_u64 end = first + refs;
  if (refs == 0u) return;
  if ((flags & GCVM_DFS_VECTOR) != 0u) {
    for (gcvm_u64 w = first / 4u; w * 4u < end; ++w)
      gcvm_dfs_visit_vector(edges, marks, storage, sh, s, w, first, end, flags, traversed);
  } else {
    for (gcvm_u64 e = first; e < end; ++e) gcvm_dfs_visit(marks, storage, sh, s, edges[e], flags, traversed);
  }
}

/* The group scans references [lo, hi) of one object, one reference (or aligned
 * vector) per thread per step; every thread of the group calls it with the same range. */
GCVM_DEVICE void gcvm_dfs_group_scan(const GCVM_GLOBAL gcvm_u32* edges, GCVM_GLOBAL gcvm_u32* marks,
                                     GCVM_GLOBAL gcvm_u32* storage, GCVM_LOCAL struct gcvm_dfs_shared* sh,
                                     struct gcvm_dfs_stack* s, gcvm_u64 lo, gcvm_u64 hi, gcvm_u32 flags,
                                     gcvm_u32* traversed) {
  if ((flags & GCVM_DFS_VECTOR) != 0u) {
    for (gcvm_u64 w = lo / 4u + GCVM_LOCAL_ID(); w * 4u < hi; w += GCVM_GROUP_SIZE)
      gcvm_dfs_visit_vector(edges, marks, storage, sh, s, w, lo, hi, flags, traversed);
  } else {
    for (gcvm_u64 e = lo + GCVM_LOCAL_ID(); e < hi; e += GCVM_GROUP_SIZE)
      gcvm_dfs_visit(marks, storage, sh, s, edges[e], flags, traversed);
  }
}

GCVM_DEVICE gcvm_u32 gcvm_dfs_chunk_count(gcvm_u32 refs, gcvm_u32 chunk_edges) {
  return (refs + chunk_edges - 1u) / chunk_edges;
}

/* Offers huge object v to every group: writes (v, chunk 0) into a chunk-table slot
 * that is free or whose object has no chunks left; 1 on success. The open count is
 * raised first, so it never undercounts. */
GCVM_DEVICE int gcvm_dfs_offer_huge(const GCVM_GLOBAL gcvm_u32* degree, GCVM_GLOBAL gcvm_u64* table,
                                    GCVM_GLOBAL gcvm_u32* state, gcvm_u32 v, gcvm_u32 chunk_edges, gcvm_u32 area) {
  GCVM_ATOMIC_ADD(state + GCVM_DFS_STATE_CHUNKS_OPEN, 1u);
  for (gcvm_u32 k = 0u; k < GCVM_DFS_PROBES; ++k) {
    GCVM_GLOBAL gcvm_u64* slot = table + (area + k) % GCVM_DFS_CHUNK_SLOTS;
    const gcvm_u64 seen = GCVM_VOLATILE_LOAD64(slot);
    const gcvm_u32 owner = (gcvm_u32)(seen >> 32);
    if (owner != GCVM_DFS_NO_VERTEX && (gcvm_u32)seen < gcvm_dfs_chunk_count(degree[owner], chunk_edges)) continue;
    if (GCVM_ATOMIC_CAS64(slot, seen, (gcvm_u64)v << 32) == seen) return 1;
  }
  GCVM_ATOMIC_SUB(state + GCVM_DFS_STATE_CHUNKS_OPEN, 1u);
  return 0;
}

/* Takes the next chunk of some offered object with one 64-bit atomic add, which
 * returns the object and the chunk index together (so a slot reused meanwhile can
 * never mix two objects). Returns the object, or GCVM_DFS_NO_VERTEX. */
GCVM_DEVICE gcvm_u32 gcvm_dfs_take_chunk(const GCVM_GLOBAL gcvm_u32* degree, GCVM_GLOBAL gcvm_u64* table,
                                         GCVM_GLOBAL gcvm_u32* state, gcvm_u32 chunk_edges, gcvm_u32 area,
                                         gcvm_u32* index) {
  for (gcvm_u32 k = 0u; k < GCVM_DFS_PROBES; ++k) {
    GCVM_GLOBAL gcvm_u64* slot = table + (area + k) % GCVM_DFS_CHUNK_SLOTS;
    const gcvm_u64 seen = GCVM_VOLATILE_LOAD64(slot);
    const gcvm_u32 seen_owner = (gcvm_u32)(seen >> 32);
    if (seen_owner == GCVM_DFS_NO_VERTEX ||
        (gcvm_u32)seen >= gcvm_dfs_chunk_count(degree[seen_owner], chunk_edges))
      continue;
    const gcvm_u64 taken = GCVM_ATOMIC_ADD64(slot, (gcvm_u64)1);
    const gcvm_u32 owner = (gcvm_u32)(taken >> 32);
    if (owner == GCVM_DFS_NO_VERTEX) continue;
    const gcvm_u32 count = gcvm_dfs_chunk_count(degree[owner], chunk_edges);
    if ((gcvm_u32)taken >= count) continue;
    if ((gcvm_u32)taken == count - 1u) GCVM_ATOMIC_SUB(state + GCVM_DFS_STATE_CHUNKS_OPEN, 1u);
    *index = (gcvm_u32)taken;
    return owner;
  }
  return GCVM_DFS_NO_VERTEX;
}

/* Publishes the chain head..bottom into a free slot of this thread's pool area; 1 on
 * success. The pool count is raised before the slot is filled, so it never
 * undercounts. */
GCVM_DEVICE int gcvm_dfs_publish(GCVM_GLOBAL gcvm_u32* pool, gcvm_u32 pool_slots, GCVM_GLOBAL gcvm_u32* state,
                                 gcvm_u32 head, gcvm_u32 area) {
  GCVM_GLOBAL_FENCE();
  GCVM_ATOMIC_ADD(state + GCVM_DFS_STATE_POOL_COUNT, 1u);
  for (gcvm_u32 k = 0u; k < GCVM_DFS_PROBES; ++k) {
    GCVM_GLOBAL gcvm_u32* slot = pool + (area + k) % pool_slots;
    if (GCVM_VOLATILE_LOAD(slot) == GCVM_DFS_EMPTY && GCVM_ATOMIC_CAS(slot, GCVM_DFS_EMPTY, head) == GCVM_DFS_EMPTY)
      return 1;
  }
  GCVM_ATOMIC_SUB(state + GCVM_DFS_STATE_POOL_COUNT, 1u);
  return 0;
}

/* A busy thread gives work away: all of its linked stack below the top entry, or
 * else the older half of its local entries as a new chain. */
GCVM_DEVICE int gcvm_dfs_donate(GCVM_GLOBAL gcvm_u32* storage, GCVM_GLOBAL gcvm_u32* pool, gcvm_u32 pool_slots,
                                GCVM_GLOBAL gcvm_u32* state, GCVM_LOCAL struct gcvm_dfs_shared* sh,
                                struct gcvm_dfs_stack* s, gcvm_u32 area) {
  if (s->top != GCVM_DFS_EMPTY) {
    const gcvm_u32 below = GCVM_VOLATILE_LOAD(storage + s->top);
    if (below != GCVM_DFS_BOTTOM) {
      storage[s->top] = GCVM_DFS_BOTTOM;
      if (gcvm_dfs_publish(pool, pool_slots, state, below, area)) return 1;
      storage[s->top] = below;
      return 0;
    }
  }
  if (s->count < 2u) return 0;
  const gcvm_u32 moved = s->count / 2u;
  const gcvm_u32 lid = GCVM_LOCAL_ID();
  gcvm_u32 chain = GCVM_DFS_EMPTY;
  for (gcvm_u32 i = 0u; i < moved; ++i) gcvm_dfs_link(storage, &chain, sh->local_stack[i * GCVM_GROUP_SIZE + lid]);
  const gcvm_u32 chain_bottom = sh->local_stack[lid];
  for (gcvm_u32 i = moved; i < s->count; ++i)
    sh->local_stack[(i - moved) * GCVM_GROUP_SIZE + lid] = sh->local_stack[i * GCVM_GROUP_SIZE + lid];
  s->count -= moved;
  if (gcvm_dfs_publish(pool, pool_slots, state, chain, area)) return 1;
  /* No free slot: the chain goes under this thread's own linked stack. */
  if (s->top != GCVM_DFS_EMPTY) storage[chain_bottom] = s->top;
  s->top = chain;
  return 0;
}

/* An idle thread looks for a chain in its area of the pool; 1 if it took one. */
GCVM_DEVICE int gcvm_dfs_steal(GCVM_GLOBAL gcvm_u32* pool, gcvm_u32 pool_slots, GCVM_GLOBAL gcvm_u32* state,
                               struct gcvm_dfs_stack* s, gcvm_u32 area) {
  for (gcvm_u32 k = 0u; k < GCVM_DFS_PROBES; ++k) {
    GCVM_GLOBAL gcvm_u32* slot = pool + (area + k) % pool_slots;
    if (GCVM_VOLATILE_LOAD(slot) == GCVM_DFS_EMPTY) continue;
    const gcvm_u32 head = GCVM_ATOMIC_XCHG(slot, GCVM_DFS_EMPTY);
    if (head == GCVM_DFS_EMPTY) continue;
    GCVM_GLOBAL_FENCE();
    GCVM_ATOMIC_SUB(state + GCVM_DFS_STATE_POOL_COUNT, 1u);
    s->top = head;
    return 1;
  }
  return 0;
}

/* Seed: thread gid claims roots gid, gid + T, ... onto its linked stack. */
GCVM_DEVICE void gcvm_dfs_seed(const GCVM_GLOBAL gcvm_u32* roots, gcvm_u32 root_count, GCVM_GLOBAL gcvm_u32* marks,
                               GCVM_GLOBAL gcvm_u32* storage, GCVM_GLOBAL gcvm_u32* tops, gcvm_u32 flags) {
  const gcvm_u32 threads = GCVM_GROUP_COUNT() * GCVM_GROUP_SIZE;
  const gcvm_u32 gid = GCVM_GROUP_ID() * GCVM_GROUP_SIZE + GCVM_LOCAL_ID();
  gcvm_u32 top = GCVM_DFS_EMPTY;
  for (gcvm_u32 i = gid; i < root_count; i += threads) {
    const gcvm_u32 root = roots[i];
    if (root != GCVM_NULL_REF && gcvm_dfs_claim(marks, root, flags)) gcvm_dfs_link(storage, &top, root);
  }
  tops[gid] = top;
}

/* One launch `launch` of the DFS: resume every thread's stack, run rounds until the
 * group returns (see the header), save the stacks. */
GCVM_DEVICE void gcvm_dfs_run(const GCVM_GLOBAL gcvm_u64* begin, const GCVM_GLOBAL gcvm_u32* degree,
                              const GCVM_GLOBAL gcvm_u32* edges, GCVM_GLOBAL gcvm_u32* marks,
                              GCVM_GLOBAL gcvm_u32* storage, GCVM_GLOBAL gcvm_u32* tops, GCVM_GLOBAL gcvm_u32* pool,
                              GCVM_GLOBAL gcvm_u64* chunk_table, GCVM_GLOBAL gcvm_u32* state, gcvm_u32 launch,
                              gcvm_u32 flags, gcvm_u32 local_cap, gcvm_u32 wide_threshold, gcvm_u32 pool_slots,
                              gcvm_u32 chunk_edges, gcvm_u32 rounds_per_launch, gcvm_u32 steps,
                              GCVM_LOCAL struct gcvm_dfs_shared* sh) {
  const gcvm_u32 lid = GCVM_LOCAL_ID();
  const gcvm_u32 gid = GCVM_GROUP_ID() * GCVM_GROUP_SIZE + lid;
  const int balance = (flags & GCVM_DFS_BALANCE) != 0u;
  const int chunked = balance && (flags & GCVM_DFS_CHUNKS) != 0u && chunk_edges != 0u;
  if (gid == 0u) state[GCVM_DFS_STATE_PENDING + (launch + 1u) % GCVM_DFS_LAUNCH_RING] = 0u;
  if (lid == 0u) {
    sh->wide_count = 0u;
    sh->busy = 0u;
    sh->hungry = 0u;
    sh->active = 0u;
    sh->exit_flag = 0u;
    sh->traversed = 0u;
    sh->donations = 0u;
    sh->steals = 0u;
    sh->chunks = 0u;
    sh->chunk_vertex = GCVM_DFS_NO_VERTEX;
    sh->chunk_index = 0u;
    sh->chunk_hint = GCVM_DFS_NO_VERTEX;
  }
  struct gcvm_dfs_stack s;
  s.top = tops[gid];
  s.count = 0u;
  s.cap = local_cap < GCVM_DFS_LOCAL_MAX ? local_cap : GCVM_DFS_LOCAL_MAX;
  gcvm_u32 traversed = 0u;
  gcvm_u32 donations = 0u;
  gcvm_u32 steals = 0u;
  gcvm_u32 idle_rounds = 0u;
  gcvm_u32 round = 0u;
  GCVM_BARRIER();
  /* A group that starts with work says so at once, so that idle groups wait for its
   * donations instead of returning before its first round ends. */
  if (s.top != GCVM_DFS_EMPTY) GCVM_ATOMIC_ADD(&sh->busy, 1u);
  GCVM_BARRIER();
  if (lid == 0u) {
    if (sh->busy != 0u) {
      GCVM_ATOMIC_ADD(state + GCVM_DFS_STATE_ACTIVE, 1u);
      sh->active = 1u;
    }
    sh->busy = 0u;
  }
  GCVM_BARRIER();
  for (;;) {
    /* Depth-first steps; an object wider than the threshold waits for the group. */
    for (gcvm_u32 step = 0u; step < steps && !gcvm_dfs_empty(&s); ++step) {
      const gcvm_u32 v = gcvm_dfs_pop(storage, sh, &s);
      const gcvm_u32 refs = degree[v];
      if (balance && refs > wide_threshold) {
        if (!(chunked && refs / 2u > chunk_edges && gcvm_dfs_offer_huge(degree, chunk_table, state, v, chunk_edges, gid)))
          sh->wide_vertex[GCVM_ATOMIC_ADD(&sh->wide_count, 1u)] = v;
        break;
      }
      gcvm_dfs_scan(edges, marks, storage, sh, &s, begin[v], refs, flags, &traversed);
    }
    /* The group looks at every chunk-table slot at once, so an offered chunk is seen
     * in the round after it was offered. */
    if (chunked && GCVM_VOLATILE_LOAD(state + GCVM_DFS_STATE_CHUNKS_OPEN) != 0u) {
      for (gcvm_u32 k = lid; k < GCVM_DFS_CHUNK_SLOTS; k += GCVM_GROUP_SIZE) {
        const gcvm_u64 seen = GCVM_VOLATILE_LOAD64(chunk_table + k);
        const gcvm_u32 owner = (gcvm_u32)(seen >> 32);
        if (owner != GCVM_DFS_NO_VERTEX && (gcvm_u32)seen < gcvm_dfs_chunk_count(degree[owner], chunk_edges))
          GCVM_ATOMIC_MIN(&sh->chunk_hint, k); /* atomic: no write-write race for racecheck */
      }
    }
    GCVM_BARRIER();
    if (balance) {
      for (gcvm_u32 o = 0u; o < sh->wide_count; ++o) {
        const gcvm_u32 v = sh->wide_vertex[o];
        gcvm_dfs_group_scan(edges, marks, storage, sh, &s, begin[v], begin[v] + degree[v], flags, &traversed);
      }
      /* The chunk lid 0 took at the end of the last round. */
      const gcvm_u32 v = sh->chunk_vertex;
      if (v != GCVM_DFS_NO_VERTEX) {
        const gcvm_u64 end = begin[v] + degree[v];
        const gcvm_u64 lo = begin[v] + (gcvm_u64)sh->chunk_index * chunk_edges;
        gcvm_dfs_group_scan(edges, marks, storage, sh, &s, lo, lo + chunk_edges < end ? lo + chunk_edges : end, flags,
                            &traversed);
      }
      /* This thread's area of the pool moves on every round and every launch. */
      const gcvm_u32 area = ((gid + (launch * 131u + round) * GCVM_GROUP_SIZE) * GCVM_DFS_PROBES) % pool_slots;
      if (gcvm_dfs_empty(&s)) {
        if (GCVM_VOLATILE_LOAD(state + GCVM_DFS_STATE_POOL_COUNT) != 0u && gcvm_dfs_steal(pool, pool_slots, state, &s, area))
          ++steals;
      } else if (GCVM_VOLATILE_LOAD(state + GCVM_DFS_STATE_HUNGRY) != 0u &&
                 GCVM_VOLATILE_LOAD(state + GCVM_DFS_STATE_POOL_COUNT) < pool_slots / 2u) {
        donations += (gcvm_u32)gcvm_dfs_donate(storage, pool, pool_slots, state, sh, &s, area);
      }
    }
    if (!gcvm_dfs_empty(&s)) GCVM_ATOMIC_ADD(&sh->busy, 1u);
    GCVM_BARRIER();
    ++round;
    if (lid == 0u) {
      const gcvm_u32 busy = sh->busy;
      const gcvm_u32 hungry = balance ? GCVM_GROUP_SIZE - busy : 0u;
      if (sh->wide_count != 0u) GCVM_ATOMIC_ADD(state + GCVM_DFS_STATE_WIDE, sh->wide_count);
      if (hungry > sh->hungry) GCVM_ATOMIC_ADD(state + GCVM_DFS_STATE_HUNGRY, hungry - sh->hungry);
      if (hungry < sh->hungry) GCVM_ATOMIC_SUB(state + GCVM_DFS_STATE_HUNGRY, sh->hungry - hungry);
      sh->hungry = hungry;
      if ((busy != 0u) != (sh->active != 0u)) {
        if (busy != 0u) GCVM_ATOMIC_ADD(state + GCVM_DFS_STATE_ACTIVE, 1u);
        else GCVM_ATOMIC_SUB(state + GCVM_DFS_STATE_ACTIVE, 1u);
        sh->active = busy != 0u;
      }
      /* Take the chunk to scan next round, unless the launch ends here. */
      int done = round >= rounds_per_launch;
      gcvm_u32 index = 0u;
      const gcvm_u32 chunk = done || sh->chunk_hint == GCVM_DFS_NO_VERTEX
                                 ? GCVM_DFS_NO_VERTEX
                                 : gcvm_dfs_take_chunk(degree, chunk_table, state, chunk_edges, sh->chunk_hint, &index);
      sh->chunk_hint = GCVM_DFS_NO_VERTEX;
      sh->chunk_vertex = chunk;
      sh->chunk_index = index;
      if (chunk != GCVM_DFS_NO_VERTEX) ++sh->chunks;
      idle_rounds = busy == 0u && chunk == GCVM_DFS_NO_VERTEX ? idle_rounds + 1u : 0u;
      if (busy == 0u && chunk == GCVM_DFS_NO_VERTEX)
        done = done || !balance || idle_rounds > GCVM_DFS_IDLE_ROUNDS ||
               (idle_rounds >= GCVM_DFS_IDLE_MIN_ROUNDS && GCVM_VOLATILE_LOAD(state + GCVM_DFS_STATE_ACTIVE) == 0u &&
                GCVM_VOLATILE_LOAD(state + GCVM_DFS_STATE_POOL_COUNT) == 0u &&
                GCVM_VOLATILE_LOAD(state + GCVM_DFS_STATE_CHUNKS_OPEN) == 0u);
      sh->exit_flag = (gcvm_u32)done;
      sh->busy = 0u;
      sh->wide_count = 0u;
    }
    GCVM_BARRIER();
    if (sh->exit_flag != 0u) break;
  }
  /* Save: local entries go under the linked stack (order does not matter). */
  for (gcvm_u32 i = 0u; i < s.count; ++i) gcvm_dfs_link(storage, &s.top, sh->local_stack[i * GCVM_GROUP_SIZE + lid]);
  tops[gid] = s.top;
  if (s.top != GCVM_DFS_EMPTY) GCVM_ATOMIC_ADD(state + GCVM_DFS_STATE_PENDING + launch % GCVM_DFS_LAUNCH_RING, 1u);
  if (traversed != 0u) GCVM_ATOMIC_ADD(&sh->traversed, traversed);
  if (donations != 0u) GCVM_ATOMIC_ADD(&sh->donations, donations);
  if (steals != 0u) GCVM_ATOMIC_ADD(&sh->steals, steals);
  GCVM_BARRIER();
  if (lid == 0u) {
    if (sh->hungry != 0u) GCVM_ATOMIC_SUB(state + GCVM_DFS_STATE_HUNGRY, sh->hungry);
    if (sh->active != 0u) GCVM_ATOMIC_SUB(state + GCVM_DFS_STATE_ACTIVE, 1u);
    if (sh->traversed != 0u)
      GCVM_ATOMIC_ADD64((GCVM_GLOBAL gcvm_u64*)(state + GCVM_DFS_STATE_EDGES_LO), (gcvm_u64)sh->traversed);
    if (sh->donations != 0u) GCVM_ATOMIC_ADD(state + GCVM_DFS_STATE_DONATIONS, sh->donations);
    if (sh->steals != 0u) GCVM_ATOMIC_ADD(state + GCVM_DFS_STATE_STEALS, sh->steals);
    if (sh->chunks != 0u) GCVM_ATOMIC_ADD(state + GCVM_DFS_STATE_CHUNKS, sh->chunks);
    GCVM_ATOMIC_MAX(state + GCVM_DFS_STATE_ROUNDS, round);
    if (round > 1u || sh->traversed != 0u) GCVM_ATOMIC_MAX(state + GCVM_DFS_STATE_LAUNCHES, launch + 1u);
  }
}

/* Fallback gather, after the run launches with the same grid: every thread appends
 * the entries of its saved linked stack (tops[gid] down to GCVM_DFS_BOTTOM) to
 * out[1 .. capacity] through the counter out[0]. A thread stops once the counter has
 * passed `capacity`, so out[0] > capacity means the output overflowed (some entries
 * are missing; the host then keeps launching) and the counter stays below
 * capacity + threads. */
GCVM_DEVICE void gcvm_dfs_gather(const GCVM_GLOBAL gcvm_u32* storage, const GCVM_GLOBAL gcvm_u32* tops,
                                 GCVM_GLOBAL gcvm_u32* out, gcvm_u32 capacity) {
  const gcvm_u32 gid = GCVM_GROUP_ID() * GCVM_GROUP_SIZE + GCVM_LOCAL_ID();
  gcvm_u32 v = tops[gid];
  while (v != GCVM_DFS_EMPTY) {
    const gcvm_u32 slot = GCVM_ATOMIC_ADD(out, 1u);
    if (slot >= capacity) return;
    out[1u + slot] = v;
    const gcvm_u32 next = storage[v];
    v = next == GCVM_DFS_BOTTOM ? GCVM_DFS_EMPTY : next;
  }
}

#endif
