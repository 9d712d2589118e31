/*
 * storage_capture.c — the commit log's statements of ordinary SQL writes to synced tables
 * (docs/writing-with-sql.md; capture_log.c decides when they run): the partitions a statement's
 * transition tables touch, and the one set-based statement per (table, event) that appends a
 * statement's changes to its commit: sync_changes, sync_change_scopes, sync_tombstones,
 * sync_row_scopes and sync_blob_refs (how and why it is written as it is: capture_log.c's header
 * comment).  Plans are kept per backend: the partitions statement per event, the log statement
 * per (table, event) until the compiled schema's generation changes.  Every function needs an
 * SPI connection (with the trigger's transition tables registered) and restores the caller's
 * memory context, where its results are allocated.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "storage.h"

/* kept plans: the partitions of a statement, and its log statement per table */
static SPIPlanPtr part_plans[SYNC_EV_COUNT];
static SPIPlanPtr *log_plans = NULL;	/* [table * SYNC_EV_COUNT + ev] */
static int	nlog_plans = 0;
static uint64 log_generation = 0;

static SPIPlanPtr
keep(const char *sql, int nargs, Oid *types)
{
	return sync_storage_keep_plan(sql, nargs, types, 0);
}

/*
 * The partitions a statement wrote, in byte ("C") order (the lock order): from its transition
 * tables, or for TRUNCATE from the table itself (`qualified`).  Their number; the names in
 * *partitions.
 */
int
sync_storage_capture_partitions(SyncCaptureEvent ev, const char *qualified, char ***partitions)
{
	MemoryContext caller = CurrentMemoryContext;
	int			rc;
	int			n;

	if (ev != SYNC_EV_TRUNCATE && part_plans[ev] == NULL)
		part_plans[ev] = keep(ev == SYNC_EV_INSERT
							  ? "SELECT DISTINCT _sync_partition COLLATE \"C\" FROM sync_new ORDER BY 1"
							  : ev == SYNC_EV_DELETE
							  ? "SELECT DISTINCT _sync_partition COLLATE \"C\" FROM sync_old ORDER BY 1"
							  : "SELECT DISTINCT p COLLATE \"C\" FROM (SELECT _sync_partition AS p "
							  "FROM sync_new UNION ALL SELECT _sync_partition FROM sync_old) x ORDER BY 1",
							  0, NULL);
	if (ev != SYNC_EV_TRUNCATE)
		rc = SPI_execute_plan(part_plans[ev], NULL, NULL, true, 0);
	else						/* per table: not kept (TRUNCATE is rare) */
		rc = SPI_execute(psprintf("SELECT DISTINCT _sync_partition COLLATE \"C\" FROM %s ORDER BY 1",
								  qualified), true, 0);
	MemoryContextSwitchTo(caller);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "syncular: reading the statement's partitions failed");
	n = (int) SPI_processed;
	*partitions = palloc(sizeof(char *) * Max(n, 1));
	for (int i = 0; i < n; i++)
		(*partitions)[i] = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);
	SPI_freetuptable(SPI_tuptable);
	return n;
}

/* ARRAY[blobId of each blob_ref column] of a materialized row (NULL for a NULL column) */
static void
append_blob_ids(StringInfo sql, const SyncTable *t)
{
	bool		first = true;

	appendStringInfoString(sql, ", ARRAY[");
	for (int c = 0; c < t->ncolumns; c++)
		if (t->columns[c].type == SSP_COL_BLOB_REF)
		{
			appendStringInfo(sql, "%s(%s::jsonb ->> 'blobId')", first ? "" : ", ",
							 quote_identifier(t->columns[c].name));
			first = false;
		}
	appendStringInfoString(sql, "]::text[] AS b");
}

static bool
has_blob_refs(const SyncTable *t)
{
	if (!t->materialize)
		return false;
	for (int c = 0; c < t->ncolumns; c++)
		if (t->columns[c].type == SSP_COL_BLOB_REF)
			return true;
	return false;
}

/*
 * The log statement of one table and event: $1 partition, $2 table name, $3 commit_seq,
 * $4 first change index; answers the number of changes appended.  n = rows written (from the
 * NEW transition table), o = rows before (OLD transition table, or the table itself for
 * TRUNCATE).
 */
