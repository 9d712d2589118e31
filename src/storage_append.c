/*
 * storage_append.c — the commit log's writes (SPEC §3, docs/storage.md "Commit log layout"): a
 * commit row with its applied result, its changes with their scope index entries and the
 * tombstones of deletes, and the one-statement append of a commit of one upsert.  Conventions as
 * in storage.c (statements prepared once per backend, values only as parameters); a catalog from
 * before 0.6.0 gets the older statements (sync_storage_log_before_06).
 */
#include "postgres.h"

#include "storage_internal.h"
#include "access/table.h"
#include "catalog/pg_type.h"
#include "utils/jsonb.h"

#include "storage_rowdirect.h"
#include "storage_scan.h"

enum
{
	A_COMMIT_INSERT,
	A_CHANGES_INSERT,
	A_COMMIT_APPEND_ONE,
	A_COMMIT_APPEND_ONE_SCOPES,
	A_COMMIT_APPEND_ONE_06,
	/* the same, for a catalog from before 0.6.0 (no sync_commits.result) */
	A_COMMIT_INSERT_05,
	A_RESULT_INSERT_NEW_05,
	A_COMMIT_APPEND_ONE_05,
	A_COUNT
};

typedef struct AppendSql
{
	const char *sql;
	int			nargs;
	Oid			types[16];
} AppendSql;

/*
 * The parts the one-upsert commit appends share (A_COMMIT_APPEND_ONE*): parameters $1 partition,
 * $2 commit_seq, $3 client_id, $4 client_commit_id, $5 actor_id, $6 created_at_ms,
 * $7 writer_version, $8 .. $13 the change (tbl, row_id, op, row_version, scopes, payload), $14
 * the result, $15 / $16 the change's one scope pair.
 */
#define APPEND_ONE_TYPES \
	{TEXTOID, INT8OID, TEXTOID, TEXTOID, TEXTOID, INT8OID, INT8OID, TEXTOID, TEXTOID, \
	 INT2OID, INT8OID, JSONBOID, BYTEAOID, TEXTOID, TEXTOID, TEXTOID}
#define APPEND_ONE_CHANGE_AND_SCOPES \
	"c AS (INSERT INTO syncular.sync_changes " \
	" (partition, commit_seq, idx, tbl, row_id, op, row_version, scopes, payload) " \
	" VALUES ($1, $2, 0, $8, $9, $10, $11, $12, $13)), " \
	"s AS (INSERT INTO syncular.sync_change_scopes (partition, tbl, var, value, commit_seq) " \
	" SELECT $1, $8, e.key, e.value, $2 FROM pg_catalog.jsonb_each_text($12) e) "
#define APPEND_ONE_COMMIT \
	"INSERT INTO syncular.sync_commits (partition, commit_seq, client_id, client_commit_id, " \
	" actor_id, created_at_ms, writer_version, result) " \
	" VALUES ($1, $2, $3, $4, $5, $6, $7, $14::jsonb)"

