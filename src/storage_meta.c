/*
 * storage_meta.c — the engine's reads and writes of registration state in the sync_* tables:
 * the serve gate's read (sync_schema_meta, sync_partition_registry, sync_backfill_checkpoints;
 * SPEC §4.2), the compiled schema row (sync_settings), registered functions
 * (sync_crdt_mergers, sync_row_validators), auth leases (sync_leases, SPEC §7.3) and the writer
 * fence (sync_writer_fence, RFC 0007).  What they
 * mean is decided by the callers (gate.c, schema.c, crdt.c, hooks.c, leases.c).  Every
 * function needs an SPI connection and restores the caller's memory context, where its
 * results are allocated.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/tableam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "storage/bufmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "storage.h"
#include "storage_scan.h"

/* A statement kept for the backend's life; the plan cache re-plans it after DDL. */
static SPIPlanPtr
keep(const char *sql, int nargs, Oid *types, bool generic)
{
	return sync_storage_keep_plan(sql, nargs, types, generic ? CURSOR_OPT_GENERIC_PLAN : 0);
}

/* Execute plan; the caller's context is current again afterwards; raises on other than expect. */
static void
exec(SPIPlanPtr plan, Datum *args, const char *nulls, bool read_only, long count, int expect,
	 const char *what)
{
	MemoryContext caller = CurrentMemoryContext;
	int			rc = SPI_execute_plan(plan, args, nulls, read_only, count);

	MemoryContextSwitchTo(caller);
	if (rc != expect)
		elog(ERROR, "syncular: %s failed: %s", what, SPI_result_code_string(rc));
}

/* ---------------------------------------------------------------- the serve gate (§4.2) */

/* A pending checkpoint, and the gate's order of them: (partition, name) COLLATE "C" (bytes). */
typedef struct GatePending
{
	char	   *partition;
	char	   *name;
} GatePending;

static int
pending_cmp(const void *a, const void *b)
{
	const GatePending *x = a;
	const GatePending *y = b;
	int			c = strcmp(x->partition, y->partition);

	return c != 0 ? c : strcmp(x->name, y->name);
}

/* The stored schema version: sync_schema_meta's one row (id = 1), 0 without it. */
static int64
gate_stored_version(Snapshot snap)
{
	SyncKeyed	k;
	ScanKeyData key;
	bool		isnull = true;
	int64		v = 0;

	sync_scan_keyed_open(&k, "sync_schema_meta");
	sync_scan_int4_key(&key, 1, 1);
	if (sync_scan_fetch(k.heap, k.pk, &key, 1, snap, k.slot))
		v = sync_scan_int8(k.slot, sync_scan_attnum(k.heap, "schema_version"), &isnull);
	sync_scan_keyed_close(&k);
	return isnull ? 0 : v;
}

/* The partition's log epoch (its sync_partition_registry row), NULL without one. */
static char *
gate_epoch(const char *partition, Snapshot snap)
{
	SyncKeyed	k;
	ScanKeyData key;
	char	   *epoch = NULL;

	sync_scan_keyed_open(&k, "sync_partition_registry");
	sync_scan_eq_key(&key, k.pk, 1, CStringGetTextDatum(partition));
	if (sync_scan_fetch(k.heap, k.pk, &key, 1, snap, k.slot))
		epoch = sync_scan_text(k.slot, sync_scan_attnum(k.heap, "log_epoch"));
	sync_scan_keyed_close(&k);
	return epoch;
}

/*
 * The checkpoints of schema version `running` not yet activated, in (partition, name)
 * COLLATE "C" order: a scan of sync_backfill_checkpoints (a handful of rows, none between
 * migrations; no index leads with schema_version).
 */
static void
gate_pending(int32 running, Snapshot snap, SyncGateRead *g)
{
	SyncTableScan s;
	TupleTableSlot *slot;
	AttrNumber	a_partition;
	AttrNumber	a_name;
	AttrNumber	a_version;
	AttrNumber	a_state;
	int			cap = 4;
	int			n = 0;
	GatePending *p = palloc(sizeof(GatePending) * cap);

	sync_scan_table_begin(&s, "sync_backfill_checkpoints", snap);
	slot = s.slot;
	a_partition = sync_scan_attnum(s.heap, "partition");
	a_name = sync_scan_attnum(s.heap, "name");
	a_version = sync_scan_attnum(s.heap, "schema_version");
	a_state = sync_scan_attnum(s.heap, "state");
	while (table_scan_getnextslot(s.scan, ForwardScanDirection, slot))
	{
		bool		isnull;
		Datum		version = slot_getattr(slot, a_version, &isnull);
		char	   *state;

		if (isnull || DatumGetInt32(version) != running)
			continue;
		state = sync_scan_text(slot, a_state);
		if (state == NULL || strcmp(state, "activated") == 0)
			continue;
		if (n == cap)
		{
			cap *= 2;
			p = repalloc(p, sizeof(GatePending) * cap);
		}
		p[n].partition = sync_scan_text(slot, a_partition);
		p[n].name = sync_scan_text(slot, a_name);
		n++;
	}
	sync_scan_table_end(&s);
	qsort(p, n, sizeof(GatePending), pending_cmp);
	g->npending = n;
	g->pending_partition = palloc(sizeof(char *) * Max(n, 1));
	g->pending_name = palloc(sizeof(char *) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		g->pending_partition[i] = p[i].partition;
		g->pending_name[i] = p[i].name;
	}
	pfree(p);
}

