/* The layout contract of the partitioned mark (kernels/common/partition_mark.h)
 * between the host and the device, in plain C like mark_layout.h.
 *
 * Device memory of one partition: the mirror of its rows (mark_layout.h, with local
 * vertex numbers), its mark bitmap (the words of its blocks), two frontier queues of
 * one entry per vertex of the partition, the sent filter (one bit per object id of
 * the heap), the outbox (one segment per peer, entries are global ids), the inbox
 * (what the peers sent, packed), the partition table and the state words below.
 */
#ifndef GCVM_KERNELS_PARTITION_LAYOUT_H
#define GCVM_KERNELS_PARTITION_LAYOUT_H

/* Partitions of one mark at most (the outbox counts live in the state words). */
#define GCVM_MAX_PARTITIONS 64

/* Indices into the u32 partition state. */
#define GCVM_PART_COUNT 0                             /* count[2]: entries of the two frontier queues */
#define GCVM_PART_EDGES_LO (GCVM_PART_COUNT + 2)      /* u64 references read, 2 words */
#define GCVM_PART_REMOTE_LO (GCVM_PART_EDGES_LO + 2)  /* u64 of them into other partitions, 2 words */
#define GCVM_PART_SCANNED (GCVM_PART_REMOTE_LO + 2)   /* objects scanned */
#define GCVM_PART_OVERFLOW (GCVM_PART_SCANNED + 1)    /* a queue or outbox ran out (never expected) */
#define GCVM_PART_OUT_COUNT (GCVM_PART_OVERFLOW + 1)  /* out_count[GCVM_MAX_PARTITIONS] */
#define GCVM_PART_STATE_WORDS (GCVM_PART_OUT_COUNT + GCVM_MAX_PARTITIONS)

#endif
