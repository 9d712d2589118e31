/*
 * storage_pages.c — bootstrap pages (SPEC §3.7, §5) read from storage: a page's row ids and
 * each id's synced row, in the pull's snapshot (the active snapshot round.c pushed), no
 * executor.  The ids come from ordered index scans of sync_row_scopes_pkey (partition, tbl,
 * var, value, row_id; the column is COLLATE "C"), one per value of the first effective variable, started
 * after the cursor and merged in byte order (duplicates, a row under two values, once); each id
 * is then looked up in the synced table's primary key (_sync_partition, _sync_row_id), whose
 * stored payload and version the caller copies into its segment as stored.  With more than
 * MERGE_MAX_VALUES values the ids of a page come from one statement instead (ID_SQL: the same
 * order and boundaries).  Which rows are served (the scope check), how many, and within which
 * budget is the caller's (pull_rows.c).  Memory: one row at a time besides the page's ids, and
 * one index scan per scope value.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/nbtree.h"
#include "access/relscan.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "storage/bufmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/regproc.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "storage.h"
#include "storage_log.h"
#include "storage_scan.h"

/*
 * The ID_SQL plans, prepared once per backend per query text (SPI_keepplan) and kept in
 * TopMemoryContext; the plan cache re-plans them after DDL on the tables they read.
 */
typedef struct KeptPlan
{
	const char *sql;
	SPIPlanPtr	plan;
	struct KeptPlan *next;
} KeptPlan;

static KeptPlan *kept_plans = NULL;

static SPIPlanPtr
get_plan(const char *sql, int nargs, Oid *argtypes)
{
	KeptPlan   *k;
	SPIPlanPtr	plan;

	for (k = kept_plans; k; k = k->next)
		if (strcmp(k->sql, sql) == 0)
			return k->plan;
	plan = sync_storage_keep_plan(sql, nargs, argtypes, 0);
	k = MemoryContextAlloc(TopMemoryContext, sizeof(KeptPlan));
	k->sql = MemoryContextStrdup(TopMemoryContext, sql);
	k->plan = plan;
	k->next = kept_plans;
	kept_plans = k;
	return plan;
}

/* Above this many values of the first variable, a page's ids come from ID_SQL. */
#define MERGE_MAX_VALUES 32

/* The ids of a page by statement (more than MERGE_MAX_VALUES values): see the file comment. */
#define ID_SQL(after) \
	"SELECT DISTINCT v.row_id" \
	"  FROM unnest($4::text[]) AS val(value)," \
	"       LATERAL (SELECT s.row_id COLLATE \"C\" AS row_id" \
	"                  FROM syncular.sync_row_scopes s" \
	"                 WHERE s.partition = $1 AND s.tbl = $2 AND s.var = $3 AND s.value = val.value" \
	"                   AND " after \
	"                 ORDER BY s.row_id COLLATE \"C\" LIMIT $6) v" \
	" ORDER BY 1 LIMIT $6"

/* One scope value: the index range scan alone is the page (ids unique and ordered, no sort). */
#define ID1_SQL(after) \
	"SELECT s.row_id COLLATE \"C\" AS row_id" \
	"  FROM syncular.sync_row_scopes s" \
	" WHERE s.partition = $1 AND s.tbl = $2 AND s.var = $3 AND s.value = ($4::text[])[1]" \
	"   AND " after \
	" ORDER BY s.row_id COLLATE \"C\" LIMIT $6"

/*
 * The page start as its own statement text (table start: $5 unused but typed), so that the
 * cursor is always an index condition: a generic plan of "$5 IS NULL OR row_id > $5" could not
 * use it and would read the whole range before the cursor on every page.
 */
#define AFTER_START "($5::text IS NULL)"
#define AFTER_CURSOR "s.row_id COLLATE \"C\" > $5::text COLLATE \"C\""

/*
 * The ids of the page after args[4] (ID1_SQL for one scope value, else ID_SQL; LIMIT args[5] =
 * limit + 1): the first `limit` as
 * a text[] in *ids, their count in *nids, the last one in last_id; *more when one more exists.
 */
