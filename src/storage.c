/*
 * storage.c — the engine's reads and writes of the sync_* tables around a commit (registry and
 * partitions, commit_seq, client records, idempotency records, tombstones, blob references);
 * the commit log's writes are storage_append.c, synced rows storage_rows.c, declared references
 * storage_refs.c, the helpers they share storage_internal.h.
 *
 * All statements are prepared once per backend (SPI_prepare + SPI_keepplan).  Per-table
 * statements are rebuilt when the compiled-schema cache reloads (sync_schema_generation).
 * Every table is schema-qualified; app identifiers go through quote_identifier; client values
 * only travel as parameters.  The caller must be connected to SPI.
 *
 * SPI switches CurrentMemoryContext to its procedure context after every call; run() restores
 * the caller's context so results are copied where the caller allocates.
 */
#include "postgres.h"

#include "storage_internal.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/index.h"
#include "executor/tuptable.h"
#include "catalog/namespace.h"
#include "common/hashfn.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"

#include "storage_partition.h"
#include "storage_scan.h"

static bool seq_in_row(void);

/* ---------------------------------------------------------------- plans */

enum
{
	P_EPOCH_INSERT,
	P_REGISTRY_TOUCH,
	P_PART_LOCK,
	P_PART_INSERT,
	P_SEQ_RESERVE,
	P_SEQ_UNRESERVE,
	P_CLIENT_CLAIM,
	P_CLIENT_UPSERT,
	P_CLIENT_ACK,
	P_CLIENT_UPDATE,
	P_RESULT_LOOKUP,
	P_RESULT_INSERT,
	P_TOMBSTONE_SCOPES,
	P_TOMBSTONE_CLEAR,
	P_BLOBS_REPLACE,
	/* the same, for a catalog from before 0.6.0 (no sync_commits.result), see sync_storage_log_before_06 */
	P_RESULT_GET_05,
	P_RESULT_LOOKUP_05,
	P_COUNT
};

typedef struct StaticPlan
{
	const char *sql;
	int			nargs;
	Oid			types[16];
} StaticPlan;

