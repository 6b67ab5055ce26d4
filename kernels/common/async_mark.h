/* gpu-bfs's async mode: a mark with no level barrier, for deep heaps, written once in
 * the dialect of portable.h (the level mode is bfs_mark.h).
 *
 * Why. A level-synchronous BFS pays one launch (or one grid-wide barrier) per BFS
 * level, about 19 µs on the H100, and real heaps are deep (a compiler's heap has
 * thousands of levels, mostly long chains). Here one persistent launch marks
 * everything, and the cost that matters is one hop along a chain: the time from
 * claiming an object to scanning it. So a hop touches no shared global word: it is a
 * round of one small work group (one warp: GCVM_ASYNC_GROUP_SIZE threads, whose
 * barriers are warp barriers on CUDA) over its own work in work-group memory, and
 * global memory sees only the graph's reads, the mark bitmap's claims, and traffic
 * when work moves between groups.
 *
 * A group's work. Each group keeps the objects it discovered and has not scanned in a
 * ring of GCVM_ASYNC_RING entries in work-group memory, [bottom, top). A round takes
 * the newest GCVM_ASYNC_GROUP_SIZE of them (LIFO: depth first, so trees and chains
 * keep the ring short), one object per thread, and walks the concatenated references
 * of all of them one reference per thread per step (offsets from a prefix sum over the
 * degrees, the owner found by binary search: the flattened form of Maas §5.2's
 * wide-object handling), so every thread is busy whatever the degrees. What the round
 * claims goes on top of the ring.
 *
 * Moving work between groups: one global array queue. Every reachable object enters it
 * at most once (roots by the seed kernel; other objects only when a group publishes
 * them, and a group publishes only objects it discovered itself), so an array of V
 * slots never wraps; slots are GCVM_NULL_REF until written. A group publishes the
 * oldest objects of its ring (Cederman et al.'s batching: one reservation on
 * ASYNC_TAIL for the batch) when the ring would overflow, when groups are idle and it
 * holds more than one round of work (it keeps one round's worth), and on STOP.
 * Consumers take tickets: a group takes the next GROUP_SIZE slots with one atomic add
 * on ASYNC_HEAD, each thread owning one slot. A thread reads its slot at the start of
 * a round and uses what it read at the end (so the read's latency hides behind the
 * round's scan): a slot found written is marked GCVM_SLOT_TAKEN and its object pushed
 * on top of the ring, where the next round takes it (at most GROUP_SIZE are found, and
 * a round takes the newest GROUP_SIZE objects); so found objects never stay in a ring,
 * which is why a ring holds only the group's own discoveries and nothing enters the
 * queue twice. A group takes new tickets once all of its slots are taken.
 *
 * Termination, and why nothing can deadlock. PENDING counts work not yet done:
 * objects in the queue and chunks of huge objects in the chunk array (each raised
 * before the reservation that makes them visible), and one for each group that holds
 * work (busy: objects in its ring, or a chunk to scan next round). A group settles
 * PENDING once, at the end of a round, with one atomic add of (busy now) - (busy
 * before) - (objects and chunks it found), and only when that is not zero: a group
 * going down a chain changes nothing. Work a group holds during a round is covered by
 * its busy count or by the found work's own counts until that add, and what it
 * published was counted before it could be seen, so PENDING = 0 means no work exists
 * anywhere, and none can appear again: a group without work that sees 0 leaves. Every
 * group reads its ticket slots every round and looks at the shared words every
 * GCVM_ASYNC_POLL rounds; idle groups back off between rounds where the device can.
 * Thousands of idle groups polling one line slow down every access to it: on the
 * H200, with 64-thread groups polling every round and backing off for at most 1 µs,
 * 2,560 chains of 3,000 objects took 20 ms, and 52 ms with no back-off, against 9 ms
 * with a poll every 8 rounds and back-offs of up to 4 µs (those were earlier rounds;
 * with the current ones and the current poll and back-off, 6.9-7.4 ms). No thread
 * waits for another. Tickets (queue slots and
 * chunk items alike) are held only by running groups, and a group never blocks on
 * them, so work is never stranded in a group that has not started (PoCL runs groups
 * one after another); any grid size is correct, and the grid is sized to the device's
 * resident groups for speed only.
 *
 * Narrow tails (GCVM_BFS_FALLBACK): a group with work that sees fewer than `threshold`
 * units of work pending for `narrow_rounds` rounds in a row (counted at its polls)
 * sets STOP. Each group then publishes its ring to the queue and leaves after its
 * round, leaving what it found in its ticket slots there. What is left is on the
 * queue (slots below ASYNC_TAIL that are not GCVM_SLOT_TAKEN: gcvm_async_gather
 * collects them, at most PENDING of them) and in the chunk array (items below
 * CHUNK_TAIL not GCVM_CHUNK_TAKEN), and the host finishes the mark on the CPU
 * (gc/markers/cpu_finish.hpp).
 *
 * Huge objects (more than GCVM_ASYNC_CHUNK_SPLIT references) are cut into chunks of
 * GCVM_ASYNC_CHUNK_EDGES references (mark_layout.h) in the chunk array, and every
 * group holds one ticket on that array as it holds slots of the queue: a ticket is one
 * atomic add on CHUNK_HEAD, the group reads its item every round, and an item found
 * written is marked GCVM_CHUNK_TAKEN and its references walked in the next round after
 * the ring's objects, in the same steps, before the group takes its next ticket. So
 * the first chunks of a huge object go to as many groups as there are chunks, one
 * each. (Chunks used to be taken by compare-and-swap on one shared head, as the level
 * mode's were: when a heap's huge arrays were reached, every group that polled the
 * head waited behind a storm of failed swaps, and order-service's first 200 µs marked
 * 7% of its objects; chunks as entries of the object queue, handed out 32 to a group,
 * left one group walking up to 32 chunks in a round.) The level mode's offsets=,
 * vector= and wide= options do not apply here.
 *
 * What a round costs. A hop along a chain is one round, and what bounds a deep heap's
 * mark is the round's latency, so a round is kept short. The group's own state (its
 * ring positions, the shared words it last saw, its counters: gcvm_async_group) lives
 * in registers, alike in every thread, each thread computing it from the same inputs;
 * what one thread loads or reserves reaches the others through a collective
 * (portable.h: a shuffle, a vote or a scan, warp instructions on CUDA), so a round
 * touches work-group memory only for the ring and the scan's prefixes, and has two
 * barriers when nothing moves between groups. A spill, a ticket refresh or a pending
 * count's settle with nothing to do skips its collectives where the device allows
 * (GCVM_UNIFORM_BARRIER_BRANCHES: every thread computed the same condition); a
 * publish waits for one atomic (the pending count's add is in flight with the
 * reservation, and one fence after both orders it before the slots are written); each
 * thread has GCVM_ASYNC_STEP_REFS references in flight per step, with the rows of the
 * objects it claims loaded with the claims (gcvm_async_scan).
 *
 * PoCL: every barrier and collective is reached by all threads of a group (none under
 * a branch, even a uniform one: GCVM_UNIFORM_BARRIER_BRANCHES is 0 there), and loops
 * with barriers nest at most two deep (the round loop, and the steps' loop inside it;
 * the collectives called in the steps have no loop around their barriers): PoCL's
 * work-group compiler takes minutes over deeper nests.
 */
