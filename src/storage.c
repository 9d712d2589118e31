/*
 * storage.c — every read and write the engine makes to the sync_* tables and to synced rows.
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

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "commands/async.h"
#include "common/base64.h"
#include "executor/spi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/syscache.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "access/htup_details.h"

#include "engine.h"
#include "rules.h"
#include "storage.h"

/* ---------------------------------------------------------------- plans */

enum
{
	P_EPOCH_INSERT,
	P_EPOCH_SELECT,
	P_REGISTRY_TOUCH,
	P_PART_LOCK,
	P_PART_INSERT,
	P_SEQ_NEXT,
	P_SEQS,
	P_CLIENT_GET,
	P_CLIENT_CLAIM,
	P_CLIENT_UPSERT,
	P_RESULT_GET,
	P_RESULT_INSERT,
	P_RESULT_INSERT_NEW,
	P_TOMBSTONE_GET,
	P_TOMBSTONE_CLEAR,
	P_BLOBS_REPLACE,
	P_COMMIT_INSERT,
	P_CHANGES_INSERT,
	P_COUNT
};

typedef struct StaticPlan
{
	const char *sql;
	int			nargs;
	Oid			types[10];
} StaticPlan;

static const StaticPlan static_sql[P_COUNT] = {
	[P_EPOCH_INSERT] = {
		"INSERT INTO syncular.sync_partition_registry AS r "
		"(partition, log_epoch, epoch_required, last_authenticated_at_ms) "
		"VALUES ($1, pg_catalog.gen_random_uuid()::text, false, $2) "
		"ON CONFLICT (partition) DO NOTHING RETURNING r.log_epoch",
	2, {TEXTOID, INT8OID}},
	[P_EPOCH_SELECT] = {
		"SELECT r.log_epoch, r.last_authenticated_at_ms FROM syncular.sync_partition_registry r "
		"WHERE r.partition = $1",
	1, {TEXTOID}},
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
	[P_SEQ_NEXT] = {
		"UPDATE syncular.sync_partitions SET max_commit_seq = max_commit_seq + 1 "
		"WHERE partition = $1 RETURNING max_commit_seq",
	1, {TEXTOID}},
	[P_SEQS] = {
		"SELECT p.max_commit_seq, p.horizon_seq FROM syncular.sync_partitions p "
		"WHERE p.partition = $1",
	1, {TEXTOID}},
	[P_CLIENT_GET] = {
		"SELECT c.actor_id, c.cursor, c.wire_version, c.updated_at_ms FROM syncular.sync_clients c "
		"WHERE c.partition = $1 AND c.client_id = $2",
	2, {TEXTOID, TEXTOID}},
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
	[P_RESULT_GET] = {
		"SELECT r.result FROM syncular.sync_push_results r "
		"WHERE r.partition = $1 AND r.client_id = $2 AND r.client_commit_id = $3",
	3, {TEXTOID, TEXTOID, TEXTOID}},
	[P_RESULT_INSERT] = {
		"INSERT INTO syncular.sync_push_results (partition, client_id, client_commit_id, result) "
		"VALUES ($1, $2, $3, $4::jsonb) "
		"ON CONFLICT (partition, client_id, client_commit_id) DO NOTHING",
	4, {TEXTOID, TEXTOID, TEXTOID, TEXTOID}},
	[P_RESULT_INSERT_NEW] = {
		/*
		 * An applied commit's record: the caller holds the partition lock and found no record
		 * after taking it, so none can exist.  A plain insert: no speculative insertion (its
		 * extra index probe and HEAP_CONFIRM WAL record) for a conflict that cannot happen.
		 */
		"INSERT INTO syncular.sync_push_results (partition, client_id, client_commit_id, result) "
		"VALUES ($1, $2, $3, $4::jsonb)",
	4, {TEXTOID, TEXTOID, TEXTOID, TEXTOID}},
	[P_TOMBSTONE_GET] = {
		"SELECT t.commit_seq, "
		"(SELECT c.scopes FROM syncular.sync_changes c WHERE c.partition = t.partition "
		" AND c.commit_seq = t.commit_seq AND c.tbl = t.tbl AND c.row_id = t.row_id AND c.op = 2 "
		" ORDER BY c.idx DESC LIMIT 1) "
		"FROM syncular.sync_tombstones t "
		"WHERE t.partition = $1 AND t.tbl = $2 AND t.row_id = $3",
	3, {TEXTOID, TEXTOID, TEXTOID}},
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
	[P_COMMIT_INSERT] = {
		"INSERT INTO syncular.sync_commits (partition, commit_seq, client_id, client_commit_id, "
		"actor_id, created_at_ms, writer_version) VALUES ($1, $2, $3, $4, $5, $6, $7)",
	7, {TEXTOID, INT8OID, TEXTOID, TEXTOID, TEXTOID, INT8OID, INT8OID}},
	[P_CHANGES_INSERT] = {
		/*
		 * A commit's changes (parallel arrays, one element per change): their sync_changes rows,
		 * their scope index entries and the tombstones of deletes, one statement for many
		 * changes instead of one per change.
		 * DISTINCT ON: a commit can delete the same row twice (delete, re-insert, delete) and
		 * ON CONFLICT DO UPDATE may not touch one row twice in a statement; every tombstone of
		 * the commit carries the same commit_seq, so one per row is the same end state.
		 * Scope entries: the commit_seq is new and only this commit (under the partition lock)
		 * writes it, so DISTINCT plus NOT EXISTS (entries an earlier statement of the same
		 * commit wrote) replace ON CONFLICT DO NOTHING and its speculative insertion.  OFFSET 0
		 * keeps NOT EXISTS a key probe per entry: as an anti-join the generic plan hashed the
		 * partition's whole scope index on every commit.
		 */
		"WITH x AS (SELECT * FROM ROWS FROM (pg_catalog.unnest($3::int4[]), "
		" pg_catalog.unnest($4::text[]), pg_catalog.unnest($5::text[]), "
		" pg_catalog.unnest($6::int2[]), pg_catalog.unnest($7::int8[]), "
		" pg_catalog.unnest($8::jsonb[]), pg_catalog.unnest($9::bytea[])) "
		" AS x(idx, tbl, row_id, op, row_version, scopes, payload)), "
		"c AS (INSERT INTO syncular.sync_changes "
		" (partition, commit_seq, idx, tbl, row_id, op, row_version, scopes, payload) "
		" SELECT $1, $2, x.idx, x.tbl, x.row_id, x.op, x.row_version, x.scopes, x.payload "
		" FROM x), "
		"s AS (INSERT INTO syncular.sync_change_scopes (partition, tbl, var, value, commit_seq) "
		" SELECT $1, d.tbl, d.var, d.value, $2 FROM (SELECT DISTINCT x.tbl, e.key AS var, "
		"  e.value FROM x, pg_catalog.jsonb_each_text(x.scopes) e) d "
		" WHERE NOT EXISTS (SELECT 1 FROM syncular.sync_change_scopes z WHERE z.partition = $1 "
		"  AND z.tbl = d.tbl AND z.var = d.var AND z.value = d.value AND z.commit_seq = $2 "
		"  OFFSET 0)) "
		"INSERT INTO syncular.sync_tombstones AS t (partition, tbl, row_id, commit_seq) "
		"SELECT DISTINCT ON (x.tbl, x.row_id) $1, x.tbl, x.row_id, $2 FROM x WHERE x.op = 2 "
		"ON CONFLICT (partition, tbl, row_id) DO UPDATE SET commit_seq = EXCLUDED.commit_seq",
	9, {TEXTOID, INT8OID, INT4ARRAYOID, TEXTARRAYOID, TEXTARRAYOID, INT2ARRAYOID, INT8ARRAYOID,
	JSONBARRAYOID, BYTEAARRAYOID}},
};

