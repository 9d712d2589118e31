/*
 * storage_capture_direct.c — the log of a statement that only inserted rows (INSERT, COPY FROM:
 * capture shape INSERT) or only updated rows in place (keys and scopes kept: shape IN_PLACE),
 * made without the log statement: the same rows as storage_capture.c's lean statement for that
 * shape (docs/writing-with-sql.md "Cost"), written by direct heap and index inserts
 * (storage_rowdirect.c's executor-equivalent inserts) from the statement's NEW transition
 * table.  For the rows of one partition, in row id byte order (the statement's row_number()
 * over _sync_row_id COLLATE "C"):
 *   - one sync_changes row each: idx from first_idx, op upsert, the row's version, scopes and
 *     payload;
 *   - the commit's sync_change_scopes entries: one per distinct (variable, value), unless an
 *     earlier statement of the transaction wrote it to this commit;
 *   - inserted rows only: their sync_row_scopes entries, unless present (a key probe, as the
 *     statement's NOT EXISTS: an entry a write outside the capture left behind).
 * Anything the direct path does not cover answers -1 with nothing written, and the caller runs
 * the statement: a catalog table the inserts cannot be made into directly (another layout, a
 * trigger or rule of the operator's, row-level security), for inserted rows a tombstone of the
 * table in the partition (the statement deletes those of re-inserted rows), or a row whose
 * scopes are not string values of the table's variables.  The partition lock is held (the
 * commit is numbered), so no other writer adds entries of this commit meanwhile.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "access/stratnum.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/tuplestore.h"

#include "storage.h"
#include "storage_rowdirect.h"
#include "storage_scan.h"

/* every live column of each table, in its layout (sync_rowdirect_insertable: static arrays) */
static const char *const change_cols[] = {"partition", "commit_seq", "idx", "tbl", "row_id",
"op", "row_version", "scopes", "payload"};
static const Oid change_types[] = {TEXTOID, INT8OID, INT4OID, TEXTOID, TEXTOID, INT2OID,
INT8OID, JSONBOID, BYTEAOID};
static const char *const scope_cols[] = {"partition", "tbl", "var", "value", "commit_seq"};
static const Oid scope_types[] = {TEXTOID, TEXTOID, TEXTOID, TEXTOID, INT8OID};
static const char *const row_scope_cols[] = {"partition", "tbl", "var", "value", "row_id"};
static const Oid row_scope_types[] = {TEXTOID, TEXTOID, TEXTOID, TEXTOID, TEXTOID};

/* One inserted row of the partition. */
typedef struct InsRow
{
	text	   *row_id;
	Datum		version;
	Datum		scopes;
	Datum		payload;
	bool		payload_null;
	List	   *vars;			/* its scope (variable, value) pairs, text each */
	List	   *values;
} InsRow;

/* One index entry: (var, value) and a row id (row scopes) or none (the commit's scopes). */
typedef struct Entry
{
	text	   *var;
	text	   *value;
	text	   *row_id;
} Entry;

static int
row_cmp(const void *a, const void *b)
{
	return sync_scan_text_cmp(((const InsRow *) a)->row_id, ((const InsRow *) b)->row_id);
}

static int
entry_cmp(const void *a, const void *b)
{
	const Entry *x = a;
	const Entry *y = b;
	int			c = sync_scan_text_cmp(x->var, y->var);

	if (c == 0)
		c = sync_scan_text_cmp(x->value, y->value);
	if (c == 0 && x->row_id != NULL)
		c = sync_scan_text_cmp(x->row_id, y->row_id);
	return c;
}

/*
 * The two sorts of a statement's rows and entries, specialized (lib/sort_template.h: the
 * comparison inlined, elements moved by assignment), as PostgreSQL's own tuple sorts are: a
 * bulk load sorts every row and every entry, and qsort's calls through a function pointer and
 * byte-wise swaps of these structs cost more than the comparisons themselves.
 */
#define ST_SORT sort_ins_rows
#define ST_ELEMENT_TYPE InsRow
#define ST_COMPARE(a, b) row_cmp(a, b)
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

#define ST_SORT sort_entries
#define ST_ELEMENT_TYPE Entry
#define ST_COMPARE(a, b) entry_cmp(a, b)
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

/* Whether two entries have the same (var, value). */
static bool
same_value(const Entry *x, const Entry *y)
{
	return sync_scan_text_cmp(x->var, y->var) == 0 && sync_scan_text_cmp(x->value, y->value) == 0;
}