#ifndef GCVM_KERNELS_ASYNC_MARK_H
#define GCVM_KERNELS_ASYNC_MARK_H

#include "bfs_mark.h"

/* A group is one warp (mark_layout.h): its barrier is a warp barrier. */
#define GCVM_ASYNC_BARRIER() GCVM_WARP_GROUP_BARRIER()
#define GCVM_ASYNC_RING_MASK (GCVM_ASYNC_RING - 1u)
/* References a step walks: STEP_REFS per thread. */
#define GCVM_ASYNC_STEP (GCVM_ASYNC_STEP_REFS * GCVM_ASYNC_GROUP_SIZE)
/* A ring holds at most this many objects between steps, so that one step's
 * discoveries (at most GCVM_ASYNC_STEP) and a round's found objects always fit. */
#define GCVM_ASYNC_RING_LIMIT (GCVM_ASYNC_RING - GCVM_ASYNC_STEP - GCVM_ASYNC_GROUP_SIZE)

struct gcvm_async_shared {
  gcvm_u64 ring_first[GCVM_ASYNC_RING];       /* first edge of ring[i], where ring_degree[i] is known */
  gcvm_u64 first[GCVM_ASYNC_GROUP_SIZE];      /* first edge of each thread's object */
  gcvm_u32 ring[GCVM_ASYNC_RING];             /* discovered, not scanned: [bottom, top) */
  gcvm_u32 ring_degree[GCVM_ASYNC_RING];      /* degree of ring[i], or GCVM_ASYNC_ROW_UNKNOWN */
  gcvm_u32 base[GCVM_ASYNC_GROUP_SIZE];       /* exclusive prefix sum of the degrees */
  gcvm_u32 scratch[2 * GCVM_ASYNC_GROUP_SIZE]; /* the collectives' work-group memory (portable.h) */
};