static SPIPlanPtr plans[P_COUNT];

/*
 * Per-table statements that follow the compiled schema: one entry per schema table, in
 * TopMemoryContext, all dropped (free_entry frees one entry's plans) when the schema
 * generation changes.  The row statements and the reference statements each keep one.
 */
typedef struct PlanCache
{
	Size		entry_size;
	void		(*free_entry) (void *entry);
	char	   *entries;
	int			n;
	uint64		generation;
} PlanCache;

/* Entry table_index for the current schema generation (zeroed when new). */
static void *
plan_cache_entry(PlanCache *c, const SyncSchema *schema, int table_index)
{
	if (c->entries == NULL || c->generation != schema->generation)
	{
		if (c->entries != NULL)
		{
			for (int i = 0; i < c->n; i++)
				c->free_entry(c->entries + i * c->entry_size);
			pfree(c->entries);
		}
		c->entries = MemoryContextAllocZero(TopMemoryContext,
											c->entry_size * Max(schema->ntables, 1));
		c->n = schema->ntables;
		c->generation = schema->generation;
	}
	return c->entries + table_index * c->entry_size;
}

typedef struct TablePlans
{
	SPIPlanPtr	get;
	SPIPlanPtr	upsert;
	SPIPlanPtr	del;
	SPIPlanPtr	prefetch;		/* many rows (+ tombstones) by id, one statement */
	SPIPlanPtr	upsert_many;	/* many rows' upserts, one statement (built on first use) */
} TablePlans;

static void
free_table_plans(void *entry)
{
	TablePlans *tp = entry;

	if (tp->get)
		SPI_freeplan(tp->get);
	if (tp->upsert)
		SPI_freeplan(tp->upsert);
	if (tp->del)
		SPI_freeplan(tp->del);
	if (tp->prefetch)
		SPI_freeplan(tp->prefetch);
	if (tp->upsert_many)
		SPI_freeplan(tp->upsert_many);
}

static PlanCache table_plan_cache = {.entry_size = sizeof(TablePlans), .free_entry = free_table_plans};

/*
 * Every statement here is a key probe or a keyed write whose best plan does not depend on the
 * parameter values: a generic plan from the start (CURSOR_OPT_GENERIC_PLAN), so no call pays
 * for planning (the plan cache's default plans the first five calls afresh and keeps doing so
 * while a custom plan looks cheaper than the generic one).  ANALYZE and DDL still re-plan it.
 */
static SPIPlanPtr
prepare(const char *sql, int nargs, Oid *types)
{
	MemoryContext caller = CurrentMemoryContext;
	SPIPlanPtr	p = SPI_prepare_cursor(sql, nargs, types, CURSOR_OPT_GENERIC_PLAN);

	MemoryContextSwitchTo(caller);
	if (p == NULL)
		elog(ERROR, "syncular: SPI_prepare failed (%s): %s",
			 SPI_result_code_string(SPI_result), sql);
	if (SPI_keepplan(p) != 0)
		elog(ERROR, "syncular: SPI_keepplan failed");
	return p;
}

static SPIPlanPtr
static_plan(int which)
{
	if (plans[which] == NULL)
		plans[which] = prepare(static_sql[which].sql, static_sql[which].nargs,
							   (Oid *) static_sql[which].types);
	return plans[which];
}

/*
 * Execute a plan; restores the caller's memory context; raises on an SPI failure code.  The
 * result tuples stay in SPI_tuptable until done() (callers that read them) — statements whose
 * result is not read are released at once, so a long round does not pile up tuple tables in
 * the SPI procedure context.
 */
static int
run_keep(SPIPlanPtr plan, Datum *values, const char *nulls, bool read_only, long count)
{
	MemoryContext caller = CurrentMemoryContext;
	int			rc = SPI_execute_plan(plan, values, nulls, read_only, count);

	MemoryContextSwitchTo(caller);
	if (rc < 0)
		elog(ERROR, "syncular: SPI_execute_plan failed: %s", SPI_result_code_string(rc));
	return rc;
}

static void
done(void)
{
	if (SPI_tuptable != NULL)
	{
		SPI_freetuptable(SPI_tuptable);
		SPI_tuptable = NULL;
	}
}

/*
 * A lookup of at most one row.  true: the row is in SPI_tuptable for get_*(0, ...) and the
 * caller calls done() once it has read it; false: no row, nothing left to release.
 */
static bool
run_row(SPIPlanPtr plan, Datum *values, bool read_only)
{
	run_keep(plan, values, NULL, read_only, 1);
	if (SPI_processed == 1)
		return true;
	done();
	return false;
}

static uint64
run(SPIPlanPtr plan, Datum *values, const char *nulls, bool read_only, long count)
{
	uint64		n;

	run_keep(plan, values, nulls, read_only, count);
	n = SPI_processed;
	done();
	return n;
}

static inline Datum
text_datum(const char *s)
{
	return PointerGetDatum(cstring_to_text(s));
}

/*
 * A short-lived context for a write's argument datums (copies of row payloads and values):
 * deleted right after the statement, so a commit of many large rows does not keep a copy of
 * each until it ends.
 */
static MemoryContext
scratch_begin(void)
{
	return MemoryContextSwitchTo(AllocSetContextCreate(CurrentMemoryContext, "syncular write args",
													   ALLOCSET_DEFAULT_SIZES));
}

static void
scratch_end(MemoryContext caller)
{
	MemoryContext scratch = MemoryContextSwitchTo(caller);

	MemoryContextDelete(scratch);
}

/* Copy a varlena result column out of the SPI tuple, detoasted, in the current context. */
static void *
get_varlena(int row, int col, bool *isnull)
{
	Datum		d = SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, col, isnull);

	if (*isnull)
		return NULL;
	return PG_DETOAST_DATUM_COPY(d);
}