static const StaticPlan static_sql[P_COUNT] = {
	[P_EPOCH_INSERT] = {
		"INSERT INTO syncular.sync_partition_registry AS r "
		"(partition, log_epoch, epoch_required, last_authenticated_at_ms) "
		"VALUES ($1, pg_catalog.gen_random_uuid()::text, false, $2) "
		"ON CONFLICT (partition) DO NOTHING RETURNING r.log_epoch",
	2, {TEXTOID, INT8OID}},
	[P_REGISTRY_TOUCH] = {
		/*
		 * last_authenticated_at_ms is advisory: skip a row another transaction holds (it is
		 * touching it anyway) so the touch never waits, whatever locks this transaction's
		 * earlier rounds took; a blocking UPDATE here deadlocked against the partition lock.
		 */
		"UPDATE syncular.sync_partition_registry r "
		"SET last_authenticated_at_ms = GREATEST(r.last_authenticated_at_ms, $2) "
		"WHERE r.partition = (SELECT l.partition FROM syncular.sync_partition_registry l "
		"WHERE l.partition = $1 FOR UPDATE SKIP LOCKED)",
	2, {TEXTOID, INT8OID}},
	[P_PART_LOCK] = {
		/*
		 * The partition write lock as a no-op update, not SELECT ... FOR UPDATE: the commit's
		 * subtransaction then updates a row version no one holds a lock on, where updating a
		 * row this transaction had only locked makes PostgreSQL create a MultiXact (the top
		 * transaction's lock plus the subtransaction's update) on every commit.  It conflicts
		 * with every FOR UPDATE / FOR NO KEY UPDATE / FOR SHARE lock on the row, as before.
		 */
		"UPDATE syncular.sync_partitions p SET max_commit_seq = p.max_commit_seq "
		"WHERE p.partition = $1",
	1, {TEXTOID}},
	[P_PART_INSERT] = {
		"INSERT INTO syncular.sync_partitions (partition) VALUES ($1) "
		"ON CONFLICT (partition) DO NOTHING",
	1, {TEXTOID}},
	[P_SEQ_RESERVE] = {
		/*
		 * The partition write lock and the commit's commit_seq in one row version: the lock
		 * is this update (taken in the round's transaction, so it outlives the commit's
		 * subtransaction), and the subtransaction never touches the row again: no second
		 * version, no second WAL record, and no MultiXact (a row locked by the transaction and
		 * updated by its subtransaction gets one).  A commit that is not applied gives the
		 * number back (P_SEQ_UNRESERVE) while still holding the lock, so commit_seq stays
		 * gap-free; no other transaction can see the reserved value before it commits.
		 */
		"UPDATE syncular.sync_partitions p SET max_commit_seq = p.max_commit_seq + 1 "
		"WHERE p.partition = $1 RETURNING p.max_commit_seq",
	1, {TEXTOID}},
	[P_SEQ_UNRESERVE] = {
		"UPDATE syncular.sync_partitions p SET max_commit_seq = p.max_commit_seq - 1 "
		"WHERE p.partition = $1",
	1, {TEXTOID}},
	[P_CLIENT_CLAIM] = {
		/*
		 * The binding is claimed before the round writes anything: a concurrent first round of
		 * the same clientId waits here on the uncommitted key until this transaction ends.
		 */
		"INSERT INTO syncular.sync_clients "
		"(partition, client_id, actor_id, wire_version, cursor, subscriptions, updated_at_ms) "
		"VALUES ($1, $2, $3, $4, -1, '[]'::jsonb, $5) "
		"ON CONFLICT (partition, client_id) DO NOTHING",
	5, {TEXTOID, TEXTOID, TEXTOID, INT4OID, INT8OID}},
	[P_CLIENT_ACK] = {
		/* a realtime ack (SPEC §8.2): the cursor only moves forward, within the log */
		"UPDATE syncular.sync_clients c "
		"   SET cursor = GREATEST(c.cursor, $4), "
		"       updated_at_ms = GREATEST(c.updated_at_ms, $6) "
		" WHERE c.partition = $1 AND c.client_id = $3 AND c.actor_id = $2 "
		"   AND EXISTS (SELECT 1 FROM syncular.sync_partition_registry r "
		"                WHERE r.partition = $1 AND r.log_epoch = $5) "
		"   AND $4 <= " SYNC_NEWEST_SEQ_SQL,
	6, {TEXTOID, TEXTOID, TEXTOID, INT8OID, TEXTOID, INT8OID}},
	[P_CLIENT_UPSERT] = {
		/* the binding never changes: a record bound to another actor is left alone */
		"INSERT INTO syncular.sync_clients AS c "
		"(partition, client_id, actor_id, wire_version, cursor, subscriptions, updated_at_ms) "
		"VALUES ($1, $2, $3, $4, $5, COALESCE($6::jsonb, '[]'::jsonb), $7) "
		"ON CONFLICT (partition, client_id) DO UPDATE SET "
		"wire_version = EXCLUDED.wire_version, cursor = EXCLUDED.cursor, "
		"subscriptions = CASE WHEN $6 IS NULL THEN c.subscriptions ELSE EXCLUDED.subscriptions END, "
		"updated_at_ms = EXCLUDED.updated_at_ms "
		"WHERE c.actor_id = EXCLUDED.actor_id",
	7, {TEXTOID, TEXTOID, TEXTOID, INT4OID, INT8OID, TEXTOID, INT8OID}},
	[P_CLIENT_UPDATE] = {
		/*
		 * P_CLIENT_UPSERT's update of the record the round claimed, as a plain update: no
		 * speculative insertion, and no tuple lock (a WAL record of its own) before the new
		 * version.  No row (the record was deleted meanwhile, or is bound to another actor):
		 * the caller falls back to the upsert.
		 */
		"UPDATE syncular.sync_clients c SET wire_version = $4, cursor = $5, "
		"subscriptions = COALESCE($6::jsonb, c.subscriptions), updated_at_ms = $7 "
		"WHERE c.partition = $1 AND c.client_id = $2 AND c.actor_id = $3",
	7, {TEXTOID, TEXTOID, TEXTOID, INT4OID, INT8OID, TEXTOID, INT8OID}},
	[P_RESULT_LOOKUP] = {
		/*
		 * The push's idempotency lookup with its fault seam (03_seams.sql) in one statement:
		 * the armed idempotency_cache_miss fault of (partition, client) is consumed, and when
		 * one was, the caller ignores the record read beside it.
		 */
		"WITH f AS (DELETE FROM syncular.sync_faults f "
		" WHERE f.partition = $1 AND f.client_id = $2 AND f.fault = 'idempotency_cache_miss' "
		" RETURNING 1) "
		"SELECT EXISTS (SELECT 1 FROM f), COALESCE((SELECT c.result FROM syncular.sync_commits c "
		" WHERE c.partition = $1 AND c.client_id = $2 AND c.client_commit_id = $3 "
		" AND c.result IS NOT NULL), (SELECT r.result FROM syncular.sync_push_results r "
		" WHERE r.partition = $1 AND r.client_id = $2 AND r.client_commit_id = $3))",
	3, {TEXTOID, TEXTOID, TEXTOID}},
	[P_RESULT_INSERT] = {
		"INSERT INTO syncular.sync_push_results (partition, client_id, client_commit_id, result) "
		"VALUES ($1, $2, $3, $4::jsonb) "
		"ON CONFLICT (partition, client_id, client_commit_id) DO NOTHING",
	4, {TEXTOID, TEXTOID, TEXTOID, TEXTOID}},
	[P_TOMBSTONE_SCOPES] = {
		/* the scopes of the delete a tombstone records (its last delete of the row) */
		"SELECT c.scopes FROM syncular.sync_changes c WHERE c.partition = $1 "
		" AND c.commit_seq = $2 AND c.tbl = $3 AND c.row_id = $4 AND c.op = 2 "
		" ORDER BY c.idx DESC LIMIT 1",
	4, {TEXTOID, INT8OID, TEXTOID, TEXTOID}},
	[P_TOMBSTONE_CLEAR] = {
		"DELETE FROM syncular.sync_tombstones WHERE partition = $1 AND tbl = $2 AND row_id = $3",
	3, {TEXTOID, TEXTOID, TEXTOID}},
	[P_BLOBS_REPLACE] = {
		"WITH d AS (DELETE FROM syncular.sync_blob_refs b WHERE b.partition = $1 AND b.tbl = $2 "
		" AND b.row_id = $3 AND NOT (b.blob_id = ANY ($4::text[]))) "
		"INSERT INTO syncular.sync_blob_refs (partition, tbl, row_id, blob_id) "
		"SELECT DISTINCT $1, $2, $3, x FROM pg_catalog.unnest($4::text[]) AS x "
		"ON CONFLICT DO NOTHING",
	4, {TEXTOID, TEXTOID, TEXTOID, TEXTARRAYOID}},
	[P_RESULT_GET_05] = {
		"SELECT r.result FROM syncular.sync_push_results r "
		"WHERE r.partition = $1 AND r.client_id = $2 AND r.client_commit_id = $3",
	3, {TEXTOID, TEXTOID, TEXTOID}},
	[P_RESULT_LOOKUP_05] = {
		"WITH f AS (DELETE FROM syncular.sync_faults f "
		" WHERE f.partition = $1 AND f.client_id = $2 AND f.fault = 'idempotency_cache_miss' "
		" RETURNING 1) "
		"SELECT EXISTS (SELECT 1 FROM f), (SELECT r.result FROM syncular.sync_push_results r "
		" WHERE r.partition = $1 AND r.client_id = $2 AND r.client_commit_id = $3)",
	3, {TEXTOID, TEXTOID, TEXTOID}},
};