/* A group's own state. Every thread of the group holds the same values: each computes
 * them from the same inputs, and a value one thread loaded reaches the others by a
 * collective before it enters here. */
struct gcvm_async_group {
  gcvm_u32 bottom, top;                        /* ring positions, modulo 2^32 */
  gcvm_u32 busy;                               /* 1 while the group counts itself in PENDING */
  gcvm_u32 pending_seen, stop_seen, idle_seen; /* the shared words at the last poll */
  gcvm_u64 item;                               /* the chunk to walk this round, or GCVM_CHUNK_NONE */
  gcvm_u32 narrow_rounds, idle_rounds, rounds;
  gcvm_u32 last_poll; /* the round of the last poll */
  gcvm_u32 published, chunks;
};

/* Collective: `x` of thread `from`, 64 bits. */
GCVM_DEVICE gcvm_u64 gcvm_async_shuffle64(gcvm_u64 x, gcvm_u32 from, GCVM_LOCAL gcvm_u32* scratch) {
  const gcvm_u32 low = gcvm_warp_group_shuffle((gcvm_u32)x, from, scratch);
  const gcvm_u32 high = gcvm_warp_group_shuffle((gcvm_u32)(x >> 32), from, scratch);
  return ((gcvm_u64)high << 32) | low;
}

/* Collective: when more than `limit` objects are in the ring, publishes the oldest of
 * them, all but `keep` (keep <= limit), to the queue with one reservation. */
GCVM_DEVICE void gcvm_async_spill(GCVM_LOCAL struct gcvm_async_shared* sh, struct gcvm_async_group* g,
                                  GCVM_GLOBAL gcvm_u32* queue, GCVM_GLOBAL gcvm_u32* state, gcvm_u32 limit,
                                  gcvm_u32 keep) {
  const gcvm_u32 lid = GCVM_LOCAL_ID();
  const gcvm_u32 count = g->top - g->bottom;
  const gcvm_u32 n = count > limit ? count - keep : 0u;
  /* Every thread computed the same n. */
  if (GCVM_UNIFORM_BARRIER_BRANCHES && n == 0u) return;
  gcvm_u32 at = 0u;
  if (lid == 0u && n != 0u) {
    GCVM_ATOMIC_ADD(state + GCVM_STATE_PENDING, n);
    at = GCVM_ATOMIC_ADD(state + GCVM_STATE_ASYNC_TAIL, n);
    GCVM_GLOBAL_FENCE(); /* counted before any consumer can see the slots (written below) */
  }
  at = gcvm_warp_group_shuffle(at, 0u, sh->scratch);
  GCVM_ASYNC_BARRIER(); /* every thread's pushes are written */
  for (gcvm_u32 i = lid; i < n; i += GCVM_ASYNC_GROUP_SIZE)
    queue[at + i] = sh->ring[(g->bottom + i) & GCVM_ASYNC_RING_MASK];
  GCVM_ASYNC_BARRIER(); /* read before any thread pushes over them */
  g->bottom += n;
  g->published += n;
}

