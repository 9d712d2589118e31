/*
 * storage_rows.c — the engine's reads and writes of synced rows (per-table statements that follow
 * the compiled schema: read, read-ahead, upsert, batched upsert, delete).  Conventions as in
 * storage.c; the declared-reference children statement is storage_refs.c.
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/table.h"
#include "utils/regproc.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "capture.h"
#include "storage_internal.h"
#include "storage_rowdirect.h"
#include "storage_scan.h"

/*
 * A statement that writes synced rows for the engine (push, reference actions): the capture
 * triggers (capture_row.c, capture_log.c) skip it, the engine logs its own commit.  The depth is
 * restored on error too; capture_log.c also clears it at transaction end.
 */
static uint64
run_engine_write(SPIPlanPtr plan, Datum *values, const char *nulls)
{
	volatile uint64 n = 0;

	sync_capture_engine_depth++;
	PG_TRY();
	{
		n = run(plan, values, nulls, false, 0);
	}
	PG_FINALLY();
	{
		sync_capture_engine_depth--;
	}
	PG_END_TRY();
	return n;
}

/* ---------------------------------------------------------------- per-table statements */

typedef struct TablePlans
{
	Oid			relid;			/* the synced table, as last opened by a keyed read */
	Oid			nsp;
	SPIPlanPtr	upsert;
	SPIPlanPtr	del;
	SPIPlanPtr	prefetch;		/* many rows (+ tombstones) by id, one statement */
	SPIPlanPtr	upsert_many;	/* many rows' upserts, one statement (built on first use) */
	SPIPlanPtr	update;			/* a stored row with unchanged scopes (built on first use) */
	SPIPlanPtr	update_many;	/* many such rows, one statement (built on first use) */
	SPIPlanPtr	insert;			/* a row read as absent (built on first use) */
	SPIPlanPtr	insert_many;	/* many such rows, one statement (built on first use) */
} TablePlans;

static void
free_table_plans(void *entry)
{
	TablePlans *tp = entry;

	if (tp->upsert)
		SPI_freeplan(tp->upsert);
	if (tp->del)
		SPI_freeplan(tp->del);
	if (tp->prefetch)
		SPI_freeplan(tp->prefetch);
	if (tp->upsert_many)
		SPI_freeplan(tp->upsert_many);
	if (tp->update)
		SPI_freeplan(tp->update);
	if (tp->update_many)
		SPI_freeplan(tp->update_many);
	if (tp->insert)
		SPI_freeplan(tp->insert);
	if (tp->insert_many)
		SPI_freeplan(tp->insert_many);
}

static PlanCache table_plan_cache = {.entry_size = sizeof(TablePlans), .free_entry = free_table_plans};

/*
 * The upsert's conflict clause, shared by the one-row and the many-row statement: every
 * materialized column and the _sync_* columns take the incoming values; closes the "up" CTE.
 */
static void
append_on_conflict_update(StringInfo sql, const SyncTable *t)
{
	appendStringInfoString(sql, "ON CONFLICT (_sync_partition, _sync_row_id) DO UPDATE SET ");
	if (t->materialize)
		for (int i = 0; i < t->ncolumns; i++)
		{
			const char *q = quote_identifier(t->columns[i].name);

			appendStringInfo(sql, "%s = EXCLUDED.%s, ", q, q);
		}
	appendStringInfoString(sql,
						   "_sync_server_version = EXCLUDED._sync_server_version, "
						   "_sync_scopes = EXCLUDED._sync_scopes, "
						   "_sync_payload = EXCLUDED._sync_payload, "
						   "_sync_column_versions = EXCLUDED._sync_column_versions "
						   "RETURNING 1), ");
}

/* "INSERT INTO <table> AS t (<every column a write gives>) " */
static void
append_insert_columns(StringInfo sql, const SyncTable *t)
{
	appendStringInfo(sql, "INSERT INTO %s AS t (_sync_partition, _sync_row_id", t->qualified);
	if (t->materialize)
		for (int i = 0; i < t->ncolumns; i++)
			appendStringInfo(sql, ", %s", quote_identifier(t->columns[i].name));
	appendStringInfoString(sql, ", _sync_server_version, _sync_scopes, _sync_payload, "
						   "_sync_column_versions) ");
}

/* The one-row upsert's INSERT of the row, from its parameters (one_row_types). */
static void
append_row_insert(StringInfo sql, const SyncTable *t)
{
	append_insert_columns(sql, t);
	appendStringInfoString(sql, "VALUES ($1, $2");
	if (t->materialize)
		for (int i = 0; i < t->ncolumns; i++)
			appendStringInfo(sql, ", $%d::%s", 8 + i, column_sql_type(t->columns[i].type));
	appendStringInfoString(sql, ", $3, $4::jsonb, $5, $6) ");
}