static SPIPlanPtr plans[P_COUNT];

static SPIPlanPtr
static_plan(int which)
{
	if (plans[which] == NULL)
		plans[which] = prepare(static_sql[which].sql, static_sql[which].nargs,
							   (Oid *) static_sql[which].types);
	return plans[which];
}

/* ---------------------------------------------------------------- internal subtransactions */

/*
 * The two ends of an internal subtransaction begun (BeginInternalSubTransaction) in memory
 * context cxt under resource owner owner, for every caller that runs code it may survive.
 */
void
sync_subxact_release(MemoryContext cxt, ResourceOwner owner)
{
	ReleaseCurrentSubTransaction();
	MemoryContextSwitchTo(cxt);
	CurrentResourceOwner = owner;
}

/* In the PG_CATCH: the error, copied into cxt and cleared, with the subtransaction rolled back. */
ErrorData *
sync_subxact_rollback(MemoryContext cxt, ResourceOwner owner)
{
	ErrorData  *edata;

	MemoryContextSwitchTo(cxt);
	edata = CopyErrorData();
	FlushErrorState();
	RollbackAndReleaseCurrentSubTransaction();
	MemoryContextSwitchTo(cxt);
	CurrentResourceOwner = owner;
	return edata;
}

/* ---------------------------------------------------------------- registry and partitions */

/*
 * The partition's registry row (log epoch, last_authenticated_at_ms) by its key, in a fresh
 * snapshot (read_only: the active one).  false: no row.
 */
static bool
registry_read(const char *partition, bool read_only, char **epoch, int64 *touched_ms)
{
	Snapshot	snap = sync_scan_snapshot_begin(read_only);
	SyncKeyed	k;
	ScanKeyData key;
	bool		found;
	bool		isnull;

	sync_scan_keyed_open(&k, "sync_partition_registry");
	sync_scan_eq_key(&key, k.pk, 1, text_datum(partition));
	found = sync_scan_fetch(k.heap, k.pk, &key, 1, snap, k.slot);
	if (found)
	{
		*epoch = sync_scan_text(k.slot, sync_scan_attnum(k.heap, "log_epoch"));
		*touched_ms = sync_scan_int8(k.slot, sync_scan_attnum(k.heap, "last_authenticated_at_ms"),
									 &isnull);
	}
	sync_scan_keyed_close(&k);
	sync_scan_snapshot_end(read_only);
	return found;
}

/*
 * The partition's log epoch, read first and created (random, on first sight) only when the
 * registry has no row; *touched_ms gets the row's last_authenticated_at_ms (now_ms for a row
 * this call created).  NULL when there is no row and none may be written (hot standby).
 */
char *
sync_storage_partition_epoch(const char *partition, int64 now_ms, bool can_write,
							 int64 *touched_ms)
{
	Datum		v[2];
	char	   *epoch = NULL;

	v[0] = text_datum(partition);
	v[1] = Int64GetDatum(now_ms);
	*touched_ms = now_ms;
	for (int attempt = 0; attempt < 2; attempt++)
	{
		if (registry_read(partition, !can_write, &epoch, touched_ms))
			return epoch;
		if (!can_write || attempt > 0)
			break;
		/* no row: create it (unless the operator said partitions are made on purpose only); a
		 * concurrent first round may win, then read again */
		if (!sync_auto_create_partitions)
			sync_raise_hint("sync.storage.partition_unregistered",
							psprintf("partition \"%s\" does not exist and syncular.auto_create_partitions is off",
									 partition),
							sync_json_member("partition", partition),
							"Check the partition name. To create the partition, serve its first round or "
							"push in a session with SET syncular.auto_create_partitions = on.");
		run_keep(static_plan(P_EPOCH_INSERT), v, NULL, false, 0);
		if (SPI_processed == 1)
		{
			epoch = get_text(0, 1);
			done();
			return epoch;
		}
		done();
	}
	return NULL;
}

void
sync_storage_registry_touch(const char *partition, int64 now_ms)
{
	Datum		v[2];

	v[0] = text_datum(partition);
	v[1] = Int64GetDatum(now_ms);
	run(static_plan(P_REGISTRY_TOUCH), v, NULL, false, 0);
}