/* Collective: visits the references of this thread's object `v` (GCVM_NULL_REF: none;
 * its row is `row_degree` references from edge `row_first`, or GCVM_ASYNC_ROW_UNKNOWN:
 * load it) and of the chunk item `item` (GCVM_CHUNK_NONE: none, uniformly) with the
 * whole group, pushing what it claims on the ring with the claimed object's row;
 * huge objects are offered to the chunk queue instead.
 *
 * A step gives each thread GCVM_ASYNC_STEP_REFS references, and their loads, the
 * claims and the claimed objects' row loads are each issued for all of them before any
 * is used. The row of a target is loaded with its claim, before the claim's answer is
 * known, so a hop along a chain waits for two memory round trips (the edge, then the
 * claim with the row), not four (the row at the next round's start, the edge, the
 * mark's read, the claim); a row loaded for a target another group claimed is wasted
 * bandwidth, which a deep heap's mark has to spare. With `checked` a claim reads the
 * mark word first and takes the atomic only when the bit is clear (levels mode's
 * claim: no atomic on objects already marked, one more round trip on a new one). A
 * step's claims go on the ring in one vote: each thread's place is the number of
 * claims of the threads below it. */
GCVM_DEVICE void gcvm_async_scan(const GCVM_GLOBAL gcvm_u64* begin, const GCVM_GLOBAL gcvm_u32* degree,
                                 const GCVM_GLOBAL gcvm_u32* edges, GCVM_GLOBAL gcvm_u32* marks,
                                 GCVM_GLOBAL gcvm_u32* queue, GCVM_GLOBAL gcvm_u32* state,
                                 struct gcvm_chunk_queue chunks, GCVM_LOCAL struct gcvm_async_shared* sh,
                                 struct gcvm_async_group* g, gcvm_u32 v, gcvm_u32 row_degree, gcvm_u64 row_first,
                                 gcvm_u64 item, int checked, gcvm_u32* traversed, gcvm_u32* claimed) {
  const gcvm_u32 lid = GCVM_LOCAL_ID();
  gcvm_u32 refs = 0u;
  gcvm_u64 first = 0u;
  if (v != GCVM_NULL_REF) {
    refs = row_degree != GCVM_ASYNC_ROW_UNKNOWN ? row_degree : degree[v];
    first = row_degree != GCVM_ASYNC_ROW_UNKNOWN ? row_first : begin[v];
    if (refs > GCVM_ASYNC_CHUNK_SPLIT) {
      gcvm_offer_chunks(chunks, v, refs);
      refs = 0u;
    }
  }
  gcvm_u64 chunk_from = 0u;
  gcvm_u64 chunk_end = 0u;
  if (item != GCVM_CHUNK_NONE) gcvm_chunk_edges(begin, degree, item, chunks.edges_per_chunk, &chunk_from, &chunk_end);
  gcvm_u32 objects_total = 0u;
  sh->base[lid] = gcvm_warp_group_scan(refs, sh->scratch, &objects_total);
  sh->first[lid] = first;
  const gcvm_u32 total = objects_total + (gcvm_u32)(chunk_end - chunk_from);
  GCVM_ASYNC_BARRIER(); /* the prefixes are written */
  for (gcvm_u32 step = 0u; step < total; step += GCVM_ASYNC_STEP) {
    gcvm_u32 target[GCVM_ASYNC_STEP_REFS];
    for (gcvm_u32 j = 0u; j < GCVM_ASYNC_STEP_REFS; ++j) {
      const gcvm_u32 e = step + j * GCVM_ASYNC_GROUP_SIZE + lid;
      target[j] = GCVM_NULL_REF;
      if (e < objects_total) {
        const gcvm_u32 owner = gcvm_offset_owner(sh->base, GCVM_ASYNC_GROUP_SIZE, e);
        target[j] = edges[sh->first[owner] + (e - sh->base[owner])];
      } else if (e < total) {
        target[j] = edges[chunk_from + (e - objects_total)];
      }
    }
    gcvm_u32 target_degree[GCVM_ASYNC_STEP_REFS];
    gcvm_u64 target_first[GCVM_ASYNC_STEP_REFS];
    gcvm_u32 clear[GCVM_ASYNC_STEP_REFS];
    for (gcvm_u32 j = 0u; j < GCVM_ASYNC_STEP_REFS; ++j) {
      const int live = target[j] != GCVM_NULL_REF;
      const gcvm_u32 t = live ? target[j] : 0u;
      target_degree[j] = live ? degree[t] : 0u;
      target_first[j] = live ? begin[t] : 0u;
      clear[j] = live && checked ? !gcvm_marked(marks, t) : (gcvm_u32)live;
    }
    /* Every atomic of the step is issued before any answer is used. */
    gcvm_u32 word_before[GCVM_ASYNC_STEP_REFS];
    for (gcvm_u32 j = 0u; j < GCVM_ASYNC_STEP_REFS; ++j)
      word_before[j] = clear[j] != 0u ? gcvm_claim_issue(marks, target[j]) : 0xFFFFFFFFu;
    gcvm_u32 won = 0u;
    for (gcvm_u32 j = 0u; j < GCVM_ASYNC_STEP_REFS; ++j) {
      if (target[j] != GCVM_NULL_REF) ++*traversed;
      if (gcvm_claim_won(word_before[j], target[j])) won |= 1u << j;
    }
    gcvm_u32 pushed = 0u;
    gcvm_u32 at = g->top + gcvm_warp_group_rank(won, GCVM_ASYNC_STEP_REFS, sh->scratch, &pushed);
    for (gcvm_u32 j = 0u; j < GCVM_ASYNC_STEP_REFS; ++j) {
      if ((won & (1u << j)) == 0u) continue;
      ++*claimed;
      const gcvm_u32 slot = at++ & GCVM_ASYNC_RING_MASK;
      sh->ring[slot] = target[j];
      sh->ring_degree[slot] = target_degree[j];
      sh->ring_first[slot] = target_first[j];
    }
    g->top += pushed;
    gcvm_async_spill(sh, g, queue, state, GCVM_ASYNC_RING_LIMIT, GCVM_ASYNC_RING / 2u);
  }
}

