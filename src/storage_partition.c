/*
 * storage_partition.c — the partition lock and commit_seq since 0.7.0 (docs/storage.md "The
 * partition lock"; SPEC §3.6: commit_seq is gap-free and commits become visible in its order).
 *
 * The lock is a transaction-duration heavyweight lock keyed by the database and a 64-bit hash of
 * the partition name (an advisory lock tag with field4 SYNC_PARTITION_LOCK; pg_advisory_lock uses
 * 1 and 2, so no SQL key collides with it; a hash collision only serializes two partitions).
 * Held to the end of the writer's transaction, after its commit became visible, so the next
 * holder reads the commit_seq it took.  Waiters line up in the lock manager's queue, and each
 * release wakes one.  The next commit_seq is read under it: the newest commit row's + 1
 * (sync_commits_pkey, read backward from the backend's last answer: see SeqHint), or the
 * horizon's + 1 when prune removed every commit.
 * Nothing is written for it: the partition row keeps the horizon only, and is inserted once, by
 * the partition's first writer (the views list partitions by it).  Before 0.7.0 the lock was an
 * update of that row, which wrote a WAL record per commit (storage.c, the catalog of an
 * extension not updated yet).
 *
 * Writers also hold RowExclusiveLock on sync_partitions (a table lock, no row): the mark
 * ensure_schema's and unregister_schema's EXCLUSIVE lock of the table waits for, as it waited
 * for the row updates.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "storage.h"
#include "storage_partition.h"
#include "storage_scan.h"

#define SYNC_PARTITION_LOCK 0x534C

/*
 * A backend's last answer per partition, the lower bound of its next read: a btree page read
 * takes every entry of the page that passes the scan keys (each a text comparison of the
 * partition under its collation), so a scan bounded only by the partition read a whole leaf page
 * of it per commit.  Bounded below by the last answer it reads what came since.  A bound above
 * the log (a commit rolled back, the log truncated) finds nothing, and the read is done again
 * without it.  Direct-mapped by the hash of the partition name.
 */
#define HINT_SLOTS 64

typedef struct SeqHint
{
	uint64		hash;
	int64		seq;
} SeqHint;

static SeqHint hints[HINT_SLOTS];

/* The newest commit_seq of the partition visible in snap at or above `from` (0: none). */
static int64
newest_commit_from(Datum part, int64 from, Snapshot snap)
{
	SyncKeyed	c;
	ScanKeyData keys[2];
	IndexScanDesc scan;
	int64		newest = 0;
	bool		isnull;

	sync_scan_keyed_open(&c, "sync_commits");
	scan = index_beginscan(c.heap, c.pk, snap, 2, 0);
	sync_scan_eq_key(&keys[0], c.pk, 1, part);
	ScanKeyInit(&keys[1], 2, BTGreaterEqualStrategyNumber, F_INT8GE, Int64GetDatum(from));
	index_rescan(scan, keys, 2, NULL, 0);
	if (index_getnext_slot(scan, BackwardScanDirection, c.slot))
		newest = sync_scan_int8(c.slot, sync_scan_attnum(c.heap, "commit_seq"), &isnull);
	index_endscan(scan);
	sync_scan_keyed_close(&c);
	return newest;
}

/* The horizon of `partition`'s sync_partitions row visible in snap, -1 when it has none. */
static int64
horizon_of(Datum part, Snapshot snap)
{
	SyncKeyed	p;
	ScanKeyData key;
	int64		horizon = -1;
	bool		isnull;

	sync_scan_keyed_open(&p, "sync_partitions");
	sync_scan_eq_key(&key, p.pk, 1, part);
	if (sync_scan_fetch(p.heap, p.pk, &key, 1, snap, p.slot))
		horizon = sync_scan_int8(p.slot, sync_scan_attnum(p.heap, "horizon_seq"), &isnull);
	sync_scan_keyed_close(&p);
	return horizon;
}

/*
 * The newest commit_seq of `partition` visible in snap: its newest commit row's, or its horizon
 * when that is higher (prune removed every commit; an upgrade from 0.6.0 made a counter that ran
 * ahead of the log the horizon); 0 for a partition that never committed.  The backend's last
 * answer is the lower bound of the read (SeqHint).  A commit row found at or above it is above
 * the horizon: the answer was not below the horizon then, and prune, the only writer of the
 * horizon, removes the commits at or below the horizon it sets.  Otherwise (no answer yet, or a
 * bound above the log) the log is read again from 1 and the partition row is read too.
 * *horizon: its horizon when it was read (-1: no row), -2 when not.
 */
