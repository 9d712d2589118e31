/*
 * storage_log.c — the commit-log window of one pull section (SPEC §3.6), read by direct ordered
 * index scans in the pull's snapshot (no executor, no plan): the candidate commits from
 * sync_change_scopes_pkey (partition, tbl, var, value, commit_seq) and from
 * sync_commits_by_scope (the same columns: the entry a pushed commit of one upsert keeps in its
 * commit row with its change, docs/storage.md "Commit log layout"; before 0.7.0,
 * sync_changes_by_scope on the change row), one scan per index and value of the first
 * effective variable, merged in commit order (a commit under two values once); per
 * candidate, its commit row from sync_commits_pkey (gone: pruned) and its changes: the one the
 * commit row keeps, or those in idx order from sync_changes_pkey (partition, commit_seq, idx),
 * other tables' changes skipped by the heap tuple's tbl (there is no by-table index: docs/storage.md, "Commit log layout").  The caller stops reading as soon as its look-ahead
 * is reached, so a round reads the commits it delivers plus one, whatever the window's length;
 * every scan is bounded above by the current range of commit_seq (next_range), so a btree page
 * read stops there too.  Which changes match and which commits are delivered is the caller's
 * (pull_window.c).
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/relscan.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "storage/bufmgr.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "ssp.h"
#include "storage.h"
#include "storage_internal.h"
#include "storage_log.h"
#include "storage_scan.h"

/* An index of candidate entries (partition, tbl, var, value, commit_seq) and its heap. */
typedef struct CandSource
{
	Relation	heap;
	Relation	idx;
	TupleTableSlot *slot;		/* a scratch slot of heap (visibility checks) */
	Buffer		vmbuf;			/* heap's visibility map page */
} CandSource;

typedef struct CandScan
{
	CandSource *src;
	IndexScanDesc scan;
	ScanKeyData keys[6];		/* partition, tbl, var, value, commit_seq > lo, <= hi */
	int64		cur;			/* the current candidate, -1 when done */
} CandScan;

/*
 * A forward scan of an index led by (partition, commit_seq) that serves the candidates in
 * commit order: it steps to the next candidate while that is near (WALK_STEPS entries) and
 * is placed anew by a descent otherwise, so a dense window is one ordered scan and a sparse one
 * costs one descent per candidate.
 */
#define WALK_STEPS 32

typedef struct SeqWalker
{
	IndexScanDesc scan;
	ScanKeyData keys[3];		/* partition = $1, commit_seq >= placed, commit_seq <= hi */
	bool		placed;
	int64		hi;				/* the range's upper bound when placed */
	int64		cur;			/* commit_seq of the current entry, -1 at the end */
	Datum		vals[4];		/* the current entry's columns (deformed once per entry) */
	bool		nulls[4];
} SeqWalker;

/* A change's columns in sync_changes, or in sync_commits since 0.7.0 (0: absent) */
typedef struct ChangeCols
{
	AttrNumber	tbl;
	AttrNumber	row_id;
	AttrNumber	op;
	AttrNumber	row_version;
	AttrNumber	scopes;
	AttrNumber	payload;
} ChangeCols;

/*
 * Index AM calls run in cxt (the context current at open): a btree scan allocates on first need
 * (its killed-items array, its tuple workspace) and keeps using it.
 */