/* The parameter types of the one-row upsert (and of its plain-update form). */
static Oid *
one_row_types(const SyncTable *t, int *nargs)
{
	Oid		   *types;

	*nargs = 7 + (t->materialize ? t->ncolumns : 0);
	types = palloc(sizeof(Oid) * *nargs);
	types[0] = TEXTOID;			/* partition */
	types[1] = TEXTOID;			/* row id */
	types[2] = INT8OID;			/* server version */
	types[3] = TEXTOID;			/* scopes json */
	types[4] = BYTEAOID;		/* payload */
	types[5] = BYTEAOID;		/* column versions */
	types[6] = TEXTOID;			/* tbl */
	if (t->materialize)
		for (int i = 0; i < t->ncolumns; i++)
			types[7 + i] = column_type_oid(t->columns[i].type);
	return types;
}

/* Each statement of a table is prepared on its first use (the table_plans entry starts empty). */
static SPIPlanPtr
build_prefetch(const SyncTable *t)
{
	StringInfoData sql;

	/*
	 * read-ahead of a commit's rows: every id with its stored row or, when absent, its
	 * tombstone (the same answers as get and P_TOMBSTONE_GET), so a multi-op commit reads its
	 * rows in one statement per table instead of one or two per operation.  LATERAL ... LIMIT 1
	 * keeps every read a key probe even in the generic plan (a flattened join hashed the whole
	 * partition).
	 */
	initStringInfo(&sql);
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
	return prepare(sql.data, 3, (Oid[]) {TEXTOID, TEXTARRAYOID, TEXTOID});
}

static SPIPlanPtr
build_upsert(const SyncTable *t)
{
	StringInfoData sql;
	Oid		   *types;
	int			nargs;

	/*
	 * upsert + row-scope index sync, one statement.  The row's entries are exactly its stored
	 * scopes (o: the row before the statement, every CTE reads the same snapshot), so only the
	 * entries of a changed scope value are touched, each by its primary key (there is no by-row
	 * index: docs/storage.md): the old value's entry found by a key probe (a LATERAL OFFSET 0
	 * subquery: as a join, a generic plan made on a never-analyzed table could scan the
	 * partition's entries instead) and deleted by ctid; the new one inserted unless it is
	 * there: a full-key probe (OFFSET 0 keeps it one), made only for a value not among the old
	 * scopes (the OFFSET 0 subquery filters first; as one WHERE, the planner ran the probe
	 * first).  The partition lock excludes a concurrent writer of the same entry, and a plain
	 * insert logs no speculative-insertion confirm.  A row whose scopes stay reads and writes
	 * no entry.
	 */
	types = one_row_types(t, &nargs);
	initStringInfo(&sql);
	appendStringInfo(&sql, "WITH o AS MATERIALIZED (SELECT x._sync_scopes AS s FROM %s x "
					 " WHERE x._sync_partition = $1 AND x._sync_row_id = $2), ",
					 t->qualified);
	appendStringInfoString(&sql, "up AS (");
	append_row_insert(&sql, t);
	append_on_conflict_update(&sql, t);
	appendStringInfoString(&sql,
						   "del AS (DELETE FROM syncular.sync_row_scopes rs WHERE rs.ctid = ANY (ARRAY("
						   " SELECT z.ctid FROM o, pg_catalog.jsonb_each_text(o.s) e, LATERAL (SELECT y.ctid "
						   "  FROM syncular.sync_row_scopes y WHERE ($4::jsonb ->> e.key) IS DISTINCT FROM e.value "
						   "  AND y.partition = $1 AND y.tbl = $7 AND y.var = e.key AND y.value = e.value "
						   "  AND y.row_id = $2 OFFSET 0) z))), "
						   "ins AS (INSERT INTO syncular.sync_row_scopes "
						   " (partition, tbl, var, value, row_id) "
						   " SELECT $1, $7, e.key, e.value, $2 "
						   " FROM (SELECT e.key, e.value FROM pg_catalog.jsonb_each_text($4::jsonb) e "
						   "  WHERE NOT EXISTS (SELECT 1 FROM o WHERE (o.s ->> e.key) = e.value) "
						   "  OFFSET 0) e "
						   " WHERE NOT EXISTS (SELECT 1 FROM syncular.sync_row_scopes z "
						   "  WHERE z.partition = $1 AND z.tbl = $7 AND z.var = e.key "
						   "  AND z.value = e.value AND z.row_id = $2 OFFSET 0)) "
						   "SELECT count(*) FROM up");
	return prepare(sql.data, nargs, types);
}

static SPIPlanPtr
build_delete(const SyncTable *t)
{
	StringInfoData sql;

	/*
	 * delete the row with its row-scope entries (key probes from the scopes the deleted row
	 * carried, deleted by ctid as in the upsert) and blob-ref entries, one statement
	 */
	initStringInfo(&sql);
	appendStringInfo(&sql,
					 "WITH d AS (DELETE FROM %s WHERE _sync_partition = $1 AND _sync_row_id = $2 "
					 "RETURNING _sync_scopes), "
					 "rs AS (DELETE FROM syncular.sync_row_scopes r WHERE r.ctid = ANY (ARRAY("
					 " SELECT z.ctid FROM d, pg_catalog.jsonb_each_text(d._sync_scopes) e, LATERAL ("
					 "  SELECT y.ctid FROM syncular.sync_row_scopes y WHERE y.partition = $1 "
					 "  AND y.tbl = $3 AND y.var = e.key AND y.value = e.value AND y.row_id = $2 "
					 "  OFFSET 0) z))), "
					 "br AS (DELETE FROM syncular.sync_blob_refs WHERE partition = $1 "
					 " AND tbl = $3 AND row_id = $2) "
					 "SELECT count(*) FROM d",
					 t->qualified);
	return prepare(sql.data, 3, (Oid[]) {TEXTOID, TEXTOID, TEXTOID});
}