static char *
log_sql(const SyncTable *t, SyncCaptureEvent ev)
{
	StringInfoData s;
	bool		blobs = has_blob_refs(t);

	initStringInfo(&s);
	appendStringInfoString(&s, "WITH n AS MATERIALIZED (");
	if (ev == SYNC_EV_INSERT || ev == SYNC_EV_UPDATE)
	{
		appendStringInfoString(&s, "SELECT _sync_row_id AS r, _sync_server_version AS v, "
							   "_sync_scopes AS s, _sync_payload AS pl");
		if (blobs)
			append_blob_ids(&s, t);
		appendStringInfoString(&s, " FROM sync_new WHERE _sync_partition = $1), ");
	}
	else
		appendStringInfo(&s, "SELECT NULL::text AS r, NULL::int8 AS v, NULL::jsonb AS s, "
						 "NULL::bytea AS pl%s WHERE false), ", blobs ? ", NULL::text[] AS b" : "");
	appendStringInfoString(&s, "o AS MATERIALIZED (");
	if (ev == SYNC_EV_INSERT)
		appendStringInfoString(&s, "SELECT NULL::text AS r, NULL::jsonb AS s WHERE false), ");
	else
		appendStringInfo(&s, "SELECT _sync_row_id AS r, _sync_scopes AS s FROM %s "
						 "WHERE _sync_partition = $1), ",
						 ev == SYNC_EV_TRUNCATE ? t->qualified : "sync_old");
	appendStringInfoString(&s,
						   "d AS MATERIALIZED (SELECT o.r, o.s, n.r IS NULL AS gone FROM o "
						   " LEFT JOIN n ON n.r = o.r WHERE n.r IS NULL OR n.s <> o.s), "
						   "u AS MATERIALIZED (SELECT n.*, o.r IS NULL AS fresh, "
						   " (o.r IS NULL OR o.s <> n.s) AS moved FROM n LEFT JOIN o ON o.r = n.r), "
						   "x AS MATERIALIZED (SELECT ($4 + row_number() OVER (ORDER BY y.k, "
						   " y.r COLLATE \"C\") - 1)::int4 AS idx, y.r, y.op, y.v, y.s, y.pl FROM "
						   " (SELECT 0 AS k, d.r, 2::int2 AS op, NULL::int8 AS v, d.s, NULL::bytea AS pl "
						   "  FROM d UNION ALL SELECT 1, u.r, 1::int2, u.v, u.s, u.pl FROM u) y), "
						   "c AS (INSERT INTO syncular.sync_changes (partition, commit_seq, idx, tbl, "
						   " row_id, op, row_version, scopes, payload) "
						   " SELECT $1, $3, x.idx, $2, x.r, x.op, x.v, x.s, x.pl FROM x), "
						   "sc AS (INSERT INTO syncular.sync_change_scopes (partition, tbl, var, value, "
						   " commit_seq) SELECT $1, $2, e.var, e.value, $3 FROM (SELECT DISTINCT "
						   " k.key AS var, k.value FROM x, pg_catalog.jsonb_each_text(x.s) k) e "
						   " WHERE NOT EXISTS (SELECT 1 FROM syncular.sync_change_scopes z "
						   "  WHERE z.partition = $1 AND z.tbl = $2 AND z.var = e.var "
						   "  AND z.value = e.value AND z.commit_seq = $3 OFFSET 0)), "
						   "tb AS (INSERT INTO syncular.sync_tombstones AS t (partition, tbl, row_id, "
						   " commit_seq) SELECT $1, $2, d.r, $3 FROM d WHERE d.gone "
						   " ON CONFLICT (partition, tbl, row_id) DO UPDATE SET commit_seq = EXCLUDED.commit_seq), "
						   "tc AS (DELETE FROM syncular.sync_tombstones t WHERE t.ctid = ANY (ARRAY("
						   " SELECT z.ctid FROM u, LATERAL (SELECT y.ctid FROM syncular.sync_tombstones y "
						   "  WHERE y.partition = $1 AND y.tbl = $2 AND y.row_id = u.r OFFSET 0) z "
						   " WHERE u.fresh))), "
						   "rd AS (DELETE FROM syncular.sync_row_scopes rs WHERE rs.ctid = ANY (ARRAY("
						   " SELECT z.ctid FROM d, pg_catalog.jsonb_each_text(d.s) k, LATERAL (SELECT y.ctid "
						   "  FROM syncular.sync_row_scopes y WHERE y.partition = $1 AND y.tbl = $2 "
						   "  AND y.var = k.key AND y.value = k.value AND y.row_id = d.r OFFSET 0) z "
						   " WHERE NOT EXISTS (SELECT 1 FROM u WHERE u.r = d.r "
						   "  AND (u.s ->> k.key) = k.value)))), "
						   "ri AS (INSERT INTO syncular.sync_row_scopes (partition, tbl, var, value, row_id) "
						   " SELECT $1, $2, k.key, k.value, u.r FROM u, pg_catalog.jsonb_each_text(u.s) k "
						   " WHERE u.moved AND NOT EXISTS (SELECT 1 FROM syncular.sync_row_scopes z "
						   "  WHERE z.partition = $1 AND z.tbl = $2 AND z.var = k.key AND z.value = k.value "
						   "  AND z.row_id = u.r COLLATE \"C\" OFFSET 0) "
						   " ORDER BY k.key, k.value, u.r COLLATE \"C\"), "
						   "br AS (DELETE FROM syncular.sync_blob_refs b WHERE b.ctid = ANY (ARRAY("
						   " SELECT z.ctid FROM d, LATERAL (SELECT y.ctid FROM syncular.sync_blob_refs y "
						   "  WHERE y.partition = $1 AND y.tbl = $2 AND y.row_id = d.r OFFSET 0) z "
						   " WHERE d.gone))) ");
	if (blobs)
		appendStringInfoString(&s,
							   ", bd AS (DELETE FROM syncular.sync_blob_refs b WHERE b.ctid = ANY (ARRAY("
							   " SELECT z.ctid FROM u, LATERAL (SELECT y.ctid, y.blob_id FROM "
							   "  syncular.sync_blob_refs y WHERE y.partition = $1 AND y.tbl = $2 "
							   "  AND y.row_id = u.r OFFSET 0) z WHERE NOT (z.blob_id = ANY (u.b))))), "
							   "bi AS (INSERT INTO syncular.sync_blob_refs (partition, tbl, row_id, blob_id) "
							   " SELECT DISTINCT $1, $2, u.r, i FROM u, pg_catalog.unnest(u.b) i "
							   " WHERE i IS NOT NULL ON CONFLICT DO NOTHING) ");
	appendStringInfoString(&s, "SELECT count(*) FROM x");
	return s.data;
}