struct SyncLogWindow
{
	MemoryContext cxt;
	Snapshot	snap;
	CandSource	srcs[3];		/* sync_change_scopes_pkey, sync_commits_by_scope (or, before
								 * 0.7.0, sync_changes_by_scope) */
	int			nsrcs;
	int64		lo;				/* the range being read: lo < commit_seq <= hi */
	int64		hi;
	int64		span;
	int64		max_seq;
	int			nscans;			/* one per source and value */
	CandScan   *vs;
	Relation	cm_heap;		/* sync_commits */
	Relation	cm_idx;
	SeqWalker	cm;
	TupleTableSlot *cm_slot;
	AttrNumber	cm_created;
	AttrNumber	cm_actor;
	ChangeCols	cm_cols;		/* the change columns of sync_commits (0 before 0.7.0) */
	AttrNumber	cm_result;
	int64		cm_inline;		/* the commit in cm_slot keeps a change there (else -1) */
	bool		cm_rows_too;	/* ... and may have sync_changes rows after it (SQL writes) */
	bool		ch_in_commit;	/* the commit row's change is still to be looked at */
	bool		ch_from_commit; /* the change handed out last is the commit row's */
	bool		ch_rows;		/* the commit's sync_changes rows are read */
	Relation	ch_heap;		/* sync_changes */
	Relation	ch_idx;
	SeqWalker	ch;
	int64		ch_seq;			/* the commit whose changes are being read */
	bool		ch_pending;		/* the current entry was handed out: step before the next */
	const char *tbl;			/* the window's table, compared with the index tuple's */
	int			tbl_len;
	TupleTableSlot *ch_slot;
	ChangeCols	ch_cols;
	union
	{
		Jsonb		jb;
		char		data[512];
	}			local;			/* the current change's short scopes, aligned */
};

static void
seq_next(SyncLogWindow *wr, CandScan *v)
{
	MemoryContext old = MemoryContextSwitchTo(wr->cxt);

	if (sync_scan_next_visible(v->scan, v->src->heap, v->src->slot, &v->src->vmbuf))
	{
		bool		isnull;
		int64		seq = DatumGetInt64(index_getattr(v->scan->xs_itup, 5, v->scan->xs_itupdesc,
													  &isnull));

		v->cur = seq <= wr->hi ? seq : -1;
	}
	else
		v->cur = -1;
	MemoryContextSwitchTo(old);
}

static void
walker_open(SyncLogWindow *wr, SeqWalker *w, Relation heap, Relation index, Datum part)
{
	if (RelationGetDescr(index)->natts > (int) lengthof(w->vals))
		elog(ERROR, "syncular pull: index %s has too many columns", RelationGetRelationName(index));
	w->scan = index_beginscan(heap, index, wr->snap, 3, 0);
	w->scan->xs_want_itup = true;
	sync_scan_eq_key(&w->keys[0], index, 1, part);
	w->placed = false;
	w->cur = -1;
}

static void
walker_step(SyncLogWindow *wr, SeqWalker *w)
{
	MemoryContext old = MemoryContextSwitchTo(wr->cxt);

	if (index_getnext_tid(w->scan, ForwardScanDirection) == NULL)
		w->cur = -1;
	else
	{
		/* one pass over the entry (commit_seq and tbl follow the variable-length partition) */
		index_deform_tuple(w->scan->xs_itup, w->scan->xs_itupdesc, w->vals, w->nulls);
		w->cur = DatumGetInt64(w->vals[1]);
	}
	MemoryContextSwitchTo(old);
}

/* Bring w to the first entry of commit `seq`, or past it when it has none. */
static void
walker_seek(SyncLogWindow *wr, SeqWalker *w, int64 seq)
{
	if (w->hi != wr->hi)
		w->placed = false;		/* placed in an earlier range */
	for (int k = 0; w->placed && w->cur >= 0 && w->cur < seq; k++)
	{
		if (k == WALK_STEPS)
		{
			w->placed = false;	/* far ahead: a descent is cheaper */
			break;
		}
		walker_step(wr, w);
	}
	if (!w->placed)
	{
		MemoryContext old = MemoryContextSwitchTo(wr->cxt);

		ScanKeyEntryInitialize(&w->keys[1], 0, 2, BTGreaterEqualStrategyNumber, InvalidOid,
							   InvalidOid, F_INT8GE, Int64GetDatum(seq));
		ScanKeyEntryInitialize(&w->keys[2], 0, 2, BTLessEqualStrategyNumber, InvalidOid,
							   InvalidOid, F_INT8LE, Int64GetDatum(wr->hi));
		index_rescan(w->scan, w->keys, 3, NULL, 0);
		MemoryContextSwitchTo(old);
		w->placed = true;
		w->hi = wr->hi;
		walker_step(wr, w);
	}
}

