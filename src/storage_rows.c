/*
 * storage_rows.c — the engine's reads and writes of synced rows (per-table statements that follow
 * the compiled schema: read, read-ahead, upsert, delete).  Conventions as in storage.c; the
 * declared-reference children statement is storage_refs.c, the writes of several rows of a
 * table storage_rows_many.c.
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
#include "storage_rows.h"
#include "storage_scan.h"

/*
 * A statement that writes synced rows for the engine (push, reference actions): the capture
 * triggers (capture_row.c, capture_log.c) skip it, the engine logs its own commit.  The depth is
 * restored on error too; capture_log.c also clears it at transaction end.
 */
uint64
sync_rows_engine_write(SPIPlanPtr plan, Datum *values, const char *nulls)
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
void
sync_rows_append_on_conflict_update(StringInfo sql, const SyncTable *t)
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
void
sync_rows_append_insert_columns(StringInfo sql, const SyncTable *t)
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
	sync_rows_append_insert_columns(sql, t);
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
	sync_rows_append_on_conflict_update(&sql, t);
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
TablePlans *
sync_rows_table_plans(const SyncSchema *schema, int table_index)
{
	return plan_cache_entry(&table_plan_cache, schema, table_index);
}

/* ---------------------------------------------------------------- rows */

/*
 * The synced table with lock: by the OID a previous read found while it still names this
 * table, else by its qualified name (after DDL, or the first time).
 */
Relation
sync_rows_open_synced(const SyncTable *t, TablePlans *tp, LOCKMODE lock)
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
	TablePlans *tp = sync_rows_table_plans(schema, table_index);
	Snapshot	snap = sync_scan_snapshot_begin(false);
	Relation	rel = sync_rows_open_synced(t, tp, AccessShareLock);
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
	TablePlans *tp = sync_rows_table_plans(schema, table_index);
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
bool
sync_rows_write_direct(SyncDirectBatch *b, Relation rel, const SyncTable *t, const Datum *v, const char *n,
			 const char *scopes_json, SyncRowStored stored)
{
	Datum		scopes = DirectFunctionCall1(jsonb_in, CStringGetDatum(scopes_json));
	SyncDirectRow row;

	if (!sync_rowdirect_row(rel, t, v, n, scopes, &row))
		return false;
	return stored == SYNC_ROW_SAME_SCOPES
		? sync_rowdirect_update(b, v, &row)
		: sync_rowdirect_insert(b, v, &row, DatumGetJsonbP(scopes), v[6]);
}

/*
 * The parameters of the single-row statements (build_table_plans) for one row, in *v / *n
 * (the nulls, ' ' or 'n'), in the current memory context.
 */
void
sync_rows_args(const SyncTable *t, const char *partition, const SyncRowWrite *w, Datum **v, char **n)
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
	TablePlans *tp = sync_rows_table_plans(schema, table_index);
	MemoryContext caller = scratch_begin();
	SyncRowWrite w = {row_id, server_version, scopes_json, payload, payload_len,
	column_versions, column_versions_len, values, stored};
	Datum	   *v;
	char	   *n;

	sync_rows_args(t, partition, &w, &v, &n);
	if (stored != SYNC_ROW_UNKNOWN)
	{
		Relation	rel = sync_rows_open_synced(t, tp, RowExclusiveLock);
		SyncDirectBatch *b = sync_rowdirect_begin(rel);
		bool		done = sync_rows_write_direct(b, rel, t, v, n, scopes_json, stored);

		sync_rowdirect_end(b);
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
		if (sync_rows_engine_write(tp->update, v, n) == 1)
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
		if (sync_rows_engine_write(tp->insert, v, n) == 1)
		{
			scratch_end(caller);
			return;
		}
	}
	if (tp->upsert == NULL)
		tp->upsert = build_upsert(t);
	sync_rows_engine_write(tp->upsert, v, n);
	scratch_end(caller);
}

void
sync_storage_row_delete(const SyncSchema *schema, int table_index, const char *partition,
						const char *row_id)
{
	TablePlans *tp = sync_rows_table_plans(schema, table_index);
	Datum		v[3];

	v[0] = text_datum(partition);
	v[1] = text_datum(row_id);
	v[2] = text_datum(schema->tables[table_index].name);
	if (tp->del == NULL)
		tp->del = build_delete(&schema->tables[table_index]);
	sync_rows_engine_write(tp->del, v, NULL);
}