/*
 * The gate read: the stored schema version, the partition's log epoch and the pending
 * checkpoints, all in one snapshot.  read_only = true reads in the caller's active snapshot;
 * false in a fresh one, as a statement of its own would.  partition NULL: no registry row.
 * Direct reads (a primary-key probe each and a scan of the checkpoints) rather than a
 * statement: the gate runs twice in every push round.
 */
void
sync_storage_gate_read(const char *partition, int32 running, bool read_only, SyncGateRead *g)
{
	Snapshot	snap = sync_scan_snapshot_begin(read_only);

	memset(g, 0, sizeof(*g));
	g->stored = gate_stored_version(snap);
	g->epoch = partition != NULL ? gate_epoch(partition, snap) : NULL;
	gate_pending(running, snap, g);
	sync_scan_snapshot_end(read_only);
}

/* ---------------------------------------------------------------- the compiled schema row */

/* The compiled schema's version; false when none is registered. */
bool
sync_storage_compiled_version(int32 *version)
{
	MemoryContext caller = CurrentMemoryContext;
	bool		isnull = true;
	Datum		v = (Datum) 0;
	int			rc = SPI_execute("SELECT (s.compiled ->> 'version')::integer "
								 "FROM syncular.sync_settings s WHERE s.id = 1", true, 1);

	MemoryContextSwitchTo(caller);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "syncular: reading the compiled schema version failed");
	if (SPI_processed == 1)
		v = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (!isnull)
		*version = DatumGetInt32(v);
	return !isnull;
}

/*
 * The settings row (docs/compiled-schema.md): its row-version key always; the compiled schema
 * (a copy, NULL when not compiled) and the hooks only when the key differs from known_key (the
 * caller's cached schema is still current otherwise).  false: no settings row.
 */
bool
sync_storage_settings_read(const char *known_key, SyncSettingsRow *row)
{
	static SPIPlanPtr plan = NULL;
	HeapTuple	tup;
	TupleDesc	desc;
	bool		isnull;
	Datum		d;

	memset(row, 0, sizeof(*row));
	if (plan == NULL)
		plan = keep("SELECT s.xmin::text || ':' || s.ctid::text, s.compiled, "
					"s.scope_resolver::oid, s.commit_validator::oid, s.reaction_planner::oid "
					"FROM syncular.sync_settings s WHERE s.id = 1", 0, NULL, false);
	exec(plan, NULL, NULL, true, 1, SPI_OK_SELECT, "reading sync_settings");
	if (SPI_processed != 1)
		return false;
	tup = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;
	row->key = SPI_getvalue(tup, desc, 1);
	if (known_key != NULL && strcmp(row->key, known_key) == 0)
		return true;
	row->changed = true;
	d = SPI_getbinval(tup, desc, 2, &isnull);
	row->compiled = isnull ? NULL : DatumGetJsonbPCopy(d);
	for (int i = 0; i < 3; i++)
	{
		d = SPI_getbinval(tup, desc, 3 + i, &isnull);
		row->hooks[i] = isnull ? InvalidOid : DatumGetObjectId(d);
	}
	return true;
}

/*
 * Whether the version of the settings row at tid with this xmin is visible to the active
 * snapshot: sync_settings holds one row (id = 1), so a visible version with the same xmin at
 * the same place is the row a statement would read, with the same "xmin:ctid" key.  One tuple
 * fetch instead of a statement; false when it cannot tell (no active snapshot, no table).
 */
