/* The BFS frontier-queue mark (Maas et al. 2012, Alg. 1 and 2, §5.1-§5.4), written
 * once in the dialect of portable.h and compiled for CUDA and OpenCL.
 *
 * One kernel launch processes one BFS level (where the dialect has a grid-wide
 * barrier, one launch may process them all: gcvm_bfs_levels_together). Every group
 * takes batches of GCVM_GROUP_SIZE queue entries from a shared cursor (a batched
 * dequeue from an array queue, as recommended by Cederman et al.), scans the objects'
 * references, and appends newly claimed targets to the next level's queue through a
 * staging buffer in local memory, reserving global space with one atomic per flush.
 * All compute units share one queue per level, so the work is balanced dynamically.
 *
 * In contrast to the paper, which sets the mark bit on dequeue without atomics and
 * lets duplicates into the queue, gcvm claims an object when it is discovered: a plain
 * read of the mark word, then an atomic OR, and only the thread that flips the bit
 * enqueues it. Each reachable object therefore enters the queue exactly once, the
 * reported edge count equals the serial marker's (DESIGN.md invariant 4), and queue
 * traffic is O(objects) instead of O(references). A thread claims the references of
 * one vector, or four of a step of the wide walk, together (gcvm_visit_together):
 * their mark words read at once, then their atomics issued at once, so that its
 * requests overlap. The paper's variants keep their
 * meaning: the offsets of a group's writes come from a histogram over reference
 * indices (Alg. 2, default) or from a Blelloch prefix sum over per-thread counts
 * (GCVM_BFS_PREFIX); GCVM_BFS_VECTOR reads references as aligned 16-byte vectors
 * (§5.3); GCVM_BFS_WIDE hands objects with more than `wide_threshold` references to
 * the whole group (§5.2); GCVM_BFS_FALLBACK stops the GPU when a level's queue has
 * dropped below a threshold after a minimum number of levels (§5.4: shorter than the
 * threshold and no longer than the level before, so that a frontier still growing
 * from a few roots does not count as a narrow tail), and the host finishes the mark
 * on the CPU. From level `deep_fallback_level` on the threshold is
 * `deep_fallback_threshold` when that is larger, in contrast to the paper: a heap still
 * narrow that deep (many long lists side by side) costs the device a level's barrier
 * per object of each list, where the CPU's threads walk a list each.
 *
 * Local expansion, in contrast to the paper, whose launch is one level: a group that
 * has run out of the level's queue goes on with the next level of its own part of the
 * heap, from its staging buffer, while that fits one batch and no work waits for the
 * next launch anywhere (the next level's queue is empty, no chunk of a huge object is
 * left, and every batch of the level is finished: a group leaving the queue first
 * hands on what it will not expand, then counts its batches), up to `expand_batches`
 * levels; what is staged then goes to the next queue. So the narrow levels of a heap
 * (a tree's first levels under one root, chains) cost a batch's memory round trips
 * each instead of a launch and its level barrier, and a launch covers several levels.
 * The conditions keep expansion from delaying other work: a group that went on while
 * work waited for the next launch would serialise what that launch spreads over
 * groups, and its paths would grow longer than the breadth-first ones (on the H200,
 * expansion of what fits one batch in every launch of at most one batch for every 8
 * groups, waiting work or not, made the order-service heap mark in 4.7 ms instead of
 * 1.2, and expansion of whatever a group held made rmat:24 mark in 9.9 instead of 5.2;
 * without the finished batches, a group expanded while another was still scanning
 * what it would hand on, and GCBench's kernels gained nothing). `expand_batches` 0
 * keeps the paper's one level a launch (the host's depth probes use it to count
 * levels).
 *
 * Shares (GCVM_BFS_SHARES), in contrast to the paper's shared queue: each group takes
 * an equal part of the level's queue, with no cursor, and expands what it claims
 * locally, level after level (sh->local_level, a batch at a time), while its next
 * level fits the batches its flags give (GCVM_BFS_SHARE_BATCHES_SHIFT, at most
 * GCVM_LOCAL_LEVEL_CAPACITY objects) and `expand_batches` allows, whatever waits
 * elsewhere; what does not fit goes to the next level's queue. A level of a few
 * hundred objects (a tree below the host's head start) is then marked by every group
 * going down its own subtrees, a batch's memory round trips a level, instead of by one
 * group's batch a level with the whole level's chain and barrier each; a group holds
 * at most four batches, about what one shared level costs, so a wide heap overflows
 * to the queue at once. The host uses it in the one launch, where every group holds a
 * part of each level at once.
 *
 * The bitmap frontier, in contrast to the paper, whose next queue is appended in
 * whatever order the groups claim: a launch with GCVM_BFS_BITMAP_OUT stages nothing;
 * what it claims stays in the mark bitmap, and a second kernel (gcvm_bfs_frontier)
 * builds the next queue from the bits set since a snapshot of the bitmap, in ascending
 * object order within tiles of 8,192 ids. A wide level then needs no staging, flushes
 * or scattered queue writes, and the next level reads the rows of neighbouring objects
 * together, in an order that does not depend on the groups' timing; a launch that
 * leaves its winners in the bitmap does not expand locally. The host chooses it per
 * launch (gpu_bfs_marker.hpp, frontier=).
 *
 * Huge objects, in contrast to the paper, where one thread (or with §5.2 one compute
 * unit) walks an object however large: an object with more than GCVM_CHUNK_SPLIT
 * references goes to the chunk queue (mark_layout.h) in chunks of GCVM_CHUNK_EDGES
 * that every group takes, so one array of millions of elements is scanned by the
 * whole device. A level kernel drains, before its batches and with all of its groups,
 * the chunks offered before it began, each group taking items by tickets (one atomic
 * add, no compare-and-swap to retry); chunks offered during a level wait for the next
 * level's kernel, so a level counts as having work while chunks remain. (Groups used
 * to take chunks by compare-and-swap on the queue's head until it was empty, so the
 * groups still in their drain when a level's own huge objects offered their chunks took
 * them all while the others scanned batches: on rmat:24 one SM then worked alone for up
 * to 10 ms after the others had finished; and every group taking them so spent the
 * level spinning on failed swaps.) Lane
 * mode (sms=split), the paper's static split with no balancing, keeps walking a huge
 * object within its lane.
 *
 * Every function here that contains a barrier is called by all threads of a group
 * with the same arguments where it matters (loop bounds are uniform).
 */
#ifndef GCVM_KERNELS_BFS_MARK_H
#define GCVM_KERNELS_BFS_MARK_H

#include "mark_bits.h"
#include "mark_layout.h"
#include "portable.h"

struct gcvm_bfs_shared {
  gcvm_u64 wide_first[GCVM_GROUP_SIZE];
  gcvm_u32 stage[GCVM_STAGE_CAPACITY];
  gcvm_u32 local_level[GCVM_LOCAL_LEVEL_CAPACITY]; /* local expansion: the level the group scans next */
  gcvm_u32 wide_vertex[GCVM_GROUP_SIZE];
  gcvm_u32 scan[GCVM_GROUP_SIZE];
  gcvm_u32 stage_count;
  gcvm_u32 out_base;
  gcvm_u32 batch;
  gcvm_u32 rounds;
  gcvm_u32 wide_count;
  gcvm_u32 traversed;
  gcvm_u32 lane_tail;   /* lane mode: entries in this group's log */
  gcvm_u32 lane_chunks; /* lane mode: chunks this group owns */
  gcvm_u64 chunk_item[2]; /* the chunk-queue items the group scans next, in turn */
  gcvm_u32 chunks;      /* chunk items this group scanned */
  gcvm_u32 kept;        /* objects this group claimed and scanned itself (expansion) */
  gcvm_u32 waiting;     /* thread 0 saw work that may wait for the next launch */
  gcvm_u32 taken;       /* queue batches of this level the group scanned (thread 0) */
  gcvm_u32 left;        /* the group has left the level's queue */
  gcvm_u32 at;          /* the next batch of sh->local_level */
  gcvm_u32 stage_winners; /* 0 in a launch whose winners stay in the bitmap (GCVM_BFS_BITMAP_OUT) */
};

/* Where a group's output goes: the next level's shared queue (`count` is its global
 * append counter), or in lane mode this group's own append log, stored in chunks of
 * GCVM_LANE_CHUNK entries of `queue` listed in `chunks` and taken from the pool
 * through state[GCVM_STATE_POOL_NEXT]. In async mode `pending` counts work not yet
 * done (async_mark.h): a reservation raises it before the entries can be seen. */