static int64
get_int8(int row, int col, bool *isnull)
{
	Datum		d = SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, col, isnull);

	return *isnull ? 0 : DatumGetInt64(d);
}

static char *
get_text(int row, int col)
{
	bool		isnull;
	text	   *t = get_varlena(row, col, &isnull);

	return isnull ? NULL : text_to_cstring(t);
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

/* ---------------------------------------------------------------- per-table statements */

static const char *
column_sql_type(uint8 type)
{
	switch (type)
	{
		case SSP_COL_STRING:
		case SSP_COL_BLOB_REF:
			return "text";
		case SSP_COL_INTEGER:
			return "int8";
		case SSP_COL_FLOAT:
			return "float8";
		case SSP_COL_BOOLEAN:
			return "bool";
		case SSP_COL_JSON:
			return "jsonb";
		default:
			return "bytea";
	}
}

static Oid
column_type_oid(uint8 type)
{
	switch (type)
	{
		case SSP_COL_STRING:
		case SSP_COL_BLOB_REF:
			return TEXTOID;
		case SSP_COL_INTEGER:
			return INT8OID;
		case SSP_COL_FLOAT:
			return FLOAT8OID;
		case SSP_COL_BOOLEAN:
			return BOOLOID;
		case SSP_COL_JSON:
			return JSONBOID;
		default:
			return BYTEAOID;
	}
}

static void
build_table_plans(const SyncTable *t, TablePlans *tp)
{
	StringInfoData sql;
	Oid		   *types;
	int			nargs;

	/* read */
	initStringInfo(&sql);
	appendStringInfo(&sql,
					 "SELECT _sync_server_version, _sync_scopes, _sync_payload, "
					 "_sync_column_versions FROM %s "
					 "WHERE _sync_partition = $1 AND _sync_row_id = $2",
					 t->qualified);
	tp->get = prepare(sql.data, 2, (Oid[]) {TEXTOID, TEXTOID});

	/*
	 * read-ahead of a commit's rows: every id with its stored row or, when absent, its
	 * tombstone (the same answers as get and P_TOMBSTONE_GET), so a multi-op commit reads its
	 * rows in one statement per table instead of one or two per operation.  LATERAL ... LIMIT 1
	 * keeps every read a key probe even in the generic plan (a flattened join hashed the whole
	 * partition).
	 */
	resetStringInfo(&sql);
	appendStringInfo(&sql,
					 "SELECT i.n, r._sync_server_version, r._sync_scopes, r._sync_payload, "
					 "r._sync_column_versions, tb.commit_seq, tb.scopes, r.found IS NOT NULL "
					 "FROM pg_catalog.unnest($2::text[]) WITH ORDINALITY AS i(id, n) "
					 "LEFT JOIN LATERAL (SELECT true AS found, x._sync_server_version, x._sync_scopes, "
					 " x._sync_payload, x._sync_column_versions FROM %s x "
					 " WHERE x._sync_partition = $1 AND x._sync_row_id = i.id LIMIT 1) r ON true "
					 "LEFT JOIN LATERAL (SELECT t.commit_seq, "
					 " (SELECT c.scopes FROM syncular.sync_changes c WHERE c.partition = t.partition "
					 "  AND c.commit_seq = t.commit_seq AND c.tbl = t.tbl AND c.row_id = t.row_id "
					 "  AND c.op = 2 ORDER BY c.idx DESC LIMIT 1) AS scopes "
					 " FROM syncular.sync_tombstones t WHERE r.found IS NULL "
					 " AND t.partition = $1 AND t.tbl = $3 AND t.row_id = i.id LIMIT 1) tb ON true",
					 t->qualified);
	tp->prefetch = prepare(sql.data, 3, (Oid[]) {TEXTOID, TEXTARRAYOID, TEXTOID});

	/*
	 * upsert + row-scope index sync, one statement.  Row-scope entries are only written by
	 * pushes, under the partition lock: NOT EXISTS instead of ON CONFLICT DO NOTHING (no
	 * speculative insertion and its HEAP_CONFIRM WAL record per entry).
	 */
	nargs = 7 + (t->materialize ? t->ncolumns : 0);
	types = palloc(sizeof(Oid) * nargs);
	types[0] = TEXTOID;			/* partition */
	types[1] = TEXTOID;			/* row id */
	types[2] = INT8OID;			/* server version */
	types[3] = TEXTOID;			/* scopes json */
	types[4] = BYTEAOID;		/* payload */
	types[5] = BYTEAOID;		/* column versions */
	types[6] = TEXTOID;			/* tbl */
	resetStringInfo(&sql);
	appendStringInfo(&sql, "WITH up AS (INSERT INTO %s AS t (_sync_partition, _sync_row_id",
					 t->qualified);
	if (t->materialize)
		for (int i = 0; i < t->ncolumns; i++)
		{
			appendStringInfo(&sql, ", %s", quote_identifier(t->columns[i].name));
			types[7 + i] = column_type_oid(t->columns[i].type);
		}
	appendStringInfoString(&sql, ", _sync_server_version, _sync_scopes, _sync_payload, "
						   "_sync_column_versions) VALUES ($1, $2");
	if (t->materialize)
		for (int i = 0; i < t->ncolumns; i++)
			appendStringInfo(&sql, ", $%d::%s", 8 + i, column_sql_type(t->columns[i].type));
	appendStringInfoString(&sql, ", $3, $4::jsonb, $5, $6) "
						   "ON CONFLICT (_sync_partition, _sync_row_id) DO UPDATE SET ");
	if (t->materialize)
		for (int i = 0; i < t->ncolumns; i++)
		{
			const char *q = quote_identifier(t->columns[i].name);

			appendStringInfo(&sql, "%s = EXCLUDED.%s, ", q, q);
		}
	appendStringInfoString(&sql,
						   "_sync_server_version = EXCLUDED._sync_server_version, "
						   "_sync_scopes = EXCLUDED._sync_scopes, "
						   "_sync_payload = EXCLUDED._sync_payload, "
						   "_sync_column_versions = EXCLUDED._sync_column_versions "
						   "RETURNING 1), "
						   "del AS (DELETE FROM syncular.sync_row_scopes rs "
						   " WHERE rs.partition = $1 AND rs.tbl = $7 AND rs.row_id = $2 "
						   " AND NOT EXISTS (SELECT 1 FROM pg_catalog.jsonb_each_text($4::jsonb) e "
						   "  WHERE e.key = rs.var AND e.value = rs.value)), "
						   "ins AS (INSERT INTO syncular.sync_row_scopes "
						   " (partition, tbl, var, value, row_id) "
						   " SELECT $1, $7, e.key, e.value, $2 "
						   " FROM pg_catalog.jsonb_each_text($4::jsonb) e "
						   " WHERE NOT EXISTS (SELECT 1 FROM syncular.sync_row_scopes z "
						   "  WHERE z.partition = $1 AND z.tbl = $7 AND z.var = e.key "
						   "  AND z.value = e.value AND z.row_id = $2 OFFSET 0)) "
						   "SELECT count(*) FROM up");
	tp->upsert = prepare(sql.data, nargs, types);

	/* delete the row with its row-scope and blob-ref entries, one statement */
	resetStringInfo(&sql);
	appendStringInfo(&sql,
					 "WITH d AS (DELETE FROM %s WHERE _sync_partition = $1 AND _sync_row_id = $2 "
					 "RETURNING 1), "
					 "rs AS (DELETE FROM syncular.sync_row_scopes WHERE partition = $1 "
					 " AND tbl = $3 AND row_id = $2), "
					 "br AS (DELETE FROM syncular.sync_blob_refs WHERE partition = $1 "
					 " AND tbl = $3 AND row_id = $2) "
					 "SELECT count(*) FROM d",
					 t->qualified);
	tp->del = prepare(sql.data, 3, (Oid[]) {TEXTOID, TEXTOID, TEXTOID});
}

static TablePlans *
table_plans(const SyncSchema *schema, int table_index)
{
	TablePlans *tp = plan_cache_entry(&table_plan_cache, schema, table_index);

	if (tp->get == NULL)
	{
		TablePlans	built = {0};

		/* built aside: a failure half-way leaves the entry empty, to be built again */
		build_table_plans(&schema->tables[table_index], &built);
		*tp = built;
	}
	return tp;
}

/* ---------------------------------------------------------------- registry and partitions */

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
	bool		isnull;

	v[0] = text_datum(partition);
	v[1] = Int64GetDatum(now_ms);
	*touched_ms = now_ms;
	for (int attempt = 0; attempt < 2; attempt++)
	{
		if (run_row(static_plan(P_EPOCH_SELECT), v, !can_write))
		{
			epoch = get_text(0, 1);
			*touched_ms = get_int8(0, 2, &isnull);
			done();
			return epoch;
		}
		if (!can_write || attempt > 0)
			break;
		/* no row: create it; a concurrent first round may win, then read again */
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

	v[0] = text_datum(partition);
	if (run(static_plan(P_PART_LOCK), v, NULL, false, 0) == 0)
	{
		run(static_plan(P_PART_INSERT), v, NULL, false, 0);
		if (run(static_plan(P_PART_LOCK), v, NULL, false, 0) != 1)
			elog(ERROR, "syncular: partition row vanished while locking it");
	}
}

int64
sync_storage_next_commit_seq(const char *partition)
{
	Datum		v[1];
	bool		isnull;

	v[0] = text_datum(partition);
	int64		seq;

	run_keep(static_plan(P_SEQ_NEXT), v, NULL, false, 0);
	if (SPI_processed != 1)
		elog(ERROR, "syncular: partition row missing at commit_seq allocation");
	seq = get_int8(0, 1, &isnull);
	done();
	return seq;
}

void
sync_storage_read_seqs(const char *partition, int64 *max_seq, int64 *horizon_seq)
{
	Datum		v[1];
	bool		isnull;

	v[0] = text_datum(partition);
	if (run_row(static_plan(P_SEQS), v, true))
	{
		*max_seq = get_int8(0, 1, &isnull);
		*horizon_seq = get_int8(0, 2, &isnull);
		done();
	}
	else
	{
		*max_seq = 0;
		*horizon_seq = 0;
	}
}

/* ---------------------------------------------------------------- client records */

bool
sync_storage_client_get(const char *partition, const char *client_id, SyncClientRecord *rec)
{
	Datum		v[2];
	bool		isnull;

	v[0] = text_datum(partition);
	v[1] = text_datum(client_id);
	if (!run_row(static_plan(P_CLIENT_GET), v, false))
		return false;
	rec->actor_id = get_text(0, 1);
	rec->cursor = get_int8(0, 2, &isnull);
	rec->wire_version = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0],
													SPI_tuptable->tupdesc, 3, &isnull));
	rec->updated_at_ms = get_int8(0, 4, &isnull);
	done();
	return true;
}