bool
sync_storage_settings_version_visible(TransactionId xmin, ItemPointer tid)
{
	Oid			relid;
	Relation	rel;
	HeapTupleData tup;
	Buffer		buf;
	bool		current = false;

	if (!ActiveSnapshotSet())
		return false;
	relid = get_relname_relid("sync_settings", get_namespace_oid("syncular", false));
	if (!OidIsValid(relid))
		return false;
	rel = table_open(relid, AccessShareLock);
	if (ItemPointerGetBlockNumber(tid) < RelationGetNumberOfBlocks(rel))
	{
		tup.t_self = *tid;
		if (heap_fetch(rel, GetActiveSnapshot(), &tup, &buf, false))
		{
			current = TransactionIdEquals(HeapTupleHeaderGetRawXmin(tup.t_data), xmin);
			ReleaseBuffer(buf);
		}
	}
	table_close(rel, AccessShareLock);
	return current;
}

/* ---------------------------------------------------------------- registered functions */

/*
 * One registration looked up by its text key: the oid in its first column (InvalidOid when
 * NULL); *found when a row exists.
 */
static Oid
lookup_oid(SPIPlanPtr plan, const char *key, bool read_only, const char *what, bool *found)
{
	Datum		arg = CStringGetTextDatum(key);
	Oid			fn = InvalidOid;

	exec(plan, &arg, NULL, read_only, 1, SPI_OK_SELECT, what);
	*found = SPI_processed == 1;
	if (*found)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);

		if (!isnull)
			fn = DatumGetObjectId(d);
	}
	SPI_freetuptable(SPI_tuptable);
	return fn;
}

/* The merger registered for crdt_type (*registered; InvalidOid when its function is gone). */
Oid
sync_storage_crdt_merger(const char *crdt_type, bool *registered)
{
	static SPIPlanPtr plan = NULL;

	if (plan == NULL)
		plan = keep("SELECT p.oid FROM syncular.sync_crdt_mergers m "
					"LEFT JOIN pg_catalog.pg_proc p ON p.oid = m.fn "
					"WHERE m.crdt_type = $1", 1, (Oid[]) {TEXTOID}, false);
	return lookup_oid(plan, crdt_type, true, "reading sync_crdt_mergers", registered);
}

/* The row validator registered for table (InvalidOid: none). */
Oid
sync_storage_row_validator(const char *table)
{
	static SPIPlanPtr plan = NULL;
	bool		found;

	if (plan == NULL)
		plan = keep("SELECT v.fn::pg_catalog.oid FROM syncular.sync_row_validators v "
					"WHERE v.tbl = $1", 1, (Oid[]) {TEXTOID}, false);
	return lookup_oid(plan, table, false, "row validator lookup", &found);
}

/* ---------------------------------------------------------------- auth leases (§7.3) */

/*
 * Issue or slide the lease of (partition, client_id) to now_ms + ttl_ms.  A live record keeps
 * its id; a revoked one (§7.3.4) is never slid: with reissue it is replaced by a fresh lease
 * under new_id, so the revoked id never comes back; without it the row stays revoked (false)
 * until clear_lease.  true: *lease_id and *expires_at_ms hold the lease.
 */
bool
sync_storage_lease_issue(const char *partition, const char *client_id, const char *new_id,
						 const char *actor_id, const char *allowed_json, int64 now_ms,
						 int64 ttl_ms, bool reissue, char **lease_id, int64 *expires_at_ms)
{
	static SPIPlanPtr plan = NULL;
	Datum		args[8];
	bool		isnull;

	if (plan == NULL)
		plan = keep("INSERT INTO syncular.sync_leases AS l (partition, client_id, lease_id, "
					"actor_id, allowed_scopes, issued_at_ms, expires_at_ms) "
					"VALUES ($1, $2, $3, $4, $5, $6, $6 + $7) "
					"ON CONFLICT (partition, client_id) DO UPDATE "
					"SET lease_id = CASE WHEN l.revoked_at_ms IS NULL THEN l.lease_id "
					"ELSE EXCLUDED.lease_id END, "
					"actor_id = EXCLUDED.actor_id, allowed_scopes = EXCLUDED.allowed_scopes, "
					"issued_at_ms = EXCLUDED.issued_at_ms, expires_at_ms = EXCLUDED.expires_at_ms, "
					"revoked_at_ms = NULL "
					"WHERE l.revoked_at_ms IS NULL OR $8 "
					"RETURNING l.lease_id, l.expires_at_ms",
					8, (Oid[]) {TEXTOID, TEXTOID, TEXTOID, TEXTOID, JSONBOID, INT8OID, INT8OID,
					BOOLOID}, false);
	args[0] = CStringGetTextDatum(partition);
	args[1] = CStringGetTextDatum(client_id);
	args[2] = CStringGetTextDatum(new_id);
	args[3] = CStringGetTextDatum(actor_id);
	args[4] = DirectFunctionCall1(jsonb_in, CStringGetDatum(allowed_json));
	args[5] = Int64GetDatum(now_ms);
	args[6] = Int64GetDatum(ttl_ms);
	args[7] = BoolGetDatum(reissue);
	exec(plan, args, NULL, false, 0, SPI_OK_INSERT_RETURNING, "issuing the lease");
	if (SPI_processed == 0)
		return false;
	*lease_id = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	*expires_at_ms = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2,
												 &isnull));
	return true;
}