/* Fetch w's current entry's visible tuple into slot (false: a dead version). */
static bool
walker_fetch(SyncLogWindow *wr, SeqWalker *w, TupleTableSlot *slot)
{
	MemoryContext old = MemoryContextSwitchTo(wr->cxt);
	bool		found = index_fetch_heap(w->scan, slot);

	MemoryContextSwitchTo(old);
	return found;
}

/*
 * The window is read in ranges of commit_seq, each twice as long as the one before (the first
 * FIRST_SPAN): every scan carries the range's upper bound, so a btree page read stops at it
 * instead of checking every later entry of the page (a short window reads little more than
 * itself, a long one a few more descents).  false when the window is exhausted.
 */
#define FIRST_SPAN 16

static bool
next_range(SyncLogWindow *wr)
{
	MemoryContext old;

	if (wr->hi >= wr->max_seq)
		return false;
	wr->lo = wr->hi;
	wr->span = Min(wr->span * 2, PG_INT64_MAX / 4);
	wr->hi = wr->max_seq - wr->lo <= wr->span ? wr->max_seq : wr->lo + wr->span;
	old = MemoryContextSwitchTo(wr->cxt);
	for (int i = 0; i < wr->nscans; i++)
	{
		CandScan   *v = &wr->vs[i];

		ScanKeyEntryInitialize(&v->keys[4], 0, 5, BTGreaterStrategyNumber, InvalidOid,
							   InvalidOid, F_INT8GT, Int64GetDatum(wr->lo));
		ScanKeyEntryInitialize(&v->keys[5], 0, 5, BTLessEqualStrategyNumber, InvalidOid,
							   InvalidOid, F_INT8LE, Int64GetDatum(wr->hi));
		index_rescan(v->scan, v->keys, 6, NULL, 0);
	}
	MemoryContextSwitchTo(old);
	for (int i = 0; i < wr->nscans; i++)
		seq_next(wr, &wr->vs[i]);
	return true;
}

static void
source_open(CandSource *s, const char *heap, Oid index)
{
	s->heap = table_open(sync_scan_catalog_relid(heap), AccessShareLock);
	s->idx = index_open(index, AccessShareLock);
	s->slot = table_slot_create(s->heap, NULL);
	s->vmbuf = InvalidBuffer;
}

/*
 * The source of the entries kept beside a change, by index name: false when the catalog has no
 * such index.  The index is looked up once its heap is locked, so an ALTER EXTENSION UPDATE that
 * drops or creates it has committed or not begun.  An index created after the round's snapshot
 * (the update committed meanwhile) would hide what the update moved into rows the snapshot cannot
 * see (0.7.0 moves one-change commits into their commit rows): the round fails, to be retried.
 */
static bool
kept_source_open(CandSource *s, const char *heap, const char *index, Snapshot snap)
{
	Relation	h = table_open(sync_scan_catalog_relid(heap), AccessShareLock);
	Oid			idx = get_relname_relid(index, RelationGetNamespace(h));
	TransactionId xmin;

	if (!OidIsValid(idx))
	{
		table_close(h, AccessShareLock);
		return false;
	}
	source_open(s, heap, idx);
	table_close(h, NoLock);		/* source_open holds its own lock */
	xmin = HeapTupleHeaderGetXmin(s->idx->rd_indextuple->t_data);
	if (TransactionIdIsNormal(xmin) && !TransactionIdIsCurrentTransactionId(xmin) &&
		XidInMVCCSnapshot(xmin, snap))
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("syncular pull: the commit log's layout changed during this round"),
				 errdetail("Index %s was created after the round's snapshot (ALTER EXTENSION syncular UPDATE).",
						   index),
				 errhint("Retry the round.")));
	return true;
}