static void
page_ids(Datum *args, char *nulls, int64 limit, Datum *ids, int *nids, StringInfo last_id,
		 bool *more)
{
	Oid			argtypes[6] = {TEXTOID, TEXTOID, TEXTOID, TEXTARRAYOID, TEXTOID, INT8OID};
	ArrayType  *values = DatumGetArrayTypeP(args[3]);
	bool		one = ArrayGetNItems(ARR_NDIM(values), ARR_DIMS(values)) == 1;
	bool		start = nulls[4] == 'n';
	SPIPlanPtr	plan = get_plan(one ? (start ? ID1_SQL(AFTER_START) : ID1_SQL(AFTER_CURSOR))
								: (start ? ID_SQL(AFTER_START) : ID_SQL(AFTER_CURSOR)),
								6, argtypes);
	MemoryContext caller = CurrentMemoryContext;
	Datum	   *elems;
	int			rc;
	int			n;

	rc = SPI_execute_plan(plan, args, nulls, true, 0);
	MemoryContextSwitchTo(caller);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "syncular pull: page id read failed: %s", SPI_result_code_string(rc));
	n = (int) Min((int64) SPI_processed, limit);
	*more = (int64) SPI_processed > limit;
	elems = palloc(sizeof(Datum) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		bool		isnull;

		elems[i] = PointerGetDatum(DatumGetTextPCopy(SPI_getbinval(SPI_tuptable->vals[i],
																	 SPI_tuptable->tupdesc, 1, &isnull)));
	}
	if (n > 0)
	{
		text	   *lastt = DatumGetTextPP(elems[n - 1]);

		resetStringInfo(last_id);
		appendBinaryStringInfo(last_id, VARDATA_ANY(lastt), VARSIZE_ANY_EXHDR(lastt));
	}
	SPI_freetuptable(SPI_tuptable);
	*ids = PointerGetDatum(construct_array(elems, n, TEXTOID, -1, false, TYPALIGN_INT));
	*nids = n;
}


/* One value's ordered scan of the primary key (index-only where the visibility map allows). */
typedef struct ValueScan
{
	IndexScanDesc scan;
	ScanKeyData keys[5];
	const char *cur;			/* the current id (in the scan's tuple), NULL when done */
	int			curlen;
} ValueScan;

/*
 * Index AM calls run in rr->cxt (the section's lifetime), never in a per-page context: a btree
 * scan allocates on first need (its killed-items array, its tuple workspace) and keeps using it.
 */
struct SyncRowPager
{
	MemoryContext cxt;
	Snapshot	snap;
	/* the ids: one scan per value, or (nvalues > MERGE_MAX_VALUES) ID_SQL per page */
	Relation	scope_heap;
	Relation	scope_idx;
	TupleTableSlot *scope_slot;
	Buffer		vmbuf;
	int			nvalues;
	ValueScan  *vs;
	Datum		args[6];		/* ID_SQL's arguments */
	char		nulls[6];
	Datum	   *ids;			/* ID_SQL: this page's ids */
	int			nids;
	int			pos;
	StringInfoData id;			/* the id just read */
	/* the rows: the synced table's primary key, probed per id */
	Relation	app;
	Relation	pk;
	IndexScanDesc row_scan;
	ScanKeyData row_keys[2];
	TupleTableSlot *row_slot;
	AttrNumber	att_version;
	AttrNumber	att_scopes;
	AttrNumber	att_payload;
	text	   *probe;			/* the probed id as text (grown as needed) */
	int			probe_cap;
	/* the walker: a forward scan of the same key that serves ids in a run without a descent */
	IndexScanDesc walk;
	ScanKeyData walk_keys[2];
	FmgrInfo   *id_cmp;			/* the key's order (btree support 1, its collation) */
	Oid			id_coll;
	text	   *walk_from;		/* where the walker was placed */
	int			walk_from_cap;
	bool		walk_on;		/* placed on this page */
	bool		walk_off;		/* given up: the two orders disagree too often */
	Datum		wcur;			/* the walker's current key (in its index tuple), 0 at the end */
	int			walk_misses;	/* lookups in a row that needed a descent */
};

