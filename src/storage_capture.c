/*
 * storage_capture.c — the commit log's statements of ordinary SQL writes to synced tables
 * (docs/writing-with-sql.md; capture_log.c decides when they run): the partitions a statement's
 * transition tables touch, and the one set-based statement per (table, event) that appends a
 * statement's changes to its commit: sync_changes, sync_change_scopes, sync_tombstones,
 * sync_row_scopes and sync_blob_refs (how and why it is written as it is: capture_log.c's header
 * comment), in one of its shapes (SyncCaptureShape: the general statement, or a lean one for an
 * UPDATE that moved no row and for an INSERT), and the one-row statement of a statement that
 * wrote one row.  Plans are kept per backend: the partitions statement per event, the log
 * statement per (table, event, shape) until the compiled schema's generation changes, the
 * one-row statement once.  The transition tables are registered here with a fixed row estimate
 * per size class (sync_storage_capture_register): a kept plan's estimate is the one of the
 * statement it was first prepared for, so without it a plan made for one row (nested loops over
 * the transition tables) would be kept for a 100,000-row statement.  Every function needs an
 * SPI connection (with the transition tables registered) and restores the caller's memory
 * context, where its results are allocated.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/queryenvironment.h"
#include "utils/rel.h"

#include "storage.h"
#include "storage_internal.h"

/* kept plans: the log statement per (table, event, shape), the one-row statement */
static SPIPlanPtr *log_plans = NULL;	/* [(table * SYNC_EV_COUNT + ev) * SYNC_SHAPE_COUNT + shape] */
static SPIPlanPtr one_plans[4];	/* [change * 2 + fresh] */
static int	nlog_plans = 0;
static uint64 log_generation = 0;

static SPIPlanPtr
keep(const char *sql, int nargs, Oid *types)
{
	return sync_storage_keep_plan(sql, nargs, types, 0);
}

/*
 * Run a kept capture statement with jit and sequential scans off while it is planned and run:
 * a plan for many rows passes jit_above_cost, and compiling (with inlining and optimization past
 * their costs) spent more than the whole log statement of a 5,000-row COPY on expressions that
 * run a few times per row; and a plan kept from a statement that found a catalog table small
 * (sync_change_scopes of a new database) kept a sequential scan for its key probes once the
 * table had grown.  Every probe of these statements has its key's index.  The settings are
 * restored after the statement, and by the (sub)transaction's abort on an error.
 */
static int
run_capture_plan(SPIPlanPtr plan, Datum *args)
{
	int			nest = NewGUCNestLevel();
	int			rc;

	(void) set_config_option("jit", "off", PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0,
							 false);
	(void) set_config_option("enable_seqscan", "off", PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
							 true, 0, false);
	rc = SPI_execute_plan(plan, args, NULL, false, 0);
	AtEOXact_GUC(true, nest);
	return rc;
}

/*
 * The partitions a TRUNCATE empties (the table itself, `qualified`), in byte ("C") order (the
 * lock order; the other statements' partitions come from their transition tables,
 * capture_scan.c).  Their number; the names in *partitions.  Not kept (TRUNCATE is rare).
 */