void
sync_storage_lock_partition(const char *partition)
{
	Datum		v[1];

	if (!seq_in_row())
	{
		sync_partition_lock(partition);
		return;
	}
	v[0] = text_datum(partition);
	if (run(static_plan(P_PART_LOCK), v, NULL, false, 0) == 0)
	{
		run(static_plan(P_PART_INSERT), v, NULL, false, 0);
		if (run(static_plan(P_PART_LOCK), v, NULL, false, 0) != 1)
			elog(ERROR, "syncular: partition row vanished while locking it");
	}
}

/*
 * The partition's queue (docs/storage.md "The partition lock"): a transaction-duration
 * heavyweight lock keyed by the database and a 64-bit hash of the partition name, taken only
 * by a writer that finds the partition row held by another transaction, before it waits on
 * the row.  Waiters then line up in the lock manager's FIFO queue and each commit wakes one:
 * waiting on the row alone, every waiter woke at each commit, found the version it waited on
 * updated and retried, and all but one went back to sleep.  It is an advisory lock with
 * field4 SYNC_PARTITION_QUEUE (pg_advisory_lock uses 1 and 2, so no SQL key collides with
 * it); a hash collision only queues two partitions together.  The row lock stays the
 * partition lock: correctness never depends on the queue.
 */
#define SYNC_PARTITION_QUEUE 0x5359

static void
partition_queue_wait(const char *partition)
{
	sync_partition_advisory_lock(partition, SYNC_PARTITION_QUEUE);
}

/*
 * Whether the row version in slot (read by key, pinned) is held by another transaction: a
 * plain xmax that is not this transaction's (an updater or locker, running or just ended).
 * A MultiXact or this transaction's own lock (SELECT ... FOR UPDATE of the row) is not queued
 * for, and a version this transaction wrote (an earlier reservation, ops_command.c's lock) has
 * no xmax: a writer that holds the row must never wait on the queue, where a waiter for its
 * row may stand first.
 */
static bool
row_held_by_other(TupleTableSlot *slot)
{
	BufferHeapTupleTableSlot *b = (BufferHeapTupleTableSlot *) slot;
	uint16		mask;
	TransactionId xmax;

	if (!TTS_IS_BUFFERTUPLE(slot) || !BufferIsValid(b->buffer))
		return false;
	LockBuffer(b->buffer, BUFFER_LOCK_SHARE);
	mask = b->base.tuple->t_data->t_infomask;
	xmax = HeapTupleHeaderGetRawXmax(b->base.tuple->t_data);
	LockBuffer(b->buffer, BUFFER_LOCK_UNLOCK);
	return (mask & (HEAP_XMAX_INVALID | HEAP_XMAX_IS_MULTI)) == 0 &&
		TransactionIdIsNormal(xmax) && !TransactionIdIsCurrentTransactionId(xmax);
}

typedef enum
{
	RESERVE_DONE,				/* *seq reserved */
	RESERVE_QUEUE,				/* the row is held by another transaction: queue first */
	RESERVE_AGAIN,				/* a concurrent update committed meanwhile: a fresh read */
	RESERVE_STATEMENT			/* anything else: the kept UPDATE */
} ReserveStep;

/*
 * P_SEQ_RESERVE's common case without a statement: the partition row found by its key in a
 * fresh snapshot and updated (max_commit_seq + 1) by table_tuple_update, which waits for a
 * transaction holding the row as the statement's update does and takes the same row lock.
 * Unless `queued`, a row held by another transaction is not waited on here (RESERVE_QUEUE).
 * After a wait for a writer that committed, READ COMMITTED reads the row again (RESERVE_AGAIN,
 * as the statement's EvalPlanQual would); anything else (no visible row, a concurrent delete,
 * an update under REPEATABLE READ, the counter at its maximum) writes nothing and leaves it to
 * the statement, which does what it always did (reads the latest version, refuses under
 * REPEATABLE READ, inserts a missing row, raises).
 */
static ReserveStep
reserve_direct(const char *partition, bool queued, int64 *seq)
{
	Snapshot	snap = sync_scan_snapshot_begin(false);
	Relation	rel = sync_scan_open_catalog("sync_partitions", RowExclusiveLock);
	Oid			pkid = RelationGetPrimaryKeyIndex(rel);
	Relation	pk;
	TupleDesc	desc = RelationGetDescr(rel);
	TupleTableSlot *old = table_slot_create(rel, NULL);
	TupleTableSlot *new = MakeSingleTupleTableSlot(desc, &TTSOpsVirtual);
	AttrNumber	a_seq = sync_scan_attnum(rel, "max_commit_seq");
	AttrNumber	a_part = sync_scan_attnum(rel, "partition");
	ScanKeyData key;
	ReserveStep step = RESERVE_STATEMENT;

	if (!OidIsValid(pkid))
		elog(ERROR, "syncular: syncular.sync_partitions has no primary key");
	pk = index_open(pkid, RowExclusiveLock);
	sync_scan_eq_key(&key, pk, 1, text_datum(partition));
	if (sync_scan_fetch(rel, pk, &key, 1, snap, old))
	{
		TM_FailureData tmfd;
		LockTupleMode lockmode;
		bool		update_indexes;
		int64		cur;

		slot_getallattrs(old);
		cur = DatumGetInt64(old->tts_values[a_seq - 1]);
		if (!queued && row_held_by_other(old))
			step = RESERVE_QUEUE;
		else if (!old->tts_isnull[a_seq - 1] && cur < PG_INT64_MAX)
		{
			TM_Result	res;

			ExecClearTuple(new);
			memcpy(new->tts_values, old->tts_values, sizeof(Datum) * desc->natts);
			memcpy(new->tts_isnull, old->tts_isnull, sizeof(bool) * desc->natts);
			new->tts_values[a_seq - 1] = Int64GetDatum(cur + 1);
			ExecStoreVirtualTuple(new);
			res = table_tuple_update(rel, &old->tts_tid, new, GetCurrentCommandId(true), snap,
									 InvalidSnapshot, true, &tmfd, &lockmode, &update_indexes);
			if (res == TM_Ok)
			{
				/* not a HOT update: the new version's key entry, as the executor inserts it */
				if (update_indexes)
					index_insert(pk, &new->tts_values[a_part - 1], &new->tts_isnull[a_part - 1],
								 &new->tts_tid, rel, UNIQUE_CHECK_YES, false,
								 BuildIndexInfo(pk));
				*seq = cur + 1;
				step = RESERVE_DONE;
			}
			else if (res == TM_Updated && !IsolationUsesXactSnapshot())
				step = RESERVE_AGAIN;
		}
	}
	ExecDropSingleTupleTableSlot(new);
	ExecDropSingleTupleTableSlot(old);
	index_close(pk, NoLock);
	table_close(rel, NoLock);
	sync_scan_snapshot_end(false);
	return step;
}