/* The lease of (partition, client_id); false when there is none. */
bool
sync_storage_lease_get(const char *partition, const char *client_id, SyncStoredLease *lease)
{
	static SPIPlanPtr plan = NULL;
	Datum		args[2];
	HeapTuple	tup;
	TupleDesc	td;
	bool		isnull;

	if (plan == NULL)
		plan = keep("SELECT actor_id, allowed_scopes, expires_at_ms, revoked_at_ms IS NOT NULL "
					"FROM syncular.sync_leases WHERE partition = $1 AND client_id = $2",
					2, (Oid[]) {TEXTOID, TEXTOID}, false);
	args[0] = CStringGetTextDatum(partition);
	args[1] = CStringGetTextDatum(client_id);
	exec(plan, args, NULL, true, 1, SPI_OK_SELECT, "reading the lease");
	if (SPI_processed == 0)
		return false;
	tup = SPI_tuptable->vals[0];
	td = SPI_tuptable->tupdesc;
	lease->actor_id = SPI_getvalue(tup, td, 1);
	lease->allowed_scopes = DatumGetJsonbPCopy(SPI_getbinval(tup, td, 2, &isnull));
	lease->expires_at_ms = DatumGetInt64(SPI_getbinval(tup, td, 3, &isnull));
	lease->revoked = DatumGetBool(SPI_getbinval(tup, td, 4, &isnull));
	return true;
}

/* ---------------------------------------------------------------- the writer fence (RFC 0007) */

/*
 * The fence of `partition` (a text datum): true with *required when the partition is fenced.
 * One probe of sync_writer_fence's primary key in a fresh snapshot (what a statement of a
 * volatile function would see); the writer-fence trigger of sync_commits (fence.c) runs it for
 * every appended commit.  Needs no SPI connection.
 */
bool
sync_storage_writer_fence_read(Datum partition, int32 *required)
{
	Relation	rel;
	Relation	pk;
	Oid			pk_oid;
	ScanKeyData key;
	Snapshot	snap;
	SysScanDesc scan;
	HeapTuple	tup;
	bool		found = false;

	rel = sync_scan_open_catalog("sync_writer_fence", AccessShareLock);
	pk_oid = RelationGetPrimaryKeyIndex(rel);
	if (!OidIsValid(pk_oid))
		elog(ERROR, "syncular: syncular.sync_writer_fence has no primary key");
	/* the key's collation is the index column's: the probe descends the index in its order */
	pk = index_open(pk_oid, AccessShareLock);
	ScanKeyEntryInitialize(&key, 0, 1, BTEqualStrategyNumber, InvalidOid,
						   pk->rd_indcollation[0], F_TEXTEQ, partition);
	index_close(pk, AccessShareLock);
	snap = RegisterSnapshot(GetTransactionSnapshot());
	scan = systable_beginscan(rel, pk_oid, true, snap, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
	{
		TupleDesc	desc = RelationGetDescr(rel);
		bool		isnull;
		Datum		d = heap_getattr(tup, SPI_fnumber(desc, "required_writer_version"), desc,
									 &isnull);

		found = !isnull;
		*required = isnull ? 0 : DatumGetInt32(d);
	}
	systable_endscan(scan);
	UnregisterSnapshot(snap);
	table_close(rel, AccessShareLock);
	return found;
}

/*
 * The writer fence's check of one commit row (fence.c, the trigger; storage_rowdirect.c, which
 * runs it in place of the trigger on a direct insert): raises the catalogue form of
 * sync.storage.writer_fence_rejected (SQLSTATE P0001, DETAIL {"code", "details": {"partition",
 * "writerVersion", "requiredWriterVersion"}} in jsonb's text form) when the row's partition is
 * fenced and its writer_version is NULL or below the fence.
 */
void
sync_storage_writer_fence_check(Datum partition, bool partition_null, Datum writer,
								bool writer_null)
{
	int32		required;
	StringInfoData d;

	if (partition_null || !sync_storage_writer_fence_read(partition, &required) ||
		(!writer_null && DatumGetInt64(writer) >= (int64) required))
		return;
	initStringInfo(&d);
	appendStringInfoString(&d, "{\"code\": \"sync.storage.writer_fence_rejected\", "
						   "\"details\": {\"partition\": ");
	escape_json(&d, TextDatumGetCString(partition));
	if (writer_null)
		appendStringInfoString(&d, ", \"writerVersion\": null");
	else
		appendStringInfo(&d, ", \"writerVersion\": " INT64_FORMAT, DatumGetInt64(writer));
	appendStringInfo(&d, ", \"requiredWriterVersion\": %d}}", required);
	ereport(ERROR,
			(errcode(ERRCODE_RAISE_EXCEPTION),
			 errmsg("sync.storage.writer_fence_rejected"),
			 errdetail_internal("%s", d.data)));
}

/* ---------------------------------------------------------------- ensure_schema (schema_ensure.c) */

/* Execute sql once (ensure_schema runs rarely: no kept plan); the caller's context is current. */
static uint64
once(const char *sql, int n, Oid *types, Datum *values, int expect)
{
	MemoryContext caller = CurrentMemoryContext;
	int			rc = SPI_execute_with_args(sql, n, types, values, NULL, false, 0);

	MemoryContextSwitchTo(caller);
	if (rc != expect)
		elog(ERROR, "syncular: ensure_schema statement failed: %s", SPI_result_code_string(rc));
	return SPI_processed;
}

/* Column col (1-based) of the first row of the last result as text in the caller's context. */
static char *
first_text(int col)
{
	char	   *v = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, col);

	return v ? pstrdup(v) : NULL;
}