int
sync_storage_capture_partitions(const char *qualified, char ***partitions)
{
	MemoryContext caller = CurrentMemoryContext;
	int			rc;
	int			n;

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

/* Whether the lean shapes and the one-row statement serve table t (they write no blob references). */
bool
sync_storage_capture_lean_ok(const SyncTable *t)
{
	return !has_blob_refs(t);
}

/*
 * Register the trigger's transition tables (sync_new, sync_old) for the log statement, with the
 * row estimate of their size class: 1 (a few rows: key probes and nested loops) or, bulk,
 * 100,000 (hash joins).  Parse analysis copies the estimate into the kept plan.
 */
#define BULK_ESTIMATE 100000

void
sync_storage_capture_register(struct TriggerData *td, bool bulk)
{
	Tuplestorestate *stores[2] = {td->tg_newtable, td->tg_oldtable};
	const char *names[2] = {td->tg_trigger->tgnewtable, td->tg_trigger->tgoldtable};

	for (int i = 0; i < 2; i++)
	{
		EphemeralNamedRelation enr;

		if (stores[i] == NULL || names[i] == NULL)
			continue;
		enr = palloc(sizeof(EphemeralNamedRelationData));
		enr->md.name = pstrdup(names[i]);
		enr->md.reliddesc = RelationGetRelid(td->tg_relation);
		enr->md.tupdesc = NULL;
		enr->md.enrtype = ENR_NAMED_TUPLESTORE;
		enr->md.enrtuples = bulk ? BULK_ESTIMATE : 1;
		enr->reldata = stores[i];
		if (SPI_register_relation(enr) != SPI_OK_REL_REGISTER)
			elog(ERROR, "syncular: transition tables could not be registered");
	}
}

/*
 * The lean log statements: the changes of rows that are all upserts, numbered in rowId byte
 * order from $4 exactly as the general statement numbers them (it has no delete change then),
 * their scope index entries; for an INSERT (SYNC_SHAPE_INSERT) also the tombstones of the
 * re-inserted rows (probed only when the partition's table has any) and the row-scope entries
 * of the new rows.  Same parameters and answer as log_sql.
 */
static char *
lean_sql(const SyncTable *t, SyncCaptureShape shape)
{
	StringInfoData s;
	StringInfoData k;

	/*
	 * k(key, value): the row's scope members, read by key from the table's scope variables
	 * (capture_row.c wrote every written row's _sync_scopes from exactly these) instead of
	 * jsonb_each_text, whose set-returning call per row costed more than the insert it feeds
	 */
	initStringInfo(&k);
	appendStringInfoString(&k, "CROSS JOIN LATERAL (VALUES ");
	for (int i = 0; i < t->nscopes; i++)
	{
		bool		seen = false;

		for (int j = 0; j < i; j++)
			seen = seen || strcmp(t->scopes[j].variable, t->scopes[i].variable) == 0;
		if (seen)
			continue;
		appendStringInfo(&k, "%s(%s::text, x.s ->> %s)", i > 0 ? ", " : "",
						 quote_literal_cstr(t->scopes[i].variable),
						 quote_literal_cstr(t->scopes[i].variable));
	}
	if (t->nscopes == 0)
		appendStringInfoString(&k, "(NULL::text, NULL::text)");
	appendStringInfoString(&k, ") k(key, value)");
	initStringInfo(&s);
	appendStringInfoString(&s,
						   "WITH x AS MATERIALIZED (SELECT ($4 + row_number() OVER (ORDER BY "
						   " _sync_row_id COLLATE \"C\") - 1)::int4 AS idx, _sync_row_id AS r, "
						   " _sync_server_version AS v, _sync_scopes AS s, _sync_payload AS pl "
						   " FROM sync_new WHERE _sync_partition = $1), "
						   "c AS (INSERT INTO syncular.sync_changes (partition, commit_seq, idx, tbl, "
						   " row_id, op, row_version, scopes, payload) "
						   " SELECT $1, $3, x.idx, $2, x.r, 1::int2, x.v, x.s, x.pl FROM x), "
						   "sc AS (INSERT INTO syncular.sync_change_scopes (partition, tbl, var, value, "
						   " commit_seq) SELECT $1, $2, e.var, e.value, $3 FROM (SELECT DISTINCT "
						   " k.key AS var, k.value FROM x ");
	appendStringInfo(&s, "%s WHERE k.value IS NOT NULL) e ", k.data);
	appendStringInfoString(&s,
						   " WHERE NOT EXISTS (SELECT 1 FROM syncular.sync_change_scopes z "
						   "  WHERE z.partition = $1 AND z.tbl = $2 AND z.var = e.var "
						   "  AND z.value = e.value AND z.commit_seq = $3 OFFSET 0)) ");
	if (shape == SYNC_SHAPE_INSERT)
	{
		appendStringInfoString(&s,
							   ", tc AS (DELETE FROM syncular.sync_tombstones t WHERE t.ctid = ANY (ARRAY("
							   " SELECT z.ctid FROM x, LATERAL (SELECT y.ctid FROM syncular.sync_tombstones y "
							   "  WHERE y.partition = $1 AND y.tbl = $2 AND y.row_id = x.r COLLATE \"C\" OFFSET 0) z "
							   " WHERE EXISTS (SELECT 1 FROM syncular.sync_tombstones w "
							   "  WHERE w.partition = $1 AND w.tbl = $2)))), "
							   "ri AS (INSERT INTO syncular.sync_row_scopes (partition, tbl, var, value, row_id) "
							   " SELECT $1, $2, k.key, k.value, x.r FROM x ");
		appendStringInfo(&s, "%s ", k.data);
		appendStringInfoString(&s,
							   " WHERE k.value IS NOT NULL AND NOT EXISTS (SELECT 1 FROM syncular.sync_row_scopes z "
							   "  WHERE z.partition = $1 AND z.tbl = $2 AND z.var = k.key AND z.value = k.value "
							   "  AND z.row_id = x.r COLLATE \"C\" OFFSET 0) "
							   " ORDER BY k.key, k.value, x.r COLLATE \"C\") ");
	}
	appendStringInfoString(&s, "SELECT count(*) FROM x");
	return s.data;
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
						   "  WHERE y.partition = $1 AND y.tbl = $2 AND y.row_id = u.r COLLATE \"C\" OFFSET 0) z "
						   " WHERE u.fresh))), "
						   "rd AS (DELETE FROM syncular.sync_row_scopes rs WHERE rs.ctid = ANY (ARRAY("
						   " SELECT z.ctid FROM d, pg_catalog.jsonb_each_text(d.s) k, LATERAL (SELECT y.ctid "
						   "  FROM syncular.sync_row_scopes y WHERE y.partition = $1 AND y.tbl = $2 "
						   "  AND y.var = k.key AND y.value = k.value AND y.row_id = d.r COLLATE \"C\" OFFSET 0) z "
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
						   "  WHERE y.partition = $1 AND y.tbl = $2 AND y.row_id = d.r COLLATE \"C\" OFFSET 0) z "
						   " WHERE d.gone))) ");
	if (blobs)
		appendStringInfoString(&s,
							   ", bd AS (DELETE FROM syncular.sync_blob_refs b WHERE b.ctid = ANY (ARRAY("
							   " SELECT z.ctid FROM u, LATERAL (SELECT y.ctid, y.blob_id FROM "
							   "  syncular.sync_blob_refs y WHERE y.partition = $1 AND y.tbl = $2 "
							   "  AND y.row_id = u.r COLLATE \"C\" OFFSET 0) z WHERE NOT (z.blob_id = ANY (u.b))))), "
							   "bi AS (INSERT INTO syncular.sync_blob_refs (partition, tbl, row_id, blob_id) "
							   " SELECT DISTINCT $1, $2, u.r, i FROM u, pg_catalog.unnest(u.b) i "
							   " WHERE i IS NOT NULL ON CONFLICT DO NOTHING) ");
	appendStringInfoString(&s, "SELECT count(*) FROM x");
	return s.data;
}