/*
 * Take the partition lock and the next commit_seq: storage_partition.c since 0.7.0.  Below, a
 * catalog from before it: lock the partition row and reserve the next commit_seq (inserting the
 * row first when missing): the caller's commit gets it, or gives it back with
 * sync_storage_unreserve_commit_seq before anything else takes the lock (it is held to the end
 * of the transaction).  A writer that finds the row held queues first (partition_queue_wait),
 * then waits on the row.
 */
int64
sync_storage_reserve_commit_seq(const char *partition)
{
	Datum		v[1];
	bool		isnull;
	bool		queued = false;
	int64		seq;

	if (!seq_in_row())
		return sync_partition_reserve(partition);
	/* a few reads at most: once queued, only a writer that never queued can come first */
	for (int attempt = 0; attempt < 4; attempt++)
	{
		ReserveStep step = reserve_direct(partition, queued, &seq);

		if (step == RESERVE_DONE)
			return seq;
		if (step == RESERVE_STATEMENT)
			break;
		if (step == RESERVE_QUEUE)
		{
			partition_queue_wait(partition);
			queued = true;
		}
	}
	v[0] = text_datum(partition);
	run_keep(static_plan(P_SEQ_RESERVE), v, NULL, false, 0);
	if (SPI_processed == 0)
	{
		done();
		run(static_plan(P_PART_INSERT), v, NULL, false, 0);
		run_keep(static_plan(P_SEQ_RESERVE), v, NULL, false, 0);
	}
	if (SPI_processed != 1)
		elog(ERROR, "syncular: partition row vanished while locking it");
	seq = get_int8(0, 1, &isnull);
	done();
	return seq;
}

/* Give back the commit_seq reserved by this transaction's last reservation (not applied). */
void
sync_storage_unreserve_commit_seq(const char *partition)
{
	Datum		v[1];

	if (!seq_in_row())
		return;					/* nothing was taken but the lock, held to the end */
	v[0] = text_datum(partition);
	if (run(static_plan(P_SEQ_UNRESERVE), v, NULL, false, 0) != 1)
		elog(ERROR, "syncular: partition row missing when giving back a commit_seq");
}

/* The partition's maxSeq and horizon in the active snapshot (0 and 0 without a row). */
void
sync_storage_read_seqs(const char *partition, int64 *max_seq, int64 *horizon_seq)
{
	Snapshot	snap;
	SyncKeyed	k;
	ScanKeyData key;
	bool		isnull;

	if (!seq_in_row())
	{
		sync_partition_read_seqs(partition, max_seq, horizon_seq);
		return;
	}
	snap = sync_scan_snapshot_begin(true);
	*max_seq = 0;
	*horizon_seq = 0;
	sync_scan_keyed_open(&k, "sync_partitions");
	sync_scan_eq_key(&key, k.pk, 1, text_datum(partition));
	if (sync_scan_fetch(k.heap, k.pk, &key, 1, snap, k.slot))
	{
		*max_seq = sync_scan_int8(k.slot, sync_scan_attnum(k.heap, "max_commit_seq"), &isnull);
		*horizon_seq = sync_scan_int8(k.slot, sync_scan_attnum(k.heap, "horizon_seq"), &isnull);
	}
	sync_scan_keyed_close(&k);
	sync_scan_snapshot_end(true);
}

/* ---------------------------------------------------------------- client records */

