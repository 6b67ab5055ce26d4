/* The layout contract between host code and the device mark kernels, in plain C so
 * that C++ (host), CUDA C++ and OpenCL C all read the same numbers.
 *
 * Device memory of one marker instance (the "mirror", DESIGN.md invariant 5):
 *   begin[V]   u64   first edge of vertex v        (same as RefGraph::begin_data)
 *   degree[V]  u32   reference count of vertex v    (same as RefGraph::degree_data)
 *   edges[E']  u32   edge targets, GCVM_NULL_REF for null; E' = E rounded up to
 *                    GCVM_EDGE_PAD so that aligned 16-byte vector loads never read
 *                    past the end
 *   marks[W]   u32   mark bitmap as 32-bit words: bit (id & 31) of word (id >> 5).
 *                    On a little-endian device this is byte-for-byte the host's
 *                    one-u64-per-block bitmap (invariant 2), so it is copied as is.
 *   queue[2][V] u32  BFS frontier queues (each reachable object enters once)
 *   seen[W]    u32   levels mode's bitmap frontier: the mark bitmap as it was before
 *                    the last launch whose winners stayed in the bitmap
 *   state            u32 words, indices below, then the roots (u32 ids) from word
 *                    GCVM_STATE_ROOTS of the same buffer: the host uploads both with
 *                    one copy when a mark begins
 *
 * Level bookkeeping lives in a ring of GCVM_LEVEL_RING slots so that the host can
 * enqueue many levels without reading anything back: the kernel of level L reads
 * count[L], hands out batches through cursor[L], appends to count[L+1], and clears
 * slot L+2, which no kernel has touched since level L+2-RING.
 */
#ifndef GCVM_KERNELS_MARK_LAYOUT_H
#define GCVM_KERNELS_MARK_LAYOUT_H

#define GCVM_NULL_REF 0xFFFFFFFFu

/* Work-group size of every mark kernel (threads per group / CUDA block). */
#define GCVM_GROUP_SIZE 256
/* References a thread of a level kernel claims together (bfs_mark.h,
 * gcvm_visit_together): one aligned vector, or half of a step of a wide walk. */
#define GCVM_VISIT_REFS 4
/* References a thread loads in one step of the walk over a batch's wide objects
 * (bfs_mark.h, gcvm_wide_objects), all before it claims any. */
#define GCVM_STEP_REFS (2 * GCVM_VISIT_REFS)
/* The wide walk's scan packs a lane's rank among the wide lanes above its references
 * (at most GCVM_GROUP_SIZE * GCVM_CHUNK_SPLIT = 2^21 in a batch). */
#define GCVM_WIDE_RANK_ONE (1u << 22)
/* Entries of a group's output staging buffer in local memory; a flush happens when
 * fewer than GCVM_STAGE_SLACK entries are free, and one step adds at most that many. */
#define GCVM_STAGE_SLACK (GCVM_STEP_REFS * GCVM_GROUP_SIZE)
#define GCVM_STAGE_CAPACITY (GCVM_STAGE_SLACK + GCVM_VISIT_REFS * GCVM_GROUP_SIZE)
/* Objects a group holds for its next level of local expansion, at most: in a launch of
 * shares (GCVM_BFS_SHARES) up to four batches; otherwise one (bfs_mark.h). */
#define GCVM_LOCAL_LEVEL_CAPACITY (4 * GCVM_GROUP_SIZE)
/* References one thread claims in one prefix-sum round (also its register buffer). */
#define GCVM_PREFIX_ROUND 16
/* Edge arrays are padded to this many entries (one 16-byte vector). */
#define GCVM_EDGE_PAD 4

#define GCVM_LEVEL_RING 256
/* Levels enqueued between two host checks, at most (less than RING - 2). */
#define GCVM_MAX_LEVEL_BATCH 64

/* Indices into the u32 state array. */
#define GCVM_STATE_COUNT 0                                  /* count[RING] */
#define GCVM_STATE_CURSOR (GCVM_STATE_COUNT + GCVM_LEVEL_RING) /* cursor[RING] */
#define GCVM_STATE_FALLBACK_LEVEL (GCVM_STATE_CURSOR + GCVM_LEVEL_RING)
#define GCVM_STATE_LEVELS_RUN (GCVM_STATE_FALLBACK_LEVEL + 1)
#define GCVM_STATE_EDGES_LO (GCVM_STATE_LEVELS_RUN + 1) /* u64 edges traversed, 2 words */
#define GCVM_STATE_POOL_NEXT (GCVM_STATE_EDGES_LO + 2)  /* lanes: next free chunk of the pool */
#define GCVM_STATE_OVERFLOW (GCVM_STATE_POOL_NEXT + 1)  /* a pool or queue ran out (never expected) */
#define GCVM_STATE_CHUNK_HEAD (GCVM_STATE_OVERFLOW + 1) /* chunk queue: next item to take */
#define GCVM_STATE_CHUNK_TAIL (GCVM_STATE_CHUNK_HEAD + 1) /* chunk queue: items reserved */
#define GCVM_STATE_CHUNKS_SCANNED (GCVM_STATE_CHUNK_TAIL + 1)
/* Levels mode's local expansion: finished[4], the queue batches of level L that groups
 * have scanned and left behind them (their staging flushed), in word L % 4. */