struct gcvm_out {
  GCVM_GLOBAL gcvm_u32* queue;
  GCVM_GLOBAL gcvm_u32* count;
  GCVM_GLOBAL gcvm_u32* chunks; /* 0 for a shared queue */
  GCVM_GLOBAL gcvm_u32* state;
  gcvm_u32 pool_chunks;
  gcvm_u32 table_chunks;
  GCVM_GLOBAL gcvm_u32* pending; /* 0 outside async mode */
};

/* The chunk queue of huge objects (mark_layout.h). `items` 0: none (lane mode).
 * Chunks of `edges_per_chunk` references (GCVM_CHUNK_EDGES, or in async mode
 * GCVM_ASYNC_CHUNK_EDGES); in async mode `pending` counts work not yet done. */
struct gcvm_chunk_queue {
  GCVM_GLOBAL gcvm_u64* items;
  GCVM_GLOBAL gcvm_u32* state;
  GCVM_GLOBAL gcvm_u32* pending; /* 0 outside async mode */
  gcvm_u32 capacity;
  gcvm_u32 edges_per_chunk;
};

/* Thread 0 only: reserves `n` consecutive output slots and returns the first. */
GCVM_DEVICE gcvm_u32 gcvm_out_reserve(GCVM_LOCAL struct gcvm_bfs_shared* sh, struct gcvm_out out, gcvm_u32 n) {
  if (out.pending != 0) GCVM_ATOMIC_ADD(out.pending, n);
  if (out.chunks == 0) return GCVM_ATOMIC_ADD(out.count, n);
  const gcvm_u32 base = sh->lane_tail;
  sh->lane_tail = base + n;
  const gcvm_u32 need = (gcvm_u32)(((gcvm_u64)base + n + GCVM_LANE_CHUNK - 1u) / GCVM_LANE_CHUNK);
  while (sh->lane_chunks < need && sh->lane_chunks < out.table_chunks) {
    gcvm_u32 chunk = GCVM_ATOMIC_ADD(out.state + GCVM_STATE_POOL_NEXT, 1u);
    if (chunk >= out.pool_chunks) {
      out.state[GCVM_STATE_OVERFLOW] = 1u;
      chunk = GCVM_NO_LEVEL;
    }
    out.chunks[sh->lane_chunks++] = chunk;
  }
  if (sh->lane_chunks < need) out.state[GCVM_STATE_OVERFLOW] = 1u;
  return base;
}

/* Where output slot `index` lives, or 0 if the pool ran out (reported by OVERFLOW). */
GCVM_DEVICE GCVM_GLOBAL gcvm_u32* gcvm_out_slot(struct gcvm_out out, gcvm_u32 index) {
  if (out.chunks == 0) return out.queue + index;
  const gcvm_u32 c = index / GCVM_LANE_CHUNK;
  const gcvm_u32 chunk = c < out.table_chunks ? out.chunks[c] : GCVM_NO_LEVEL;
  if (chunk == GCVM_NO_LEVEL) return 0;
  return out.queue + ((gcvm_u64)chunk * GCVM_LANE_CHUNK + index % GCVM_LANE_CHUNK);
}

GCVM_DEVICE void gcvm_out_store(struct gcvm_out out, gcvm_u32 index, gcvm_u32 value) {
  GCVM_GLOBAL gcvm_u32* slot = gcvm_out_slot(out, index);
  if (slot != 0) *slot = value;
}

/* 1 if this call flipped target's mark bit from 0 to 1; no atomic when it reads as set. */
GCVM_DEVICE int gcvm_claim(GCVM_GLOBAL gcvm_u32* marks, gcvm_u32 target) {
  return !gcvm_marked(marks, target) && gcvm_claim_atomic(marks, target);
}

/* One thread: puts the chunks of huge object v (`refs` references) on the chunk
 * queue. The pending count is raised before any item can be seen. */
GCVM_DEVICE void gcvm_offer_chunks(struct gcvm_chunk_queue q, gcvm_u32 v, gcvm_u32 refs) {
  const gcvm_u32 n = (refs + q.edges_per_chunk - 1u) / q.edges_per_chunk;
  if (q.pending != 0) GCVM_ATOMIC_ADD(q.pending, n);
  const gcvm_u32 first = GCVM_ATOMIC_ADD(q.state + GCVM_STATE_CHUNK_TAIL, n);
  if ((gcvm_u64)first + n > q.capacity) {
    q.state[GCVM_STATE_OVERFLOW] = 1u; /* the host discards the mark (never expected) */
    if (q.pending != 0) GCVM_ATOMIC_SUB(q.pending, n);
    return;
  }
  if (q.pending != 0) GCVM_GLOBAL_FENCE();
  for (gcvm_u32 c = 0u; c < n; ++c) q.items[first + c] = ((gcvm_u64)v << 32) | c;
}

/* The chunk items a level kernel drains: [from, to), the items offered before the
 * level began and not yet taken, all written by earlier launches; `tickets` counts
 * those handed out (mark_layout.h, GCVM_STATE_CHUNK_TICKETS). */
struct gcvm_chunk_range {
  gcvm_u32 from;
  gcvm_u32 to;
  GCVM_GLOBAL gcvm_u32* tickets;
};

/* Levels mode: the chunks level `level` drains, those offered before it began (set by
 * the last group of the level before, and stable until this level's last group moves
 * them on). Read where needed rather than held through the level: the level kernel
 * has no registers to spare. */
GCVM_DEVICE struct gcvm_chunk_range gcvm_level_chunk_range(GCVM_GLOBAL gcvm_u32* state, gcvm_u32 level) {
  const struct gcvm_chunk_range range = {state[GCVM_STATE_CHUNK_HEAD], state[GCVM_STATE_CHUNK_END],
                                         state + GCVM_STATE_CHUNK_TICKETS + level % GCVM_FINISHED_RING};
  return range;
}

/* Thread 0 only: takes the range's next chunk item by a ticket (one atomic add, which
 * every group may issue at once: no compare-and-swap to retry), or returns
 * GCVM_CHUNK_NONE once the range is handed out. */
GCVM_DEVICE gcvm_u64 gcvm_take_chunk(struct gcvm_chunk_queue q, struct gcvm_chunk_range range) {
  if (q.items == 0 || range.from >= range.to) return GCVM_CHUNK_NONE;
  const gcvm_u32 size = range.to - range.from;
  if (GCVM_VOLATILE_LOAD(range.tickets) >= size) return GCVM_CHUNK_NONE;
  const gcvm_u32 ticket = GCVM_ATOMIC_ADD(range.tickets, 1u);
  return ticket < size ? q.items[range.from + ticket] : GCVM_CHUNK_NONE;
}

/* Claims a non-null reference and stages it when this thread won it. */
GCVM_DEVICE void gcvm_visit(GCVM_GLOBAL gcvm_u32* marks, GCVM_LOCAL struct gcvm_bfs_shared* sh, gcvm_u32 target,
                            gcvm_u32* traversed) {
  if (target == GCVM_NULL_REF) return;
  ++*traversed;
  if (gcvm_claim(marks, target) && sh->stage_winners) sh->stage[GCVM_ATOMIC_ADD(&sh->stage_count, 1u)] = target;
}

/* Claims up to GCVM_VISIT_REFS references at once (GCVM_NULL_REF: none) and stages
 * those this thread won. Every mark word is read before any claim's atomic is issued,
 * and every atomic before any answer is used: a thread keeps its requests in flight
 * together instead of waiting for each reference's round trips in turn (one visit
 * after another cannot overlap them, since a visit's atomic may write the word the
 * next one reads). */
GCVM_DEVICE void gcvm_visit_together(GCVM_GLOBAL gcvm_u32* marks, GCVM_LOCAL struct gcvm_bfs_shared* sh,
                                     const gcvm_u32* target, gcvm_u32* traversed) {
  int clear[GCVM_VISIT_REFS];
  for (gcvm_u32 j = 0u; j < GCVM_VISIT_REFS; ++j)
    clear[j] = target[j] != GCVM_NULL_REF && !gcvm_marked(marks, target[j]);
  gcvm_u32 word[GCVM_VISIT_REFS];
  for (gcvm_u32 j = 0u; j < GCVM_VISIT_REFS; ++j)
    word[j] = clear[j] ? gcvm_claim_issue(marks, target[j]) : 0xFFFFFFFFu;
  for (gcvm_u32 j = 0u; j < GCVM_VISIT_REFS; ++j) {
    if (target[j] == GCVM_NULL_REF) continue;
    ++*traversed;
    if (gcvm_claim_won(word[j], target[j]) && sh->stage_winners)
      sh->stage[GCVM_ATOMIC_ADD(&sh->stage_count, 1u)] = target[j];
  }
}