/* Ids a walker steps over before it is placed anew (a gap of rows outside the page's ids). */
#define WALK_STEPS 16
/* Descents in a row after which the walker is given up for the section. */
#define WALK_MAX_MISSES 64

/* The synced table and its primary key (_sync_partition, _sync_row_id). */
static void
open_rows(SyncRowPager *rr, const char *partition, const char *qualified)
{
	Oid			relid = RangeVarGetRelid(makeRangeVarFromNameList(
											 stringToQualifiedNameList(qualified)),
										 AccessShareLock, false);
	Oid			pkid;

	rr->app = table_open(relid, NoLock);
	pkid = RelationGetPrimaryKeyIndex(rr->app);
	if (!OidIsValid(pkid))
		elog(ERROR, "syncular pull: %s has no primary key", qualified);
	rr->pk = index_open(pkid, AccessShareLock);
	if (rr->pk->rd_index->indnkeyatts != 2 ||
		rr->pk->rd_index->indkey.values[0] != sync_scan_attnum(rr->app, "_sync_partition") ||
		rr->pk->rd_index->indkey.values[1] != sync_scan_attnum(rr->app, "_sync_row_id"))
		elog(ERROR, "syncular pull: the primary key of %s is not (_sync_partition, _sync_row_id)",
			 qualified);
	rr->att_version = sync_scan_attnum(rr->app, "_sync_server_version");
	rr->att_scopes = sync_scan_attnum(rr->app, "_sync_scopes");
	rr->att_payload = sync_scan_attnum(rr->app, "_sync_payload");
	rr->row_slot = table_slot_create(rr->app, NULL);
	rr->row_scan = index_beginscan(rr->app, rr->pk, rr->snap, 2, 0);
	sync_scan_eq_key(&rr->row_keys[0], rr->pk, 1, CStringGetTextDatum(partition));
	rr->probe_cap = 64;
	rr->probe = palloc(VARHDRSZ + rr->probe_cap);
	sync_scan_eq_key(&rr->row_keys[1], rr->pk, 2, PointerGetDatum(rr->probe));
	rr->walk = index_beginscan(rr->app, rr->pk, rr->snap, 2, 0);
	rr->walk->xs_want_itup = true;
	rr->walk_keys[0] = rr->row_keys[0];
	rr->id_cmp = index_getprocinfo(rr->pk, 2, BTORDER_PROC);
	rr->id_coll = rr->pk->rd_indcollation[1];
	rr->walk_from_cap = 64;
	rr->walk_from = palloc(VARHDRSZ + rr->walk_from_cap);
}

/* text[] of values[0 .. n) (ID_SQL's $4) */
static Datum
values_array(int n, char *const *values)
{
	Datum	   *elems = palloc(sizeof(Datum) * Max(n, 1));

	for (int k = 0; k < n; k++)
		elems[k] = CStringGetTextDatum(values[k]);
	return PointerGetDatum(construct_array(elems, n, TEXTOID, -1, false, TYPALIGN_INT));
}