/* The table's entry: its statements (each NULL until first used) and its OID as last opened. */
static TablePlans *
table_plans(const SyncSchema *schema, int table_index)
{
	return plan_cache_entry(&table_plan_cache, schema, table_index);
}

/* ---------------------------------------------------------------- rows */

/*
 * The synced table with lock: by the OID a previous read found while it still names this
 * table, else by its qualified name (after DDL, or the first time).
 */
static Relation
open_synced(const SyncTable *t, TablePlans *tp, LOCKMODE lock)
{
	Relation	rel = OidIsValid(tp->relid) ? try_table_open(tp->relid, lock) : NULL;

	if (rel != NULL && (RelationGetNamespace(rel) != tp->nsp ||
						strcmp(RelationGetRelationName(rel), t->name) != 0))
	{
		table_close(rel, lock);
		rel = NULL;
	}
	if (rel == NULL)
	{
		Oid			relid = RangeVarGetRelid(makeRangeVarFromNameList(
												 stringToQualifiedNameList(t->qualified)),
											 lock, false);

		rel = table_open(relid, NoLock);
		tp->relid = relid;
		tp->nsp = RelationGetNamespace(rel);
	}
	return rel;
}

/*
 * A stored row by its primary key (_sync_partition, _sync_row_id), in a fresh snapshot as a
 * statement of its own would read it: a direct probe of the key, no executor.
 */
bool
sync_storage_row_get(const SyncSchema *schema, int table_index, const char *partition,
					 const char *row_id, SyncStoredRow *out)
{
	const SyncTable *t = &schema->tables[table_index];
	TablePlans *tp = table_plans(schema, table_index);
	Snapshot	snap = sync_scan_snapshot_begin(false);
	Relation	rel = open_synced(t, tp, AccessShareLock);
	Oid			pkid = RelationGetPrimaryKeyIndex(rel);
	Relation	pk;
	TupleTableSlot *slot;
	ScanKeyData keys[2];
	bool		isnull;

	memset(out, 0, sizeof(*out));
	if (!OidIsValid(pkid))
		elog(ERROR, "syncular: %s has no primary key", t->qualified);
	pk = index_open(pkid, AccessShareLock);
	if (pk->rd_index->indnkeyatts != 2 ||
		pk->rd_index->indkey.values[0] != sync_scan_attnum(rel, "_sync_partition") ||
		pk->rd_index->indkey.values[1] != sync_scan_attnum(rel, "_sync_row_id"))
		elog(ERROR, "syncular: the primary key of %s is not (_sync_partition, _sync_row_id)",
			 t->qualified);
	slot = table_slot_create(rel, NULL);
	sync_scan_eq_key(&keys[0], pk, 1, text_datum(partition));
	sync_scan_eq_key(&keys[1], pk, 2, text_datum(row_id));
	if (sync_scan_fetch(rel, pk, keys, 2, snap, slot))
	{
		out->found = true;
		out->server_version = sync_scan_int8(slot, sync_scan_attnum(rel, "_sync_server_version"),
											 &isnull);
		out->scopes = sync_scan_varlena(slot, sync_scan_attnum(rel, "_sync_scopes"));
		out->payload = sync_scan_varlena(slot, sync_scan_attnum(rel, "_sync_payload"));
		out->column_versions = sync_scan_varlena(slot,
												 sync_scan_attnum(rel, "_sync_column_versions"));
	}
	ExecDropSingleTupleTableSlot(slot);
	index_close(pk, NoLock);
	table_close(rel, NoLock);
	sync_scan_snapshot_end(false);
	return out->found;
}

/*
 * False when a write to the table may write other rows too: it has triggers (including the
 * RI triggers of a foreign key) or rewrite rules, or cannot be found.  Catalog caches only.
 */
Oid
sync_storage_column_oid(uint8 type)
{
	return column_type_oid(type);
}

/* Every trigger of the relation is a capture trigger (sync_rowdirect_capture_only). */
static bool
only_capture_triggers(Oid relid)
{
	Relation	r = relation_open(relid, AccessShareLock);
	bool		only = sync_rowdirect_capture_only(r->trigdesc);

	relation_close(r, AccessShareLock);
	return only;
}

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
	plain = !((Form_pg_class) GETSTRUCT(tup))->relhasrules;
	if (plain && ((Form_pg_class) GETSTRUCT(tup))->relhastriggers)
		plain = only_capture_triggers(rel);
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
	if (tp->prefetch == NULL)
		tp->prefetch = build_prefetch(&schema->tables[table_index]);
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
 * The one-row upsert's write of a row that is stored with the same scopes (an update under the
 * partition lock), as a plain UPDATE with the upsert's parameters ($7, the table name, is
 * unused): the row-scope entries are already those of the scopes, so the statement needs
 * neither the row-scope delete and insert nor the upsert's speculative-insertion check.  (The
 * row is still locked, and the lock logged, before the update: any BEFORE ROW trigger makes the
 * executor lock it, as ON CONFLICT DO UPDATE does.)  The upsert's end state exactly, for a
 * table whose only triggers are the capture triggers (which skip engine writes).  Such a table
 * is written by storage_rowdirect.c instead (no statement, no lock record) unless something
 * there needs the executor.
 */