/*
 * The candidate scans: one per source and value, placed by next_range (not at all when the
 * window is empty).  The entries kept beside a change are in sync_commits_by_scope since 0.7.0
 * and in sync_changes_by_scope before (ALTER EXTENSION pending); a catalog from before 0.6.0 has
 * neither: sync_change_scopes only.
 */
static void
open_candidates(SyncLogWindow *wr, Datum part, Datum tbl, const char *var, int nvalues,
				char *const *values)
{
	static const char *const kept[][2] = {{"sync_commits", "sync_commits_by_scope"},
	{"sync_changes", "sync_changes_by_scope"}};

	source_open(&wr->srcs[0], "sync_change_scopes",
				sync_scan_catalog_relid("sync_change_scopes_pkey"));
	wr->nsrcs = 1;
	for (int k = 0; k < (int) lengthof(kept); k++)
		if (kept_source_open(&wr->srcs[wr->nsrcs], kept[k][0], kept[k][1], wr->snap))
			wr->nsrcs++;
	wr->nscans = nvalues * wr->nsrcs;
	wr->vs = palloc0(sizeof(CandScan) * Max(wr->nscans, 1));
	for (int i = 0; i < wr->nscans; i++)
	{
		CandScan   *v = &wr->vs[i];
		CandSource *s = &wr->srcs[i % wr->nsrcs];

		v->src = s;
		v->scan = index_beginscan(s->heap, s->idx, wr->snap, 6, 0);
		v->scan->xs_want_itup = true;
		sync_scan_eq_key(&v->keys[0], s->idx, 1, part);
		sync_scan_eq_key(&v->keys[1], s->idx, 2, tbl);
		sync_scan_eq_key(&v->keys[2], s->idx, 3, CStringGetTextDatum(var));
		sync_scan_eq_key(&v->keys[3], s->idx, 4, CStringGetTextDatum(values[i / wr->nsrcs]));
		v->cur = -1;
	}
}

/* attribute `name` of rel, 0 when it has none (a catalog from before the column) */
static AttrNumber
attnum_or_zero(Relation rel, const char *name)
{
	AttrNumber	a = get_attnum(RelationGetRelid(rel), name);

	return a == InvalidAttrNumber ? 0 : a;
}

static void
change_cols(Relation rel, ChangeCols *c)
{
	c->tbl = attnum_or_zero(rel, "tbl");
	c->row_id = attnum_or_zero(rel, "row_id");
	c->op = attnum_or_zero(rel, "op");
	c->row_version = attnum_or_zero(rel, "row_version");
	c->scopes = attnum_or_zero(rel, "scopes");
	c->payload = attnum_or_zero(rel, "payload");
}

SyncLogWindow *
sync_log_window_open(const char *partition, const char *table, const char *var, int nvalues,
					 char *const *values, int64 after_seq, int64 max_seq)
{
	SyncLogWindow *wr = palloc0(sizeof(SyncLogWindow));
	Datum		part = CStringGetTextDatum(partition);

	wr->cxt = CurrentMemoryContext;
	wr->snap = GetActiveSnapshot();
	open_candidates(wr, part, CStringGetTextDatum(table), var, nvalues, values);
	wr->max_seq = max_seq;
	wr->hi = after_seq;
	wr->span = FIRST_SPAN / 2;
	next_range(wr);

	wr->cm_heap = table_open(sync_scan_catalog_relid("sync_commits"), AccessShareLock);
	wr->cm_idx = index_open(sync_scan_catalog_relid("sync_commits_pkey"), AccessShareLock);
	wr->cm_slot = table_slot_create(wr->cm_heap, NULL);
	walker_open(wr, &wr->cm, wr->cm_heap, wr->cm_idx, part);
	wr->cm_created = sync_scan_attnum(wr->cm_heap, "created_at_ms");
	wr->cm_actor = sync_scan_attnum(wr->cm_heap, "actor_id");
	change_cols(wr->cm_heap, &wr->cm_cols);
	wr->cm_result = attnum_or_zero(wr->cm_heap, "result");
	wr->cm_inline = -1;

	wr->ch_heap = table_open(sync_scan_catalog_relid("sync_changes"), AccessShareLock);
	wr->ch_idx = index_open(sync_scan_catalog_relid("sync_changes_pkey"), AccessShareLock);
	wr->ch_slot = table_slot_create(wr->ch_heap, NULL);
	walker_open(wr, &wr->ch, wr->ch_heap, wr->ch_idx, part);
	wr->tbl = pstrdup(table);
	wr->tbl_len = (int) strlen(table);
	change_cols(wr->ch_heap, &wr->ch_cols);
	return wr;
}