/* One ordered scan of the primary key per value (or ID_SQL's arguments, above the limit). */
static void
open_ids(SyncRowPager *rr, const char *partition, const char *table, const char *var,
		 int nvalues, char *const *values)
{
	rr->nvalues = nvalues;
	if (rr->nvalues > MERGE_MAX_VALUES)
	{
		rr->args[0] = CStringGetTextDatum(partition);
		rr->args[1] = CStringGetTextDatum(table);
		rr->args[2] = CStringGetTextDatum(var);
		rr->args[3] = values_array(nvalues, values);
		memset(rr->nulls, ' ', sizeof(rr->nulls));
		return;
	}
	rr->scope_heap = table_open(sync_scan_catalog_relid("sync_row_scopes"), AccessShareLock);
	rr->scope_idx = index_open(sync_scan_catalog_relid("sync_row_scopes_pkey"), AccessShareLock);
	rr->scope_slot = table_slot_create(rr->scope_heap, NULL);
	rr->vmbuf = InvalidBuffer;
	rr->vs = palloc0(sizeof(ValueScan) * Max(rr->nvalues, 1));
	for (int i = 0; i < rr->nvalues; i++)
	{
		ValueScan  *v = &rr->vs[i];

		v->scan = index_beginscan(rr->scope_heap, rr->scope_idx, rr->snap, 5, 0);
		v->scan->xs_want_itup = true;
		sync_scan_eq_key(&v->keys[0], rr->scope_idx, 1, CStringGetTextDatum(partition));
		sync_scan_eq_key(&v->keys[1], rr->scope_idx, 2, CStringGetTextDatum(table));
		sync_scan_eq_key(&v->keys[2], rr->scope_idx, 3, CStringGetTextDatum(var));
		sync_scan_eq_key(&v->keys[3], rr->scope_idx, 4, CStringGetTextDatum(values[i]));
	}
}