static const AppendSql append_sql[A_COUNT] = {
	[A_COMMIT_INSERT] = {
		/*
		 * $8: a pushed commit's applied result, its idempotency record (NULL for a commit of SQL
		 * writes).  The caller holds the partition lock and found no record after taking it, so
		 * sync_commits_by_client_commit cannot conflict: a plain insert.
		 */
		"INSERT INTO syncular.sync_commits (partition, commit_seq, client_id, client_commit_id, "
		"actor_id, created_at_ms, writer_version, result) "
		"VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb)",
	8, {TEXTOID, INT8OID, TEXTOID, TEXTOID, TEXTOID, INT8OID, INT8OID, TEXTOID}},
	[A_CHANGES_INSERT] = {
		/*
		 * A commit's changes (parallel arrays, one element per change): their sync_changes rows,
		 * their scope index entries and the tombstones of deletes, one statement for many
		 * changes instead of one per change.
		 * DISTINCT ON: a commit can delete the same row twice (delete, re-insert, delete) and
		 * ON CONFLICT DO UPDATE may not touch one row twice in a statement; every tombstone of
		 * the commit carries the same commit_seq, so one per row is the same end state.
		 * Scope entries: the commit_seq is new and only this commit (under the partition lock)
		 * writes it, so DISTINCT plus NOT EXISTS (entries an earlier statement of the same
		 * commit wrote) replace ON CONFLICT DO NOTHING and its speculative insertion; each
		 * distinct (tbl, scopes) is expanded once (the changes of a commit mostly share their
		 * scopes, and every jsonb_each_text call builds a tuplestore).  OFFSET 0
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
		" SELECT $1, d.tbl, d.var, d.value, $2 FROM (SELECT DISTINCT y.tbl, e.key AS var, "
		"  e.value FROM (SELECT DISTINCT x.tbl, x.scopes FROM x) y, "
		"  pg_catalog.jsonb_each_text(y.scopes) e) d "
		" WHERE NOT EXISTS (SELECT 1 FROM syncular.sync_change_scopes z WHERE z.partition = $1 "
		"  AND z.tbl = d.tbl AND z.var = d.var AND z.value = d.value AND z.commit_seq = $2 "
		"  OFFSET 0)) "
		"INSERT INTO syncular.sync_tombstones AS t (partition, tbl, row_id, commit_seq) "
		"SELECT DISTINCT ON (x.tbl, x.row_id) $1, x.tbl, x.row_id, $2 FROM x WHERE x.op = 2 "
		"ON CONFLICT (partition, tbl, row_id) DO UPDATE SET commit_seq = EXCLUDED.commit_seq",
	9, {TEXTOID, INT8OID, INT4ARRAYOID, TEXTARRAYOID, TEXTARRAYOID, INT2ARRAYOID, INT8ARRAYOID,
	JSONBARRAYOID, BYTEAARRAYOID}},
	[A_COMMIT_APPEND_ONE] = {
		/*
		 * A pushed commit of one upsert (the common realtime write) whose scopes are one
		 * (variable, value) pair $15 / $16: one sync_commits row with its applied result, its
		 * change ($8 .. $13, idx 0) and its scope index entry (sync_commits_by_scope,
		 * docs/storage.md "Commit log layout": no sync_changes row, no sync_change_scopes row).
		 */
		"INSERT INTO syncular.sync_commits (partition, commit_seq, client_id, client_commit_id, "
		" actor_id, created_at_ms, writer_version, result, tbl, row_id, op, row_version, scopes, "
		" payload, scope_var, scope_value) "
		" VALUES ($1, $2, $3, $4, $5, $6, $7, $14::jsonb, $8, $9, $10, $11, $12, $13, $15, $16)",
	16, APPEND_ONE_TYPES},
	[A_COMMIT_APPEND_ONE_SCOPES] = {
		/*
		 * A_COMMIT_APPEND_ONE for any other scopes (none, several pairs, a value that is not a
		 * string): the change's scope index entries are sync_change_scopes rows.  One object's
		 * scope keys are distinct, the commit_seq is new (see A_CHANGES_INSERT), and an upsert
		 * writes no tombstone.
		 */
		"WITH " APPEND_ONE_CHANGE_AND_SCOPES
		APPEND_ONE_COMMIT,
	16, APPEND_ONE_TYPES},
	[A_COMMIT_APPEND_ONE_06] = {
		/*
		 * A_COMMIT_APPEND_ONE for a catalog from before 0.7.0 (no change columns in
		 * sync_commits): the change row carries the commit's scope index entry
		 * (sync_changes_by_scope).
		 */
		"WITH c AS (INSERT INTO syncular.sync_changes "
		" (partition, commit_seq, idx, tbl, row_id, op, row_version, scopes, payload, scope_var, "
		" scope_value) VALUES ($1, $2, 0, $8, $9, $10, $11, $12, $13, $15, $16)) "
		APPEND_ONE_COMMIT,
	16, APPEND_ONE_TYPES},
	[A_COMMIT_INSERT_05] = {
		/* $8 (the result) goes to sync_push_results: A_RESULT_INSERT_NEW_05 */
		"INSERT INTO syncular.sync_commits (partition, commit_seq, client_id, client_commit_id, "
		"actor_id, created_at_ms, writer_version) VALUES ($1, $2, $3, $4, $5, $6, $7)",
	8, {TEXTOID, INT8OID, TEXTOID, TEXTOID, TEXTOID, INT8OID, INT8OID, TEXTOID}},
	[A_RESULT_INSERT_NEW_05] = {
		"INSERT INTO syncular.sync_push_results (partition, client_id, client_commit_id, result) "
		"VALUES ($1, $2, $3, $4::jsonb)",
	4, {TEXTOID, TEXTOID, TEXTOID, TEXTOID}},
	[A_COMMIT_APPEND_ONE_05] = {
		"WITH k AS (INSERT INTO syncular.sync_commits (partition, commit_seq, client_id, "
		" client_commit_id, actor_id, created_at_ms, writer_version) "
		" VALUES ($1, $2, $3, $4, $5, $6, $7)), "
		APPEND_ONE_CHANGE_AND_SCOPES
		"INSERT INTO syncular.sync_push_results (partition, client_id, client_commit_id, result) "
		"VALUES ($1, $3, $4, $14::jsonb)",
	16, APPEND_ONE_TYPES},
};