static SPIPlanPtr
log_plan(const SyncSchema *schema, int ti, SyncCaptureEvent ev, SyncCaptureShape shape)
{
	int			k;

	if (log_plans == NULL || log_generation != schema->generation)
	{
		if (log_plans != NULL)
		{
			for (int i = 0; i < nlog_plans; i++)
				if (log_plans[i])
					SPI_freeplan(log_plans[i]);
			pfree(log_plans);
		}
		nlog_plans = Max(schema->ntables, 1) * SYNC_EV_COUNT * SYNC_SHAPE_COUNT;
		log_plans = MemoryContextAllocZero(TopMemoryContext, sizeof(SPIPlanPtr) * nlog_plans);
		log_generation = schema->generation;
	}
	k = (ti * SYNC_EV_COUNT + ev) * SYNC_SHAPE_COUNT + shape;
	if (log_plans[k] == NULL)
		log_plans[k] = keep(shape == SYNC_SHAPE_IN_PLACE || shape == SYNC_SHAPE_INSERT
							? lean_sql(&schema->tables[ti], shape) : log_sql(&schema->tables[ti], ev), 4,
							(Oid[]) {TEXTOID, TEXTOID, INT8OID, INT4OID});
	return log_plans[k];
}

/*
 * Append what the statement (event ev on table ti) wrote to `partition` to its commit
 * commit_seq, the changes numbered from first_idx; returns how many changes were appended.
 */
int64
sync_storage_capture_append(const SyncSchema *schema, int ti, SyncCaptureEvent ev,
							SyncCaptureShape shape, const char *partition, int64 commit_seq,
							int32 first_idx)
{
	MemoryContext caller = CurrentMemoryContext;
	SPIPlanPtr	plan = log_plan(schema, ti, ev, shape);
	Datum		args[4];
	bool		isnull;
	int			rc;
	int64		n;

	args[0] = CStringGetTextDatum(partition);
	args[1] = CStringGetTextDatum(schema->tables[ti].name);
	args[2] = Int64GetDatum(commit_seq);
	args[3] = Int32GetDatum(first_idx);
	rc = run_capture_plan(plan, args);
	MemoryContextSwitchTo(caller);
	if (rc != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "syncular: appending captured changes failed");
	n = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	SPI_freetuptable(SPI_tuptable);
	return n;
}