void
sync_log_window_close(SyncLogWindow *wr)
{
	for (int i = 0; i < wr->nscans; i++)
		index_endscan(wr->vs[i].scan);
	index_endscan(wr->cm.scan);
	index_endscan(wr->ch.scan);
	for (int i = 0; i < wr->nsrcs; i++)
	{
		CandSource *s = &wr->srcs[i];

		ExecDropSingleTupleTableSlot(s->slot);
		if (BufferIsValid(s->vmbuf))
			ReleaseBuffer(s->vmbuf);
		index_close(s->idx, NoLock);
		table_close(s->heap, NoLock);
	}
	ExecDropSingleTupleTableSlot(wr->cm_slot);
	ExecDropSingleTupleTableSlot(wr->ch_slot);
	index_close(wr->cm_idx, NoLock);
	index_close(wr->ch_idx, NoLock);
	table_close(wr->cm_heap, NoLock);
	table_close(wr->ch_heap, NoLock);
}

int64
sync_log_window_next(SyncLogWindow *wr)
{
	int64		min = -1;

	for (;;)
	{
		for (int i = 0; i < wr->nscans; i++)
			if (wr->vs[i].cur >= 0 && (min < 0 || wr->vs[i].cur < min))
				min = wr->vs[i].cur;
		if (min >= 0 || !next_range(wr))
			break;
	}
	for (int i = 0; min >= 0 && i < wr->nscans; i++)
		if (wr->vs[i].cur == min)
			seq_next(wr, &wr->vs[i]);
	return min;
}

bool
sync_log_commit_read(SyncLogWindow *wr, int64 seq, SyncLogCommit *c)
{
	bool		live = false;
	bool		isnull;

	ExecClearTuple(wr->cm_slot);	/* the previous commit's fields are no longer handed out */
	wr->cm_inline = -1;
	walker_seek(wr, &wr->cm, seq);
	for (; wr->cm.cur == seq && !live; walker_step(wr, &wr->cm))
		live = walker_fetch(wr, &wr->cm, wr->cm_slot);
	if (live && wr->cm_cols.tbl > 0)
	{
		(void) slot_getattr(wr->cm_slot, wr->cm_cols.tbl, &isnull);
		if (!isnull)
		{
			/* a pushed commit (with its result) has no other change; one of SQL writes can */
			wr->cm_inline = seq;
			(void) slot_getattr(wr->cm_slot, wr->cm_result, &isnull);
			wr->cm_rows_too = isnull;
		}
	}
	if (live && c != NULL)
	{
		text	   *actor = DatumGetTextPP(slot_getattr(wr->cm_slot, wr->cm_actor, &isnull));

		c->created_at_ms = DatumGetInt64(slot_getattr(wr->cm_slot, wr->cm_created, &isnull));
		c->actor_id = VARDATA_ANY(actor);
		c->actor_len = VARSIZE_ANY_EXHDR(actor);
	}
	return live;
}