/*
 * Claim the clientId for actor_id at the start of a round (push-and-pull.md §1.3, §3.3 step 5):
 * insert the client record unless one exists, then read the binding in a new statement, which
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
	for (int attempt = 0; attempt < 3; attempt++)
	{
		if (run(static_plan(P_CLIENT_CLAIM), v, NULL, false, 0) == 1)
		{
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
	return run(static_plan(P_CLIENT_UPSERT), v, n, false, 0) == 1;
}

/* ---------------------------------------------------------------- idempotency records */

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
	if (!run_row(static_plan(P_RESULT_GET), v, false))
		return NULL;
	j = get_varlena(0, 1, &isnull);
	done();
	return isnull ? NULL : j;
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

/* The record of a commit applied under the partition lock (none can exist yet). */
void
sync_storage_push_result_insert_new(const char *partition, const char *client_id,
									const char *client_commit_id, const char *result_json)
{
	Datum		v[4];

	v[0] = text_datum(partition);
	v[1] = text_datum(client_id);
	v[2] = text_datum(client_commit_id);
	v[3] = text_datum(result_json);
	run(static_plan(P_RESULT_INSERT_NEW), v, NULL, false, 0);
}

/* ---------------------------------------------------------------- rows */

bool
sync_storage_row_get(const SyncSchema *schema, int table_index, const char *partition,
					 const char *row_id, SyncStoredRow *out)
{
	TablePlans *tp = table_plans(schema, table_index);
	Datum		v[2];
	bool		isnull;

	memset(out, 0, sizeof(*out));
	v[0] = text_datum(partition);
	v[1] = text_datum(row_id);
	if (!run_row(tp->get, v, false))
		return false;
	out->found = true;
	out->server_version = get_int8(0, 1, &isnull);
	out->scopes = get_varlena(0, 2, &isnull);
	out->payload = get_varlena(0, 3, &isnull);
	out->column_versions = get_varlena(0, 4, &isnull);
	done();
	return true;
}

/*
 * False when a write to the table may write other rows too: it has triggers (including the
 * RI triggers of a foreign key) or rewrite rules, or cannot be found.  Catalog caches only.
 */
bool
sync_storage_table_plain(const SyncSchema *schema, int table_index)
{
	Oid			nsp = schema->app_schema
		? get_namespace_oid(schema->app_schema, true) : InvalidOid;
	Oid			rel;
	HeapTuple	tup;
	bool		plain;

	if (!OidIsValid(nsp))
		return false;
	rel = get_relname_relid(schema->tables[table_index].name, nsp);
	if (!OidIsValid(rel))
		return false;
	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(rel));
	if (!HeapTupleIsValid(tup))
		return false;
	plain = !((Form_pg_class) GETSTRUCT(tup))->relhastriggers &&
		!((Form_pg_class) GETSTRUCT(tup))->relhasrules;
	ReleaseSysCache(tup);
	return plain;
}