#define GCVM_STATE_FINISHED (GCVM_STATE_CHUNKS_SCANNED + 1)
#define GCVM_FINISHED_RING 4
/* A group about to expand looks this many times, GCVM_EXPAND_POLL_NS apart, for the
 * level's other batches to finish (bfs_mark.h, gcvm_work_waiting). */
#define GCVM_EXPAND_POLLS 16u
#define GCVM_EXPAND_POLL_NS 256u
/* Async mode's shared words: the queue's ends and the pending count, which take
 * atomics, each on a 128-byte line of its own (32 words), so that they and the idle
 * groups' reads of the pending count do not queue behind one another at one L2 slice;
 * STOP and the idle count, read at every poll and written rarely, share a line. */
#define GCVM_STATE_LINE 32
/* async: next ticket range of the queue */
#define GCVM_STATE_ASYNC_HEAD \
  (((GCVM_STATE_FINISHED + GCVM_FINISHED_RING - 1 + GCVM_STATE_LINE) / GCVM_STATE_LINE) * GCVM_STATE_LINE)
#define GCVM_STATE_ASYNC_TAIL (GCVM_STATE_ASYNC_HEAD + GCVM_STATE_LINE) /* async: queue slots reserved */
#define GCVM_STATE_PENDING (GCVM_STATE_ASYNC_TAIL + GCVM_STATE_LINE)    /* async: work not yet done (async_mark.h) */
#define GCVM_STATE_STOP (GCVM_STATE_PENDING + GCVM_STATE_LINE)          /* async: narrow work, hand it to the CPU */
#define GCVM_STATE_IDLE (GCVM_STATE_STOP + 1)                           /* async: groups without work */
#define GCVM_STATE_ROUNDS (GCVM_STATE_STOP + GCVM_STATE_LINE)           /* async: most rounds of one group */
#define GCVM_STATE_KEPT (GCVM_STATE_ROUNDS + 1) /* async: objects a group discovered and scanned itself */
/* Levels mode's chunk range: a level drains chunk items [CHUNK_HEAD, CHUNK_END), handed
 * out by tickets counted in CHUNK_TICKETS[L % 4]; the last of its groups to finish
 * (GROUPS_DONE[L % 4] counts them) sets CHUNK_HEAD to CHUNK_END if the level drained,
 * and CHUNK_END to CHUNK_TAIL (what the level offered goes to the next). In async mode
 * CHUNK_HEAD counts its own tickets. */
#define GCVM_STATE_CHUNK_END (GCVM_STATE_KEPT + 1)
#define GCVM_STATE_CHUNK_TICKETS (GCVM_STATE_CHUNK_END + 1)
#define GCVM_STATE_GROUPS_DONE (GCVM_STATE_CHUNK_TICKETS + GCVM_FINISHED_RING)
/* The mark bitmap's set bits, counted on the device when the marks are read with the
 * state (DeviceBackend::read_state_and_marks, gcvm_count_marks). */
#define GCVM_STATE_MARKED (GCVM_STATE_GROUPS_DONE + GCVM_FINISHED_RING)
/* Levels mode in one launch (gcvm_bfs_levels_together): the level at which the launch
 * found the mark over (gcvm_bfs_mark_over). */
#define GCVM_STATE_OVER_AT (GCVM_STATE_MARKED + 1)
/* Levels mode in one launch: the device's clock in nanoseconds (u64 words, 8-byte
 * aligned) when its seed began and when its last group finished, so that the host times
 * the launch from the state it reads anyway (CUDA's %globaltimer). */
#define GCVM_STATE_CLOCK_BEGIN (((GCVM_STATE_OVER_AT + 2) / 2) * 2)
#define GCVM_STATE_CLOCK_END (GCVM_STATE_CLOCK_BEGIN + 2)
#define GCVM_STATE_WORDS (GCVM_STATE_CLOCK_END + 2)
/* The first word of the roots, after the state: the next line boundary. */
#define GCVM_STATE_ROOTS (((GCVM_STATE_WORDS + GCVM_STATE_LINE - 1) / GCVM_STATE_LINE) * GCVM_STATE_LINE)
#define GCVM_NO_LEVEL 0xFFFFFFFFu