/*
 * The scope pairs of a row's _sync_scopes, which the statement reads as `scopes ->> var` for
 * each variable of the table: false when they are not exactly string values of those variables.
 */
static bool
row_pairs(const SyncTable *t, Jsonb *scopes, List **vars, List **values)
{
	ListCell   *lv;

	if (!sync_rowdirect_scope_pairs(scopes, vars, values))
		return false;
	foreach(lv, *vars)
	{
		text	   *var = lfirst(lv);
		bool		declared = false;

		for (int i = 0; i < t->nscopes && !declared; i++)
			declared = strlen(t->scopes[i].variable) == VARSIZE_ANY_EXHDR(var) &&
				memcmp(t->scopes[i].variable, VARDATA_ANY(var), VARSIZE_ANY_EXHDR(var)) == 0;
		if (!declared)
			return false;
	}
	return true;
}

/*
 * The rows of `partition` in the NEW transition table, sorted by row id: their count, or -1
 * when one's scopes need the statement.
 */
static int
collect_rows(const SyncTable *t, Tuplestorestate *nts, TupleDesc desc, const char *partition,
			 InsRow **out)
{
	TupleTableSlot *slot = MakeSingleTupleTableSlot(desc, &TTSOpsMinimalTuple);
	SyncSyncedCols c;
	size_t		plen = strlen(partition);
	int			cap = 64;
	int			n = 0;

	sync_scan_synced_cols(desc, &c);
	*out = palloc(sizeof(InsRow) * cap);
	sync_scan_tuplestore_rewind(nts);
	while (tuplestore_gettupleslot(nts, true, false, slot))
	{
		bool		isnull;
		text	   *p = DatumGetTextPP(slot_getattr(slot, c.part, &isnull));
		InsRow	   *r;
		Datum		d;

		if (isnull || VARSIZE_ANY_EXHDR(p) != plen || memcmp(VARDATA_ANY(p), partition, plen) != 0)
			continue;
		if (n == cap)
		{
			cap *= 2;
			*out = repalloc_huge(*out, sizeof(InsRow) * cap);
		}
		r = &(*out)[n++];
		r->row_id = DatumGetTextPCopy(slot_getattr(slot, c.row, &isnull));
		r->version = slot_getattr(slot, c.ver, &isnull);
		d = slot_getattr(slot, c.scopes, &isnull);
		r->scopes = PointerGetDatum(PG_DETOAST_DATUM_COPY(d));
		if (!row_pairs(t, DatumGetJsonbP(r->scopes), &r->vars, &r->values))
		{
			ExecDropSingleTupleTableSlot(slot);
			return -1;
		}
		d = slot_getattr(slot, c.payload, &r->payload_null);
		r->payload = r->payload_null ? (Datum) 0 : PointerGetDatum(PG_DETOAST_DATUM_COPY(d));
	}
	ExecDropSingleTupleTableSlot(slot);
	if (n > 1)
		sort_ins_rows(*out, n);
	return n;
}

/* The row-scope entries of n rows, sorted in their key's order (var, value, row_id). */
static int
row_entries(const InsRow *rows, int n, Entry **out)
{
	int			cap = 64;
	int			m = 0;

	*out = palloc(sizeof(Entry) * cap);
	for (int k = 0; k < n; k++)
	{
		ListCell   *lv;
		ListCell   *lval;

		forboth(lv, rows[k].vars, lval, rows[k].values)
		{
			if (m == cap)
			{
				cap *= 2;
				*out = repalloc_huge(*out, sizeof(Entry) * cap);
			}
			(*out)[m].var = lfirst(lv);
			(*out)[m].value = lfirst(lval);
			(*out)[m++].row_id = rows[k].row_id;
		}
	}
	if (m > 1)
		sort_entries(*out, m);
	return m;
}

/* The distinct (var, value) of sorted row-scope entries: the commit's scope index entries. */
static int
commit_entries(const Entry *e, int m, Entry **out)
{
	int			w = 0;

	*out = palloc(sizeof(Entry) * Max(m, 1));
	for (int k = 0; k < m; k++)
		if (w == 0 || !same_value(&(*out)[w - 1], &e[k]))
		{
			(*out)[w] = e[k];
			(*out)[w++].row_id = NULL;
		}
	return w;
}