SyncRowPager *
sync_rowpage_open(MemoryContext parent, const char *partition, const char *table,
				  const char *qualified, const char *var, int nvalues, char *const *values)
{
	MemoryContext cxt = AllocSetContextCreate(parent, "syncular pull rows",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	SyncRowPager *rr = palloc0(sizeof(SyncRowPager));

	rr->cxt = cxt;
	rr->snap = GetActiveSnapshot();
	initStringInfo(&rr->id);
	open_rows(rr, partition, qualified);
	open_ids(rr, partition, table, var, nvalues, values);
	MemoryContextSwitchTo(old);
	return rr;
}

void
sync_rowpage_close(SyncRowPager *rr)
{
	for (int i = 0; rr->vs && i < rr->nvalues; i++)
		index_endscan(rr->vs[i].scan);
	if (rr->scope_slot)
		ExecDropSingleTupleTableSlot(rr->scope_slot);
	if (BufferIsValid(rr->vmbuf))
		ReleaseBuffer(rr->vmbuf);
	if (rr->scope_idx)
		index_close(rr->scope_idx, NoLock);
	if (rr->scope_heap)
		table_close(rr->scope_heap, NoLock);
	index_endscan(rr->row_scan);
	index_endscan(rr->walk);
	ExecDropSingleTupleTableSlot(rr->row_slot);
	index_close(rr->pk, NoLock);
	table_close(rr->app, NoLock);
	MemoryContextDelete(rr->cxt);
}

/* Advance one value's scan to its next visible entry (IndexOnlyNext's visibility rule). */
static void
value_next(SyncRowPager *rr, ValueScan *v)
{
	MemoryContext old = MemoryContextSwitchTo(rr->cxt);

	if (sync_scan_next_visible(v->scan, rr->scope_heap, rr->scope_slot, &rr->vmbuf))
	{
		bool		isnull;
		text	   *id = DatumGetTextPP(index_getattr(v->scan->xs_itup, 5, v->scan->xs_itupdesc,
													 &isnull));

		v->cur = VARDATA_ANY(id);
		v->curlen = VARSIZE_ANY_EXHDR(id);
	}
	else
		v->cur = NULL;
	MemoryContextSwitchTo(old);
}

/* Start a page after `after` (NULL: the table start), reading at most limit + 1 ids. */
void
sync_rowpage_start(SyncRowPager *rr, const char *after, int64 limit)
{
	MemoryContext old;
	text	   *from = cstring_to_text(after ? after : "");

	rr->walk_on = false;
	if (rr->vs == NULL)
	{
		StringInfoData last;
		bool		more;
		Datum		arr;

		rr->args[4] = after ? PointerGetDatum(from) : (Datum) 0;
		rr->nulls[4] = after ? ' ' : 'n';
		rr->args[5] = Int64GetDatum(limit + 1);
		initStringInfo(&last);
		page_ids(rr->args, rr->nulls, limit + 1, &arr, &rr->nids, &last, &more);
		deconstruct_array(DatumGetArrayTypeP(arr), TEXTOID, -1, false, TYPALIGN_INT, &rr->ids,
						  NULL, &rr->nids);
		rr->pos = 0;
		return;
	}
	old = MemoryContextSwitchTo(rr->cxt);
	for (int i = 0; i < rr->nvalues; i++)
	{
		ValueScan  *v = &rr->vs[i];

		/* the table start is "row_id >= ''": the same number of keys as a cursor */
		ScanKeyEntryInitialize(&v->keys[4], 0, 5,
							   after ? BTGreaterStrategyNumber : BTGreaterEqualStrategyNumber,
							   InvalidOid, rr->scope_idx->rd_indcollation[4],
							   after ? F_TEXT_GT : F_TEXT_GE, PointerGetDatum(from));
		index_rescan(v->scan, v->keys, 5, NULL, 0);
		value_next(rr, v);
	}
	MemoryContextSwitchTo(old);
}

/* The next id of the page in byte order into rr->id; false at the end. */
static bool
ids_next(SyncRowPager *rr)
{
	ValueScan  *min = NULL;

	if (rr->vs == NULL)
	{
		text	   *t;

		if (rr->pos >= rr->nids)
			return false;
		t = DatumGetTextPP(rr->ids[rr->pos++]);
		resetStringInfo(&rr->id);
		appendBinaryStringInfo(&rr->id, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
		return true;
	}
	for (int i = 0; i < rr->nvalues; i++)
	{
		ValueScan  *v = &rr->vs[i];

		if (v->cur && (min == NULL || sync_scan_bytes_cmp(v->cur, v->curlen, min->cur, min->curlen) < 0))
			min = v;
	}
	if (min == NULL)
		return false;
	resetStringInfo(&rr->id);
	appendBinaryStringInfo(&rr->id, min->cur, min->curlen);
	/* every scan standing on this id moves past it (a row under two values is read once) */
	for (int i = 0; i < rr->nvalues; i++)
	{
		ValueScan  *v = &rr->vs[i];

		if (v->cur && sync_scan_bytes_cmp(v->cur, v->curlen, rr->id.data, rr->id.len) == 0)
			value_next(rr, v);
	}
	return true;
}

/* text of rr->id into *buf (grown as needed in rr->cxt) */
static text *
id_text(SyncRowPager *rr, text **buf, int *cap)
{
	if (rr->id.len > *cap)
	{
		*cap = rr->id.len * 2;
		*buf = MemoryContextAlloc(rr->cxt, VARHDRSZ + *cap);
	}
	SET_VARSIZE(*buf, VARHDRSZ + rr->id.len);
	memcpy(VARDATA(*buf), rr->id.data, rr->id.len);
	return *buf;
}

/* The visible row of rr->id by one descent of the primary key (into rr->row_slot). */
static bool
probe_row(SyncRowPager *rr)
{
	MemoryContext old = MemoryContextSwitchTo(rr->cxt);
	bool		found;

	rr->row_keys[1].sk_argument = PointerGetDatum(id_text(rr, &rr->probe, &rr->probe_cap));
	index_rescan(rr->row_scan, rr->row_keys, 2, NULL, 0);
	found = index_getnext_slot(rr->row_scan, ForwardScanDirection, rr->row_slot);
	MemoryContextSwitchTo(old);
	return found;
}

static void
walk_step(SyncRowPager *rr)
{
	MemoryContext old = MemoryContextSwitchTo(rr->cxt);
	bool		isnull;

	if (index_getnext_tid(rr->walk, ForwardScanDirection) == NULL)
		rr->wcur = (Datum) 0;
	else
		rr->wcur = index_getattr(rr->walk->xs_itup, 2, rr->walk->xs_itupdesc, &isnull);
	MemoryContextSwitchTo(old);
}

/* Place the walker on the first key >= rr->id. */
static void
walk_place(SyncRowPager *rr)
{
	MemoryContext old = MemoryContextSwitchTo(rr->cxt);

	ScanKeyEntryInitialize(&rr->walk_keys[1], 0, 2, BTGreaterEqualStrategyNumber, InvalidOid,
						   rr->id_coll, F_TEXT_GE,
						   PointerGetDatum(id_text(rr, &rr->walk_from, &rr->walk_from_cap)));
	index_rescan(rr->walk, rr->walk_keys, 2, NULL, 0);
	MemoryContextSwitchTo(old);
	rr->walk_on = true;
	walk_step(rr);
}

/*
 * The walker's answer for rr->id: 1 = its visible row is in rr->row_slot, 0 = it has no visible
 * row, -1 = ask a descent (the walker is past it, or too far before it).  Keys equal to the id
 * are compared by bytes (the key's collation is deterministic: equal means identical), the
 * order by the key's own comparison.
 */
static int
walk_find(SyncRowPager *rr)
{
	for (int step = 0; step < WALK_STEPS; step++)
	{
		text	   *z;
		int			c;

		if (rr->wcur == (Datum) 0)
			return -1;
		z = DatumGetTextPP(rr->wcur);
		if ((int) VARSIZE_ANY_EXHDR(z) == rr->id.len &&
			memcmp(VARDATA_ANY(z), rr->id.data, rr->id.len) == 0)
		{
			/* this key's entries (dead versions too) until a visible one */
			bool		found = index_fetch_heap(rr->walk, rr->row_slot);

			walk_step(rr);
			if (found)
				return 1;
			continue;
		}
		c = DatumGetInt32(FunctionCall2Coll(rr->id_cmp, rr->id_coll,
											PointerGetDatum(id_text(rr, &rr->probe, &rr->probe_cap)),
											rr->wcur));
		if (c < 0)
			return -1;
		walk_step(rr);
	}
	return -1;
}

/*
 * The visible row of rr->id in the synced table into rr->row_slot; false when there is none.
 * The page's ids come in byte order; when the key's collation sorts them the same way (always
 * for "C", and for the usual ids under most collations) consecutive ids are consecutive keys,
 * so the walker finds most rows without a descent; otherwise each id costs one descent.
 */
bool
sync_rowpage_find(SyncRowPager *rr)
{
	if (!rr->walk_off)
	{
		int			r;

		if (!rr->walk_on)
			walk_place(rr);
		r = walk_find(rr);
		if (r < 0 && rr->wcur != (Datum) 0)
		{
			walk_place(rr);		/* a gap: place the walker anew */
			r = walk_find(rr);
		}
		if (r >= 0)
		{
			rr->walk_misses = 0;
			return r == 1;
		}
		if (++rr->walk_misses > WALK_MAX_MISSES)
			rr->walk_off = true;
	}
	return probe_row(rr);
}

bool
sync_rowpage_next(SyncRowPager *rr, const char **id, int *id_len)
{
	if (!ids_next(rr))
		return false;
	*id = rr->id.data;
	*id_len = rr->id.len;
	return true;
}

Jsonb *
sync_rowpage_scopes(SyncRowPager *rr, bool *copied)
{
	bool		isnull;
	Datum		d = slot_getattr(rr->row_slot, rr->att_scopes, &isnull);
	Jsonb	   *scopes;

	*copied = false;
	if (isnull)
		return NULL;
	scopes = DatumGetJsonbP(d);
	*copied = (Pointer) scopes != DatumGetPointer(d);
	return scopes;
}

bytea *
sync_rowpage_payload(SyncRowPager *rr, int64 *server_version, bool *copied)
{
	bool		isnull;
	Datum		raw;
	bytea	   *payload;

	*server_version = DatumGetInt64(slot_getattr(rr->row_slot, rr->att_version, &isnull));
	raw = slot_getattr(rr->row_slot, rr->att_payload, &isnull);
	*copied = false;
	if (isnull)
		return NULL;
	payload = DatumGetByteaPP(raw);
	*copied = (Pointer) payload != DatumGetPointer(raw);
	return payload;
}

void
sync_rowpage_end(SyncRowPager *rr)
{
	ExecClearTuple(rr->row_slot);
}