static int64
newest_seq(const char *partition, Snapshot snap, int64 *horizon)
{
	Datum		part = CStringGetTextDatum(partition);
	uint64		h = hash_bytes_extended((const unsigned char *) partition, strlen(partition), 0);
	SeqHint    *hint = &hints[h % HINT_SLOTS];
	int64		newest = 0;

	*horizon = -2;
	if (hint->hash == h && hint->seq > 0)
		newest = newest_commit_from(part, hint->seq, snap);
	if (newest == 0)
	{
		newest = newest_commit_from(part, 1, snap);
		*horizon = horizon_of(part, snap);
		newest = Max(newest, *horizon);
	}
	hint->hash = h;
	hint->seq = newest;
	return newest;
}

/* The partition row, for a partition's first writer (ON CONFLICT: a concurrent first writer). */
static void
insert_partition_row(const char *partition)
{
	static SPIPlanPtr plan = NULL;
	Datum		v[1];

	if (plan == NULL)
		plan = sync_storage_keep_plan("INSERT INTO syncular.sync_partitions (partition) VALUES ($1) "
									  "ON CONFLICT (partition) DO NOTHING",
									  1, (Oid[]) {TEXTOID}, 0);
	v[0] = CStringGetTextDatum(partition);
	if (SPI_execute_plan(plan, v, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "syncular: inserting the partition row failed");
}

/*
 * Take the partition lock (with the table lock above) and answer the partition's newest
 * commit_seq, read in a snapshot taken after it: every earlier holder's commit is visible, and
 * so is what this transaction wrote.  Under REPEATABLE READ a commit of another transaction that
 * the transaction's snapshot does not see is a serialization failure, as the row update was.
 * The partition row is inserted when missing.  The caller is connected to SPI.
 */
static int64
lock_and_read(const char *partition)
{
	Relation	parts = sync_scan_open_catalog("sync_partitions", RowExclusiveLock);
	int64		horizon;
	int64		seen;
	int64		newest;

	sync_partition_advisory_lock(partition, SYNC_PARTITION_LOCK);
	PushActiveSnapshot(GetLatestSnapshot());
	CommandCounterIncrement();
	UpdateActiveSnapshotCommandId();
	newest = newest_seq(partition, GetActiveSnapshot(), &horizon);
	PopActiveSnapshot();
	if (IsolationUsesXactSnapshot() &&
		newest != newest_seq(partition, sync_scan_snapshot_begin(false), &seen))
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("could not serialize access due to a concurrent commit to partition \"%s\"",
						partition)));
	if (IsolationUsesXactSnapshot())
		sync_scan_snapshot_end(false);
	if (horizon == -1)
		insert_partition_row(partition);
	table_close(parts, NoLock);
	return newest;
}

void
sync_partition_advisory_lock(const char *partition, uint16 field4)
{
	LOCKTAG		tag;
	uint64		h = hash_bytes_extended((const unsigned char *) partition, strlen(partition), 0);

	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, (uint32) (h >> 32), (uint32) h, field4);
	(void) LockAcquire(&tag, ExclusiveLock, false, false);
}

/* The partition lock, for a writer that takes no commit_seq (remote commands, SQL callers). */
void
sync_partition_lock(const char *partition)
{
	(void) lock_and_read(partition);
}

/* The partition lock and the next commit_seq: nothing to give back when it is not used. */
int64
sync_partition_reserve(const char *partition)
{
	int64		newest = lock_and_read(partition);

	if (newest == PG_INT64_MAX)
		elog(ERROR, "syncular: partition \"%s\" has used every commit_seq", partition);
	return newest + 1;
}

/* The partition's newest commit_seq and its horizon (0 without a row), in the active snapshot. */
void
sync_partition_read_seqs(const char *partition, int64 *max_seq, int64 *horizon_seq)
{
	Snapshot	snap = sync_scan_snapshot_begin(true);

	*max_seq = newest_seq(partition, snap, horizon_seq);
	if (*horizon_seq == -2)
		*horizon_seq = horizon_of(CStringGetTextDatum(partition), snap);
	*horizon_seq = Max(*horizon_seq, 0);
	sync_scan_snapshot_end(true);
}