/*
 * The stored row (or, when absent, the tombstone) of each of n row ids of one table in one
 * statement; out[k] / tombs[k] answer row_ids[k] as sync_storage_row_get and
 * sync_storage_tombstone_get would at this moment.  Results are copied into the caller's
 * memory context.
 */
void
sync_storage_rows_prefetch(const SyncSchema *schema, int table_index, const char *partition,
						   int n, const char **row_ids, SyncStoredRow *out,
						   SyncTombstone *tombs)
{
	TablePlans *tp = table_plans(schema, table_index);
	Datum		v[3];
	Datum	   *elems = palloc(sizeof(Datum) * Max(n, 1));

	memset(out, 0, sizeof(SyncStoredRow) * n);
	memset(tombs, 0, sizeof(SyncTombstone) * n);
	for (int k = 0; k < n; k++)
		elems[k] = text_datum(row_ids[k]);
	v[0] = text_datum(partition);
	v[1] = PointerGetDatum(construct_array(elems, n, TEXTOID, -1, false, TYPALIGN_INT));
	v[2] = text_datum(schema->tables[table_index].name);
	run_keep(tp->prefetch, v, NULL, false, 0);
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		bool		isnull;
		int64		k = get_int8((int) r, 1, &isnull) - 1;

		if (isnull || k < 0 || k >= n)
			elog(ERROR, "syncular: row read-ahead returned an unknown ordinal");
		if (DatumGetBool(SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 8,
									   &isnull)))
		{
			out[k].found = true;
			out[k].server_version = get_int8((int) r, 2, &isnull);
			out[k].scopes = get_varlena((int) r, 3, &isnull);
			out[k].payload = get_varlena((int) r, 4, &isnull);
			out[k].column_versions = get_varlena((int) r, 5, &isnull);
			continue;
		}
		tombs[k].commit_seq = get_int8((int) r, 6, &isnull);
		if (isnull)
			continue;
		tombs[k].found = true;
		tombs[k].delete_scopes = get_varlena((int) r, 7, &isnull);
	}
	done();
}

/*
 * True when jsonb_in cannot refuse this (already JSON.parse-valid) text: a UTF-8 database, no
 * escape sequences, no exponent and no very long number (numeric's range is the only other
 * refusal).  Everything else takes the guarded path below.
 */
static bool
json_surely_accepted(const char *s, uint32 len)
{
	bool		in_string = false;
	int			digits = 0;

	if (GetDatabaseEncoding() != PG_UTF8)
		return false;
	for (uint32 i = 0; i < len; i++)
	{
		char		c = s[i];

		if (c == '\\')
			return false;
		if (c == '"')
		{
			in_string = !in_string;
			continue;
		}
		if (in_string)
			continue;
		if (c == 'e' || c == 'E')
			return false;
		if (c >= '0' && c <= '9')
		{
			if (++digits > 1000)
				return false;
		}
		else
			digits = 0;
	}
	return true;
}

/*
 * A json value as jsonb for the projection.  PostgreSQL refuses some texts JSON.parse accepts
 * (\u0000, lone surrogate escapes, numbers beyond numeric's range); those project as NULL.
 * The conversion runs in a subtransaction so a refusal leaves nothing behind.
 */
static Datum
json_projection(const char *text, uint32 len, bool *isnull)
{
	MemoryContext caller = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	char	   *cstr = pnstrdup(text, len);
	Datum		result = (Datum) 0;

	*isnull = true;
	if (strlen(cstr) != len)
		return (Datum) 0;		/* a raw NUL byte cannot be valid JSON text anyway */
	if (json_surely_accepted(cstr, len))
	{
		*isnull = false;
		return DirectFunctionCall1(jsonb_in, CStringGetDatum(cstr));
	}
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(caller);
	PG_TRY();
	{
		result = DirectFunctionCall1(jsonb_in, CStringGetDatum(cstr));
		*isnull = false;
		sync_subxact_release(caller, owner);
	}
	PG_CATCH();
	{
		ErrorData  *edata = sync_subxact_rollback(caller, owner);

		if (edata->sqlerrcode == ERRCODE_QUERY_CANCELED)
			ReThrowError(edata);
		FreeErrorData(edata);
		*isnull = true;
		result = (Datum) 0;
	}
	PG_END_TRY();
	return result;
}

static Datum
value_datum(const SyncColumn *c, const SspValue *val, bool *isnull)
{
	*isnull = false;
	if (!val->present || val->is_null)
	{
		*isnull = true;
		return (Datum) 0;
	}
	switch (c->type)
	{
		case SSP_COL_STRING:
		case SSP_COL_BLOB_REF:
			if (memchr(val->str.ptr, '\0', val->str.len) != NULL)
			{
				*isnull = true;	/* text cannot hold U+0000: projection only */
				return (Datum) 0;
			}
			return PointerGetDatum(cstring_to_text_with_len(val->str.ptr, val->str.len));
		case SSP_COL_INTEGER:
			return Int64GetDatum(val->i);
		case SSP_COL_FLOAT:
			return Float8GetDatum(val->f);
		case SSP_COL_BOOLEAN:
			return BoolGetDatum(val->b);
		case SSP_COL_JSON:
			return json_projection(val->str.ptr, val->str.len, isnull);
		default:
			{
				bytea	   *b = palloc(VARHDRSZ + val->bytes.len);

				SET_VARSIZE(b, VARHDRSZ + val->bytes.len);
				if (val->bytes.len > 0)
					memcpy(VARDATA(b), val->bytes.ptr, val->bytes.len);
				return PointerGetDatum(b);
			}
	}
}

static bytea *
make_bytea(const uint8 *p, size_t len)
{
	bytea	   *b = palloc(VARHDRSZ + len);

	SET_VARSIZE(b, VARHDRSZ + len);
	if (len > 0)
		memcpy(VARDATA(b), p, len);
	return b;
}

void
sync_storage_row_upsert(const SyncSchema *schema, int table_index, const char *partition,
						const char *row_id, int64 server_version, const char *scopes_json,
						const uint8 *payload, size_t payload_len,
						const uint8 *column_versions, size_t column_versions_len,
						const SspValue *values)
{
	const SyncTable *t = &schema->tables[table_index];
	TablePlans *tp = table_plans(schema, table_index);
	int			nargs = 7 + (t->materialize ? t->ncolumns : 0);
	MemoryContext caller = scratch_begin();
	Datum	   *v = palloc(sizeof(Datum) * nargs);
	char	   *n = palloc(nargs + 1);

	memset(n, ' ', nargs);
	n[nargs] = '\0';
	v[0] = text_datum(partition);
	v[1] = text_datum(row_id);
	v[2] = Int64GetDatum(server_version);
	v[3] = text_datum(scopes_json);
	v[4] = PointerGetDatum(make_bytea(payload, payload_len));
	if (column_versions != NULL)
		v[5] = PointerGetDatum(make_bytea(column_versions, column_versions_len));
	else
	{
		v[5] = (Datum) 0;
		n[5] = 'n';
	}
	v[6] = text_datum(t->name);
	if (t->materialize)
		for (int i = 0; i < t->ncolumns; i++)
		{
			bool		isnull;

			v[7 + i] = value_datum(&t->columns[i], &values[i], &isnull);
			if (isnull)
				n[7 + i] = 'n';
		}
	run(tp->upsert, v, n, false, 0);
	scratch_end(caller);
}