static SPIPlanPtr
build_update(const SyncTable *t)
{
	StringInfoData sql;
	int			nargs;
	Oid		   *types = one_row_types(t, &nargs);

	initStringInfo(&sql);
	appendStringInfo(&sql, "UPDATE %s AS t SET ", t->qualified);
	if (t->materialize)
		for (int i = 0; i < t->ncolumns; i++)
			appendStringInfo(&sql, "%s = $%d::%s, ", quote_identifier(t->columns[i].name), 8 + i,
							 column_sql_type(t->columns[i].type));
	appendStringInfoString(&sql, "_sync_server_version = $3, _sync_scopes = $4::jsonb, "
						   "_sync_payload = $5, _sync_column_versions = $6 "
						   "WHERE t._sync_partition = $1 AND t._sync_row_id = $2");
	return prepare(sql.data, nargs, types);
}

/*
 * The one-row upsert's write of a row the commit read as absent (a new row), with the
 * upsert's parameters: the row inserted unless its key is there, and only then its row-scope
 * entries (each unless present, as the upsert inserts them).  A new row has no stored scopes
 * to compare and no stale entries to delete, so the statement has neither the upsert's read
 * of the stored row nor its delete.  One result row per row inserted (SPI_processed; a
 * count(*) would always be one row); 0 rows: the key was taken meanwhile (a writer outside the
 * engine) and nothing was written; the caller runs the upsert.  (storage_rowdirect.c writes
 * such a row without a statement, and without the speculative insertion, unless its key is
 * there, even uncommitted, or the table needs the statement.)
 */
static SPIPlanPtr
build_insert(const SyncTable *t)
{
	StringInfoData sql;
	int			nargs;
	Oid		   *types = one_row_types(t, &nargs);

	initStringInfo(&sql);
	appendStringInfoString(&sql, "WITH up AS (");
	append_row_insert(&sql, t);
	appendStringInfoString(&sql,
						   "ON CONFLICT (_sync_partition, _sync_row_id) DO NOTHING RETURNING 1), "
						   "ins AS (INSERT INTO syncular.sync_row_scopes "
						   " (partition, tbl, var, value, row_id) "
						   " SELECT $1, $7, e.key, e.value, $2 "
						   " FROM (SELECT e.key, e.value FROM pg_catalog.jsonb_each_text($4::jsonb) e "
						   "  WHERE EXISTS (SELECT 1 FROM up) OFFSET 0) e "
						   " WHERE NOT EXISTS (SELECT 1 FROM syncular.sync_row_scopes z "
						   "  WHERE z.partition = $1 AND z.tbl = $7 AND z.var = e.key "
						   "  AND z.value = e.value AND z.row_id = $2 OFFSET 0)) "
						   "SELECT 1 FROM up");
	return prepare(sql.data, nargs, types);
}

/*
 * The write of a stored row whose scopes stay, or of a row read as absent, without a
 * statement (storage_rowdirect.c): true when done, false with nothing written.
 */
static bool
write_direct(Relation rel, const SyncTable *t, const Datum *v, const char *n,
			 const char *scopes_json, SyncRowStored stored)
{
	Datum		scopes = DirectFunctionCall1(jsonb_in, CStringGetDatum(scopes_json));
	SyncDirectRow row;

	if (!sync_rowdirect_row(rel, t, v, n, scopes, &row))
		return false;
	return stored == SYNC_ROW_SAME_SCOPES
		? sync_rowdirect_update(rel, v, &row)
		: sync_rowdirect_insert(rel, v, &row, DatumGetJsonbP(scopes), v[6]);
}

/*
 * The parameters of the single-row statements (build_table_plans) for one row, in *v / *n
 * (the nulls, ' ' or 'n'), in the current memory context.
 */
static void
row_args(const SyncTable *t, const char *partition, const SyncRowWrite *w, Datum **v, char **n)
{
	int			nargs = 7 + (t->materialize ? t->ncolumns : 0);

	*v = palloc(sizeof(Datum) * nargs);
	*n = palloc(nargs + 1);
	memset(*n, ' ', nargs);
	(*n)[nargs] = '\0';
	(*v)[0] = text_datum(partition);
	(*v)[1] = text_datum(w->row_id);
	(*v)[2] = Int64GetDatum(w->server_version);
	(*v)[3] = text_datum(w->scopes_json);
	(*v)[4] = PointerGetDatum(make_bytea(w->payload, w->payload_len));
	if (w->column_versions != NULL)
		(*v)[5] = PointerGetDatum(make_bytea(w->column_versions, w->column_versions_len));
	else
	{
		(*v)[5] = (Datum) 0;
		(*n)[5] = 'n';
	}
	(*v)[6] = text_datum(t->name);
	if (t->materialize)
		for (int i = 0; i < t->ncolumns; i++)
		{
			bool		isnull;

			(*v)[7 + i] = sync_storage_column_datum(&t->columns[i], &w->values[i], &isnull);
			if (isnull)
				(*n)[7 + i] = 'n';
		}
}