/* Whether the key (keys[0 .. nkeys)) is in index of heap, in snap (scan reused per probe). */
static bool
probe(IndexScanDesc scan, ScanKey keys, int nkeys, TupleTableSlot *slot)
{
	index_rescan(scan, keys, nkeys, NULL, 0);
	return index_getnext_slot(scan, ForwardScanDirection, slot);
}

/*
 * Insert the entries of rel (sync_change_scopes or sync_row_scopes: partition, tbl, var, value,
 * then commit_seq (last) or row_id) that its primary key does not hold yet.  Entries are sorted
 * by (var, value): a (var, value) with no entry at all in the table's partition needs no probe
 * of its rows (a bulk insert of new rows, or of rows of new scope values).
 */
static void
insert_entries(Relation rel, const int *att, Datum partition, Datum tbl, Datum last,
			   const Entry *e, int n, Snapshot snap)
{
	Relation	pk = index_open(RelationGetPrimaryKeyIndex(rel), AccessShareLock);
	IndexScanDesc scan = index_beginscan(rel, pk, snap, 5, 0);
	IndexScanDesc group = index_beginscan(rel, pk, snap, 4, 0);
	TupleTableSlot *found = table_slot_create(rel, NULL);
	Datum	   *v = palloc(sizeof(Datum) * 5 * Max(n, 1));
	bool	   *nl = palloc0(sizeof(bool) * 5 * Max(n, 1));
	bool		group_empty = false;
	int			w = 0;

	for (int k = 0; k < n; k++)
	{
		Datum		kv[5] = {partition, tbl, PointerGetDatum(e[k].var),
		PointerGetDatum(e[k].value), e[k].row_id ? PointerGetDatum(e[k].row_id) : last};
		ScanKeyData keys[5];

		for (int i = 0; i < 4; i++)
			sync_scan_eq_key(&keys[i], pk, i + 1, kv[i]);
		if (e[k].row_id != NULL)
			sync_scan_eq_key(&keys[4], pk, 5, kv[4]);
		else
			ScanKeyEntryInitialize(&keys[4], 0, 5, BTEqualStrategyNumber, InvalidOid,
								   InvalidOid, F_INT8EQ, kv[4]);
		if (e[k].row_id != NULL && (k == 0 || !same_value(&e[k - 1], &e[k])))
			group_empty = !probe(group, keys, 4, found);
		if (!(e[k].row_id != NULL && group_empty) && probe(scan, keys, 5, found))
			continue;
		memcpy(v + w * 5, kv, sizeof(kv));
		w++;
	}
	index_endscan(scan);
	index_endscan(group);
	ExecDropSingleTupleTableSlot(found);
	index_close(pk, NoLock);
	sync_rowdirect_insert_rows(rel, 5, att, w, v, nl);
}

/*
 * Whether the table has a tombstone in the partition (row_id (Datum) 0), or one of that row (its
 * key (partition, tbl, row_id)).
 */
static bool
has_tombstones(Datum partition, Datum tbl, Datum row_id, Snapshot snap)
{
	SyncKeyed	k;
	ScanKeyData keys[3];
	bool		found;

	sync_scan_keyed_open(&k, "sync_tombstones");
	sync_scan_eq_key(&keys[0], k.pk, 1, partition);
	sync_scan_eq_key(&keys[1], k.pk, 2, tbl);
	if (row_id != (Datum) 0)
		sync_scan_eq_key(&keys[2], k.pk, 3, row_id);
	found = sync_scan_fetch(k.heap, k.pk, keys, row_id != (Datum) 0 ? 3 : 2, snap, k.slot);
	sync_scan_keyed_close(&k);
	return found;
}

/* The change rows of n sorted rows, idx from first_idx. */
static void
insert_changes(Relation rel, const int *att, Datum partition, Datum tbl, Datum seq,
			   int32 first_idx, const InsRow *rows, int n)
{
	Datum	   *v = palloc(sizeof(Datum) * 9 * Max(n, 1));
	bool	   *nl = palloc0(sizeof(bool) * 9 * Max(n, 1));

	for (int k = 0; k < n; k++)
	{
		Datum	   *r = v + (size_t) k * 9;

		r[0] = partition;
		r[1] = seq;
		r[2] = Int32GetDatum(first_idx + k);
		r[3] = tbl;
		r[4] = PointerGetDatum(rows[k].row_id);
		r[5] = Int16GetDatum(1);
		r[6] = rows[k].version;
		r[7] = rows[k].scopes;
		r[8] = rows[k].payload;
		nl[(size_t) k * 9 + 8] = rows[k].payload_null;
	}
	sync_rowdirect_insert_rows(rel, 9, att, n, v, nl);
}