/* Level 0 of async mode: claims the roots into the queue (ASYNC_TAIL, PENDING). */
GCVM_DEVICE void gcvm_bfs_async_seed(const GCVM_GLOBAL gcvm_u32* roots, gcvm_u32 root_count,
                                     GCVM_GLOBAL gcvm_u32* marks, GCVM_GLOBAL gcvm_u32* queue,
                                     GCVM_GLOBAL gcvm_u32* state, GCVM_LOCAL struct gcvm_bfs_shared* sh) {
  gcvm_bfs_init_shared(sh, 1);
  const struct gcvm_out out = {queue, state + GCVM_STATE_ASYNC_TAIL, 0, state, 0u, 0u, state + GCVM_STATE_PENDING};
  gcvm_claim_roots(roots, (gcvm_u64)GCVM_GROUP_ID() * GCVM_GROUP_SIZE, root_count,
                   (gcvm_u64)GCVM_GROUP_COUNT() * GCVM_GROUP_SIZE, marks, sh, out);
}

/* Collective, at the end of a round that took `taken` objects from the ring and found
 * `found` objects and chunks by its tickets: settles PENDING and the idle count, runs
 * the narrow-tail test, and returns 1 if the group leaves. */
GCVM_DEVICE int gcvm_async_settle(GCVM_LOCAL struct gcvm_async_shared* sh, struct gcvm_async_group* g,
                                  GCVM_GLOBAL gcvm_u32* state, gcvm_u32 taken, gcvm_u32 found, int polled,
                                  gcvm_u32 flags, gcvm_u32 threshold, gcvm_u32 narrow_rounds) {
  const gcvm_u32 lid = GCVM_LOCAL_ID();
  const gcvm_u32 busy_before = g->busy;
  const gcvm_u32 busy_now = g->top != g->bottom || g->item != GCVM_CHUNK_NONE ? 1u : 0u;
  const gcvm_u32 delta = busy_now - busy_before - found; /* modulo 2^32 */
  gcvm_u32 pending = g->pending_seen;
  /* Every thread computed the same delta. */
  if (!GCVM_UNIFORM_BARRIER_BRANCHES || delta != 0u) {
    gcvm_u32 after = 0u;
    if (lid == 0u && delta != 0u) after = GCVM_ATOMIC_ADD(state + GCVM_STATE_PENDING, delta) + delta;
    after = gcvm_warp_group_shuffle(after, 0u, sh->scratch);
    if (delta != 0u) pending = after;
  }
  if (lid == 0u && busy_now != busy_before)
    GCVM_ATOMIC_ADD(state + GCVM_STATE_IDLE, busy_now != 0u ? 0xFFFFFFFFu : 1u);
  g->busy = busy_now;
  int leave = g->stop_seen != 0u;
  if (!leave && busy_now == 0u) {
    leave = pending == 0u;
    g->idle_rounds += 1u;
    if (!leave) {
      const gcvm_u32 pause = 32u << (g->idle_rounds < 7u ? g->idle_rounds : 7u);
      GCVM_BACKOFF(pause < GCVM_ASYNC_BACKOFF_NS ? pause : GCVM_ASYNC_BACKOFF_NS);
    }
  } else {
    g->idle_rounds = 0u;
  }
  if (!leave && polled && taken != 0u && (flags & GCVM_BFS_FALLBACK) != 0u) {
    /* The rounds since the last poll count as narrow rounds with work too. */
    const gcvm_u32 rounds_since = g->rounds - g->last_poll;
    g->narrow_rounds = g->pending_seen < threshold ? g->narrow_rounds + rounds_since : 0u;
    if (lid == 0u && g->narrow_rounds >= narrow_rounds) state[GCVM_STATE_STOP] = 1u;
  }
  if (polled) g->last_poll = g->rounds;
  g->rounds += 1u;
  return leave;
}