/*
 * The upsert of many rows of one table with their row-scope entries in one statement: the
 * single-row statement of build_table_plans over parallel arrays ($2 row ids, $3 versions, $4
 * scopes, $5 payloads, $6 column versions, $8.. the materialized columns), rows in array order.
 * The caller guarantees each row id at most once (ON CONFLICT DO UPDATE cannot touch a row
 * twice in one statement).  Each row-scope read is a key probe whatever the generic plan
 * estimates (OFFSET 0 keeps each row's read a probe of the by-row index; as a join, the
 * generic plan scanned the table's whole row-scope index in the partition on every commit).  Row-scope entries are
 * only written by pushes, under the partition lock, so NOT EXISTS replaces ON CONFLICT DO
 * NOTHING and its speculative insertion, as for the changes' scope entries.
 */
static SPIPlanPtr
build_upsert_many(const SyncTable *t)
{
	StringInfoData sql;
	int			nargs = 7 + (t->materialize ? t->ncolumns : 0);
	Oid		   *types = palloc(sizeof(Oid) * nargs);

	types[0] = TEXTOID;
	types[1] = TEXTARRAYOID;
	types[2] = INT8ARRAYOID;
	types[3] = JSONBARRAYOID;
	types[4] = BYTEAARRAYOID;
	types[5] = BYTEAARRAYOID;
	types[6] = TEXTOID;
	initStringInfo(&sql);
	appendStringInfoString(&sql,
						   "WITH x AS (SELECT * FROM ROWS FROM (pg_catalog.unnest($2::text[]), "
						   "pg_catalog.unnest($3::int8[]), pg_catalog.unnest($4::jsonb[]), "
						   "pg_catalog.unnest($5::bytea[]), pg_catalog.unnest($6::bytea[])");
	if (t->materialize)
		for (int i = 0; i < t->ncolumns; i++)
		{
			types[7 + i] = get_array_type(column_type_oid(t->columns[i].type));
			appendStringInfo(&sql, ", pg_catalog.unnest($%d::%s[])", 8 + i,
							 column_sql_type(t->columns[i].type));
		}
	appendStringInfoString(&sql, ") AS x(row_id, ver, scopes, payload, cv");
	if (t->materialize)
		for (int i = 0; i < t->ncolumns; i++)
			appendStringInfo(&sql, ", c%d", i);
	appendStringInfo(&sql, ")), up AS (INSERT INTO %s AS t (_sync_partition, _sync_row_id",
					 t->qualified);
	if (t->materialize)
		for (int i = 0; i < t->ncolumns; i++)
			appendStringInfo(&sql, ", %s", quote_identifier(t->columns[i].name));
	appendStringInfoString(&sql, ", _sync_server_version, _sync_scopes, _sync_payload, "
						   "_sync_column_versions) SELECT $1, x.row_id");
	if (t->materialize)
		for (int i = 0; i < t->ncolumns; i++)
			appendStringInfo(&sql, ", x.c%d", i);
	appendStringInfoString(&sql, ", x.ver, x.scopes, x.payload, x.cv FROM x "
						   "ON CONFLICT (_sync_partition, _sync_row_id) DO UPDATE SET ");
	if (t->materialize)
		for (int i = 0; i < t->ncolumns; i++)
		{
			const char *q = quote_identifier(t->columns[i].name);

			appendStringInfo(&sql, "%s = EXCLUDED.%s, ", q, q);
		}
	appendStringInfoString(&sql,
						   "_sync_server_version = EXCLUDED._sync_server_version, "
						   "_sync_scopes = EXCLUDED._sync_scopes, "
						   "_sync_payload = EXCLUDED._sync_payload, "
						   "_sync_column_versions = EXCLUDED._sync_column_versions "
						   "RETURNING 1), "
						   "del AS (DELETE FROM syncular.sync_row_scopes rs WHERE rs.ctid = ANY (ARRAY("
						   " SELECT s.ctid FROM x CROSS JOIN LATERAL (SELECT s.ctid, s.var, s.value "
						   "  FROM syncular.sync_row_scopes s WHERE s.partition = $1 AND s.tbl = $7 "
						   "  AND s.row_id = x.row_id OFFSET 0) s "
						   " WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.jsonb_each_text(x.scopes) e "
						   "  WHERE e.key = s.var AND e.value = s.value)))), "
						   "ins AS (INSERT INTO syncular.sync_row_scopes "
						   " (partition, tbl, var, value, row_id) "
						   " SELECT $1, $7, e.key, e.value, x.row_id "
						   " FROM x, pg_catalog.jsonb_each_text(x.scopes) e "
						   " WHERE NOT EXISTS (SELECT 1 FROM syncular.sync_row_scopes z "
						   "  WHERE z.partition = $1 AND z.tbl = $7 AND z.var = e.key "
						   "  AND z.value = e.value AND z.row_id = x.row_id OFFSET 0)) "
						   "SELECT count(*) FROM up");
	return prepare(sql.data, nargs, types);
}

/* An array of n datums of element type elem (nulls may be NULL: none). */
static Datum
datum_array(Datum *elems, bool *nulls, int n, Oid elem)
{
	int16		typlen;
	bool		typbyval;
	char		typalign;
	int			dims[1] = {n};
	int			lbs[1] = {1};

	get_typlenbyvalalign(elem, &typlen, &typbyval, &typalign);
	return PointerGetDatum(construct_md_array(elems, nulls, 1, dims, lbs, elem, typlen,
											  typbyval, typalign));
}

/*
 * sync_storage_row_upsert for n rows of one table (distinct row ids) in one statement, with the
 * same rows and row-scope entries as n single-row calls in array order.
 */