void
sync_storage_row_upsert(const SyncSchema *schema, int table_index, const char *partition,
						const char *row_id, int64 server_version, const char *scopes_json,
						const uint8 *payload, size_t payload_len,
						const uint8 *column_versions, size_t column_versions_len,
						const SspValue *values, SyncRowStored stored)
{
	const SyncTable *t = &schema->tables[table_index];
	TablePlans *tp = table_plans(schema, table_index);
	MemoryContext caller = scratch_begin();
	SyncRowWrite w = {row_id, server_version, scopes_json, payload, payload_len,
	column_versions, column_versions_len, values, stored};
	Datum	   *v;
	char	   *n;

	row_args(t, partition, &w, &v, &n);
	if (stored != SYNC_ROW_UNKNOWN)
	{
		Relation	rel = open_synced(t, tp, RowExclusiveLock);
		bool		done = write_direct(rel, t, v, n, scopes_json, stored);

		table_close(rel, NoLock);
		if (done)
		{
			scratch_end(caller);
			return;
		}
	}
	if (stored == SYNC_ROW_SAME_SCOPES)
	{
		if (tp->update == NULL)
			tp->update = build_update(t);
		/* gone meanwhile (a writer outside the engine): the upsert inserts it again */
		if (run_engine_write(tp->update, v, n) == 1)
		{
			scratch_end(caller);
			return;
		}
	}
	else if (stored == SYNC_ROW_ABSENT)
	{
		if (tp->insert == NULL)
			tp->insert = build_insert(t);
		/* stored meanwhile (a writer outside the engine): the upsert updates it */
		if (run_engine_write(tp->insert, v, n) == 1)
		{
			scratch_end(caller);
			return;
		}
	}
	if (tp->upsert == NULL)
		tp->upsert = build_upsert(t);
	run_engine_write(tp->upsert, v, n);
	scratch_end(caller);
}

/*
 * The upsert of many rows of one table with their row-scope entries in one statement: the
 * single-row statement of build_table_plans over parallel arrays ($2 row ids, $3 versions, $4
 * scopes, $5 payloads, $6 column versions, $8.. the materialized columns), rows in array order.
 * The caller guarantees each row id at most once (ON CONFLICT DO UPDATE cannot touch a row
 * twice in one statement).  o pairs each row's new scopes with its stored ones (a key probe of
 * the synced table per row, before the statement's writes); only the entries of a changed
 * scope value are touched, each read a probe of the row-scope primary key whatever the generic
 * plan estimates (OFFSET 0: as a join, a generic plan scanned the partition's entries on every
 * commit) and made only for a changed value (the test inside the probe's subquery is its
 * one-time filter).  Stale entries are found by those probes and deleted by ctid; with none found, the
 * delete reads nothing (a one-time filter), whatever plan it has.  New entries are inserted in
 * key order unless present (see the one-row statement).  Only rows whose scopes differ from
 * the stored ones (os IS DISTINCT FROM ns: new rows, moved rows) are expanded at all, and the
 * new scopes are expanded once per distinct value (nx, materialized: as a subquery the join
 * evaluated it again for every row) and joined back to their rows: each jsonb_each_text call
 * builds a tuplestore.
 */
/*
 * The parameter types of the many-row statements (see build_upsert_many) and their rows as
 * "ROWS FROM (...) AS x(row_id, ver, scopes, payload, cv, c0, ...)" appended to sql.
 */
static Oid *
append_many_rows(StringInfo sql, const SyncTable *t, int *nargs)
{
	Oid		   *types;

	*nargs = 7 + (t->materialize ? t->ncolumns : 0);
	types = palloc(sizeof(Oid) * *nargs);
	types[0] = TEXTOID;
	types[1] = TEXTARRAYOID;
	types[2] = INT8ARRAYOID;
	types[3] = JSONBARRAYOID;
	types[4] = BYTEAARRAYOID;
	types[5] = BYTEAARRAYOID;
	types[6] = TEXTOID;
	appendStringInfoString(sql,
						   "ROWS FROM (pg_catalog.unnest($2::text[]), "
						   "pg_catalog.unnest($3::int8[]), pg_catalog.unnest($4::jsonb[]), "
						   "pg_catalog.unnest($5::bytea[]), pg_catalog.unnest($6::bytea[])");
	if (t->materialize)
		for (int i = 0; i < t->ncolumns; i++)
		{
			types[7 + i] = get_array_type(column_type_oid(t->columns[i].type));
			appendStringInfo(sql, ", pg_catalog.unnest($%d::%s[])", 8 + i,
							 column_sql_type(t->columns[i].type));
		}
	appendStringInfoString(sql, ") AS x(row_id, ver, scopes, payload, cv");
	if (t->materialize)
		for (int i = 0; i < t->ncolumns; i++)
			appendStringInfo(sql, ", c%d", i);
	appendStringInfoChar(sql, ')');
	return types;
}