/* The shared word that thread `lid` (< GCVM_ASYNC_POLL_WORDS) loads at a poll. */
#define GCVM_ASYNC_POLL_WORDS 3u
GCVM_DEVICE gcvm_u32 gcvm_async_poll_word(gcvm_u32 lid) {
  return lid == 0u ? GCVM_STATE_PENDING : lid == 1u ? GCVM_STATE_STOP : GCVM_STATE_IDLE;
}

/* The async mark: one launch of GCVM_ASYNC_GROUP_SIZE-thread groups, every group
 * running until no work is pending (or STOP). The loads of a round that do not feed
 * its scan (this thread's ticket slot, thread 0's chunk ticket, and at a poll the
 * shared words, one word a thread) are issued at its start and used at its end, so
 * that their latency hides behind the scan's. */
GCVM_DEVICE void gcvm_bfs_async(const GCVM_GLOBAL gcvm_u64* begin, const GCVM_GLOBAL gcvm_u32* degree,
                                const GCVM_GLOBAL gcvm_u32* edges, GCVM_GLOBAL gcvm_u32* marks,
                                GCVM_GLOBAL gcvm_u32* queue, gcvm_u32 capacity, GCVM_GLOBAL gcvm_u64* chunk_items,
                                gcvm_u32 chunk_capacity, GCVM_GLOBAL gcvm_u32* state, gcvm_u32 flags,
                                gcvm_u32 fallback_threshold, gcvm_u32 narrow_rounds,
                                GCVM_LOCAL struct gcvm_async_shared* sh) {
  const gcvm_u32 lid = GCVM_LOCAL_ID();
  struct gcvm_async_group g;
  g.bottom = 0u;
  g.top = 0u;
  g.busy = 0u;
  g.pending_seen = 1u;
  g.stop_seen = 0u;
  g.idle_seen = 0u;
  g.item = GCVM_CHUNK_NONE;
  g.narrow_rounds = 0u;
  g.idle_rounds = 0u;
  g.rounds = 0u;
  g.last_poll = 0xFFFFFFFFu; /* round 0's poll follows one round */
  g.published = 0u;
  g.chunks = 0u;
  gcvm_u32 ticket = 0u;
  gcvm_u32 chunk_ticket = 0u; /* thread 0's */
  if (lid == 0u) {
    GCVM_ATOMIC_ADD(state + GCVM_STATE_IDLE, 1u);
    ticket = GCVM_ATOMIC_ADD(state + GCVM_STATE_ASYNC_HEAD, (gcvm_u32)GCVM_ASYNC_GROUP_SIZE);
    chunk_ticket = GCVM_ATOMIC_ADD(state + GCVM_STATE_CHUNK_HEAD, 1u);
  }
  ticket = gcvm_warp_group_shuffle(ticket, 0u, sh->scratch);
  const struct gcvm_chunk_queue chunks = {chunk_items, state, state + GCVM_STATE_PENDING, chunk_capacity,
                                          GCVM_ASYNC_CHUNK_EDGES};
  const int checked = (flags & GCVM_BFS_CHECKED_CLAIM) != 0u;
  const gcvm_u32 poll_word = gcvm_async_poll_word(lid);
  gcvm_u32 slot = ticket + lid;
  int waiting = ticket < capacity && slot < capacity;
  gcvm_u32 traversed = 0u;
  gcvm_u32 claimed = 0u;
  for (;;) {
    const gcvm_u32 found = waiting ? GCVM_VOLATILE_LOAD(queue + slot) : GCVM_NULL_REF;
    const gcvm_u64 chunk_found = lid == 0u && chunk_ticket < chunk_capacity
                                     ? GCVM_VOLATILE_LOAD64(chunk_items + chunk_ticket)
                                     : GCVM_CHUNK_NONE;
    const int poll = g.rounds % GCVM_ASYNC_POLL == 0u;
    const gcvm_u32 seen = poll && lid < GCVM_ASYNC_POLL_WORDS ? GCVM_VOLATILE_LOAD(state + poll_word) : 0u;
    /* The newest GROUP_SIZE objects of the ring, and the chunk found last round. */
    const gcvm_u32 count = g.top - g.bottom;
    const gcvm_u32 taken = count < GCVM_ASYNC_GROUP_SIZE ? count : GCVM_ASYNC_GROUP_SIZE;
    const gcvm_u32 take_from = g.top - taken;
    const gcvm_u64 item = g.item;
    if (item != GCVM_CHUNK_NONE) g.chunks += 1u;
    const gcvm_u32 at = (take_from + lid) & GCVM_ASYNC_RING_MASK;
    const int mine = lid < taken;
    const gcvm_u32 v = mine ? sh->ring[at] : GCVM_NULL_REF;
    const gcvm_u32 row_degree = mine ? sh->ring_degree[at] : GCVM_ASYNC_ROW_UNKNOWN;
    const gcvm_u64 row_first = mine ? sh->ring_first[at] : 0u;
    g.top = take_from;
    gcvm_async_scan(begin, degree, edges, marks, queue, state, chunks, sh, &g, v, row_degree, row_first, item,
                    checked, &traversed, &claimed);
    if (!GCVM_UNIFORM_BARRIER_BRANCHES || poll) {
      const gcvm_u32 seen_pending = gcvm_warp_group_shuffle(seen, 0u, sh->scratch);
      const gcvm_u32 seen_stop = gcvm_warp_group_shuffle(seen, 1u, sh->scratch);
      const gcvm_u32 seen_idle = gcvm_warp_group_shuffle(seen, 2u, sh->scratch);
      if (poll) {
        g.pending_seen = seen_pending;
        g.stop_seen = seen_stop;
        g.idle_seen = seen_idle;
      }
    }
    /* Objects found in ticket slots go on top of the ring, and a chunk found by the
     * chunk ticket is walked, in the next round; on STOP both stay where they are, for
     * the host. */
    const int stop = g.stop_seen != 0u;
    const int share = g.idle_seen != 0u;
    const int take_chunk = chunk_found != GCVM_CHUNK_NONE && chunk_found != GCVM_CHUNK_TAKEN && !stop;
    if (take_chunk) {
      chunk_items[chunk_ticket] = GCVM_CHUNK_TAKEN;
      chunk_ticket = GCVM_ATOMIC_ADD(state + GCVM_STATE_CHUNK_HEAD, 1u);
    }
    g.item = gcvm_async_shuffle64(take_chunk ? chunk_found : GCVM_CHUNK_NONE, 0u, sh->scratch);
    const int take = found != GCVM_NULL_REF && !stop;
    if (take) queue[slot] = GCVM_SLOT_TAKEN;
    gcvm_u32 found_count = 0u;
    const gcvm_u32 found_at = g.top + gcvm_warp_group_rank((gcvm_u32)take, 1u, sh->scratch, &found_count);
    if (take) {
      sh->ring[found_at & GCVM_ASYNC_RING_MASK] = found;
      sh->ring_degree[found_at & GCVM_ASYNC_RING_MASK] = GCVM_ASYNC_ROW_UNKNOWN;
      waiting = 0;
    }
    gcvm_u32 open_slots = 0u;
    gcvm_warp_group_rank((gcvm_u32)waiting, 1u, sh->scratch, &open_slots);
    g.top += found_count;
    /* Publish: everything on STOP; beyond one round's worth while groups are idle. */
    gcvm_async_spill(sh, &g, queue, state, stop ? 0u : share ? GCVM_ASYNC_GROUP_SIZE : GCVM_ASYNC_RING_LIMIT,
                     stop ? 0u : share ? GCVM_ASYNC_GROUP_SIZE : GCVM_ASYNC_RING / 2u);
    const int leave = gcvm_async_settle(sh, &g, state, taken, found_count + (g.item != GCVM_CHUNK_NONE ? 1u : 0u),
                                        poll, flags, fallback_threshold, narrow_rounds);
    GCVM_ASYNC_BARRIER(); /* this round's ring entries are written before the next round reads them */
    if (leave) break;
    /* New tickets once every slot of the last ones is taken. */
    if (!GCVM_UNIFORM_BARRIER_BRANCHES || open_slots == 0u) {
      gcvm_u32 next = 0u;
      if (lid == 0u && open_slots == 0u)
        next = GCVM_VOLATILE_LOAD(state + GCVM_STATE_ASYNC_HEAD) < capacity
                   ? GCVM_ATOMIC_ADD(state + GCVM_STATE_ASYNC_HEAD, (gcvm_u32)GCVM_ASYNC_GROUP_SIZE)
                   : capacity;
      next = gcvm_warp_group_shuffle(next, 0u, sh->scratch);
      if (open_slots == 0u) {
        slot = next + lid;
        waiting = next < capacity && slot < capacity;
      }
    }
  }
  gcvm_u32 group_traversed = 0u;
  gcvm_u32 group_claimed = 0u;
  gcvm_warp_group_scan(traversed, sh->scratch, &group_traversed);
  gcvm_warp_group_scan(claimed, sh->scratch, &group_claimed);
  if (lid == 0u) {
    if (group_traversed != 0u)
      GCVM_ATOMIC_ADD64((GCVM_GLOBAL gcvm_u64*)(state + GCVM_STATE_EDGES_LO), (gcvm_u64)group_traversed);
    if (g.chunks != 0u) GCVM_ATOMIC_ADD(state + GCVM_STATE_CHUNKS_SCANNED, g.chunks);
    GCVM_ATOMIC_MAX(state + GCVM_STATE_ROUNDS, g.rounds);
    if (group_claimed > g.published) GCVM_ATOMIC_ADD(state + GCVM_STATE_KEPT, group_claimed - g.published);
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