void
sync_storage_rows_upsert(const SyncSchema *schema, int table_index, const char *partition,
						 int n, const SyncRowWrite *rows)
{
	const SyncTable *t = &schema->tables[table_index];
	TablePlans *tp = table_plans(schema, table_index);
	int			ncols = t->materialize ? t->ncolumns : 0;
	MemoryContext caller;
	Datum		v[7];
	Datum	   *args;
	Datum	   *ids;
	Datum	   *vers;
	Datum	   *scopes;
	Datum	   *payloads;
	Datum	   *cvs;
	bool	   *cv_null;
	Datum	   *cols;
	bool	   *col_null;

	if (tp->upsert_many == NULL)
		tp->upsert_many = build_upsert_many(t);
	caller = scratch_begin();
	args = palloc(sizeof(Datum) * (7 + ncols));
	ids = palloc(sizeof(Datum) * n);
	vers = palloc(sizeof(Datum) * n);
	scopes = palloc(sizeof(Datum) * n);
	payloads = palloc(sizeof(Datum) * n);
	cvs = palloc(sizeof(Datum) * n);
	cv_null = palloc(sizeof(bool) * n);
	cols = palloc(sizeof(Datum) * Max(n * ncols, 1));
	col_null = palloc(sizeof(bool) * Max(n * ncols, 1));
	for (int k = 0; k < n; k++)
	{
		const SyncRowWrite *w = &rows[k];

		ids[k] = text_datum(w->row_id);
		vers[k] = Int64GetDatum(w->server_version);
		/* jsonb_in, as the $4::jsonb cast of the single-row statement does */
		scopes[k] = DirectFunctionCall1(jsonb_in, CStringGetDatum(w->scopes_json));
		payloads[k] = PointerGetDatum(make_bytea(w->payload, w->payload_len));
		cv_null[k] = w->column_versions == NULL;
		cvs[k] = w->column_versions
			? PointerGetDatum(make_bytea(w->column_versions, w->column_versions_len))
			: (Datum) 0;
		for (int i = 0; i < ncols; i++)
			cols[i * n + k] = value_datum(&t->columns[i], &w->values[i], &col_null[i * n + k]);
	}
	v[0] = text_datum(partition);
	v[1] = datum_array(ids, NULL, n, TEXTOID);
	v[2] = datum_array(vers, NULL, n, INT8OID);
	v[3] = datum_array(scopes, NULL, n, JSONBOID);
	v[4] = datum_array(payloads, NULL, n, BYTEAOID);
	v[5] = datum_array(cvs, cv_null, n, BYTEAOID);
	v[6] = text_datum(t->name);
	memcpy(args, v, sizeof(v));
	for (int i = 0; i < ncols; i++)
		args[7 + i] = datum_array(cols + i * n, col_null + i * n, n,
								  column_type_oid(t->columns[i].type));
	run(tp->upsert_many, args, NULL, false, 0);
	scratch_end(caller);
}

void
sync_storage_row_delete(const SyncSchema *schema, int table_index, const char *partition,
						const char *row_id)
{
	TablePlans *tp = table_plans(schema, table_index);
	Datum		v[3];

	v[0] = text_datum(partition);
	v[1] = text_datum(row_id);
	v[2] = text_datum(schema->tables[table_index].name);
	run(tp->del, v, NULL, false, 0);
}