/* The migration lock: ensure_schema and unregister_schema serialize on sync_partitions. */
void
sync_storage_schema_lock(void)
{
	once("LOCK TABLE syncular.sync_partitions IN EXCLUSIVE MODE", 0, NULL, NULL, SPI_OK_UTILITY);
}

/* The registered app schema (sync_settings.app_schema), or NULL when none is registered. */
char *
sync_storage_settings_app_schema(void)
{
	if (once("SELECT s.app_schema FROM syncular.sync_settings s WHERE s.id = 1", 0, NULL, NULL,
			 SPI_OK_SELECT) == 0)
		return NULL;
	return first_text(1);
}

/* The schema marker (sync_schema_meta): false when absent; else its version and layouts text. */
bool
sync_storage_schema_meta_read(int64 *version, char **layouts)
{
	char	   *v;

	if (once("SELECT m.schema_version, m.layouts FROM syncular.sync_schema_meta m WHERE m.id = 1",
			 0, NULL, NULL, SPI_OK_SELECT) == 0 || (v = first_text(1)) == NULL)
		return false;
	*version = pg_strtoint64(v);
	*layouts = first_text(2);
	return true;
}

/* Register app_schema and its compiled schema (the settings singleton). */
void
sync_storage_settings_write(const char *app_schema, Jsonb *compiled)
{
	Oid			types[2] = {TEXTOID, JSONBOID};
	Datum		v[2] = {CStringGetTextDatum(app_schema), JsonbPGetDatum(compiled)};

	once("INSERT INTO syncular.sync_settings AS s (id, app_schema, compiled) VALUES (1, $1, $2) "
		 "ON CONFLICT (id) DO UPDATE SET app_schema = EXCLUDED.app_schema, compiled = EXCLUDED.compiled",
		 2, types, v, SPI_OK_INSERT);
}

/* Write the schema marker: version and the layouts of compiled (syncular._layouts_text). */
void
sync_storage_schema_meta_write(int32 version, Jsonb *compiled)
{
	Oid			types[2] = {INT4OID, JSONBOID};
	Datum		v[2] = {Int32GetDatum(version), JsonbPGetDatum(compiled)};

	once("INSERT INTO syncular.sync_schema_meta AS m (id, schema_version, layouts) "
		 "VALUES (1, $1, syncular._layouts_text($2)) "
		 "ON CONFLICT (id) DO UPDATE SET schema_version = EXCLUDED.schema_version, layouts = EXCLUDED.layouts",
		 2, types, v, SPI_OK_INSERT);
}

/* Forget a dropped synced table: its scope index rows and blob references, in every partition. */
void
sync_storage_forget_table(const char *tbl)
{
	Oid			types[1] = {TEXTOID};
	Datum		k[1] = {CStringGetTextDatum(tbl)};

	once("DELETE FROM syncular.sync_row_scopes WHERE tbl = $1", 1, types, k, SPI_OK_DELETE);
	once("DELETE FROM syncular.sync_blob_refs WHERE tbl = $1", 1, types, k, SPI_OK_DELETE);
}