/* Visits the references of aligned vector `w` that lie in [first, end), together. */
GCVM_DEVICE void gcvm_visit_vector(const GCVM_GLOBAL gcvm_u32* edges, GCVM_GLOBAL gcvm_u32* marks,
                                   GCVM_LOCAL struct gcvm_bfs_shared* sh, gcvm_u64 w, gcvm_u64 first, gcvm_u64 end,
                                   gcvm_u32* traversed) {
  const gcvm_u32x4 v = ((const GCVM_GLOBAL gcvm_u32x4*)edges)[w];
  const gcvm_u64 e = w * 4u;
  gcvm_u32 target[GCVM_VISIT_REFS];
  target[0] = e >= first && e < end ? v.x : GCVM_NULL_REF;
  target[1] = e + 1u >= first && e + 1u < end ? v.y : GCVM_NULL_REF;
  target[2] = e + 2u >= first && e + 2u < end ? v.z : GCVM_NULL_REF;
  target[3] = e + 3u >= first && e + 3u < end ? v.w : GCVM_NULL_REF;
  gcvm_visit_together(marks, sh, target, traversed);
}

/* Visits the GCVM_STEP_REFS references loaded for one step, four together at a time. */
GCVM_DEVICE void gcvm_visit_step(GCVM_GLOBAL gcvm_u32* marks, GCVM_LOCAL struct gcvm_bfs_shared* sh,
                                 const gcvm_u32* target, gcvm_u32* traversed) {
  for (gcvm_u32 j = 0u; j < GCVM_STEP_REFS; j += GCVM_VISIT_REFS) gcvm_visit_together(marks, sh, target + j, traversed);
}

/* Collective. Moves the staged entries to the output queue when fewer than
 * GCVM_STAGE_SLACK slots are free, or whenever `force` is set. Every thread passes
 * the same four barriers whatever it decides (no early return: PoCL 5's work-group
 * compiler cannot split a function whose barriers are skipped on some paths), except
 * in a launch that stages nothing (its winners stay in the bitmap) where the dialect
 * lets a whole group skip barriers under a uniform branch: there the group's warps go
 * through a level's steps without waiting for one another. */
GCVM_DEVICE void gcvm_stage_flush(GCVM_LOCAL struct gcvm_bfs_shared* sh, struct gcvm_out out, int force) {
  if (GCVM_UNIFORM_BARRIER_BRANCHES && !sh->stage_winners) return;
  GCVM_BARRIER();
  const gcvm_u32 n = sh->stage_count;
  GCVM_BARRIER();
  const int flush = n != 0u && (force || n + GCVM_STAGE_SLACK > GCVM_STAGE_CAPACITY);
  if (flush && GCVM_LOCAL_ID() == 0u) {
    sh->out_base = gcvm_out_reserve(sh, out, n);
    sh->stage_count = 0u;
  }
  GCVM_BARRIER();
  const gcvm_u32 base = sh->out_base;
  const gcvm_u32 copy = flush ? n : 0u;
  for (gcvm_u32 i = GCVM_LOCAL_ID(); i < copy; i += GCVM_GROUP_SIZE) gcvm_out_store(out, base + i, sh->stage[i]);
  GCVM_BARRIER();
}

/* Collective. The uniform maximum of `value` over the group. */
GCVM_DEVICE gcvm_u32 gcvm_group_max(GCVM_LOCAL struct gcvm_bfs_shared* sh, gcvm_u32 value) {
  if (GCVM_LOCAL_ID() == 0u) sh->rounds = 0u;
  GCVM_BARRIER();
  if (value != 0u) GCVM_ATOMIC_MAX(&sh->rounds, value);
  GCVM_BARRIER();
  const gcvm_u32 result = sh->rounds;
  GCVM_BARRIER();
  return result;
}

/* Collective. Blelloch's work-efficient exclusive scan of one value per thread;
 * returns this thread's offset and stores the group total in sh->out_base's place
 * (sh->rounds). */
GCVM_DEVICE gcvm_u32 gcvm_exclusive_scan(GCVM_LOCAL struct gcvm_bfs_shared* sh, gcvm_u32 value) {
  const gcvm_u32 lid = GCVM_LOCAL_ID();
  sh->scan[lid] = value;
  GCVM_BARRIER();
  for (gcvm_u32 stride = 1u; stride < GCVM_GROUP_SIZE; stride <<= 1) {
    const gcvm_u32 i = (lid + 1u) * stride * 2u - 1u;
    if (i < GCVM_GROUP_SIZE) sh->scan[i] += sh->scan[i - stride];
    GCVM_BARRIER();
  }
  if (lid == 0u) {
    sh->rounds = sh->scan[GCVM_GROUP_SIZE - 1u];
    sh->scan[GCVM_GROUP_SIZE - 1u] = 0u;
  }
  GCVM_BARRIER();
  for (gcvm_u32 stride = GCVM_GROUP_SIZE / 2u; stride > 0u; stride >>= 1) {
    const gcvm_u32 i = (lid + 1u) * stride * 2u - 1u;
    if (i < GCVM_GROUP_SIZE) {
      const gcvm_u32 left = sh->scan[i - stride];
      sh->scan[i - stride] = sh->scan[i];
      sh->scan[i] += left;
    }
    GCVM_BARRIER();
  }
  return sh->scan[lid];
}

/* Alg. 2: round r visits every thread's r-th reference (or r-th aligned vector);
 * the staging buffer's atomic counter is the histogram bucket. */
GCVM_DEVICE void gcvm_histogram_rounds(const GCVM_GLOBAL gcvm_u32* edges, GCVM_GLOBAL gcvm_u32* marks,
                                       GCVM_LOCAL struct gcvm_bfs_shared* sh, struct gcvm_out out, gcvm_u64 first, gcvm_u32 degree,
                                       gcvm_u32 flags, gcvm_u32* traversed) {
  const int vector = (flags & GCVM_BFS_VECTOR) != 0u;
  const gcvm_u64 end = first + degree;
  const gcvm_u32 mine = degree == 0u ? 0u : vector ? (gcvm_u32)((end - 1u) / 4u - first / 4u + 1u) : degree;
  const gcvm_u32 rounds = gcvm_group_max(sh, mine);
  for (gcvm_u32 r = 0u; r < rounds; ++r) {
    if (r < mine) {
      if (vector)
        gcvm_visit_vector(edges, marks, sh, first / 4u + r, first, end, traversed);
      else
        gcvm_visit(marks, sh, edges[first + r], traversed);
    }
    gcvm_stage_flush(sh, out, 0);
  }
}

/* §5.1's prefix-sum layout: round r claims up to GCVM_PREFIX_ROUND references per
 * thread, a scan of the per-thread winner counts gives each thread a consecutive
 * slice of one global reservation. */