bool
sync_storage_tombstone_get(const char *table, const char *partition, const char *row_id,
						   int64 *commit_seq, Jsonb **delete_scopes)
{
	Datum		v[3];
	bool		isnull;

	v[0] = text_datum(partition);
	v[1] = text_datum(table);
	v[2] = text_datum(row_id);
	if (!run_row(static_plan(P_TOMBSTONE_GET), v, false))
		return false;
	*commit_seq = get_int8(0, 1, &isnull);
	*delete_scopes = get_varlena(0, 2, &isnull);
	done();
	return true;
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

/* ---------------------------------------------------------------- declared references */

/* Per (child table, reference): the children statement, rebuilt with the schema cache. */
typedef struct RefPlans
{
	int			n;
	SPIPlanPtr *plans;			/* one per reference of the table */
} RefPlans;

static void
free_ref_plans(void *entry)
{
	RefPlans   *rp = entry;

	for (int k = 0; k < rp->n; k++)
		if (rp->plans[k])
			SPI_freeplan(rp->plans[k]);
	if (rp->plans)
		pfree(rp->plans);
}

static PlanCache ref_plan_cache = {.entry_size = sizeof(RefPlans), .free_entry = free_ref_plans};

/* The projection can answer the lookup: a materialized column compared in its SQL type. */
static bool
reference_projected(const SyncTable *t, int column)
{
	uint8		type = t->columns[column].type;

	return t->materialize &&
		(type == SSP_COL_STRING || type == SSP_COL_INTEGER || type == SSP_COL_BOOLEAN);
}

static SPIPlanPtr
reference_plan(const SyncSchema *schema, int child_index, int ref_index)
{
	const SyncTable *t = &schema->tables[child_index];
	const SyncReference *r = &t->references[ref_index];
	RefPlans   *rp = plan_cache_entry(&ref_plan_cache, schema, child_index);
	StringInfoData sql;

	if (rp->plans == NULL)
	{
		rp->plans =
			MemoryContextAllocZero(TopMemoryContext, sizeof(SPIPlanPtr) * Max(t->nreferences, 1));
		rp->n = t->nreferences;
	}
	if (rp->plans[ref_index] != NULL)
		return rp->plans[ref_index];

	initStringInfo(&sql);
	if (reference_projected(t, r->column_index))
		appendStringInfo(&sql,
						 "SELECT _sync_row_id FROM %s WHERE _sync_partition = $1 AND %s = $2::%s "
						 "ORDER BY _sync_row_id COLLATE \"C\" LIMIT $3",
						 t->qualified, quote_identifier(r->column),
						 column_sql_type(t->columns[r->column_index].type));
	else
		appendStringInfo(&sql,
						 "SELECT _sync_row_id, _sync_payload FROM %s WHERE _sync_partition = $1 "
						 "ORDER BY _sync_row_id COLLATE \"C\"",
						 t->qualified);
	rp->plans[ref_index] = prepare(sql.data, 3, (Oid[]) {TEXTOID, TEXTOID, INT8OID});
	return rp->plans[ref_index];
}

int
sync_storage_reference_children(const SyncSchema *schema, int child_index, int ref_index,
								const char *partition, const char *parent_row_id, long limit,
								char ***row_ids)
{
	const SyncTable *t = &schema->tables[child_index];
	const SyncReference *r = &t->references[ref_index];
	SPIPlanPtr	plan = reference_plan(schema, child_index, ref_index);
	MemoryContext caller = CurrentMemoryContext;
	Datum		v[3];
	char	  **ids;
	int			n = 0;
	size_t		plen = strlen(parent_row_id);
	Portal		portal;

	*row_ids = NULL;
	if (limit <= 0)
		return 0;
	v[0] = text_datum(partition);
	v[1] = text_datum(parent_row_id);
	v[2] = Int64GetDatum((int64) limit);
	if (reference_projected(t, r->column_index))
	{
		run_keep(plan, v, NULL, false, limit);
		ids = palloc0(sizeof(char *) * Max(SPI_processed, 1));
		for (uint64 i = 0; i < SPI_processed; i++)
			ids[n++] = get_text((int) i, 1);
		done();
		*row_ids = ids;
		return n;
	}

	/*
	 * Not projected: decode every row of the partition and render the column as a rowId
	 * (the cost is a scan of the child table's partition per deleted parent).
	 */
	ids = palloc0(sizeof(char *) * Min(limit, 64));
	{
		long		cap = Min(limit, 64);

		portal = SPI_cursor_open(NULL, plan, v, NULL, false);
		MemoryContextSwitchTo(caller);
		for (;;)
		{
			SPI_cursor_fetch(portal, true, 256);
			MemoryContextSwitchTo(caller);
			if (SPI_processed == 0)
			{
				done();
				break;
			}
			for (uint64 i = 0; i < SPI_processed && n < limit; i++)
			{
				bool		isnull;
				bytea	   *payload = get_varlena((int) i, 2, &isnull);
				SspValue   *vals;
				SspArena   *arena;
				SspError	err;
				SspBuf		b;
				bool		match = false;

				if (isnull)
					continue;
				arena = ssp_arena_new();
				vals = palloc0(sizeof(SspValue) * t->ncolumns);
				ssp_buf_init(&b);
				if (ssp_row_decode_full(arena, t->codec_columns, t->ncolumns,
										(const uint8 *) VARDATA_ANY(payload),
										VARSIZE_ANY_EXHDR(payload), vals, &err) &&
					ssp_render_pk(&t->codec_columns[r->column_index], &vals[r->column_index],
								  &b, &err))
					match = b.len == plen && memcmp(b.data, parent_row_id, plen) == 0;
				ssp_buf_free(&b);
				ssp_arena_free(arena);
				pfree(vals);
				pfree(payload);
				if (!match)
					continue;
				if (n >= cap)
				{
					cap = Min(limit, cap * 2);
					ids = repalloc(ids, sizeof(char *) * cap);
				}
				ids[n++] = get_text((int) i, 1);
			}
			done();
			if (n >= limit)
				break;
		}
		SPI_cursor_close(portal);
		MemoryContextSwitchTo(caller);
	}
	*row_ids = ids;
	return n;
}

/* ---------------------------------------------------------------- the commit log */

void
sync_storage_commit_insert(const char *partition, int64 commit_seq, const char *client_id,
						   const char *client_commit_id, const char *actor_id,
						   int64 created_at_ms, int64 writer_version)
{
	Datum		v[7];

	v[0] = text_datum(partition);
	v[1] = Int64GetDatum(commit_seq);
	v[2] = text_datum(client_id);
	v[3] = text_datum(client_commit_id);
	v[4] = text_datum(actor_id);
	v[5] = Int64GetDatum(created_at_ms);
	v[6] = Int64GetDatum(writer_version);
	run(static_plan(P_COMMIT_INSERT), v, NULL, false, 0);
}

/*
 * Append n changes of a commit, numbered idx first_idx .. first_idx + n - 1 (their sync_changes
 * rows, scope index entries and the tombstones of deletes), in one statement.
 */
void
sync_storage_changes_insert(const char *partition, int64 commit_seq, int32 first_idx, int n,
							const SyncChangeRow *changes)
{
	Datum		v[9];
	MemoryContext caller = scratch_begin();
	Datum	   *idx = palloc(sizeof(Datum) * n);
	Datum	   *tbl = palloc(sizeof(Datum) * n);
	Datum	   *row = palloc(sizeof(Datum) * n);
	Datum	   *op = palloc(sizeof(Datum) * n);
	Datum	   *ver = palloc(sizeof(Datum) * n);
	bool	   *ver_null = palloc(sizeof(bool) * n);
	Datum	   *scopes = palloc(sizeof(Datum) * n);
	Datum	   *payload = palloc(sizeof(Datum) * n);
	bool	   *payload_null = palloc(sizeof(bool) * n);
	int			dims[1] = {n};
	int			lbs[1] = {1};

	for (int k = 0; k < n; k++)
	{
		const SyncChangeRow *c = &changes[k];

		idx[k] = Int32GetDatum(first_idx + k);
		tbl[k] = text_datum(c->table);
		row[k] = text_datum(c->row_id);
		op[k] = Int16GetDatum(c->op);
		ver[k] = Int64GetDatum(c->row_version);
		ver_null[k] = !c->has_version;
		/* jsonb_in, as the $8::jsonb cast of the one-change statement does */
		scopes[k] = DirectFunctionCall1(jsonb_in, CStringGetDatum(c->scopes_json));
		payload_null[k] = c->payload == NULL;
		payload[k] = c->payload ? PointerGetDatum(make_bytea(c->payload, c->payload_len))
			: (Datum) 0;
	}
	v[0] = text_datum(partition);
	v[1] = Int64GetDatum(commit_seq);
	v[2] = PointerGetDatum(construct_array(idx, n, INT4OID, 4, true, TYPALIGN_INT));
	v[3] = PointerGetDatum(construct_array(tbl, n, TEXTOID, -1, false, TYPALIGN_INT));
	v[4] = PointerGetDatum(construct_array(row, n, TEXTOID, -1, false, TYPALIGN_INT));
	v[5] = PointerGetDatum(construct_array(op, n, INT2OID, 2, true, TYPALIGN_SHORT));
	v[6] = PointerGetDatum(construct_md_array(ver, ver_null, 1, dims, lbs, INT8OID, 8,
											  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	v[7] = PointerGetDatum(construct_array(scopes, n, JSONBOID, -1, false, TYPALIGN_INT));
	v[8] = PointerGetDatum(construct_md_array(payload, payload_null, 1, dims, lbs, BYTEAOID, -1,
											  false, TYPALIGN_INT));
	run(static_plan(P_CHANGES_INSERT), v, NULL, false, 0);
	scratch_end(caller);
}

/* NOTIFY syncular_commit, payload base64url(partition) ":" commit_seq (sent at commit). */
void
sync_storage_notify_commit(const char *partition, int64 commit_seq)
{
	size_t		len = strlen(partition);
	int			enc_len = pg_b64_enc_len(len);
	char	   *enc = palloc(enc_len + 1);
	int			n = pg_b64_encode(partition, len, enc, enc_len);
	StringInfoData payload;

	if (n < 0)
		elog(ERROR, "syncular: base64 encoding failed");
	initStringInfo(&payload);
	for (int i = 0; i < n; i++)
	{
		char		c = enc[i];

		if (c == '+')
			c = '-';
		else if (c == '/')
			c = '_';
		else if (c == '=')
			break;				/* base64url without padding */
		appendStringInfoChar(&payload, c);
	}
	appendStringInfo(&payload, ":" INT64_FORMAT, commit_seq);
	Async_Notify("syncular_commit", payload.data);
}