/* The client record by its key, in a fresh snapshot.  false: no record. */
bool
sync_storage_client_get(const char *partition, const char *client_id, SyncClientRecord *rec)
{
	Snapshot	snap = sync_scan_snapshot_begin(false);
	SyncKeyed	k;
	ScanKeyData keys[2];
	bool		found;
	bool		isnull;

	sync_scan_keyed_open(&k, "sync_clients");
	sync_scan_eq_key(&keys[0], k.pk, 1, text_datum(partition));
	sync_scan_eq_key(&keys[1], k.pk, 2, text_datum(client_id));
	found = sync_scan_fetch(k.heap, k.pk, keys, 2, snap, k.slot);
	if (found)
	{
		Datum		wire;

		rec->actor_id = sync_scan_text(k.slot, sync_scan_attnum(k.heap, "actor_id"));
		rec->cursor = sync_scan_int8(k.slot, sync_scan_attnum(k.heap, "cursor"), &isnull);
		wire = slot_getattr(k.slot, sync_scan_attnum(k.heap, "wire_version"), &isnull);
		rec->wire_version = isnull ? 0 : DatumGetInt32(wire);
		rec->updated_at_ms = sync_scan_int8(k.slot, sync_scan_attnum(k.heap, "updated_at_ms"),
											&isnull);
		rec->subscriptions = sync_scan_varlena(k.slot, sync_scan_attnum(k.heap, "subscriptions"));
	}
	sync_scan_keyed_close(&k);
	sync_scan_snapshot_end(false);
	return found;
}

/*
 * Move the client record's cursor forward to `cursor` (never back, never past the log) when it
 * is bound to actor_id and epoch is the partition's log epoch.  true when the record was updated.
 */
bool
sync_storage_client_ack(const char *partition, const char *actor_id, const char *client_id,
						int64 cursor, const char *epoch, int64 now_ms)
{
	Datum		v[6];

	v[0] = text_datum(partition);
	v[1] = text_datum(actor_id);
	v[2] = text_datum(client_id);
	v[3] = Int64GetDatum(cursor);
	v[4] = text_datum(epoch);
	v[5] = Int64GetDatum(now_ms);
	return run(static_plan(P_CLIENT_ACK), v, NULL, false, 0) == 1;
}

/*
 * Claim the clientId for actor_id at the start of a round (push-and-pull.md §1.3, §3.3 step 5):
 * read the record (a known client: its binding never changes, nothing to write); otherwise
 * insert it unless one exists, then read the binding in a new statement, which
 * (READ COMMITTED) sees a record a concurrent round committed while the insert waited for it;
 * under REPEATABLE READ the insert itself fails with a serialization error (40001, retryable).
 * No row lock is kept: the binding never changes once written, and a lock taken here before
 * the partition lock would invert rotate_log_epoch's lock order.  Returns true when
 * the record existed before this round (*rec holds it); false when this round created it
 * (*rec: bound to actor_id, cursor -1, now_ms).  The caller compares rec->actor_id.
 * A record deleted between the two statements (rotate_log_epoch) is claimed again.
 */
bool
sync_storage_client_claim(const char *partition, const char *client_id, const char *actor_id,
						  int wire_version, int64 now_ms, SyncClientRecord *rec)
{
	Datum		v[5];

	v[0] = text_datum(partition);
	v[1] = text_datum(client_id);
	v[2] = text_datum(actor_id);
	v[3] = Int32GetDatum(wire_version);
	v[4] = Int64GetDatum(now_ms);
	if (sync_storage_client_get(partition, client_id, rec))
		return true;
	for (int attempt = 0; attempt < 3; attempt++)
	{
		if (run(static_plan(P_CLIENT_CLAIM), v, NULL, false, 0) == 1)
		{
			rec->subscriptions = NULL;
			rec->actor_id = pstrdup(actor_id);
			rec->cursor = -1;
			rec->wire_version = wire_version;
			rec->updated_at_ms = now_ms;
			return false;
		}
		if (sync_storage_client_get(partition, client_id, rec))
			return true;
	}
	elog(ERROR, "syncular: the client record keeps disappearing while it is claimed");
	return false;				/* not reached */
}

/*
 * Write the round's client record.  false: the record is bound to another actor (it was
 * deleted and claimed by another actor since this round claimed it); nothing was written.
 */
bool
sync_storage_client_upsert(const char *partition, const char *client_id, const char *actor_id,
						   int wire_version, int64 cursor, const char *subscriptions_json,
						   int64 now_ms)
{
	Datum		v[7];
	char		n[7] = {' ', ' ', ' ', ' ', ' ', ' ', ' '};

	v[0] = text_datum(partition);
	v[1] = text_datum(client_id);
	v[2] = text_datum(actor_id);
	v[3] = Int32GetDatum(wire_version);
	v[4] = Int64GetDatum(cursor);
	if (subscriptions_json)
		v[5] = text_datum(subscriptions_json);
	else
	{
		v[5] = (Datum) 0;
		n[5] = 'n';
	}
	v[6] = Int64GetDatum(now_ms);
	if (run(static_plan(P_CLIENT_UPDATE), v, n, false, 0) == 1)
		return true;
	return run(static_plan(P_CLIENT_UPSERT), v, n, false, 0) == 1;
}

/*
 * Whether syncular.<table> has <column>, kept per catalog generation in *probe: an ALTER
 * EXTENSION UPDATE can run in this session between two rounds, and its ALTER TABLE invalidates
 * the table, which empties the relation cache of storage_scan.c and bumps its generation (a
 * syscache probe per round otherwise).
 */
typedef struct ColumnProbe
{
	bool		checked;
	uint64		generation;
	bool		present;
} ColumnProbe;

static bool
catalog_has_column(ColumnProbe *probe, const char *table, const char *column)
{
	if (!probe->checked || probe->generation != sync_scan_catalog_generation())
	{
		probe->present = get_attnum(sync_scan_catalog_relid(table), column) != InvalidAttrNumber;
		probe->generation = sync_scan_catalog_generation();
		probe->checked = true;
	}
	return probe->present;
}