/*
 * The one-row statement's text: the change (appended to sync_changes, with its scope index
 * entries) and for a fresh row its tombstone cleared and its row-scope entries; or, !change, the
 * fresh row's part alone (its change is in the commit row).  Each variant holds only the writes
 * it can make, so no statement starts a table modification it never runs.  Parameters: $1
 * partition, $2 table, $3 commit_seq, $4 idx, $5 rowId, $6 row version, $7 scopes, $8 payload.
 * The commit row is there already (written by an earlier statement of the transaction, or just
 * now: capture_log.c); a scope entry an earlier statement wrote to the commit is not written
 * again.
 */
static char *
one_sql(bool change, bool fresh)
{
	StringInfoData s;

	initStringInfo(&s);
	appendStringInfoString(&s, "WITH ");
	if (change)
		appendStringInfoString(&s,
							   "c AS (INSERT INTO syncular.sync_changes (partition, commit_seq, idx, tbl, "
							   " row_id, op, row_version, scopes, payload) "
							   " SELECT $1, $3, $4, $2, $5, 1::int2, $6, $7, $8), "
							   "sc AS (INSERT INTO syncular.sync_change_scopes (partition, tbl, var, value, "
							   " commit_seq) SELECT $1, $2, e.key, e.value, $3 FROM "
							   " pg_catalog.jsonb_each_text($7) e WHERE NOT EXISTS (SELECT 1 FROM "
							   " syncular.sync_change_scopes z WHERE z.partition = $1 AND z.tbl = $2 "
							   " AND z.var = e.key AND z.value = e.value AND z.commit_seq = $3 OFFSET 0))");
	if (change && fresh)
		appendStringInfoString(&s, ", ");
	if (fresh)
		appendStringInfoString(&s,
							   "tc AS (DELETE FROM syncular.sync_tombstones t "
							   " WHERE t.partition = $1 AND t.tbl = $2 AND t.row_id = $5), "
							   "ri AS (INSERT INTO syncular.sync_row_scopes (partition, tbl, var, value, row_id) "
							   " SELECT $1, $2, e.key, e.value, $5 FROM pg_catalog.jsonb_each_text($7) e "
							   " WHERE NOT EXISTS (SELECT 1 FROM syncular.sync_row_scopes z "
							   "  WHERE z.partition = $1 AND z.tbl = $2 AND z.var = e.key AND z.value = e.value "
							   "  AND z.row_id = $5 COLLATE \"C\" OFFSET 0) ORDER BY e.key, e.value)");
	appendStringInfoString(&s, " SELECT 1");
	return s.data;
}

/* The one-row statement of r: its change (change) and, r fresh, its tombstone and row scopes. */
static void
run_one(const SyncCaptureRow *r, bool change)
{
	MemoryContext caller = CurrentMemoryContext;
	Datum		v[8];
	int			rc;
	int			k = (change ? 2 : 0) + (r->fresh ? 1 : 0);

	if (one_plans[k] == NULL)
		one_plans[k] = sync_storage_keep_plan(one_sql(change, r->fresh), 8,
											  (Oid[]) {TEXTOID, TEXTOID, INT8OID, INT4OID, TEXTOID,
											  INT8OID, JSONBOID, BYTEAOID},
											  CURSOR_OPT_GENERIC_PLAN);
	v[0] = CStringGetTextDatum(r->partition);
	v[1] = CStringGetTextDatum(r->table);
	v[2] = Int64GetDatum(r->commit_seq);
	v[3] = Int32GetDatum(r->idx);
	v[4] = CStringGetTextDatum(r->row_id);
	v[5] = Int64GetDatum(r->version);
	v[6] = r->scopes;
	v[7] = r->payload;
	rc = run_capture_plan(one_plans[k], v);
	MemoryContextSwitchTo(caller);
	if (rc != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "syncular: appending a captured change failed");
	SPI_freetuptable(SPI_tuptable);
}

/*
 * The one-row statement: one upsert change of a statement that wrote one row (capture_scan.c
 * "one") appended to its transaction's commit, whose row is written (r->new_commit is false),
 * with its scope index entries and, for an inserted row, its tombstone cleared and its
 * row-scope entries: the same rows as the general log statement for this row.
 */
void
sync_storage_capture_one(const SyncCaptureRow *r)
{
	Assert(!r->new_commit);
	run_one(r, true);
}

/*
 * For an inserted row r whose change its new commit's row holds (sync_storage_capture_commit_one
 * wrote it) and whose row-scope entries sync_storage_capture_fresh_rows could not write: its
 * tombstone cleared and its row-scope entries, by the one-row statement.
 */
void
sync_storage_capture_fresh_rest(const SyncCaptureRow *r)
{
	Assert(r->fresh);
	run_one(r, false);
}
