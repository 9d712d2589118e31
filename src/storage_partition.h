/*
 * storage_partition.h — the partition lock and commit_seq of a 0.7.0 catalog
 * (storage_partition.c); storage.c dispatches to it.  Internal to the storage layer.
 */
#ifndef SYNCULAR_STORAGE_PARTITION_H
#define SYNCULAR_STORAGE_PARTITION_H

extern void sync_partition_lock_acquire(const char *partition);
extern void sync_partition_lock(const char *partition);
extern int64 sync_partition_reserve(const char *partition);
extern void sync_partition_read_seqs(const char *partition, int64 *max_seq, int64 *horizon_seq);

#endif							/* SYNCULAR_STORAGE_PARTITION_H */