/*
 * A catalog from before 0.6.0 (library updated, ALTER EXTENSION pending) keeps every stored
 * result in sync_push_results: its sync_commits has no result column.  A result an old
 * statement stored in sync_push_results is still found after the update (the 0.6.0 reads look
 * in both places).
 */
bool
sync_storage_log_before_06(void)
{
	static ColumnProbe probe;

	return !catalog_has_column(&probe, "sync_commits", "result");
}

/*
 * The 0.7.0 commit log (docs/storage.md "Commit log layout"): a pushed commit of one upsert with
 * one scope pair keeps its change in its commit row (sync_commits.tbl .. scope_value).  A
 * catalog from before 0.7.0 (library updated, ALTER EXTENSION pending) keeps every change in
 * sync_changes, as the 0.6.0 library wrote it.  Kept per generation, as above.
 */
bool
sync_storage_log_inline(void)
{
	static ColumnProbe probe;

	return catalog_has_column(&probe, "sync_commits", "scope_var");
}

/*
 * The partition lock before 0.7.0: an update of the partition row, whose max_commit_seq column
 * held the counter (a catalog not updated yet: ALTER EXTENSION pending).  Since 0.7.0 the lock is
 * a heavyweight lock and commit_seq is read from the log (storage_partition.c), and that column
 * is gone.  Kept per generation, as above.
 */
static bool
seq_in_row(void)
{
	static ColumnProbe probe;

	return catalog_has_column(&probe, "sync_partitions", "max_commit_seq");
}

/* A catalog from before 0.4.0 (library updated, ALTER EXTENSION pending) has no fault table. */
static bool
faults_table_exists(void)
{
	Oid			nsp = get_namespace_oid("syncular", true);

	return OidIsValid(nsp) && OidIsValid(get_relname_relid("sync_faults", nsp));
}

/* ---------------------------------------------------------------- idempotency records */

/*
 * The stored result of (partition, client_id, client_commit_id) = key in table, read through
 * index (NULL: the primary key) in snap; NULL when there is none.
 */
static Jsonb *
keyed_result(const char *table, const char *index, const Datum *key, Snapshot snap)
{
	Relation	heap = sync_scan_open_catalog(table, AccessShareLock);
	Relation	ix = index_open(index ? sync_scan_catalog_relid(index)
								: RelationGetPrimaryKeyIndex(heap), AccessShareLock);
	TupleTableSlot *slot = table_slot_create(heap, NULL);
	ScanKeyData keys[3];
	Jsonb	   *j = NULL;

	for (int k = 0; k < 3; k++)
		sync_scan_eq_key(&keys[k], ix, k + 1, key[k]);
	if (sync_scan_fetch(heap, ix, keys, 3, snap, slot))
		j = sync_scan_varlena(slot, sync_scan_attnum(heap, "result"));
	ExecDropSingleTupleTableSlot(slot);
	index_close(ix, NoLock);
	table_close(heap, NoLock);
	return j;
}

/*
 * The stored result of key = (partition, client_id, client_commit_id) in snap, as P_RESULT_LOOKUP
 * reads it: an applied commit's result is in its commit row (through
 * sync_commits_by_client_commit, a partial index of the rows with a result), a rejected or pruned
 * commit's in sync_push_results by its key (docs/storage.md); NULL when there is none.  0.6.0
 * catalogs and later only (the index and sync_commits.result).
 */
static Jsonb *
result_read_direct(const Datum *key, Snapshot snap)
{
	Jsonb	   *j = keyed_result("sync_commits", "sync_commits_by_client_commit", key, snap);

	return j != NULL ? j : keyed_result("sync_push_results", NULL, key, snap);
}

/*
 * The stored result of (partition, client_id, client_commit_id), or NULL (push-and-pull.md
 * §3.3 step 5, the re-read of a stored rejection; commands).  Read by key in a fresh snapshot
 * after a command counter increment, as the statement (read_only = false) reads: the caller's
 * own insert of the rejection is seen.  A catalog from before 0.6.0 keeps the statement.
 */
Jsonb *
sync_storage_push_result_get(const char *partition, const char *client_id,
							 const char *client_commit_id)
{
	Datum		v[3];
	bool		isnull;
	Jsonb	   *j;

	v[0] = text_datum(partition);
	v[1] = text_datum(client_id);
	v[2] = text_datum(client_commit_id);
	if (!sync_storage_log_before_06())
	{
		j = result_read_direct(v, sync_scan_snapshot_begin(false));
		sync_scan_snapshot_end(false);
		return j;
	}
	if (!run_row(static_plan(P_RESULT_GET_05), v, false))
		return NULL;
	j = get_varlena(0, 1, &isnull);
	done();
	return isnull ? NULL : j;
}

/*
 * P_RESULT_LOOKUP without the statement when no fault is armed for (partition, client), the
 * common case: the fault's row probed by its key, then the commit row through
 * sync_commits_by_client_commit (a partial index of the rows with a result) and the
 * sync_push_results row by its key, in one fresh snapshot as the statement reads them.  false,
 * nothing read, when the fault is armed: the statement consumes it (its DELETE).
 */