int64
sync_storage_capture_lean_direct(const SyncTable *t, Tuplestorestate *nts, TupleDesc desc,
								 const char *partition, int64 commit_seq, int32 first_idx,
								 bool inserted)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "syncular capture direct",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext caller = MemoryContextSwitchTo(cxt);
	Relation	rels[3];
	int			att[3][9];
	Datum		part = CStringGetTextDatum(partition);
	Datum		tbl = CStringGetTextDatum(t->name);
	Datum		seq = Int64GetDatum(commit_seq);
	InsRow	   *rows;
	int64		n = -1;

	rels[0] = sync_scan_open_catalog("sync_changes", RowExclusiveLock);
	rels[1] = sync_scan_open_catalog("sync_change_scopes", RowExclusiveLock);
	rels[2] = inserted ? sync_scan_open_catalog("sync_row_scopes", RowExclusiveLock) : NULL;
	if (sync_rowdirect_insertable(rels[0], 9, change_cols, change_types, att[0]) &&
		sync_rowdirect_insertable(rels[1], 5, scope_cols, scope_types, att[1]) &&
		(!inserted ||
		 sync_rowdirect_insertable(rels[2], 5, row_scope_cols, row_scope_types, att[2])))
	{
		/* the statements' snapshot: a trigger reads in it, as in a statement */
		Snapshot	snap = sync_scan_snapshot_begin(false);

		if (!(inserted && has_tombstones(part, tbl, (Datum) 0, snap)))
			n = collect_rows(t, nts, desc, partition, &rows);
		if (n > PG_INT32_MAX - first_idx)
			n = -1;				/* past the commit's 2^31-1 changes: the statement refuses it */
		if (n >= 0)
		{
			Entry	   *e;
			Entry	   *ce;
			int			ne;
			int			nce;

			insert_changes(rels[0], att[0], part, tbl, seq, first_idx, rows, (int) n);
			ne = row_entries(rows, (int) n, &e);
			nce = commit_entries(e, ne, &ce);
			insert_entries(rels[1], att[1], part, tbl, seq, ce, nce, snap);
			if (inserted)
				insert_entries(rels[2], att[2], part, tbl, (Datum) 0, e, ne, snap);
		}
		sync_scan_snapshot_end(false);
	}
	for (int k = 2; k >= 0; k--)
		if (rels[k] != NULL)
			table_close(rels[k], NoLock);
	MemoryContextSwitchTo(caller);
	MemoryContextDelete(cxt);
	return n;
}

/*
 * The row-scope entries of a row a one-row INSERT wrote in its own commit (r fresh; its commit
 * row is written, the caller holds the partition lock), unless present, without the one-row
 * statement.  false, nothing written, when the statement must write them: a tombstone of the row
 * (the statement clears it), scopes that are not string values of the table's variables, a
 * catalog table the inserts cannot be made into directly.
 */
bool
sync_storage_capture_fresh_rows(const SyncTable *t, const SyncCaptureRow *r)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "syncular capture direct",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext caller = MemoryContextSwitchTo(cxt);
	Relation	rs = sync_scan_open_catalog("sync_row_scopes", RowExclusiveLock);
	Datum		part = CStringGetTextDatum(r->partition);
	Datum		tbl = CStringGetTextDatum(t->name);
	InsRow		row;
	int			att[5];
	bool		ok;

	memset(&row, 0, sizeof(row));
	row.row_id = cstring_to_text(r->row_id);
	ok = sync_rowdirect_insertable(rs, 5, row_scope_cols, row_scope_types, att) &&
		row_pairs(t, DatumGetJsonbP(r->scopes), &row.vars, &row.values);
	if (ok)
	{
		Snapshot	snap = sync_scan_snapshot_begin(false);

		ok = !has_tombstones(part, tbl, PointerGetDatum(row.row_id), snap);
		if (ok)
		{
			Entry	   *e;
			int			ne = row_entries(&row, 1, &e);

			insert_entries(rs, att, part, tbl, (Datum) 0, e, ne, snap);
		}
		sync_scan_snapshot_end(false);
	}
	table_close(rs, NoLock);
	MemoryContextSwitchTo(caller);
	MemoryContextDelete(cxt);
	return ok;
}