void
sync_log_changes_begin(SyncLogWindow *wr, int64 seq)
{
	wr->ch_seq = seq;
	wr->ch_pending = false;
	wr->ch_from_commit = false;
	/* a pushed commit that keeps its change in its row has no sync_changes row: no index read */
	wr->ch_in_commit = wr->cm_inline == seq;
	wr->ch_rows = !wr->ch_in_commit || wr->cm_rows_too;
	if (wr->ch_rows)
		walker_seek(wr, &wr->ch, seq);
}

/*
 * The stored scopes of the change in slot (attribute `scopes`), read in place: a short inline jsonb is aligned
 * with a 4-byte header in wr->local, not copied into a palloc; others are detoasted (into the
 * caller's context) only when stored compressed or out of line.
 */
static Jsonb *
change_scopes(SyncLogWindow *wr, TupleTableSlot *slot, AttrNumber scopes)
{
	bool		isnull;
	Datum		d = slot_getattr(slot, scopes, &isnull);

	if (isnull)
		return NULL;
	if (VARATT_IS_SHORT(DatumGetPointer(d)) &&
		VARSIZE_SHORT(DatumGetPointer(d)) - VARHDRSZ_SHORT + VARHDRSZ <= sizeof(wr->local))
	{
		Size		len = VARSIZE_SHORT(DatumGetPointer(d)) - VARHDRSZ_SHORT;

		SET_VARSIZE(&wr->local.jb, len + VARHDRSZ);
		memcpy(VARDATA(&wr->local.jb), VARDATA_SHORT(DatumGetPointer(d)), len);
		return &wr->local.jb;
	}
	return DatumGetJsonbP(d);
}

bool
sync_log_change_next(SyncLogWindow *wr, Jsonb **scopes)
{
	SeqWalker  *w = &wr->ch;

	if (wr->ch_in_commit)
	{
		/* the commit row's change (idx 0), looked at once, before the rows (idx 1 on) */
		bool		isnull;
		text	   *t = DatumGetTextPP(slot_getattr(wr->cm_slot, wr->cm_cols.tbl, &isnull));

		wr->ch_in_commit = false;
		if ((int) VARSIZE_ANY_EXHDR(t) == wr->tbl_len &&
			memcmp(VARDATA_ANY(t), wr->tbl, wr->tbl_len) == 0)
		{
			wr->ch_from_commit = true;
			*scopes = change_scopes(wr, wr->cm_slot, wr->cm_cols.scopes);
			return true;
		}
	}
	wr->ch_from_commit = false;
	if (!wr->ch_rows)
		return false;

	/*
	 * The index is (partition, commit_seq, idx): the commit's changes in idx order, this table's
	 * picked by the visible heap tuple's tbl (a commit's changes are appended together, so the
	 * other tables' tuples are mostly on the same heap pages).
	 */
	for (;;)
	{
		text	   *t;
		bool		isnull;

		if (wr->ch_pending)
			walker_step(wr, w);	/* past the entry looked at last */
		if (w->cur != wr->ch_seq)
		{
			ExecClearTuple(wr->ch_slot);
			return false;
		}
		wr->ch_pending = true;
		if (!walker_fetch(wr, w, wr->ch_slot))
			continue;
		t = DatumGetTextPP(slot_getattr(wr->ch_slot, wr->ch_cols.tbl, &isnull));
		if ((int) VARSIZE_ANY_EXHDR(t) == wr->tbl_len &&
			memcmp(VARDATA_ANY(t), wr->tbl, wr->tbl_len) == 0)
		{
			*scopes = change_scopes(wr, wr->ch_slot, wr->ch_cols.scopes);
			return true;
		}
	}
}