GCVM_DEVICE void gcvm_prefix_rounds(const GCVM_GLOBAL gcvm_u32* edges, GCVM_GLOBAL gcvm_u32* marks,
                                    GCVM_LOCAL struct gcvm_bfs_shared* sh, struct gcvm_out out, gcvm_u64 first, gcvm_u32 degree, gcvm_u32 flags,
                                    gcvm_u32* traversed) {
  const int vector = (flags & GCVM_BFS_VECTOR) != 0u;
  const gcvm_u64 end = first + degree;
  const gcvm_u64 window = vector ? (first / 4u) * 4u : first; /* rounds cover [window + r*ROUND, ...) */
  const gcvm_u32 mine = degree == 0u ? 0u : (gcvm_u32)((end - window + GCVM_PREFIX_ROUND - 1u) / GCVM_PREFIX_ROUND);
  const gcvm_u32 rounds = gcvm_group_max(sh, mine);
  for (gcvm_u32 r = 0u; r < rounds; ++r) {
    gcvm_u32 won[GCVM_PREFIX_ROUND];
    gcvm_u32 count = 0u;
    if (r < mine) {
      const gcvm_u64 lo = window + (gcvm_u64)r * GCVM_PREFIX_ROUND;
      if (vector) {
        for (gcvm_u32 k = 0u; k < GCVM_PREFIX_ROUND / 4u; ++k) {
          const gcvm_u64 w = lo / 4u + k;
          if (w * 4u >= end) break;
          const gcvm_u32x4 v = ((const GCVM_GLOBAL gcvm_u32x4*)edges)[w];
          const gcvm_u32 t[4] = {v.x, v.y, v.z, v.w};
          for (gcvm_u32 j = 0u; j < 4u; ++j) {
            const gcvm_u64 e = w * 4u + j;
            if (e < first || e >= end || t[j] == GCVM_NULL_REF) continue;
            ++*traversed;
            if (gcvm_claim(marks, t[j]) && sh->stage_winners) won[count++] = t[j];
          }
        }
      } else {
        const gcvm_u64 hi = lo + GCVM_PREFIX_ROUND < end ? lo + GCVM_PREFIX_ROUND : end;
        for (gcvm_u64 e = lo; e < hi; ++e) {
          const gcvm_u32 t = edges[e];
          if (t == GCVM_NULL_REF) continue;
          ++*traversed;
          if (gcvm_claim(marks, t) && sh->stage_winners) won[count++] = t;
        }
      }
    }
    const gcvm_u32 offset = gcvm_exclusive_scan(sh, count);
    if (GCVM_LOCAL_ID() == 0u && sh->rounds != 0u) sh->out_base = gcvm_out_reserve(sh, out, sh->rounds);
    GCVM_BARRIER();
    const gcvm_u32 base = sh->out_base;
    for (gcvm_u32 j = 0u; j < count; ++j) gcvm_out_store(out, base + offset + j, won[j]);
    GCVM_BARRIER();
  }
}

/* Collective: the group visits references [from, end) of one object, one reference
 * (or aligned vector) per thread per step. One loop for both load widths (no barrier
 * under a run-time branch): a step covers GROUP_SIZE aligned vectors or references. */
GCVM_DEVICE void gcvm_group_walk(const GCVM_GLOBAL gcvm_u32* edges, GCVM_GLOBAL gcvm_u32* marks,
                                 GCVM_LOCAL struct gcvm_bfs_shared* sh, struct gcvm_out out, gcvm_u64 from,
                                 gcvm_u64 end, gcvm_u32 flags, gcvm_u32* traversed) {
  const gcvm_u32 lid = GCVM_LOCAL_ID();
  const int vector = (flags & GCVM_BFS_VECTOR) != 0u;
  const gcvm_u64 w0 = from / 4u;
  const gcvm_u64 steps = from >= end ? 0u : vector ? (end - 1u) / 4u - w0 + 1u : end - from;
  for (gcvm_u64 c = 0u; c < steps; c += GCVM_GROUP_SIZE) {
    if (c + lid < steps) {
      if (vector)
        gcvm_visit_vector(edges, marks, sh, w0 + c + lid, from, end, traversed);
      else
        gcvm_visit(marks, sh, edges[from + c + lid], traversed);
    }
    gcvm_stage_flush(sh, out, 0);
  }
}

/* The last of the `lanes` ascending offsets in `offsets` that is <= e: the lane whose
 * references hold index `e` of a concatenation laid out by a prefix sum. */
GCVM_DEVICE gcvm_u32 gcvm_offset_owner(const GCVM_LOCAL gcvm_u32* offsets, gcvm_u32 lanes, gcvm_u32 e) {
  gcvm_u32 lo = 0u;
  gcvm_u32 hi = lanes - 1u;
  while (lo < hi) {
    const gcvm_u32 mid = (lo + hi + 1u) / 2u;
    if (offsets[mid] <= e)
      lo = mid;
    else
      hi = mid - 1u;
  }
  return lo;
}

/* §5.2: objects with more than the threshold of references are scanned by the
 * whole group. In contrast to the paper, which walks them one object at a time, the
 * group walks the concatenated references of all the batch's wide objects at once
 * (offsets from a prefix sum), so a batch of objects with 20 or 5,000 references
 * keeps every thread busy. A warp takes GCVM_STEP_REFS * GCVM_WARP_SIZE consecutive
 * references of the concatenation a step, its threads GCVM_WARP_SIZE apart, so that
 * each of the warp's loads reads consecutive references; a thread finds the owner of
 * its first reference by binary search and those of the others by stepping on, over
 * the wide lanes' offsets compacted, and loads all its references before it claims
 * any. (A binary search for every reference cost twice the time on objects of
 * thousands of references; one thread taking consecutive references lost the
 * loads' coalescing.) Wide objects have at most GCVM_CHUNK_SPLIT references (larger
 * ones are chunked), so the concatenated index fits 22 bits. In lane mode the huge
 * objects of the batch (sh->wide_vertex) are then walked one at a time by the group. */
GCVM_DEVICE void gcvm_wide_objects(const GCVM_GLOBAL gcvm_u64* begin, const GCVM_GLOBAL gcvm_u32* degree,
                                   const GCVM_GLOBAL gcvm_u32* edges, GCVM_GLOBAL gcvm_u32* marks,
                                   GCVM_LOCAL struct gcvm_bfs_shared* sh, struct gcvm_out out, gcvm_u64 first, gcvm_u32 wide_degree,
                                   gcvm_u32 flags, gcvm_u32* traversed) {
  const gcvm_u32 lid = GCVM_LOCAL_ID();
  /* One scan gives each wide lane its offset (low bits) and its rank among the wide
   * lanes (high bits); the wide lanes' offsets and first edges are then compacted, so
   * that the offsets strictly increase and an owner is found by stepping. */
  const gcvm_u32 packed = wide_degree != 0u ? GCVM_WIDE_RANK_ONE | wide_degree : 0u;
  const gcvm_u32 prefix = gcvm_exclusive_scan(sh, packed);
  const gcvm_u32 total = sh->rounds % GCVM_WIDE_RANK_ONE;
  const gcvm_u32 lanes = sh->rounds / GCVM_WIDE_RANK_ONE;
  GCVM_BARRIER();
  /* Read before the next barrier: past it, thread 0 may already clear the count for
   * the next batch (lane mode scans batches with no barrier between them). */
  const gcvm_u32 huge = sh->wide_count;
  if (wide_degree != 0u) {
    const gcvm_u32 rank = prefix / GCVM_WIDE_RANK_ONE;
    sh->scan[rank] = prefix % GCVM_WIDE_RANK_ONE;
    sh->wide_first[rank] = first;
  }
  GCVM_BARRIER();
  const gcvm_u32 lane = lid % GCVM_WARP_SIZE;
  for (gcvm_u32 base = 0u; base < total; base += GCVM_STEP_REFS * GCVM_GROUP_SIZE) {
    const gcvm_u32 e0 = base + (lid - lane) * GCVM_STEP_REFS + lane;
    gcvm_u32 owner = e0 < total ? gcvm_offset_owner(sh->scan, lanes, e0) : 0u;
    gcvm_u32 target[GCVM_STEP_REFS];
    for (gcvm_u32 j = 0u; j < GCVM_STEP_REFS; ++j) {
      const gcvm_u32 e = e0 + j * GCVM_WARP_SIZE;
      target[j] = GCVM_NULL_REF;
      if (e >= total) continue;
      if (owner + 1u < lanes && sh->scan[owner + 1u] <= e) {
        ++owner;
        if (owner + 1u < lanes && sh->scan[owner + 1u] <= e)
          owner += 1u + gcvm_offset_owner(sh->scan + owner + 1u, lanes - owner - 1u, e);
      }
      target[j] = edges[sh->wide_first[owner] + (e - sh->scan[owner])];
    }
    gcvm_visit_step(marks, sh, target, traversed);
    gcvm_stage_flush(sh, out, 0);
  }

  for (gcvm_u32 o = 0u; o < huge; ++o) {
    const gcvm_u32 v = sh->wide_vertex[o];
    gcvm_group_walk(edges, marks, sh, out, begin[v], begin[v] + degree[v], flags, traversed);
  }
}

/* The edge slots [*from, *end) of chunk-queue item `item` (not GCVM_CHUNK_NONE): chunk
 * (gcvm_u32)item of the object item >> 32, the last one clipped to its end. */
GCVM_DEVICE void gcvm_chunk_edges(const GCVM_GLOBAL gcvm_u64* begin, const GCVM_GLOBAL gcvm_u32* degree, gcvm_u64 item,
                                  gcvm_u32 edges_per_chunk, gcvm_u64* from, gcvm_u64* end) {
  const gcvm_u32 v = (gcvm_u32)(item >> 32);
  const gcvm_u64 object_end = begin[v] + degree[v];
  *from = begin[v] + (gcvm_u64)(gcvm_u32)item * edges_per_chunk;
  *end = *from + edges_per_chunk < object_end ? *from + edges_per_chunk : object_end;
}

