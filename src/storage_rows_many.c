/*
 * storage_rows_many.c — the writes of several rows of one synced table, one commit's batch
 * (sync_storage_rows_upsert): the rows of a kind by the direct write (storage_rowdirect.c,
 * one SyncDirectBatch) where it allows, the others by one statement over arrays.  Conventions as in storage.c.
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/lsyscache.h"

#include "storage_rows.h"

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
	sync_rows_append_insert_columns(sql, t);
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
	sync_rows_append_on_conflict_update(&sql, t);
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
	if (sync_rows_engine_write(*plan, many_args(t, partition, n, rows), NULL) != (uint64) n)
		for (int k = 0; k < n; k++)
			ups[(*nups)++] = rows[k];
}

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
	SyncDirectBatch *b;
	MemoryContext row_cxt;
	MemoryContext caller;
	int			left = 0;

	if (n == 0)
		return 0;
	rel = sync_rows_open_synced(t, tp, RowExclusiveLock);
	b = sync_rowdirect_begin(rel);
	row_cxt = AllocSetContextCreate(CurrentMemoryContext, "syncular row write",
									ALLOCSET_DEFAULT_SIZES);
	caller = MemoryContextSwitchTo(row_cxt);
	for (int k = 0; k < n; k++)
	{
		Datum	   *v;
		char	   *nl;

		sync_rows_args(t, partition, rows[k], &v, &nl);
		if (!sync_rows_write_direct(b, rel, t, v, nl, rows[k]->scopes_json, rows[k]->stored))
			rows[left++] = rows[k];
		MemoryContextReset(row_cxt);
	}
	MemoryContextSwitchTo(caller);
	MemoryContextDelete(row_cxt);
	sync_rowdirect_end(b);
	table_close(rel, NoLock);
	return left;
}

void
sync_storage_rows_upsert(const SyncSchema *schema, int table_index, const char *partition,
						 int n, const SyncRowWrite *rows)
{
	const SyncTable *t = &schema->tables[table_index];
	TablePlans *tp = sync_rows_table_plans(schema, table_index);
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
	 * Every row of a kind by the direct write where it allows, in one batch (one snapshot, the
	 * key scans rescanned per row); what it leaves by the statement.  With the C library's heap
	 * kept (syncular.malloc_trim_threshold) the direct write is the cheaper at every size
	 * (bench/README.md "Rounds of many operations: the C library's heap trimming").
	 */
	nupd = write_direct_many(t, tp, partition, nupd, upd);
	nins = write_direct_many(t, tp, partition, nins, ins);
	write_or_defer(&tp->update_many, build_update_many, t, partition, nupd, upd, ups, &nups);
	write_or_defer(&tp->insert_many, build_insert_many, t, partition, nins, ins, ups, &nups);
	if (nups > 0 && tp->upsert_many == NULL)
		tp->upsert_many = build_upsert_many(t);
	if (nups > 0)
		sync_rows_engine_write(tp->upsert_many, many_args(t, partition, nups, ups), NULL);
	scratch_end(caller);
}