void
sync_log_change_read(SyncLogWindow *wr, SyncLogChange *c)
{
	TupleTableSlot *slot = wr->ch_from_commit ? wr->cm_slot : wr->ch_slot;
	const ChangeCols *k = wr->ch_from_commit ? &wr->cm_cols : &wr->ch_cols;
	bool		isnull;
	text	   *row_id = DatumGetTextPP(slot_getattr(slot, k->row_id, &isnull));
	Datum		d;

	memset(c, 0, sizeof(*c));
	c->row_id = VARDATA_ANY(row_id);
	c->row_id_len = VARSIZE_ANY_EXHDR(row_id);
	c->op = DatumGetInt16(slot_getattr(slot, k->op, &isnull));
	if (c->op != SSP_OP_UPSERT)
		return;					/* only an upsert stores a version and a row */
	c->row_version = DatumGetInt64(slot_getattr(slot, k->row_version, &isnull));
	c->has_row_version = !isnull;
	d = slot_getattr(slot, k->payload, &isnull);
	if (!isnull)
	{
		bytea	   *payload = DatumGetByteaPP(d);

		c->payload = VARDATA_ANY(payload);
		c->payload_len = VARSIZE_ANY_EXHDR(payload);
	}
}

/* ---------------------------------------------------------------- a realtime window (SPI) */

/*
 * The changes of a range read through the view syncular.changes (every change, wherever it is
 * kept: docs/storage.md "Commit log layout"), or sync_changes itself in a catalog from before
 * 0.7.0 (no view: ALTER EXTENSION pending; sync_storage_log_inline, which the same update
 * answers).  changes_from() names it.
 */
#define CHANGES_SQL \
	"SELECT ch.commit_seq, ch.tbl, ch.row_id, ch.op, ch.row_version, ch.scopes, ch.payload" \
	"  FROM %s ch" \
	" WHERE ch.partition = $1 AND ch.commit_seq > $2 AND ch.commit_seq <= $3" \
	" ORDER BY ch.commit_seq DESC, ch.idx DESC LIMIT $4"

static const char *
changes_from(void)
{
	return sync_storage_log_inline() ? "syncular.changes" : "syncular.sync_changes";
}

#define COMMITS_SQL \
	"SELECT m.commit_seq, m.created_at_ms, m.actor_id FROM syncular.sync_commits m" \
	" WHERE m.partition = $1 AND m.commit_seq > $2 AND m.commit_seq <= $3" \
	" ORDER BY m.commit_seq"

/* sql over (lo, hi] of the partition; CHANGES_SQL takes a LIMIT (limit <= 0: none) */
static SPITupleTable *
range_query(const char *sql, int nargs, const char *partition, int64 lo, int64 hi, int64 limit,
			uint64 *n)
{
	Oid			types[4] = {TEXTOID, INT8OID, INT8OID, INT8OID};
	Datum		args[4];
	char		nulls[4] = {' ', ' ', ' ', ' '};
	MemoryContext caller = CurrentMemoryContext;
	int			rc;

	args[0] = CStringGetTextDatum(partition);
	args[1] = Int64GetDatum(lo);
	args[2] = Int64GetDatum(hi);
	args[3] = Int64GetDatum(limit);
	if (limit <= 0)
		nulls[3] = 'n';			/* LIMIT NULL: all rows */
	rc = SPI_execute_with_args(sql, nargs, types, args, nulls, true, 0);
	MemoryContextSwitchTo(caller);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "syncular realtime: commit window read failed");
	*n = SPI_processed;
	return SPI_tuptable;
}

uint64
sync_log_read_changes(const char *partition, int64 lo, int64 hi, int64 limit,
					  SyncStoredChange **out)
{
	uint64		n;
	SPITupleTable *tt = range_query(psprintf(CHANGES_SQL, changes_from()), 4, partition, lo, hi,
									limit, &n);
	TupleDesc	td = tt->tupdesc;
	SyncStoredChange *ch = palloc0(sizeof(SyncStoredChange) * Max(n, 1));

	for (uint64 r = 0; r < n; r++)
	{
		HeapTuple	tup = tt->vals[r];
		bool		isnull;
		Datum		d;

		ch[r].seq = DatumGetInt64(SPI_getbinval(tup, td, 1, &isnull));
		ch[r].table = TextDatumGetCString(SPI_getbinval(tup, td, 2, &isnull));
		ch[r].row_id = TextDatumGetCString(SPI_getbinval(tup, td, 3, &isnull));
		ch[r].op = DatumGetInt16(SPI_getbinval(tup, td, 4, &isnull));
		ch[r].row_version = DatumGetInt64(SPI_getbinval(tup, td, 5, &isnull));
		ch[r].has_row_version = !isnull;
		ch[r].scopes = DatumGetJsonbP(SPI_getbinval(tup, td, 6, &isnull));
		d = SPI_getbinval(tup, td, 7, &isnull);
		ch[r].payload = isnull ? NULL : DatumGetByteaPP(d);
	}
	*out = ch;
	return n;
}