/*
 * The plain update of many stored rows whose scopes stay (SyncRowWrite.stored is
 * SYNC_ROW_SAME_SCOPES), the many-row form of build_update: parameters as in build_upsert_many ($7 unused), no row-scope
 * entry read or written, no speculative insertion, no probe of the stored row's scopes.
 * Returns the number of rows updated (a row gone meanwhile is not).
 */
static SPIPlanPtr
build_update_many(const SyncTable *t)
{
	StringInfoData sql;
	int			nargs;
	Oid		   *types;

	initStringInfo(&sql);
	appendStringInfo(&sql, "UPDATE %s AS t SET ", t->qualified);
	if (t->materialize)
		for (int i = 0; i < t->ncolumns; i++)
			appendStringInfo(&sql, "%s = x.c%d, ", quote_identifier(t->columns[i].name), i);
	appendStringInfoString(&sql, "_sync_server_version = x.ver, _sync_scopes = x.scopes, "
						   "_sync_payload = x.payload, _sync_column_versions = x.cv FROM ");
	types = append_many_rows(&sql, t, &nargs);
	appendStringInfoString(&sql, " WHERE t._sync_partition = $1 AND t._sync_row_id = x.row_id");
	return prepare(sql.data, nargs, types);
}

/* A many-row statement's start, "WITH x AS (SELECT * FROM ROWS FROM (...)), ": its types. */
static Oid *
begin_many(StringInfo sql, const SyncTable *t, int *nargs)
{
	Oid		   *types;

	initStringInfo(sql);
	appendStringInfoString(sql, "WITH x AS (SELECT * FROM ");
	types = append_many_rows(sql, t, nargs);
	appendStringInfoString(sql, "), ");
	return types;
}

/* "up AS (INSERT INTO <table> (...) SELECT <the rows of x> FROM x " of the many-row statements */
static void
append_many_insert(StringInfo sql, const SyncTable *t)
{
	appendStringInfoString(sql, "up AS (");
	append_insert_columns(sql, t);
	appendStringInfoString(sql, "SELECT $1, x.row_id");
	if (t->materialize)
		for (int i = 0; i < t->ncolumns; i++)
			appendStringInfo(sql, ", x.c%d", i);
	appendStringInfoString(sql, ", x.ver, x.scopes, x.payload, x.cv FROM x ");
}

/*
 * The insert of many rows the commit read as absent (SyncRowWrite.stored SYNC_ROW_ABSENT), the
 * many-row form of build_insert: parameters as in build_upsert_many, each row inserted unless
 * its key is there (a probe, NOT EXISTS, instead of ON CONFLICT: no speculative-insertion
 * confirm; the partition lock excludes a concurrent insert of the key, docs/storage.md), then the
 * row-scope entries of the rows inserted, each distinct scopes value expanded once, each entry
 * unless present, in key order (the returned row id in the default collation, as the rows' ids
 * are: the synced key column may have another, which would not compare with the entries').  One result row per row inserted (fewer: a key was taken
 * meanwhile by a writer outside the engine, and the caller runs the upsert).  The probes keep
 * their OFFSET 0, which makes each a subplan run per row (one key descent): without it the kept
 * plan joins against the whole table (a 100-op push of new rows took 2.75 times the instructions,
 * bench/push-instructions.sh 30 100).
 */
static SPIPlanPtr
build_insert_many(const SyncTable *t)
{
	StringInfoData sql;
	int			nargs;
	Oid		   *types;

	types = begin_many(&sql, t, &nargs);
	append_many_insert(&sql, t);
	appendStringInfo(&sql, "WHERE NOT EXISTS ("
					 "SELECT 1 FROM %s y WHERE y._sync_partition = $1 AND y._sync_row_id = x.row_id "
					 "OFFSET 0) RETURNING t._sync_row_id COLLATE pg_catalog.\"default\" AS row_id, "
					 "t._sync_scopes AS ns), ",
					 t->qualified);
	appendStringInfoString(&sql,
						   "nx AS MATERIALIZED (SELECT d.ns, e.key, e.value FROM (SELECT DISTINCT up.ns "
						   " FROM up) d, pg_catalog.jsonb_each_text(d.ns) e), "
						   "ins AS (INSERT INTO syncular.sync_row_scopes "
						   " (partition, tbl, var, value, row_id) "
						   " SELECT $1, $7, e.key, e.value, e.row_id "
						   " FROM (SELECT up.row_id, nx.key, nx.value FROM up JOIN nx ON nx.ns = up.ns "
						   "  OFFSET 0) e "
						   " WHERE NOT EXISTS (SELECT 1 FROM syncular.sync_row_scopes z "
						   "  WHERE z.partition = $1 AND z.tbl = $7 AND z.var = e.key "
						   "  AND z.value = e.value AND z.row_id = e.row_id OFFSET 0) "
						   " ORDER BY e.key, e.value, e.row_id) "
						   "SELECT 1 FROM up");
	return prepare(sql.data, nargs, types);
}