static bool
result_lookup_direct(const char *partition, const char *client_id,
					 const char *client_commit_id, Jsonb **result)
{
	Snapshot	snap = sync_scan_snapshot_begin(false);
	Datum		key[3] = {text_datum(partition), text_datum(client_id),
	text_datum(client_commit_id)};
	SyncKeyed	f;
	ScanKeyData keys[3];
	bool		armed;

	sync_scan_keyed_open(&f, "sync_faults");
	sync_scan_eq_key(&keys[0], f.pk, 1, key[0]);
	sync_scan_eq_key(&keys[1], f.pk, 2, key[1]);
	sync_scan_eq_key(&keys[2], f.pk, 3, text_datum("idempotency_cache_miss"));
	armed = sync_scan_fetch(f.heap, f.pk, keys, 3, snap, f.slot);
	sync_scan_keyed_close(&f);
	*result = NULL;
	if (!armed)
	{
		*result = result_read_direct(key, snap);
	}
	sync_scan_snapshot_end(false);
	return !armed;
}

/*
 * A push's locked idempotency lookup: *fault is true when the armed idempotency_cache_miss
 * fault of (partition, client) was consumed (syncular.inject_fault; the lookup is then
 * unreadable and the caller ignores the result); otherwise the stored result or NULL.  Runs
 * under the partition lock, so the common case (no fault armed) reads by key without a
 * statement; an armed fault is consumed by the statement, which reads the result beside it.
 */
Jsonb *
sync_storage_push_result_lookup(const char *partition, const char *client_id,
								const char *client_commit_id, bool *fault)
{
	Datum		v[3];
	bool		isnull;
	Jsonb	   *j;

	*fault = false;
	if (!faults_table_exists())
		return sync_storage_push_result_get(partition, client_id, client_commit_id);
	if (!sync_storage_log_before_06() &&
		result_lookup_direct(partition, client_id, client_commit_id, &j))
		return j;
	v[0] = text_datum(partition);
	v[1] = text_datum(client_id);
	v[2] = text_datum(client_commit_id);
	if (!run_row(static_plan(sync_storage_log_before_06() ? P_RESULT_LOOKUP_05 : P_RESULT_LOOKUP), v, false))
		elog(ERROR, "syncular: the idempotency lookup returned no row");
	*fault = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	j = get_varlena(0, 2, &isnull);
	done();
	return (*fault || isnull) ? NULL : j;
}

bool
sync_storage_push_result_insert(const char *partition, const char *client_id,
								const char *client_commit_id, const char *result_json)
{
	Datum		v[4];

	v[0] = text_datum(partition);
	v[1] = text_datum(client_id);
	v[2] = text_datum(client_commit_id);
	v[3] = text_datum(result_json);
	return run(static_plan(P_RESULT_INSERT), v, NULL, false, 0) == 1;
}

/*
 * The row's tombstone (its commit_seq) and the scopes of the delete it records (NULL when that
 * change is gone), in one fresh snapshot: the tombstone by its key, the change, only when there
 * is a tombstone, by a statement read in the same snapshot.  false: no tombstone.
 */
bool
sync_storage_tombstone_get(const char *table, const char *partition, const char *row_id,
						   int64 *commit_seq, Jsonb **delete_scopes)
{
	Snapshot	snap = sync_scan_snapshot_begin(false);
	SyncKeyed	k;
	ScanKeyData keys[3];
	bool		found;
	bool		isnull;

	sync_scan_keyed_open(&k, "sync_tombstones");
	sync_scan_eq_key(&keys[0], k.pk, 1, text_datum(partition));
	sync_scan_eq_key(&keys[1], k.pk, 2, text_datum(table));
	sync_scan_eq_key(&keys[2], k.pk, 3, text_datum(row_id));
	found = sync_scan_fetch(k.heap, k.pk, keys, 3, snap, k.slot);
	if (found)
		*commit_seq = sync_scan_int8(k.slot, sync_scan_attnum(k.heap, "commit_seq"), &isnull);
	sync_scan_keyed_close(&k);
	if (found)
	{
		Datum		v[4];

		v[0] = text_datum(partition);
		v[1] = Int64GetDatum(*commit_seq);
		v[2] = text_datum(table);
		v[3] = text_datum(row_id);
		*delete_scopes = NULL;
		/* read-only: in the snapshot pushed above */
		if (run_row(static_plan(P_TOMBSTONE_SCOPES), v, true))
		{
			*delete_scopes = get_varlena(0, 1, &isnull);
			done();
		}
	}
	sync_scan_snapshot_end(false);
	return found;
}

void
sync_storage_tombstone_clear(const char *table, const char *partition, const char *row_id)
{
	Datum		v[3];

	v[0] = text_datum(partition);
	v[1] = text_datum(table);
	v[2] = text_datum(row_id);
	run(static_plan(P_TOMBSTONE_CLEAR), v, NULL, false, 0);
}

void
sync_storage_blob_refs_replace(const char *table, const char *partition, const char *row_id,
							   int nids, char **blob_ids)
{
	Datum		v[4];
	Datum	   *elems = palloc(sizeof(Datum) * Max(nids, 1));

	for (int i = 0; i < nids; i++)
		elems[i] = text_datum(blob_ids[i]);
	v[0] = text_datum(partition);
	v[1] = text_datum(table);
	v[2] = text_datum(row_id);
	v[3] = PointerGetDatum(construct_array(elems, nids, TEXTOID, -1, false, TYPALIGN_INT));
	run(static_plan(P_BLOBS_REPLACE), v, NULL, false, 0);
}