/* Collective: takes and scans chunk items until the chunk queue is empty (nothing
 * when `active` is 0). One loop of steps across chunks (a step: GROUP_SIZE
 * references or aligned vectors), so that no loop with barriers nests in another:
 * PoCL's work-group compiler takes minutes over nested ones. Thread 0 takes the next
 * item into the other of two slots, so that with one barrier a step (a flush that
 * stages nothing may pass none) it never overwrites the item a slower thread of the
 * group has yet to read. */
GCVM_DEVICE void gcvm_drain_chunks(const GCVM_GLOBAL gcvm_u64* begin, const GCVM_GLOBAL gcvm_u32* degree,
                                   const GCVM_GLOBAL gcvm_u32* edges, GCVM_GLOBAL gcvm_u32* marks,
                                   GCVM_LOCAL struct gcvm_bfs_shared* sh, struct gcvm_out out,
                                   struct gcvm_chunk_queue chunks, struct gcvm_chunk_range range, int active,
                                   gcvm_u32 flags, gcvm_u32* traversed) {
  const gcvm_u32 lid = GCVM_LOCAL_ID();
  const int vector = (flags & GCVM_BFS_VECTOR) != 0u;
  if (lid == 0u) sh->chunk_item[0] = active ? gcvm_take_chunk(chunks, range) : GCVM_CHUNK_NONE;
  GCVM_BARRIER();
  gcvm_u32 slot = 0u;
  gcvm_u64 item = sh->chunk_item[0];
  gcvm_u64 step = 0u;
  while (item != GCVM_CHUNK_NONE) {
    gcvm_u64 from = 0u;
    gcvm_u64 end = 0u;
    gcvm_chunk_edges(begin, degree, item, chunks.edges_per_chunk, &from, &end);
    const gcvm_u64 w0 = from / 4u;
    const gcvm_u64 steps = vector ? (end - 1u) / 4u - w0 + 1u : end - from;
    const gcvm_u64 k = step + lid;
    if (k < steps) {
      if (vector)
        gcvm_visit_vector(edges, marks, sh, w0 + k, from, end, traversed);
      else
        gcvm_visit(marks, sh, edges[from + k], traversed);
    }
    gcvm_stage_flush(sh, out, 0);
    step += GCVM_GROUP_SIZE;
    if (lid == 0u && step >= steps) {
      ++sh->chunks;
      sh->chunk_item[slot ^ 1u] = gcvm_take_chunk(chunks, range);
    }
    GCVM_BARRIER();
    if (step >= steps) {
      slot ^= 1u;
      item = sh->chunk_item[slot];
      step = 0u;
    }
  }
}

/* Collective, per group: adds the group's traversed references to the global count. */
GCVM_DEVICE void gcvm_add_traversed(GCVM_LOCAL struct gcvm_bfs_shared* sh, GCVM_GLOBAL gcvm_u32* state,
                                    gcvm_u32 traversed) {
  if (traversed != 0u) GCVM_ATOMIC_ADD(&sh->traversed, traversed);
  GCVM_BARRIER();
  if (GCVM_LOCAL_ID() == 0u && sh->traversed != 0u)
    GCVM_ATOMIC_ADD64((GCVM_GLOBAL gcvm_u64*)(state + GCVM_STATE_EDGES_LO), (gcvm_u64)sh->traversed);
  if (GCVM_LOCAL_ID() == 0u && sh->chunks != 0u) GCVM_ATOMIC_ADD(state + GCVM_STATE_CHUNKS_SCANNED, sh->chunks);
  if (GCVM_LOCAL_ID() == 0u && sh->kept != 0u) GCVM_ATOMIC_ADD(state + GCVM_STATE_KEPT, sh->kept);
}

/* `stage_winners` 0: the objects this launch claims are not staged for a queue; they
 * stay in the mark bitmap, from which gcvm_bfs_frontier builds the next queue. */
GCVM_DEVICE void gcvm_bfs_init_shared(GCVM_LOCAL struct gcvm_bfs_shared* sh, int stage_winners) {
  if (GCVM_LOCAL_ID() == 0u) {
    sh->stage_winners = stage_winners ? 1u : 0u;
    sh->stage_count = 0u;
    sh->traversed = 0u;
    sh->lane_tail = 0u;
    sh->lane_chunks = 0u;
    sh->chunks = 0u;
    sh->kept = 0u;
    sh->taken = 0u;
    sh->left = 0u;
  }
  GCVM_BARRIER();
}

/* Collective: claims roots[from, to) (duplicates and nulls allowed) into `out`. */
GCVM_DEVICE void gcvm_claim_roots(const GCVM_GLOBAL gcvm_u32* roots, gcvm_u64 from, gcvm_u64 to, gcvm_u64 stride,
                                  GCVM_GLOBAL gcvm_u32* marks, GCVM_LOCAL struct gcvm_bfs_shared* sh,
                                  struct gcvm_out out) {
  for (gcvm_u64 c = from; c < to; c += stride) {
    const gcvm_u64 i = c + GCVM_LOCAL_ID();
    if (i < to) {
      const gcvm_u32 root = roots[i];
      if (root != GCVM_NULL_REF && gcvm_claim(marks, root))
        sh->stage[GCVM_ATOMIC_ADD(&sh->stage_count, 1u)] = root;
    }
    gcvm_stage_flush(sh, out, 0);
  }
  gcvm_stage_flush(sh, out, 1);
}

/* Level 0: claims roots[0, root_count) into queue 1 (count[1]), and sets the bits of
 * roots[root_count, root_count + marked_count): objects the host marked and scanned
 * before the launch (its head start, gc/markers/head_start.hpp), which are not queued.
 * The two ranges are disjoint. */
GCVM_DEVICE void gcvm_bfs_seed(const GCVM_GLOBAL gcvm_u32* roots, gcvm_u32 root_count, gcvm_u32 marked_count,
                               GCVM_GLOBAL gcvm_u32* marks, GCVM_GLOBAL gcvm_u32* out_queue,
                               GCVM_GLOBAL gcvm_u32* state, GCVM_LOCAL struct gcvm_bfs_shared* sh) {
  gcvm_bfs_init_shared(sh, 1);
  const struct gcvm_out out = {out_queue, state + GCVM_STATE_COUNT + 1u, 0, state, 0u, 0u, 0};
  const gcvm_u64 first = (gcvm_u64)GCVM_GROUP_ID() * GCVM_GROUP_SIZE;
  const gcvm_u64 stride = (gcvm_u64)GCVM_GROUP_COUNT() * GCVM_GROUP_SIZE;
  gcvm_claim_roots(roots, first, root_count, stride, marks, sh, out);
  for (gcvm_u64 i = first + GCVM_LOCAL_ID(); i < marked_count; i += stride)
    gcvm_claim_issue(marks, roots[root_count + i]);
}

/* Collective: scans the objects of one batch, one per thread (GCVM_NULL_REF for
 * none), appending what they newly reach to `out`. */
GCVM_DEVICE void gcvm_scan_batch(const GCVM_GLOBAL gcvm_u64* begin, const GCVM_GLOBAL gcvm_u32* degree,
                                 const GCVM_GLOBAL gcvm_u32* edges, GCVM_GLOBAL gcvm_u32* marks,
                                 GCVM_LOCAL struct gcvm_bfs_shared* sh, struct gcvm_out out,
                                 struct gcvm_chunk_queue chunks, gcvm_u32 v, gcvm_u32 flags, gcvm_u32 wide_threshold,
                                 gcvm_u32* traversed) {
  if (GCVM_LOCAL_ID() == 0u) sh->wide_count = 0u;
  GCVM_BARRIER();
  gcvm_u64 first = 0u;
  gcvm_u32 refs = 0u;
  gcvm_u32 wide = 0u;
  if (v != GCVM_NULL_REF) {
    first = begin[v];
    refs = degree[v];
    if (refs > GCVM_CHUNK_SPLIT) {
      if (chunks.items != 0)
        gcvm_offer_chunks(chunks, v, refs);
      else
        sh->wide_vertex[GCVM_ATOMIC_ADD(&sh->wide_count, 1u)] = v;
      refs = 0u;
    } else if ((flags & GCVM_BFS_WIDE) != 0u && refs > wide_threshold) {
      wide = refs;
      refs = 0u;
    }
  }
  /* On OpenCL both offset schemes are called, the unselected one with no references,
   * and the wide walk whether or not the batch has wide objects: a barrier never sits
   * under a branch on a run-time flag, which PoCL 5's work-group compiler cannot split
   * (an assertion in createParallelRegionBefore). CUDA skips what has nothing to do
   * (the wide walk's scan alone passes some twenty barriers). */
  const int prefix = (flags & GCVM_BFS_PREFIX) != 0u;
  if (!GCVM_UNIFORM_BARRIER_BRANCHES || prefix)
    gcvm_prefix_rounds(edges, marks, sh, out, first, prefix ? refs : 0u, flags, traversed);
  if (!GCVM_UNIFORM_BARRIER_BRANCHES || !prefix)
    gcvm_histogram_rounds(edges, marks, sh, out, first, prefix ? 0u : refs, flags, traversed);
  if (!GCVM_UNIFORM_BARRIER_BRANCHES || GCVM_BARRIER_ANY(wide != 0u || sh->wide_count != 0u))
    gcvm_wide_objects(begin, degree, edges, marks, sh, out, first, wide, flags, traversed);
}