static SPIPlanPtr
build_upsert_many(const SyncTable *t)
{
	StringInfoData sql;
	int			nargs;
	Oid		   *types;

	types = begin_many(&sql, t, &nargs);
	appendStringInfo(&sql, "o AS MATERIALIZED (SELECT x.row_id, x.scopes AS ns, r.s AS os "
					 " FROM x LEFT JOIN LATERAL (SELECT y._sync_scopes AS s FROM %s y "
					 "  WHERE y._sync_partition = $1 AND y._sync_row_id = x.row_id OFFSET 0) r ON true), ",
					 t->qualified);
	append_many_insert(&sql, t);
	append_on_conflict_update(&sql, t);
	appendStringInfoString(&sql,
						   "stale AS MATERIALIZED (SELECT ARRAY("
						   " SELECT s.ctid FROM (SELECT o.row_id, o.os, o.ns FROM o "
						   "  WHERE o.os IS DISTINCT FROM o.ns OFFSET 0) o, "
						   "  pg_catalog.jsonb_each_text(o.os) e "
						   " CROSS JOIN LATERAL (SELECT s.ctid FROM syncular.sync_row_scopes s "
						   "  WHERE (o.ns ->> e.key) IS DISTINCT FROM e.value "
						   "  AND s.partition = $1 AND s.tbl = $7 AND s.var = e.key "
						   "  AND s.value = e.value AND s.row_id = o.row_id OFFSET 0) s) AS ids), "
						   "del AS (DELETE FROM syncular.sync_row_scopes rs WHERE rs.partition = $1 "
						   " AND rs.tbl = $7 AND rs.ctid = ANY ((SELECT stale.ids FROM stale)::pg_catalog.tid[]) "
						   " AND (SELECT pg_catalog.cardinality(stale.ids) FROM stale) > 0), "
						   "nx AS MATERIALIZED (SELECT d.ns, e.key, e.value FROM (SELECT DISTINCT o.ns FROM o "
						   " WHERE o.os IS DISTINCT FROM o.ns) d, pg_catalog.jsonb_each_text(d.ns) e), "
						   "ins AS (INSERT INTO syncular.sync_row_scopes "
						   " (partition, tbl, var, value, row_id) "
						   " SELECT $1, $7, e.key, e.value, e.row_id "
						   " FROM (SELECT o.row_id, nx.key, nx.value FROM o JOIN nx ON nx.ns = o.ns "
						   "  WHERE o.os IS DISTINCT FROM o.ns "
						   "  AND (o.os ->> nx.key) IS DISTINCT FROM nx.value OFFSET 0) e "
						   " WHERE NOT EXISTS (SELECT 1 FROM syncular.sync_row_scopes z "
						   "  WHERE z.partition = $1 AND z.tbl = $7 AND z.var = e.key "
						   "  AND z.value = e.value AND z.row_id = e.row_id OFFSET 0) "
						   " ORDER BY e.key, e.value, e.row_id) "
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
 * The parameters of a many-row statement (build_upsert_many, build_update_many) for the n rows
 * rows[0..n-1], in the current memory context.
 */
static Datum *
many_args(const SyncTable *t, const char *partition, int n, const SyncRowWrite **rows)
{
	int			ncols = t->materialize ? t->ncolumns : 0;
	Datum	   *args = palloc(sizeof(Datum) * (7 + ncols));
	Datum	   *ids = palloc(sizeof(Datum) * n);
	Datum	   *vers = palloc(sizeof(Datum) * n);
	Datum	   *scopes = palloc(sizeof(Datum) * n);
	Datum	   *payloads = palloc(sizeof(Datum) * n);
	Datum	   *cvs = palloc(sizeof(Datum) * n);
	bool	   *cv_null = palloc(sizeof(bool) * n);
	Datum	   *cols = palloc(sizeof(Datum) * Max(n * ncols, 1));
	bool	   *col_null = palloc(sizeof(bool) * Max(n * ncols, 1));

	for (int k = 0; k < n; k++)
	{
		const SyncRowWrite *w = rows[k];

		ids[k] = text_datum(w->row_id);
		vers[k] = Int64GetDatum(w->server_version);
		/* as the $4::jsonb cast of the single-row statement makes it */
		scopes[k] = scopes_jsonb(w->scopes_json, k > 0 ? rows[k - 1]->scopes_json : NULL,
								 k > 0 ? scopes[k - 1] : (Datum) 0);
		payloads[k] = PointerGetDatum(make_bytea(w->payload, w->payload_len));
		cv_null[k] = w->column_versions == NULL;
		cvs[k] = w->column_versions
			? PointerGetDatum(make_bytea(w->column_versions, w->column_versions_len))
			: (Datum) 0;
		for (int i = 0; i < ncols; i++)
			cols[i * n + k] = sync_storage_column_datum(&t->columns[i], &w->values[i], &col_null[i * n + k]);
	}
	args[0] = text_datum(partition);
	args[1] = datum_array(ids, NULL, n, TEXTOID);
	args[2] = datum_array(vers, NULL, n, INT8OID);
	args[3] = datum_array(scopes, NULL, n, JSONBOID);
	args[4] = datum_array(payloads, NULL, n, BYTEAOID);
	args[5] = datum_array(cvs, cv_null, n, BYTEAOID);
	args[6] = text_datum(t->name);
	for (int i = 0; i < ncols; i++)
		args[7 + i] = datum_array(cols + i * n, col_null + i * n, n,
								  column_type_oid(t->columns[i].type));
	return args;
}

/*
 * sync_storage_row_upsert for n rows of one table (distinct row ids), with the same rows and
 * row-scope entries as n single-row calls: the stored rows whose scopes stay (SAME_SCOPES) in one
 * plain update, as the single-row call updates one, then the others in one upsert.  A stored
 * row gone meanwhile (a writer outside the engine) leaves the update short: then the upsert
 * writes those rows too (the ones the update wrote again, with the values they now hold).
 */
/*
 * The n rows written by *plan (built by build on first use), one result row or row written per
 * row; when it writes fewer (a row gone, or a key taken, meanwhile: a writer outside the engine)
 * they all go to ups for the upsert, which writes those already written with the same values.
 */
static void
write_or_defer(SPIPlanPtr *plan, SPIPlanPtr (*build) (const SyncTable *), const SyncTable *t,
			   const char *partition, int n, const SyncRowWrite **rows,
			   const SyncRowWrite **ups, int *nups)
{
	if (n == 0)
		return;
	if (*plan == NULL)
		*plan = build(t);
	if (run_engine_write(*plan, many_args(t, partition, n, rows), NULL) != (uint64) n)
		for (int k = 0; k < n; k++)
			ups[(*nups)++] = rows[k];
}

/* the most rows of one kind (updates, inserts) of a batch written by the direct write */
#define DIRECT_BATCH_MAX 16

/*
 * Each of the n rows (stored SAME_SCOPES or ABSENT) by the direct write, as
 * sync_storage_row_upsert writes one; the rows it leaves (nothing written: the table or the row
 * needs the statement) are moved to the front of rows: their count.  Each row's arguments are
 * made in a memory context emptied after it.
 */
static int
write_direct_many(const SyncTable *t, TablePlans *tp, const char *partition, int n,
				  const SyncRowWrite **rows)
{
	Relation	rel;
	MemoryContext row_cxt;
	MemoryContext caller;
	int			left = 0;

	if (n == 0)
		return 0;
	rel = open_synced(t, tp, RowExclusiveLock);
	row_cxt = AllocSetContextCreate(CurrentMemoryContext, "syncular row write",
									ALLOCSET_DEFAULT_SIZES);
	caller = MemoryContextSwitchTo(row_cxt);
	for (int k = 0; k < n; k++)
	{
		Datum	   *v;
		char	   *nl;

		row_args(t, partition, rows[k], &v, &nl);
		if (!write_direct(rel, t, v, nl, rows[k]->scopes_json, rows[k]->stored))
			rows[left++] = rows[k];
		MemoryContextReset(row_cxt);
	}
	MemoryContextSwitchTo(caller);
	MemoryContextDelete(row_cxt);
	table_close(rel, NoLock);
	return left;
}

void
sync_storage_rows_upsert(const SyncSchema *schema, int table_index, const char *partition,
						 int n, const SyncRowWrite *rows)
{
	const SyncTable *t = &schema->tables[table_index];
	TablePlans *tp = table_plans(schema, table_index);
	MemoryContext caller;
	const SyncRowWrite **upd;
	const SyncRowWrite **ins;
	const SyncRowWrite **ups;
	int			nupd = 0;
	int			nins = 0;
	int			nups = 0;

	caller = scratch_begin();
	upd = palloc(sizeof(SyncRowWrite *) * n);
	ins = palloc(sizeof(SyncRowWrite *) * n);
	ups = palloc(sizeof(SyncRowWrite *) * n);
	for (int k = 0; k < n; k++)
	{
		if (rows[k].stored == SYNC_ROW_UNKNOWN)
			ups[nups++] = &rows[k];
		else if (rows[k].stored == SYNC_ROW_SAME_SCOPES)
			upd[nupd++] = &rows[k];
		else
			ins[nins++] = &rows[k];
	}
	/*
	 * A few rows of a kind each by the direct write (as the single-row call), more by the
	 * statement: the direct write costs about the same per row (46-54 us here), the statement a
	 * start (about 0.4 ms) and then less per row (about 31 us), so past about 20 rows it is
	 * cheaper (bench/README.md "Commits of several operations without statements").
	 */
	if (nupd <= DIRECT_BATCH_MAX)
		nupd = write_direct_many(t, tp, partition, nupd, upd);
	if (nins <= DIRECT_BATCH_MAX)
		nins = write_direct_many(t, tp, partition, nins, ins);
	write_or_defer(&tp->update_many, build_update_many, t, partition, nupd, upd, ups, &nups);
	write_or_defer(&tp->insert_many, build_insert_many, t, partition, nins, ins, ups, &nups);
	if (nups > 0 && tp->upsert_many == NULL)
		tp->upsert_many = build_upsert_many(t);
	if (nups > 0)
		run_engine_write(tp->upsert_many, many_args(t, partition, nups, ups), NULL);
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
	if (tp->del == NULL)
		tp->del = build_delete(&schema->tables[table_index]);
	run_engine_write(tp->del, v, NULL);
}