static SPIPlanPtr
log_plan(const SyncSchema *schema, int ti, SyncCaptureEvent ev)
{
	if (log_plans == NULL || log_generation != schema->generation)
	{
		if (log_plans != NULL)
		{
			for (int i = 0; i < nlog_plans; i++)
				if (log_plans[i])
					SPI_freeplan(log_plans[i]);
			pfree(log_plans);
		}
		nlog_plans = Max(schema->ntables, 1) * SYNC_EV_COUNT;
		log_plans = MemoryContextAllocZero(TopMemoryContext, sizeof(SPIPlanPtr) * nlog_plans);
		log_generation = schema->generation;
	}
	if (log_plans[ti * SYNC_EV_COUNT + ev] == NULL)
		log_plans[ti * SYNC_EV_COUNT + ev] = keep(log_sql(&schema->tables[ti], ev), 4,
												  (Oid[]) {TEXTOID, TEXTOID, INT8OID, INT4OID});
	return log_plans[ti * SYNC_EV_COUNT + ev];
}

/*
 * Append what the statement (event ev on table ti) wrote to `partition` to its commit
 * commit_seq, the changes numbered from first_idx; returns how many changes were appended.
 */
int64
sync_storage_capture_append(const SyncSchema *schema, int ti, SyncCaptureEvent ev,
							const char *partition, int64 commit_seq, int32 first_idx)
{
	MemoryContext caller = CurrentMemoryContext;
	SPIPlanPtr	plan = log_plan(schema, ti, ev);
	Datum		args[4];
	bool		isnull;
	int			rc;
	int64		n;

	args[0] = CStringGetTextDatum(partition);
	args[1] = CStringGetTextDatum(schema->tables[ti].name);
	args[2] = Int64GetDatum(commit_seq);
	args[3] = Int32GetDatum(first_idx);
	rc = SPI_execute_plan(plan, args, NULL, false, 0);
	MemoryContextSwitchTo(caller);
	if (rc != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "syncular: appending captured changes failed");
	n = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	SPI_freetuptable(SPI_tuptable);
	return n;
}