/* Thread 0 only: whether work may wait for the next launch while this group expands:
 * objects in the next level's queue, chunks of huge objects offered during this level
 * (past `chunk_end`, the end of its range: they wait for the next; the group drained
 * the range itself before its batches), or batches of this level that other groups
 * have not finished (they may yet hand work on). While
 * only the last holds, it looks again, up to GCVM_EXPAND_POLLS times: groups that
 * finish their batches together (chains side by side) then expand together. The polls
 * are bounded because nothing guarantees that the groups it waits for run meanwhile
 * (a CPU device runs a few groups at a time). */
GCVM_DEVICE int gcvm_work_waiting(struct gcvm_out out, struct gcvm_chunk_queue chunks, gcvm_u32 chunk_end,
                                  const GCVM_GLOBAL gcvm_u32* finished, gcvm_u32 level_batches) {
  for (gcvm_u32 poll = 0u;; ++poll) {
    if (GCVM_VOLATILE_LOAD(out.count) != 0u) return 1;
    if (GCVM_VOLATILE_LOAD(chunks.state + GCVM_STATE_CHUNK_TAIL) > chunk_end) return 1;
    if (GCVM_VOLATILE_LOAD(finished) >= level_batches) return 0;
    if (poll + 1u >= GCVM_EXPAND_POLLS) return 1;
    GCVM_BACKOFF(GCVM_EXPAND_POLL_NS);
  }
}

/* Collective, with uniform arguments, after a barrier: how many objects this group
 * expands next (bfs_mark.h's header), 0 for none; they are then in sh->local_level.
 * Once the group is out of its part of the level's queue, it leaves it once: what it
 * will not expand goes to the next queue first, then its queue batches (sh->taken) are
 * counted in the level's finished word, so that a group that sees every batch of level
 * `level` (`limit` objects) finished sees all the work that groups handed on. It
 * expands what it holds while `budget` allows and it fits `most` objects: one batch,
 * and no work waits (gcvm_work_waiting); in a launch of shares (GCVM_BFS_SHARES), whose
 * groups all hold a part of the level, the batches its flags give, whatever waits. */
GCVM_DEVICE gcvm_u32 gcvm_next_expansion(GCVM_LOCAL struct gcvm_bfs_shared* sh, struct gcvm_out out,
                                         struct gcvm_chunk_queue chunks, GCVM_GLOBAL gcvm_u32* state,
                                         gcvm_u32 level, gcvm_u32 limit, int out_of_queue, gcvm_u32 budget,
                                         int shares, gcvm_u32 most) {
  const gcvm_u32 held = sh->stage_count;
  const int leaving = out_of_queue && sh->left == 0u;
  const int may_expand = out_of_queue && budget != 0u && held != 0u && held <= most;
  gcvm_stage_flush(sh, out, leaving && !may_expand);
  /* Every thread has read sh->left before thread 0 writes it (a flush that stages
   * nothing may pass no barrier). */
  if (GCVM_UNIFORM_BARRIER_BRANCHES && !sh->stage_winners) GCVM_BARRIER();
  if (GCVM_LOCAL_ID() == 0u) {
    GCVM_GLOBAL gcvm_u32* finished = state + GCVM_STATE_FINISHED + level % GCVM_FINISHED_RING;
    if (leaving) sh->left = 1u;
    if (leaving && sh->taken != 0u) GCVM_ATOMIC_ADD(finished, sh->taken);
    const gcvm_u32 level_batches = (gcvm_u32)(((gcvm_u64)limit + GCVM_GROUP_SIZE - 1u) / GCVM_GROUP_SIZE);
    sh->waiting = may_expand && !shares ? (gcvm_u32)gcvm_work_waiting(out, chunks, state[GCVM_STATE_CHUNK_END],
                                                                       finished, level_batches)
                                        : (gcvm_u32)!may_expand;
    if (sh->waiting == 0u) sh->at = 0u;
  }
  GCVM_BARRIER();
  const gcvm_u32 expand = may_expand && sh->waiting == 0u ? held : 0u;
  for (gcvm_u32 i = GCVM_LOCAL_ID(); i < expand; i += GCVM_GROUP_SIZE) sh->local_level[i] = sh->stage[i];
  GCVM_BARRIER();
  if (GCVM_LOCAL_ID() == 0u && expand != 0u) {
    sh->stage_count = 0u;
    sh->kept += expand;
  }
  return expand;
}

/* Levels mode: whether level `level` (>= 1) finds the mark over: a fallback was
 * decided at an earlier level, or nothing was queued for the level and no chunk of a
 * huge object is left for it to drain. Every group of the level decides alike: the
 * words it reads were written before the level began and do not change until every
 * group has begun it (the fallback level, which group 0 may set at this level, is
 * compared with the level, not with GCVM_NO_LEVEL; the chunk range moves when the
 * level's last group finishes). */
GCVM_DEVICE int gcvm_bfs_mark_over(const GCVM_GLOBAL gcvm_u32* state, gcvm_u32 level) {
  return state[GCVM_STATE_FALLBACK_LEVEL] < level ||
         (state[GCVM_STATE_COUNT + level % GCVM_LEVEL_RING] == 0u &&
          state[GCVM_STATE_CHUNK_HEAD] >= state[GCVM_STATE_CHUNK_END]);
}

/* Level `level` >= 1: scans the objects of queue `in_queue` (count[level]) and
 * appends what they newly reach to `out_queue` (count[level + 1]); with local
 * expansion, also what those reach in turn, up to `expand_batches` batches a group. */