uint64
sync_log_read_commits(const char *partition, int64 lo, int64 hi, SyncStoredCommit **out)
{
	uint64		n;
	SPITupleTable *tt = range_query(COMMITS_SQL, 3, partition, lo, hi, 0, &n);
	SyncStoredCommit *cm = palloc0(sizeof(SyncStoredCommit) * Max(n, 1));

	for (uint64 r = 0; r < n; r++)
	{
		HeapTuple	tup = tt->vals[r];
		bool		isnull;

		cm[r].seq = DatumGetInt64(SPI_getbinval(tup, tt->tupdesc, 1, &isnull));
		cm[r].created_at_ms = DatumGetInt64(SPI_getbinval(tup, tt->tupdesc, 2, &isnull));
		cm[r].actor_id = TextDatumGetCString(SPI_getbinval(tup, tt->tupdesc, 3, &isnull));
	}
	*out = cm;
	return n;
}

/*
 * The (commit_seq, tbl, scopes) of the changes of lo < commit_seq <= hi, in no order, as a
 * watch rerun's filter reads them (REMOTE.md §5), in the active snapshot.  Reads at most max + 1
 * rows; a count above max means the window is too large and nothing was copied (*out NULL).
 * table and scopes are copies in the caller's context.
 */
uint64
sync_log_read_change_scopes(const char *partition, int64 lo, int64 hi, int max,
							SyncStoredChange **out)
{
	static SPIPlanPtr plans[2];	/* through sync_changes (before 0.7.0), through the view */
	MemoryContext caller = CurrentMemoryContext;
	Datum		args[4];
	int			rc;
	uint64		n;
	SyncStoredChange *ch;
	int			which = sync_storage_log_inline() ? 1 : 0;
	SPIPlanPtr	plan = plans[which];

	if (plan == NULL)
	{
		Oid			argtypes[4] = {TEXTOID, INT8OID, INT8OID, INT8OID};

		plan = plans[which] =
			sync_storage_keep_plan(psprintf("SELECT ch.commit_seq, ch.tbl, ch.scopes FROM %s ch "
											"WHERE ch.partition = $1 AND ch.commit_seq > $2 "
											"AND ch.commit_seq <= $3 LIMIT $4",
											which ? "syncular.changes" : "syncular.sync_changes"),
								   4, argtypes, 0);
	}
	args[0] = CStringGetTextDatum(partition);
	args[1] = Int64GetDatum(lo);
	args[2] = Int64GetDatum(hi);
	args[3] = Int64GetDatum((int64) max + 1);
	rc = SPI_execute_plan(plan, args, NULL, true, 0);
	MemoryContextSwitchTo(caller);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "syncular: reading the watch window failed");
	n = SPI_processed;
	*out = NULL;
	if (n > (uint64) max)
		return n;
	ch = palloc0(sizeof(SyncStoredChange) * Max(n, 1));
	for (uint64 i = 0; i < n; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;

		ch[i].seq = DatumGetInt64(SPI_getbinval(tup, desc, 1, &isnull));
		ch[i].table = TextDatumGetCString(SPI_getbinval(tup, desc, 2, &isnull));
		ch[i].scopes = DatumGetJsonbPCopy(SPI_getbinval(tup, desc, 3, &isnull));
	}
	*out = ch;
	return n;
}