/* Huge objects. An object with more than GCVM_CHUNK_SPLIT references is cut into
 * chunks of GCVM_CHUNK_EDGES references that every work group takes from one chunk
 * queue of u64 items (vertex << 32 | chunk index; GCVM_CHUNK_NONE until written), so
 * no object is scanned by one group or one thread. Each huge object is claimed once
 * per collection and has more than two chunks, so a queue of 3 * E / (2 * CHUNK) + 1
 * items never fills (device_backend.hpp, chunk_queue_capacity). Async mode cuts
 * smaller chunks and hands them out by tickets (below). */
#define GCVM_CHUNK_EDGES 4096u
#define GCVM_CHUNK_SPLIT (2u * GCVM_CHUNK_EDGES)
#define GCVM_CHUNK_NONE 0xFFFFFFFFFFFFFFFFull
#define GCVM_CHUNK_TAKEN 0xFFFFFFFFFFFFFFFEull

/* Async mode (kernels/common/async_mark.h): the queue slot a consumer has taken holds
 * GCVM_SLOT_TAKEN (no object id reaches it), a slot not yet written GCVM_NULL_REF. */
#define GCVM_SLOT_TAKEN 0xFFFFFFFEu
/* Async mode's work groups are one warp each, so that a round (one hop along a chain
 * of objects) costs warp barriers only; each keeps a ring of GCVM_ASYNC_RING objects
 * (a power of two) in work-group memory: 1,024, which halves the groups an SM holds
 * against 512 (12 instead of 23 on the H200) but publishes a wide heap's work to the
 * global queue less often (order-service's kernel 25% faster, deep heaps no slower).
 * A group looks at the shared words every GCVM_ASYNC_POLL rounds;
 * a group without work backs off between rounds for up to GCVM_ASYNC_BACKOFF_NS
 * nanoseconds where the device can. */
#define GCVM_ASYNC_GROUP_SIZE 32
#define GCVM_ASYNC_RING (32 * GCVM_ASYNC_GROUP_SIZE)
/* References one thread of an async group has in flight in one step of a round: their
 * loads and claims are issued together, so a round over 32 objects of 4 references
 * costs one step's latency, not four. */
#define GCVM_ASYNC_STEP_REFS 4
/* A ring entry's degree when its row (first edge, degree) was not loaded with its
 * claim (objects taken from the global queue): the scan loads it. An object with
 * exactly this many references (an array of Heap::kMaxArrayLength) has its row
 * loaded again, which gives the same row. */
#define GCVM_ASYNC_ROW_UNKNOWN 0xFFFFFFFFu
#define GCVM_ASYNC_POLL 4u
#define GCVM_ASYNC_BACKOFF_NS 4096u
/* Async mode's huge objects: more than GCVM_ASYNC_CHUNK_SPLIT references are cut into
 * chunks of GCVM_ASYNC_CHUNK_EDGES, smaller than the level mode's because a chunk is
 * one warp's work (a step walks 128 references, so a chunk is four steps). They go to
 * the same chunk array (items in units of GCVM_ASYNC_CHUNK_EDGES), which async mode
 * hands out by tickets, one item a group, and marks GCVM_CHUNK_TAKEN once taken
 * (async_mark.h). */
#define GCVM_ASYNC_CHUNK_EDGES 512u
#define GCVM_ASYNC_CHUNK_SPLIT (2u * GCVM_ASYNC_CHUNK_EDGES)

/* Lane mode (sms=split): every group runs its own BFS from a slice of the roots and
 * keeps its queue as an append log in chunks of this many entries, taken from one
 * pool of ceil(V / CHUNK) + lanes + 1 chunks (each object enters one log once, and
 * each lane leaves at most one chunk partly empty). */
#define GCVM_LANE_CHUNK 4096u

/* Option bits of the BFS kernels (gpu-bfs --gc-opt). */
#define GCVM_BFS_PREFIX 1u  /* offsets by prefix sum instead of histogram */
#define GCVM_BFS_VECTOR 2u  /* 16-byte edge loads */
#define GCVM_BFS_WIDE 4u    /* objects above wide_threshold processed by the whole group */
#define GCVM_BFS_FALLBACK 8u /* stop when the queue is short (host finishes on the CPU) */
#define GCVM_BFS_CHECKED_CLAIM 16u /* async: read the mark word before the atomic that claims */
#define GCVM_BFS_BITMAP_OUT 32u /* levels: a launch's winners stay in the bitmap; gcvm_bfs_frontier queues them */
#define GCVM_BFS_SHARES 64u /* levels: the queue in equal shares, each expanded by its group while it fits (bfs_mark.h) */
/* With GCVM_BFS_SHARES: the batches (1 to 4) of a next level a group keeps, in these bits. */
#define GCVM_BFS_SHARE_BATCHES_SHIFT 8u
#define GCVM_BFS_SHARE_BATCHES_MASK 7u