GCVM_DEVICE void gcvm_bfs_level(const GCVM_GLOBAL gcvm_u64* begin, const GCVM_GLOBAL gcvm_u32* degree,
                                const GCVM_GLOBAL gcvm_u32* edges, GCVM_GLOBAL gcvm_u32* marks,
                                const GCVM_GLOBAL gcvm_u32* in_queue, GCVM_GLOBAL gcvm_u32* out_queue,
                                GCVM_GLOBAL gcvm_u32* state, GCVM_GLOBAL gcvm_u64* chunk_items,
                                gcvm_u32 chunk_capacity, gcvm_u32 level, gcvm_u32 flags, gcvm_u32 wide_threshold,
                                gcvm_u32 fallback_threshold, gcvm_u32 fallback_min_level,
                                gcvm_u32 deep_fallback_threshold, gcvm_u32 deep_fallback_level,
                                gcvm_u32 expand_batches, GCVM_LOCAL struct gcvm_bfs_shared* sh) {
  const gcvm_u32 slot = level % GCVM_LEVEL_RING;
  const gcvm_u32 next = (level + 1u) % GCVM_LEVEL_RING;
  const gcvm_u32 after = (level + 2u) % GCVM_LEVEL_RING;
  if (GCVM_GROUP_ID() == 0u && GCVM_LOCAL_ID() == 0u) {
    state[GCVM_STATE_COUNT + after] = 0u;
    state[GCVM_STATE_CURSOR + after] = 0u;
    state[GCVM_STATE_FINISHED + (level + 2u) % GCVM_FINISHED_RING] = 0u;
    state[GCVM_STATE_CHUNK_TICKETS + (level + 2u) % GCVM_FINISHED_RING] = 0u;
    state[GCVM_STATE_GROUPS_DONE + (level + 2u) % GCVM_FINISHED_RING] = 0u;
  }
  /* Whether the level runs, and the fallback, are decided from the previous level's
   * final count alone, so every group decides the same. Chunks offered in the last
   * level are drained whenever the level runs; with the fallback the CPU takes them. */
  const gcvm_u32 count = state[GCVM_STATE_COUNT + slot];
  const gcvm_u32 previous = state[GCVM_STATE_COUNT + (level + GCVM_LEVEL_RING - 1u) % GCVM_LEVEL_RING];
  const int running = state[GCVM_STATE_FALLBACK_LEVEL] == GCVM_NO_LEVEL;
  int active = count != 0u && running;
  /* The queue must have dropped below the threshold (§5.4): a level no longer than the
   * one before. A frontier that is narrow because it is still growing (the first
   * levels below one root of a tree) stays on the device. */
  const gcvm_u32 threshold =
      level >= deep_fallback_level && deep_fallback_threshold > fallback_threshold ? deep_fallback_threshold
                                                                                  : fallback_threshold;
  if (active && (flags & GCVM_BFS_FALLBACK) != 0u && level >= fallback_min_level && count < threshold &&
      count <= previous) {
    if (GCVM_GROUP_ID() == 0u && GCVM_LOCAL_ID() == 0u) state[GCVM_STATE_FALLBACK_LEVEL] = level;
    active = 0;
  }
  if (active && GCVM_GROUP_ID() == 0u && GCVM_LOCAL_ID() == 0u) state[GCVM_STATE_LEVELS_RUN] = level;
  /* An inactive level runs the same code on an empty queue: every barrier is reached
   * by every thread on every path. */
  const gcvm_u32 limit = active ? count : 0u;
  const int drain = active || (count == 0u && running);

  const int bitmap_out = (flags & GCVM_BFS_BITMAP_OUT) != 0u;
  gcvm_bfs_init_shared(sh, !bitmap_out);
  const struct gcvm_out out = {out_queue, state + GCVM_STATE_COUNT + next, 0, state, 0u, 0u, 0};
  const struct gcvm_chunk_queue chunks = {chunk_items, state, 0, chunk_capacity, GCVM_CHUNK_EDGES};
  gcvm_u32 traversed = 0u;
  /* Chunks first: those offered in the last level are then split over every group of
   * this launch, not left to the few groups still scanning when that level ended. */
  gcvm_drain_chunks(begin, degree, edges, marks, sh, out, chunks, gcvm_level_chunk_range(state, level), drain, flags,
                    &traversed);
  /* Batches from the level's queue while it lasts, from a shared cursor or, in a launch
   * of shares, from this group's equal share of it; then local expansion
   * (gcvm_next_expansion), a batch of sh->local_level at a time. One loop, so that the
   * batch scan is inlined once. */
  const gcvm_u32 lid = GCVM_LOCAL_ID();
  const int shares = (flags & GCVM_BFS_SHARES) != 0u && !bitmap_out;
  /* The most objects a group keeps for its next local level: one batch, or with shares
   * the batches its flags give (the host sends 1 to 4), within the local level's room. */
  const gcvm_u32 share_batches = (flags >> GCVM_BFS_SHARE_BATCHES_SHIFT) & GCVM_BFS_SHARE_BATCHES_MASK;
  const gcvm_u32 share_objects = share_batches * GCVM_GROUP_SIZE;
  const gcvm_u32 most = !shares                                     ? GCVM_GROUP_SIZE
                        : share_objects < GCVM_LOCAL_LEVEL_CAPACITY ? share_objects
                                                                    : GCVM_LOCAL_LEVEL_CAPACITY;
  const gcvm_u32 end = shares ? (gcvm_u32)((gcvm_u64)limit * (GCVM_GROUP_ID() + 1u) / GCVM_GROUP_COUNT()) : limit;
  gcvm_u32 budget = active && !bitmap_out ? expand_batches : 0u; /* local batches left (expansion needs the stage) */
  if (lid == 0u)
    sh->batch = shares             ? (gcvm_u32)((gcvm_u64)limit * GCVM_GROUP_ID() / GCVM_GROUP_COUNT())
                : limit == 0u ? 0u : GCVM_ATOMIC_ADD(state + GCVM_STATE_CURSOR + slot, (gcvm_u32)GCVM_GROUP_SIZE);
  GCVM_BARRIER();
  gcvm_u32 batch = sh->batch;
  gcvm_u32 staged = gcvm_next_expansion(sh, out, chunks, state, level, limit, batch >= end, budget, shares, most);
  while (batch < end || staged != 0u) {
    const int expanding = batch >= end;
    const gcvm_u32 i = (expanding ? sh->at : batch) + lid;
    const gcvm_u32 v = !expanding ? (i < end ? in_queue[i] : GCVM_NULL_REF)
                                  : (i < staged ? sh->local_level[i] : GCVM_NULL_REF);
    gcvm_scan_batch(begin, degree, edges, marks, sh, out, chunks, v, flags, wide_threshold, &traversed);
    budget -= expanding && budget != 0u ? 1u : 0u;
    if (lid == 0u) {
      sh->taken += expanding ? 0u : 1u;
      sh->at += expanding ? GCVM_GROUP_SIZE : 0u;
      sh->batch = expanding ? batch
                  : shares  ? batch + GCVM_GROUP_SIZE
                            : GCVM_ATOMIC_ADD(state + GCVM_STATE_CURSOR + slot, (gcvm_u32)GCVM_GROUP_SIZE);
    }
    GCVM_BARRIER();
    batch = sh->batch;
    /* Past the group's part of the queue and its local level: the next local level, if
     * any. (OpenCL calls it every batch, to no effect before then: no barrier under a
     * run-time branch.) */
    const int level_done = batch >= end && sh->at >= staged;
    if (!GCVM_UNIFORM_BARRIER_BRANCHES || level_done) {
      const gcvm_u32 next = gcvm_next_expansion(sh, out, chunks, state, level, limit, level_done, budget, shares, most);
      staged = level_done ? next : staged;
    }
  }
  gcvm_stage_flush(sh, out, 1);
  gcvm_add_traversed(sh, state, traversed);
  /* The level's last group to finish (every other has made its last offer and taken its
   * last ticket) moves the range on: what this level drained is taken, and what it
   * offered is the next level's. A level that drained a non-empty range took at least
   * one ticket of it; one that did not drain it (a fallback) took none and leaves it to
   * the CPU. (The tickets say so at the end: `drain` held through the level would cost
   * the level kernel a register it spills.) */
  if (GCVM_LOCAL_ID() == 0u &&
      GCVM_ATOMIC_ADD(state + GCVM_STATE_GROUPS_DONE + level % GCVM_FINISHED_RING, 1u) == GCVM_GROUP_COUNT() - 1u) {
    if (GCVM_VOLATILE_LOAD(state + GCVM_STATE_CHUNK_TICKETS + level % GCVM_FINISHED_RING) != 0u)
      state[GCVM_STATE_CHUNK_HEAD] = state[GCVM_STATE_CHUNK_END];
    const gcvm_u32 tail = GCVM_VOLATILE_LOAD(state + GCVM_STATE_CHUNK_TAIL);
    state[GCVM_STATE_CHUNK_END] = tail < chunk_capacity ? tail : chunk_capacity;
  }
}

#ifdef GCVM_GRID_BARRIER
/* Levels mode in one launch, where the dialect has a grid-wide barrier (CUDA's
 * cooperative launch): the seed, then level 1, 2, ... with a barrier of the whole grid
 * between levels in place of a kernel boundary, until a level finds the mark over
 * (gcvm_bfs_mark_over: every group leaves the loop at the same level, so every group
 * meets every barrier), then the marks counted into state[GCVM_STATE_MARKED] and the
 * level at which the mark was over into state[GCVM_STATE_OVER_AT]; the device clock
 * when the seed began and when the last group was done go to
 * state[GCVM_STATE_CLOCK_BEGIN] and state[GCVM_STATE_CLOCK_END]. The levels are
 * those of separate launches (gcvm_bfs_level, queues `queue0` and `queue1` taking
 * turns), and so are the marks, the counts and a fallback's queue; what goes is a
 * launch per level, its group scheduling and its return to the host's stream, the
 * launches enqueued past the last level and the host's checks (on the H100 a level
 * launch of 1,056 groups cost 6-12 µs of device time even with nothing to scan). */