static SPIPlanPtr append_plans[A_COUNT];

static SPIPlanPtr
append_plan(int which)
{
	if (append_plans[which] == NULL)
		append_plans[which] = prepare(append_sql[which].sql, append_sql[which].nargs,
									  (Oid *) append_sql[which].types);
	return append_plans[which];
}

/* A commit row; result_json: a pushed commit's applied result, NULL for other commits. */
static void
commit_insert(const char *partition, int64 commit_seq, const char *client_id,
			  const char *client_commit_id, const char *actor_id, int64 created_at_ms,
			  int64 writer_version, const char *result_json)
{
	Datum		v[8];
	char		n[8] = {' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};

	v[0] = text_datum(partition);
	v[1] = Int64GetDatum(commit_seq);
	v[2] = text_datum(client_id);
	v[3] = text_datum(client_commit_id);
	v[4] = text_datum(actor_id);
	v[5] = Int64GetDatum(created_at_ms);
	v[6] = Int64GetDatum(writer_version);
	if (result_json != NULL)
		v[7] = text_datum(result_json);
	else
	{
		v[7] = (Datum) 0;
		n[7] = 'n';
	}
	if (!sync_storage_log_before_06())
	{
		run(append_plan(A_COMMIT_INSERT), v, n, false, 0);
		return;
	}
	run(append_plan(A_COMMIT_INSERT_05), v, n, false, 0);
	if (result_json != NULL)
	{
		Datum		r[4] = {v[0], v[2], v[3], v[7]};

		run(append_plan(A_RESULT_INSERT_NEW_05), r, NULL, false, 0);
	}
}

/* A commit row without a stored result (a commit of SQL writes, src/capture_log.c). */
void
sync_storage_commit_insert(const char *partition, int64 commit_seq, const char *client_id,
						   const char *client_commit_id, const char *actor_id,
						   int64 created_at_ms, int64 writer_version)
{
	commit_insert(partition, commit_seq, client_id, client_commit_id, actor_id, created_at_ms,
				  writer_version, NULL);
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
		/* as the $8::jsonb cast of the one-change statement makes it */
		scopes[k] = scopes_jsonb(c->scopes_json, k > 0 ? changes[k - 1].scopes_json : NULL,
								 k > 0 ? scopes[k - 1] : (Datum) 0);
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
	run(append_plan(A_CHANGES_INSERT), v, NULL, false, 0);
	scratch_end(caller);
}

/*
 * true when scopes is one pair {"var": "value"} (a string value): *var and *value get them as
 * text, as jsonb_each_text gives them.  Such a commit of one upsert keeps its change and scope
 * entry in its commit row (docs/storage.md "Commit log layout"; a commit of SQL writes too).
 */
static bool
one_scope_pair(Jsonb *scopes, Datum *var, Datum *value)
{
	JsonbIterator *it;
	JsonbValue	v;

	if (!JB_ROOT_IS_OBJECT(scopes) || JB_ROOT_COUNT(scopes) != 1)
		return false;
	it = JsonbIteratorInit(&scopes->root);
	if (JsonbIteratorNext(&it, &v, false) != WJB_BEGIN_OBJECT ||
		JsonbIteratorNext(&it, &v, false) != WJB_KEY)
		return false;
	*var = PointerGetDatum(cstring_to_text_with_len(v.val.string.val, v.val.string.len));
	if (JsonbIteratorNext(&it, &v, true) != WJB_VALUE || v.type != jbvString)
		return false;
	*value = PointerGetDatum(cstring_to_text_with_len(v.val.string.val, v.val.string.len));
	return true;
}

/*
 * The columns the direct inserts name (sync_rowdirect_insertable keeps its answers by the
 * arrays' addresses): every live column of sync_changes, sync_commits and sync_change_scopes,
 * in the catalog's layout (log_cols): since 0.7.0 sync_commits has the change columns and
 * sync_changes no scope_var / scope_value; before, the other way round.
 */
static const char *const change_cols[] = {"partition", "commit_seq", "idx", "tbl", "row_id",
"op", "row_version", "scopes", "payload", "scope_var", "scope_value"};
static const Oid change_types[] = {TEXTOID, INT8OID, INT4OID, TEXTOID, TEXTOID, INT2OID,
INT8OID, JSONBOID, BYTEAOID, TEXTOID, TEXTOID};
static const char *const commit_cols[] = {"partition", "commit_seq", "client_id",
"client_commit_id", "actor_id", "created_at_ms", "writer_version", "result", "tbl", "row_id",
"op", "row_version", "scopes", "payload", "scope_var", "scope_value"};
static const Oid commit_types[] = {TEXTOID, INT8OID, TEXTOID, TEXTOID, TEXTOID, INT8OID,
INT8OID, JSONBOID, TEXTOID, TEXTOID, INT2OID, INT8OID, JSONBOID, BYTEAOID, TEXTOID, TEXTOID};
static const char *const scope_cols[] = {"partition", "tbl", "var", "value", "commit_seq"};
static const Oid scope_types[] = {TEXTOID, TEXTOID, TEXTOID, TEXTOID, INT8OID};

/* How many of change_cols / commit_cols the catalog has (see above). */
static void
log_cols(int *nchange, int *ncommit)
{
	bool		inline_changes = sync_storage_log_inline();

	*nchange = inline_changes ? 9 : 11;
	*ncommit = inline_changes ? 16 : 8;
}

/*
 * A_COMMIT_APPEND_ONE's row (or A_COMMIT_APPEND_ONE_06's two rows, before 0.7.0; parameters
 * v / n; result (Datum) 0: NULL, a commit of SQL writes) without the statement: inserted as the
 * statement inserts it (storage_rowdirect.c: the writer fence's BEFORE INSERT trigger fired,
 * every index entry made), for less than the statement's executor start costs.  false, nothing
 * written, when a table needs the statement.
 */
static bool
append_one_direct(const Datum *v, const char *n, Datum result)
{
	/* the parameter of each column of change_cols and commit_cols (-1: idx 0, -2: result) */
	static const int change_param[] = {0, 1, -1, 7, 8, 9, 10, 11, 12, 14, 15};
	static const int commit_param[] = {0, 1, 2, 3, 4, 5, 6, -2, 7, 8, 9, 10, 11, 12, 14, 15};
	Relation	changes = sync_scan_open_catalog("sync_changes", RowExclusiveLock);
	Relation	commits = sync_scan_open_catalog("sync_commits", RowExclusiveLock);
	int			nchange;
	int			ncommit;
	int			change_att[11];
	int			commit_att[16];
	Datum		vals[16];
	bool		nulls[16];
	bool		ok;

	log_cols(&nchange, &ncommit);
	ok = sync_rowdirect_insertable(commits, ncommit, commit_cols, commit_types, commit_att) &&
		(ncommit == 16 ||
		 sync_rowdirect_insertable(changes, nchange, change_cols, change_types, change_att));
	if (ok)
	{
		/* the statement's snapshot: a trigger reads in it, as in a statement */
		sync_scan_snapshot_begin(false);
		if (ncommit == 8)
		{
			for (int k = 0; k < nchange; k++)
			{
				int			p = change_param[k];

				vals[k] = p < 0 ? Int32GetDatum(0) : v[p];
				nulls[k] = p >= 0 && n[p] == 'n';
			}
			sync_rowdirect_insert_values(changes, nchange, change_att, vals, nulls);
		}
		for (int k = 0; k < ncommit; k++)
		{
			int			p = commit_param[k];

			vals[k] = p == -2 ? result : v[p];
			nulls[k] = p == -2 ? result == (Datum) 0 : n[p] == 'n';
		}
		sync_rowdirect_insert_values(commits, ncommit, commit_att, vals, nulls);
		sync_scan_snapshot_end(false);
	}
	table_close(commits, NoLock);
	table_close(changes, NoLock);
	return ok;
}

/*
 * The commit row of a new commit of SQL writes whose first change is r, an upsert whose scopes
 * are one (variable, string value) pair, on a 0.7.0 catalog: the row the capture's one-row
 * statement writes (the change and its scope entry in the commit row, no stored result), without
 * the statement.  The caller holds the partition lock and has passed the serve gate.  false,
 * nothing written, when the row needs the statement.
 */
bool
sync_storage_capture_commit_one(const SyncCaptureRow *r)
{
	Datum		v[16];
	char		n[16];

	if (!sync_storage_log_inline() ||
		!one_scope_pair(DatumGetJsonbP(r->scopes), &v[14], &v[15]))
		return false;
	memset(n, ' ', sizeof(n));
	v[0] = text_datum(r->partition);
	v[1] = Int64GetDatum(r->commit_seq);
	v[2] = text_datum(r->client_id);
	v[3] = text_datum(r->client_commit_id);
	v[4] = text_datum(r->actor_id);
	v[5] = Int64GetDatum(r->created_at_ms);
	v[6] = Int64GetDatum((int64) r->schema_version);
	v[7] = text_datum(r->table);
	v[8] = text_datum(r->row_id);
	v[9] = Int16GetDatum(1);
	v[10] = Int64GetDatum(r->version);
	v[11] = r->scopes;
	v[12] = r->payload;
	v[13] = (Datum) 0;
	n[13] = 'n';
	return append_one_direct(v, n, (Datum) 0);
}

/*
 * The stored result of c as the statements take it (text) and as the direct insert does
 * (jsonb): whichever of the two the caller gave is converted only where it is needed.  Text
 * from JsonbToCString parses back to the same jsonb.
 */
static const char *
result_text(const SyncCommitRow *c)
{
	return c->result_json != NULL ? c->result_json
		: JsonbToCString(NULL, &c->result->root, VARSIZE(c->result));
}

static Datum
result_jsonb(const SyncCommitRow *c)
{
	return c->result != NULL ? JsonbPGetDatum(c->result)
		: DirectFunctionCall1(jsonb_in, CStringGetDatum(c->result_json));
}

/* One scope index entry of a commit (a sync_change_scopes row but its partition and seq). */
typedef struct ScopeEntry
{
	Datum		tbl;
	text	   *var;
	text	   *value;
} ScopeEntry;

/* any total order: the entries are sorted only to drop repeats */
static int
scope_entry_cmp(const void *a, const void *b)
{
	const ScopeEntry *x = a;
	const ScopeEntry *y = b;
	int			c = sync_scan_text_cmp(DatumGetTextPP(x->tbl), DatumGetTextPP(y->tbl));

	if (c == 0)
		c = sync_scan_text_cmp(x->var, y->var);
	return c != 0 ? c : sync_scan_text_cmp(x->value, y->value);
}

/*
 * The distinct scope index entries of n changes (tbls[k] / scopes[k]: their table and scopes),
 * sorted, in *e: their count, or -1 when one needs the statement (scopes not an object, or a
 * value not a string: jsonb_each_text would give its JSON text, or NULL).  Changes
 * whose table and scopes are the previous change's (the same datums: the caller shares them,
 * as scopes_jsonb does) add nothing.
 */
static int
scope_entries(int n, const Datum *tbls, const Datum *scopes, ScopeEntry **e)
{
	int			cap = 8;
	int			m = 0;
	int			w = 0;

	*e = palloc(sizeof(ScopeEntry) * cap);
	for (int k = 0; k < n; k++)
	{
		List	   *vars;
		List	   *values;
		ListCell   *lv;
		ListCell   *lval;

		if (k > 0 && scopes[k] == scopes[k - 1] && tbls[k] == tbls[k - 1])
			continue;
		if (!sync_rowdirect_scope_pairs(DatumGetJsonbP(scopes[k]), &vars, &values))
			return -1;
		forboth(lv, vars, lval, values)
		{
			if (m == cap)
			{
				cap *= 2;
				*e = repalloc(*e, sizeof(ScopeEntry) * cap);
			}
			(*e)[m].tbl = tbls[k];
			(*e)[m].var = lfirst(lv);
			(*e)[m++].value = lfirst(lval);
		}
	}
	if (m > 1)
		qsort(*e, m, sizeof(ScopeEntry), scope_entry_cmp);
	for (int k = 0; k < m; k++)
		if (w == 0 || scope_entry_cmp(&(*e)[w - 1], &(*e)[k]) != 0)
			(*e)[w++] = (*e)[k];
	return w;
}

/*
 * The rows of A_COMMIT_INSERT + A_CHANGES_INSERT for a commit of n changes none of which is a
 * delete (no tombstone: its upsert needs the statement), made without the statements, as
 * append_one_direct makes a one-change commit: the commit row, the change rows (idx 0 .. n - 1,
 * no scope_var / scope_value: the commit's scope index entries are sync_change_scopes rows) and
 * one entry per distinct (tbl, var, value).  The commit_seq is new and only this commit writes
 * it (under the partition lock, A_CHANGES_INSERT), so no entry can be there already.  false,
 * nothing written, when a table or a change needs the statements.
 */
static bool
append_many_direct(const SyncCommitRow *c, int n, const SyncChangeRow *changes)
{
	Datum		partition = text_datum(c->partition);
	Datum		seq = Int64GetDatum(c->commit_seq);
	Datum	   *tbls = palloc(sizeof(Datum) * n);
	Datum	   *scopes = palloc(sizeof(Datum) * n);
	ScopeEntry *e;
	int			ne;
	Relation	rels[3];
	int			att[3][16];
	int			nch;
	int			ncm;
	bool		ok;

	for (int k = 0; k < n; k++)
	{
		if (changes[k].op == 2)
			return false;
		tbls[k] = k > 0 && strcmp(changes[k].table, changes[k - 1].table) == 0 ? tbls[k - 1]
			: text_datum(changes[k].table);
		scopes[k] = scopes_jsonb(changes[k].scopes_json, k > 0 ? changes[k - 1].scopes_json : NULL,
								 k > 0 ? scopes[k - 1] : (Datum) 0);
	}
	if ((ne = scope_entries(n, tbls, scopes, &e)) < 0)
		return false;
	rels[0] = sync_scan_open_catalog("sync_commits", RowExclusiveLock);
	rels[1] = sync_scan_open_catalog("sync_changes", RowExclusiveLock);
	rels[2] = sync_scan_open_catalog("sync_change_scopes", RowExclusiveLock);
	log_cols(&nch, &ncm);
	ok = sync_rowdirect_insertable(rels[0], ncm, commit_cols, commit_types, att[0]) &&
		sync_rowdirect_insertable(rels[1], nch, change_cols, change_types, att[1]) &&
		sync_rowdirect_insertable(rels[2], 5, scope_cols, scope_types, att[2]);
	if (ok)
	{
		/* the commit row: no change of its own (tbl .. scope_value NULL, since 0.7.0) */
		Datum		cv[16] = {partition, seq, text_datum(c->client_id),
		text_datum(c->client_commit_id), text_datum(c->actor_id),
		Int64GetDatum(c->created_at_ms), Int64GetDatum(c->writer_version), result_jsonb(c)};
		bool		cn[16] = {false, false, false, false, false, false, false, false,
		true, true, true, true, true, true, true, true};
		Datum	   *v = palloc(sizeof(Datum) * 11 * Max(n, ne));
		bool	   *nl = palloc0(sizeof(bool) * 11 * Max(n, ne));

		/* the statements' snapshot: a trigger reads in it, as in a statement */
		sync_scan_snapshot_begin(false);
		sync_rowdirect_insert_values(rels[0], ncm, att[0], cv, cn);
		for (int k = 0; k < n; k++)
		{
			const SyncChangeRow *ch = &changes[k];
			Datum	   *r = v + k * nch;
			bool	   *rn = nl + k * nch;

			r[0] = partition;
			r[1] = seq;
			r[2] = Int32GetDatum(k);
			r[3] = tbls[k];
			r[4] = text_datum(ch->row_id);
			r[5] = Int16GetDatum(ch->op);
			r[6] = Int64GetDatum(ch->row_version);
			rn[6] = !ch->has_version;
			r[7] = scopes[k];
			r[8] = ch->payload ? PointerGetDatum(make_bytea(ch->payload, ch->payload_len))
				: (Datum) 0;
			rn[8] = ch->payload == NULL;
			if (nch == 11)
				rn[9] = rn[10] = true;
		}
		sync_rowdirect_insert_rows(rels[1], nch, att[1], n, v, nl);
		memset(nl, 0, sizeof(bool) * 5 * ne);
		for (int k = 0; k < ne; k++)
		{
			Datum	   *r = v + k * 5;

			r[0] = partition;
			r[1] = e[k].tbl;
			r[2] = PointerGetDatum(e[k].var);
			r[3] = PointerGetDatum(e[k].value);
			r[4] = seq;
		}
		sync_rowdirect_insert_rows(rels[2], 5, att[2], ne, v, nl);
		sync_scan_snapshot_end(false);
	}
	for (int k = 2; k >= 0; k--)
		table_close(rels[k], NoLock);
	return ok;
}

/*
 * Append an applied pushed commit: its sync_commits row with its stored result (the
 * idempotency record, docs/storage.md "Commit log layout") and its changes (numbered from 0,
 * with their scope index entries and the tombstones of deletes).  Without a statement where the
 * rows allow it (append_one_direct, append_many_direct); otherwise one statement for a commit of
 * one upsert, or the commit row and one statement per SYNC_CHANGES_PER_STATEMENT changes.
 */
void
sync_storage_commit_append(const SyncCommitRow *c, int nchanges, const SyncChangeRow *changes)
{
	if (nchanges == 1 && changes[0].op != 2)
	{
		const SyncChangeRow *ch = &changes[0];
		Datum		v[16];
		char		n[16];
		int			which;

		memset(n, ' ', sizeof(n));
		v[0] = text_datum(c->partition);
		v[1] = Int64GetDatum(c->commit_seq);
		v[2] = text_datum(c->client_id);
		v[3] = text_datum(c->client_commit_id);
		v[4] = text_datum(c->actor_id);
		v[5] = Int64GetDatum(c->created_at_ms);
		v[6] = Int64GetDatum(c->writer_version);
		v[7] = text_datum(ch->table);
		v[8] = text_datum(ch->row_id);
		v[9] = Int16GetDatum(ch->op);
		v[10] = Int64GetDatum(ch->row_version);
		if (!ch->has_version)
			n[10] = 'n';
		/* jsonb_in, as A_CHANGES_INSERT's jsonb[] elements are made */
		v[11] = DirectFunctionCall1(jsonb_in, CStringGetDatum(ch->scopes_json));
		if (ch->payload != NULL)
			v[12] = PointerGetDatum(make_bytea(ch->payload, ch->payload_len));
		else
		{
			v[12] = (Datum) 0;
			n[12] = 'n';
		}
		if (sync_storage_log_before_06())
			which = A_COMMIT_APPEND_ONE_05;
		else if (one_scope_pair(DatumGetJsonbP(v[11]), &v[14], &v[15]))
			which = sync_storage_log_inline() ? A_COMMIT_APPEND_ONE : A_COMMIT_APPEND_ONE_06;
		else
			which = A_COMMIT_APPEND_ONE_SCOPES;
		if (which == A_COMMIT_APPEND_ONE_SCOPES || which == A_COMMIT_APPEND_ONE_05)
		{
			v[14] = v[15] = (Datum) 0;
			n[14] = n[15] = 'n';
		}
		if ((which == A_COMMIT_APPEND_ONE || which == A_COMMIT_APPEND_ONE_06) &&
			append_one_direct(v, n, result_jsonb(c)))
			return;
		v[13] = text_datum(result_text(c));
		run(append_plan(which), v, n, false, 0);
		return;
	}
	if (!sync_storage_log_before_06() && nchanges > 1)
	{
		MemoryContext caller = scratch_begin();
		bool		done = append_many_direct(c, nchanges, changes);

		scratch_end(caller);
		if (done)
			return;
	}
	commit_insert(c->partition, c->commit_seq, c->client_id, c->client_commit_id, c->actor_id,
				  c->created_at_ms, c->writer_version, result_text(c));
	for (int first = 0; first < nchanges; first += SYNC_CHANGES_PER_STATEMENT)
		sync_storage_changes_insert(c->partition, c->commit_seq, first,
									Min(nchanges - first, SYNC_CHANGES_PER_STATEMENT),
									changes + first);
}