/* ---- gpu-dfs (kernels/common/dfs_mark.h) ----
 * Extra device memory of a DFS collection:
 *   storage[V] u32  the space-efficient linked stack (FastCollect Alg. 1-2): entry v is
 *                   GCVM_DFS_NOT_IN_STACK, GCVM_DFS_BOTTOM, or the next entry below v
 *   tops[T]    u32  each thread's top of its linked stack between launches (T threads)
 *   pool[P]    u32  donated chains (heads of linked stacks), GCVM_DFS_EMPTY when free
 *   chunks[GCVM_DFS_CHUNK_SLOTS] u64  huge objects being scanned in chunks by any
 *                   group: (vertex << 32) | next chunk; vertex GCVM_DFS_NO_VERTEX = free
 *   dfs_state       u32 words, indices below
 */
#define GCVM_DFS_NOT_IN_STACK 0xFFFFFFFFu
#define GCVM_DFS_EMPTY 0xFFFFFFFFu /* an empty stack's top, a free pool slot */
#define GCVM_DFS_BOTTOM 0xFFFFFFFEu
/* Entries of each thread's part of the hybrid stack in work-group memory, at most. */
#define GCVM_DFS_LOCAL_MAX 32
/* Objects a thread pops per round between two group barriers (default of steps=<n>). */
#define GCVM_DFS_STEPS 32
/* Rounds a group runs in one launch before it saves its stacks and returns (default
 * of the rounds=<n> option). */
#define GCVM_DFS_ROUNDS_PER_LAUNCH 2048
/* Slots of the huge-object chunk table, and the default chunk size in references. */
#define GCVM_DFS_CHUNK_SLOTS 256
#define GCVM_DFS_CHUNK_EDGES 4096
#define GCVM_DFS_NO_VERTEX 0xFFFFFFFFu
/* Rounds an idle group keeps looking for donated work before it returns. */
#define GCVM_DFS_IDLE_ROUNDS 64
/* Rounds an idle group waits at least, even when no group is busy and the pool is
 * empty (groups that start later may still donate). */
#define GCVM_DFS_IDLE_MIN_ROUNDS 4
/* Pool slots an idle thread probes per round. */
#define GCVM_DFS_PROBES 4
/* Launches between two host checks, at most, and the ring of per-launch counters. */
#define GCVM_DFS_MAX_LAUNCH_BATCH 64
#define GCVM_DFS_LAUNCH_RING 128
/* Pending objects the fallback gather hands to the CPU, at most (more: no fallback). */
#define GCVM_DFS_GATHER_CAPACITY 65536u

#define GCVM_DFS_STATE_PENDING 0 /* pending[RING]: threads left with work by launch L */
#define GCVM_DFS_STATE_POOL_COUNT (GCVM_DFS_STATE_PENDING + GCVM_DFS_LAUNCH_RING)
#define GCVM_DFS_STATE_HUNGRY (GCVM_DFS_STATE_POOL_COUNT + 1) /* idle threads of running groups */
#define GCVM_DFS_STATE_ACTIVE (GCVM_DFS_STATE_HUNGRY + 1)     /* running groups with work */
#define GCVM_DFS_STATE_DONATIONS (GCVM_DFS_STATE_ACTIVE + 1)
#define GCVM_DFS_STATE_STEALS (GCVM_DFS_STATE_DONATIONS + 1)
#define GCVM_DFS_STATE_WIDE (GCVM_DFS_STATE_STEALS + 1)       /* objects scanned by a whole group */
#define GCVM_DFS_STATE_ROUNDS (GCVM_DFS_STATE_WIDE + 1)       /* most rounds of one group in one launch */
#define GCVM_DFS_STATE_LAUNCHES (GCVM_DFS_STATE_ROUNDS + 1)   /* launches that found work */
#define GCVM_DFS_STATE_CHUNKS_OPEN (GCVM_DFS_STATE_LAUNCHES + 1) /* chunk-table entries with chunks left */
#define GCVM_DFS_STATE_CHUNKS (GCVM_DFS_STATE_CHUNKS_OPEN + 1)  /* chunks scanned */
#define GCVM_DFS_STATE_EDGES_LO (GCVM_DFS_STATE_CHUNKS + 1) /* u64, 2 words, 8-byte aligned */
#define GCVM_DFS_STATE_WORDS (GCVM_DFS_STATE_EDGES_LO + 2)

/* Option bits of the DFS kernels (gpu-dfs --gc-opt). */
#define GCVM_DFS_CHECKED 1u /* plain read of the mark word before the atomic [+A] */
#define GCVM_DFS_VECTOR 2u  /* 16-byte edge loads [+V] */
#define GCVM_DFS_BALANCE 4u /* donation pool, stealing, wide objects split over the group [+D] */
#define GCVM_DFS_CHUNKS 8u  /* (with BALANCE) huge objects split into chunks for all groups */

#endif