GCVM_DEVICE void gcvm_bfs_levels_together(const GCVM_GLOBAL gcvm_u64* begin, const GCVM_GLOBAL gcvm_u32* degree,
                                          const GCVM_GLOBAL gcvm_u32* edges, GCVM_GLOBAL gcvm_u32* marks,
                                          gcvm_u32 mark_words, const GCVM_GLOBAL gcvm_u32* roots,
                                          gcvm_u32 root_count, gcvm_u32 marked_count, GCVM_GLOBAL gcvm_u32* queue0,
                                          GCVM_GLOBAL gcvm_u32* queue1, GCVM_GLOBAL gcvm_u32* state,
                                          GCVM_GLOBAL gcvm_u64* chunk_items, gcvm_u32 chunk_capacity, gcvm_u32 flags,
                                          gcvm_u32 wide_threshold, gcvm_u32 fallback_threshold,
                                          gcvm_u32 fallback_min_level, gcvm_u32 deep_fallback_threshold,
                                          gcvm_u32 deep_fallback_level, gcvm_u32 expand_batches,
                                          GCVM_LOCAL struct gcvm_bfs_shared* sh, GCVM_LOCAL gcvm_u32* group_total) {
  if (GCVM_GROUP_ID() == 0u && GCVM_LOCAL_ID() == 0u)
    *(GCVM_GLOBAL gcvm_u64*)(state + GCVM_STATE_CLOCK_BEGIN) = GCVM_CLOCK_NS();
  gcvm_bfs_seed(roots, root_count, marked_count, marks, queue1, state, sh);
  GCVM_GRID_BARRIER();
  gcvm_u32 level = 1u;
  while (!gcvm_bfs_mark_over(state, level)) {
    GCVM_GLOBAL gcvm_u32* in_queue = level % 2u == 0u ? queue0 : queue1;
    GCVM_GLOBAL gcvm_u32* out_queue = level % 2u == 0u ? queue1 : queue0;
    gcvm_bfs_level(begin, degree, edges, marks, in_queue, out_queue, state, chunk_items, chunk_capacity, level, flags,
                   wide_threshold, fallback_threshold, fallback_min_level, deep_fallback_threshold,
                   deep_fallback_level, expand_batches, sh);
    GCVM_GRID_BARRIER();
    ++level;
  }
  if (GCVM_GROUP_ID() == 0u && GCVM_LOCAL_ID() == 0u) state[GCVM_STATE_OVER_AT] = level;
  gcvm_count_marks(marks, mark_words, state + GCVM_STATE_MARKED, group_total);
  if (GCVM_LOCAL_ID() == 0u) GCVM_ATOMIC_MAX64((GCVM_GLOBAL gcvm_u64*)(state + GCVM_STATE_CLOCK_END), GCVM_CLOCK_NS());
}
#endif

/* The bitmap frontier: queue `level` (count[level]) built from the mark bitmap after a
 * launch whose winners stayed in it (GCVM_BFS_BITMAP_OUT): the objects whose bit is
 * set in `marks` and clear in `seen`, the bitmap as it was before that launch. Group g
 * takes the GCVM_GROUP_SIZE consecutive mark words from g * GCVM_GROUP_SIZE (the launch
 * has a group for every such tile: no loop around the scan's barriers), a word a
 * thread; one scan of the words' new bits gives each word its place, one atomic
 * reserves the tile's entries, and the queue runs in ascending object order within
 * each tile (8,192 ids), so that the next level reads the rows of consecutive objects
 * together. The ids are written a word at a time by 32 threads, thread t writing the
 * object of bit t % 32 at its rank among the word's new bits: consecutive threads
 * write consecutive entries (a word's ids written by its one thread would be 32
 * scattered stores a step). The words that changed are copied to `seen`, so that it
 * equals `marks` again. */
GCVM_DEVICE void gcvm_bfs_frontier(const GCVM_GLOBAL gcvm_u32* marks, GCVM_GLOBAL gcvm_u32* seen, gcvm_u32 words,
                                   GCVM_GLOBAL gcvm_u32* queue, GCVM_GLOBAL gcvm_u32* state, gcvm_u32 level,
                                   GCVM_LOCAL struct gcvm_bfs_shared* sh) {
  const gcvm_u32 first_word = GCVM_GROUP_ID() * GCVM_GROUP_SIZE;
  const gcvm_u32 w = first_word + GCVM_LOCAL_ID();
  gcvm_u32 fresh = 0u;
  if (w < words) {
    const gcvm_u32 word = marks[w];
    fresh = word & ~seen[w];
    if (fresh != 0u) seen[w] = word;
  }
  sh->wide_vertex[GCVM_LOCAL_ID()] = fresh; /* read after the scan's barriers */
  gcvm_exclusive_scan(sh, GCVM_POPCOUNT(fresh)); /* sh->scan: each word's place in the tile */
  if (GCVM_LOCAL_ID() == 0u && sh->rounds != 0u)
    sh->out_base = GCVM_ATOMIC_ADD(state + GCVM_STATE_COUNT + level % GCVM_LEVEL_RING, sh->rounds);
  GCVM_BARRIER();
  if (sh->rounds == 0u) return;
  const gcvm_u32 bit = GCVM_LOCAL_ID() % 32u;
  const gcvm_u32 below = (1u << bit) - 1u;
  for (gcvm_u32 j = GCVM_LOCAL_ID() / 32u; j < GCVM_GROUP_SIZE; j += GCVM_GROUP_SIZE / 32u) {
    const gcvm_u32 bits = sh->wide_vertex[j];
    if ((bits >> bit) & 1u) queue[sh->out_base + sh->scan[j] + GCVM_POPCOUNT(bits & below)] = (first_word + j) * 32u + bit;
  }
}

/* Lane mode, Maas §5.5's static root split: group g of G marks from roots
 * [R*g/G, R*(g+1)/G) with its own level loop (group barriers only: one kernel for the
 * whole mark) and its own append-log queue; groups share nothing but the mark
 * bitmap, so there is no load balancing, as in the paper. In contrast to the paper,
 * objects are claimed atomically, so two lanes never scan the same object. */
GCVM_DEVICE void gcvm_bfs_lane(const GCVM_GLOBAL gcvm_u64* begin, const GCVM_GLOBAL gcvm_u32* degree,
                               const GCVM_GLOBAL gcvm_u32* edges, GCVM_GLOBAL gcvm_u32* marks,
                               const GCVM_GLOBAL gcvm_u32* roots, gcvm_u32 root_count, GCVM_GLOBAL gcvm_u32* pool,
                               GCVM_GLOBAL gcvm_u32* tables, gcvm_u32 pool_chunks, gcvm_u32 table_chunks,
                               GCVM_GLOBAL gcvm_u32* state, gcvm_u32 flags, gcvm_u32 wide_threshold,
                               GCVM_LOCAL struct gcvm_bfs_shared* sh) {
  const gcvm_u64 lane = GCVM_GROUP_ID();
  const gcvm_u64 lanes = GCVM_GROUP_COUNT();
  const struct gcvm_out out = {pool, 0, tables + lane * table_chunks, state, pool_chunks, table_chunks, 0};
  const struct gcvm_chunk_queue no_chunks = {0, state, 0, 0u, GCVM_CHUNK_EDGES};
  gcvm_bfs_init_shared(sh, 1);
  gcvm_claim_roots(roots, root_count * lane / lanes, root_count * (lane + 1u) / lanes, GCVM_GROUP_SIZE, marks, sh,
                   out);
  gcvm_u32 traversed = 0u;
  gcvm_u32 levels = 0u;
  gcvm_u32 head = 0u;
  gcvm_u32 level_end = sh->lane_tail;
  while (head < level_end) {
    for (gcvm_u32 batch = head; batch < level_end; batch += GCVM_GROUP_SIZE) {
      const gcvm_u32 i = batch + GCVM_LOCAL_ID();
      GCVM_GLOBAL gcvm_u32* slot = i < level_end ? gcvm_out_slot(out, i) : 0;
      gcvm_scan_batch(begin, degree, edges, marks, sh, out, no_chunks, slot != 0 ? *slot : GCVM_NULL_REF, flags,
                      wide_threshold, &traversed);
    }
    gcvm_stage_flush(sh, out, 1);
    head = level_end;
    level_end = sh->lane_tail;
    ++levels;
    GCVM_BARRIER();
  }
  gcvm_add_traversed(sh, state, traversed);
  if (GCVM_LOCAL_ID() == 0u) GCVM_ATOMIC_MAX(state + GCVM_STATE_LEVELS_RUN, levels);
}

#endif
