/*
 * storage_partition.h — the partition lock and commit_seq of a 0.7.0 catalog
 * (storage_partition.c); storage.c dispatches to it.  Internal to the storage layer.
 */
#ifndef SYNCULAR_STORAGE_PARTITION_H
#define SYNCULAR_STORAGE_PARTITION_H

/*
 * A transaction-duration ExclusiveLock on the advisory tag (database, 64-bit hash of the
 * partition name, field4): the partition lock (0x534C) and, before 0.7.0, its queue (0x5359).
 */
extern void sync_partition_advisory_lock(const char *partition, uint16 field4);
extern void sync_partition_lock(const char *partition);
extern int64 sync_partition_reserve(const char *partition);
extern void sync_partition_read_seqs(const char *partition, int64 *max_seq, int64 *horizon_seq);

/*
 * The partition $1's newest commit_seq as an SQL expression (the statements of storage.c and
 * storage_acks.c): the newest commit row's, or the horizon, as newest_seq reads it.  NULL when the
 * partition has neither.
 */
#define SYNC_NEWEST_SEQ_SQL \
	"GREATEST((SELECT m.commit_seq FROM syncular.sync_commits m WHERE m.partition = $1 " \
	"          ORDER BY m.commit_seq DESC LIMIT 1), " \
	"         (SELECT p.horizon_seq FROM syncular.sync_partitions p WHERE p.partition = $1)) "

#endif							/* SYNCULAR_STORAGE_PARTITION_H */
