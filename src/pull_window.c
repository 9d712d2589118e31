/*
 * pull_window.c — an incremental section (SPEC §3.6): the commit window after the cursor, read
 * in the pull's snapshot, delivered as COMMIT frames within limitCommits and the response
 * budget.  See pull.c for the decision and the budget rules.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/relscan.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/visibilitymap.h"
#include "catalog/pg_type.h"
#include "executor/tuptable.h"
#include "storage/bufmgr.h"
#include "storage/predicate.h"
#include "utils/fmgroids.h"
#include "utils/snapmgr.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "engine.h"
#include "stats.h"
#include "pull_internal.h"

/* ---------------------------------------------------------------- incremental */

/* stored scopes (jsonb object of strings) -> a COMMIT change's scopes map (also realtime) */
SspStrMap
sync_pull_stored_scopes(Jsonb *scopes)
{
	SspStrMap	m = {0, NULL};
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	char	   *key = NULL;
	uint32		keylen = 0;

	if (!JB_ROOT_IS_OBJECT(scopes))
		return m;
	m.entries = palloc0(sizeof(SspStrPair) * Max(JB_ROOT_COUNT(scopes), 1));
	it = JsonbIteratorInit(&scopes->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_KEY)
		{
			key = v.val.string.val;
			keylen = (uint32) v.val.string.len;
		}
		else if (tok == WJB_VALUE && v.type == jbvString)
		{
			m.entries[m.n].key.ptr = key;
			m.entries[m.n].key.len = keylen;
			m.entries[m.n].value.ptr = v.val.string.val;
			m.entries[m.n].value.len = (uint32) v.val.string.len;
			m.n++;
		}
	}
	return m;
}

/*
 * One candidate commit of the window.  While it may still be delivered its COMMIT frame
 * (wire-format.md §3.4) is encoded straight into the response as its changes are read, from
 * `start` on, and rolled back when it matches nothing, is not delivered or does not fit.
 */
typedef struct WindowCommit
{
	int64		seq;
	bool		live;			/* the commit row exists (not pruned) */
	bool		encoding;		/* its frame is being written at `start` */
	size_t		start;			/* response offset of the frame */
	size_t		count_at;		/* response offset of the change count */
	int			nchanges;		/* matching changes */
} WindowCommit;

/* The frame header and the commit's fields up to the change count (filled in at the end). */
static void
write_commit_head(PullCtx *pc, WindowCommit *wc, int64 created_at_ms, const char *actor,
				  uint32 actor_len)
{
	SspBuf	   *out = pc->round->out;
	uint32		tbl_len = (uint32) strlen(pc->table->name);
	uint8	   *p = pull_out_reserve(out, 1 + 4 + 8 + 8 + 4 + actor_len + 4 + 4 + tbl_len + 4);

	wc->start = out->len;
	*p++ = SSP_FRAME_COMMIT;
	p = pull_put_u32(p, 0);		/* the frame length, once known */
	p = pull_put_i64(p, wc->seq, "COMMIT.commitSeq");
	p = pull_put_i64(p, created_at_ms, "COMMIT.createdAtMs");
	p = pull_put_str(p, actor, actor_len, "COMMIT.actorId");
	p = pull_put_u32(p, 1);		/* tables: this subscription's table */
	p = pull_put_str(p, pc->table->name, tbl_len, "COMMIT.tables");
	wc->count_at = p - out->data;
	p = pull_put_u32(p, 0);
	out->len = p - out->data;
	wc->encoding = true;
}

/*
 * The stored scopes (a jsonb object of strings, SPEC §3.3) as the change record's `scopes`
 * map: its string members in UTF-16 key order (the codec's map order), read in place.
 */
#define MAX_SORTED_SCOPES 64

static void
write_change_scopes(SspBuf *out, Jsonb *scopes)
{
	JsonbContainer *jc = &scopes->root;
	int			npairs = JsonContainerSize(jc);
	const char *base = (const char *) &jc->children[npairs * 2];
	int			order[MAX_SORTED_SCOPES];
	int			n = 0;
	size_t		need = 4;
	uint8	   *p;

	if (npairs > MAX_SORTED_SCOPES)
		sync_raise("sync.internal_error", "pull: a stored change has too many scopes", NULL);
	for (int i = 0; i < npairs; i++)
	{
		int			k;

		if (!JBE_ISSTRING(jc->children[npairs + i]))
			continue;
		need += 8 + getJsonbLength(jc, i) + getJsonbLength(jc, npairs + i);
		/* insertion by UTF-16 key order (keys are unique in a jsonb object) */
		for (k = n; k > 0; k--)
		{
			int			j = order[k - 1];

			if (ssp_utf16_cmp(base + getJsonbOffset(jc, j), getJsonbLength(jc, j),
							  base + getJsonbOffset(jc, i), getJsonbLength(jc, i)) <= 0)
				break;
			order[k] = j;
		}
		order[k] = i;
		n++;
	}
	p = pull_out_reserve(out, need);
	p = pull_put_u32(p, (uint32) n);
	for (int k = 0; k < n; k++)
	{
		int			i = order[k];

		p = pull_put_str(p, base + getJsonbOffset(jc, i), getJsonbLength(jc, i),
						 "COMMIT.scopes");
		p = pull_put_str(p, base + getJsonbOffset(jc, npairs + i),
						 getJsonbLength(jc, npairs + i), "COMMIT.scopes");
	}
	out->len = p - out->data;
}

/*
 * Keep wc's frame when the budget allows (pull.c "Budget"); false when it was held back (its
 * bytes rolled back).
 */
static bool
keep_commit(PullCtx *pc, WindowCommit *wc)
{
	SspBuf	   *out = pc->round->out;
	size_t		len = out->len - wc->start;

	pull_put_u32(out->data + wc->count_at, (uint32) wc->nchanges);
	if (len - 5 > PG_UINT32_MAX)
		sync_raise("sync.internal_error", "pull: a commit frame exceeds 4 GiB", NULL);
	pull_put_u32(out->data + wc->start + 1, (uint32) (len - 5));
	out->len = wc->start;
	if (!pull_budget_allows(pc->round, len))
		return false;
	out->len = wc->start + len;
	pc->round->data_delivered = true;
	sync_stats_commit_served(pc->table->name, wc->nchanges);
	return true;
}

/*
 * The window is read by direct ordered index scans in the pull's snapshot (no executor, no
 * plan): the candidate commits from sync_change_scopes_pkey (partition, tbl, var, value,
 * commit_seq), one scan per value of the first effective variable merged in commit order
 * (a commit under two values once); per candidate, its commit row from sync_commits_pkey (gone:
 * pruned, skipped) and its changes of this table in idx order from sync_changes_by_table.
 * Reading stops as soon as the look-ahead is reached, so a round reads the commits it delivers
 * plus one, whatever the window's length; every scan is bounded above by the current range of
 * commit_seq (next_range), so a btree page read stops there too.
 */
typedef struct CandScan
{
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

/* Index AM calls run in cxt (the section's context): see pull_rows.c's RowReader. */
typedef struct WindowReader
{
	MemoryContext cxt;
	Snapshot	snap;
	Relation	cs_heap;		/* sync_change_scopes */
	Relation	cs_idx;
	TupleTableSlot *cs_slot;
	Buffer		vmbuf;
	int64		lo;				/* the range being read: lo < commit_seq <= hi */
	int64		hi;
	int64		span;
	int64		max_seq;
	int			nvalues;
	CandScan    *vs;
	Relation	cm_heap;		/* sync_commits */
	Relation	cm_idx;
	SeqWalker	cm;
	TupleTableSlot *cm_slot;
	AttrNumber	cm_created;
	AttrNumber	cm_actor;
	Relation	ch_heap;		/* sync_changes */
	Relation	ch_idx;
	SeqWalker	ch;
	const char *tbl;			/* this section's table, compared with the index tuple's */
	int			tbl_len;
	TupleTableSlot *ch_slot;
	AttrNumber	ch_row_id;
	AttrNumber	ch_op;
	AttrNumber	ch_row_version;
	AttrNumber	ch_scopes;
	AttrNumber	ch_payload;
} WindowReader;

static void
seq_next(WindowReader *wr, CandScan *v)
{
	MemoryContext old = MemoryContextSwitchTo(wr->cxt);

	if (pull_index_next_visible(v->scan, wr->cs_heap, wr->cs_slot, &wr->vmbuf))
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
walker_open(WindowReader *wr, SeqWalker *w, Relation heap, Relation index, Datum part)
{
	if (RelationGetDescr(index)->natts > (int) lengthof(w->vals))
		elog(ERROR, "syncular pull: index %s has too many columns", RelationGetRelationName(index));
	w->scan = index_beginscan(heap, index, wr->snap, 3, 0);
	w->scan->xs_want_itup = true;
	pull_eq_key(&w->keys[0], index, 1, part);
	w->placed = false;
	w->cur = -1;
}

static void
walker_step(WindowReader *wr, SeqWalker *w)
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
walker_seek(WindowReader *wr, SeqWalker *w, int64 seq)
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
walker_fetch(WindowReader *wr, SeqWalker *w, TupleTableSlot *slot)
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
next_range(WindowReader *wr)
{
	MemoryContext old;

	if (wr->hi >= wr->max_seq)
		return false;
	wr->lo = wr->hi;
	wr->span = Min(wr->span * 2, PG_INT64_MAX / 4);
	wr->hi = wr->max_seq - wr->lo <= wr->span ? wr->max_seq : wr->lo + wr->span;
	old = MemoryContextSwitchTo(wr->cxt);
	for (int i = 0; i < wr->nvalues; i++)
	{
		CandScan    *v = &wr->vs[i];

		ScanKeyEntryInitialize(&v->keys[4], 0, 5, BTGreaterStrategyNumber, InvalidOid,
							   InvalidOid, F_INT8GT, Int64GetDatum(wr->lo));
		ScanKeyEntryInitialize(&v->keys[5], 0, 5, BTLessEqualStrategyNumber, InvalidOid,
							   InvalidOid, F_INT8LE, Int64GetDatum(wr->hi));
		index_rescan(v->scan, v->keys, 6, NULL, 0);
	}
	MemoryContextSwitchTo(old);
	for (int i = 0; i < wr->nvalues; i++)
		seq_next(wr, &wr->vs[i]);
	return true;
}

static void
window_open(WindowReader *wr, PullCtx *pc, int64 after)
{
	const SyncEffective *e = pc->effective;
	Datum		part = CStringGetTextDatum(pc->round->partition);
	Datum		tbl = CStringGetTextDatum(pc->table->name);

	memset(wr, 0, sizeof(*wr));
	wr->cxt = CurrentMemoryContext;
	wr->snap = GetActiveSnapshot();
	wr->cs_heap = table_open(pull_catalog_relid("sync_change_scopes"), AccessShareLock);
	wr->cs_idx = index_open(pull_catalog_relid("sync_change_scopes_pkey"), AccessShareLock);
	wr->cs_slot = table_slot_create(wr->cs_heap, NULL);
	wr->vmbuf = InvalidBuffer;
	wr->nvalues = e->nvalues[0];
	wr->vs = palloc0(sizeof(CandScan) * Max(wr->nvalues, 1));
	for (int i = 0; i < wr->nvalues; i++)
	{
		CandScan    *v = &wr->vs[i];

		v->scan = index_beginscan(wr->cs_heap, wr->cs_idx, wr->snap, 6, 0);
		v->scan->xs_want_itup = true;
		pull_eq_key(&v->keys[0], wr->cs_idx, 1, part);
		pull_eq_key(&v->keys[1], wr->cs_idx, 2, tbl);
		pull_eq_key(&v->keys[2], wr->cs_idx, 3, CStringGetTextDatum(e->vars[0]));
		pull_eq_key(&v->keys[3], wr->cs_idx, 4, CStringGetTextDatum(e->values[0][i]));
		v->cur = -1;			/* placed by next_range (not at all when the window is empty) */
	}
	wr->max_seq = pc->round->max_seq;
	wr->hi = after;
	wr->span = FIRST_SPAN / 2;
	next_range(wr);

	wr->cm_heap = table_open(pull_catalog_relid("sync_commits"), AccessShareLock);
	wr->cm_idx = index_open(pull_catalog_relid("sync_commits_pkey"), AccessShareLock);
	wr->cm_slot = table_slot_create(wr->cm_heap, NULL);
	walker_open(wr, &wr->cm, wr->cm_heap, wr->cm_idx, part);
	wr->cm_created = pull_attnum(wr->cm_heap, "created_at_ms");
	wr->cm_actor = pull_attnum(wr->cm_heap, "actor_id");

	wr->ch_heap = table_open(pull_catalog_relid("sync_changes"), AccessShareLock);
	wr->ch_idx = index_open(pull_catalog_relid("sync_changes_by_table"), AccessShareLock);
	wr->ch_slot = table_slot_create(wr->ch_heap, NULL);
	walker_open(wr, &wr->ch, wr->ch_heap, wr->ch_idx, part);
	wr->tbl = pc->table->name;
	wr->tbl_len = (int) strlen(pc->table->name);
	wr->ch_row_id = pull_attnum(wr->ch_heap, "row_id");
	wr->ch_op = pull_attnum(wr->ch_heap, "op");
	wr->ch_row_version = pull_attnum(wr->ch_heap, "row_version");
	wr->ch_scopes = pull_attnum(wr->ch_heap, "scopes");
	wr->ch_payload = pull_attnum(wr->ch_heap, "payload");
}

static void
window_close(WindowReader *wr)
{
	for (int i = 0; i < wr->nvalues; i++)
		index_endscan(wr->vs[i].scan);
	index_endscan(wr->cm.scan);
	index_endscan(wr->ch.scan);
	ExecDropSingleTupleTableSlot(wr->cs_slot);
	ExecDropSingleTupleTableSlot(wr->cm_slot);
	ExecDropSingleTupleTableSlot(wr->ch_slot);
	if (BufferIsValid(wr->vmbuf))
		ReleaseBuffer(wr->vmbuf);
	index_close(wr->cs_idx, NoLock);
	index_close(wr->cm_idx, NoLock);
	index_close(wr->ch_idx, NoLock);
	table_close(wr->cs_heap, NoLock);
	table_close(wr->cm_heap, NoLock);
	table_close(wr->ch_heap, NoLock);
}

/* The next candidate commit in commit order (every value's scan moves past it); -1 at the end. */
static int64
next_candidate(WindowReader *wr)
{
	int64		min = -1;

	for (;;)
	{
		for (int i = 0; i < wr->nvalues; i++)
			if (wr->vs[i].cur >= 0 && (min < 0 || wr->vs[i].cur < min))
				min = wr->vs[i].cur;
		if (min >= 0 || !next_range(wr))
			break;
	}
	for (int i = 0; min >= 0 && i < wr->nvalues; i++)
		if (wr->vs[i].cur == min)
			seq_next(wr, &wr->vs[i]);
	return min;
}

/*
 * Start wc for commit `seq`: its commit row (live = not pruned); its frame head when `encode`.
 */
static void
begin_commit(PullCtx *pc, WindowReader *wr, int64 seq, bool encode, WindowCommit *wc)
{
	bool		isnull;
	text	   *actor;

	memset(wc, 0, sizeof(*wc));
	wc->seq = seq;
	walker_seek(wr, &wr->cm, seq);
	for (; wr->cm.cur == seq && !wc->live; walker_step(wr, &wr->cm))
		wc->live = walker_fetch(wr, &wr->cm, wr->cm_slot);
	if (!wc->live)
		return;
	if (encode)
	{
		actor = DatumGetTextPP(slot_getattr(wr->cm_slot, wr->cm_actor, &isnull));
		write_commit_head(pc, wc,
						  DatumGetInt64(slot_getattr(wr->cm_slot, wr->cm_created, &isnull)),
						  VARDATA_ANY(actor), VARSIZE_ANY_EXHDR(actor));
	}
	ExecClearTuple(wr->cm_slot);
}

/*
 * One stored change (in wr->ch_slot): counted when it matches the effective scopes, and its
 * change record appended to wc's frame while that is being written.  Values are read in place
 * from the tuple (the payload is detoasted only when stored compressed or out of line).
 */
static void
add_window_change(PullCtx *pc, WindowReader *wr, WindowCommit *wc)
{
	TupleTableSlot *slot = wr->ch_slot;
	SspBuf	   *out = pc->round->out;
	bool		isnull;
	Datum		d;
	Jsonb	   *scopes;
	union
	{
		Jsonb		jb;
		char		data[512];
	}			local;
	text	   *row_id;
	bytea	   *payload = NULL;
	int16		op;
	int64		row_version = 0;
	uint32		row_id_len;
	uint8	   *p;

	d = slot_getattr(slot, wr->ch_scopes, &isnull);
	if (isnull)
		return;
	if (VARATT_IS_SHORT(DatumGetPointer(d)) &&
		VARSIZE_SHORT(DatumGetPointer(d)) - VARHDRSZ_SHORT + VARHDRSZ <= sizeof(local))
	{
		/* a short inline jsonb: aligned with a 4-byte header here, not copied into a palloc */
		Size		len = VARSIZE_SHORT(DatumGetPointer(d)) - VARHDRSZ_SHORT;

		SET_VARSIZE(&local.jb, len + VARHDRSZ);
		memcpy(VARDATA(&local.jb), VARDATA_SHORT(DatumGetPointer(d)), len);
		scopes = &local.jb;
	}
	else
		scopes = DatumGetJsonbP(d);
	if (!sync_scopes_match(pc->effective, scopes))
		return;
	wc->nchanges++;
	if (!wc->encoding)
		return;

	row_id = DatumGetTextPP(slot_getattr(slot, wr->ch_row_id, &isnull));
	row_id_len = VARSIZE_ANY_EXHDR(row_id);
	op = DatumGetInt16(slot_getattr(slot, wr->ch_op, &isnull));
	if (op != SSP_OP_UPSERT && op != SSP_OP_DELETE)
		sync_raise("sync.internal_error",
				   psprintf("pull: writing a commit frame: COMMIT.op value %u out of range",
							(unsigned) (uint8) op), NULL);
	if (op == SSP_OP_UPSERT)
	{
		row_version = DatumGetInt64(slot_getattr(slot, wr->ch_row_version, &isnull));
		if (isnull)
			sync_raise("sync.internal_error", "pull: a stored upsert change has no row version", NULL);
		d = slot_getattr(slot, wr->ch_payload, &isnull);
		if (isnull)
			sync_raise("sync.internal_error", "pull: a stored upsert change has no payload", NULL);
		payload = DatumGetByteaPP(d);
	}

	/* tableIndex, rowId, op, rowVersion */
	p = pull_out_reserve(out, 2 + 4 + row_id_len + 1 + 1 + 8);
	*p++ = 0;
	*p++ = 0;
	p = pull_put_str(p, VARDATA_ANY(row_id), row_id_len, "COMMIT.rowId");
	*p++ = (uint8) op;
	*p++ = payload != NULL;
	if (payload != NULL)
		p = pull_put_i64(p, row_version, "COMMIT.rowVersion");
	out->len = p - out->data;
	/* scopes, row */
	write_change_scopes(out, scopes);
	if (payload == NULL)
	{
		p = pull_out_reserve(out, 1);
		*p++ = 0;
	}
	else
	{
		uint32		len = VARSIZE_ANY_EXHDR(payload);

		p = pull_out_reserve(out, 1 + 4 + len);
		*p++ = 1;
		p = pull_put_u32(p, len);
		memcpy(p, VARDATA_ANY(payload), len);
		p += len;
	}
	out->len = p - out->data;
}

/* wc's changes of this table, in idx order. */
static void
read_changes(PullCtx *pc, WindowReader *wr, WindowCommit *wc)
{
	SeqWalker  *w = &wr->ch;

	/* the index is (partition, commit_seq, tbl, idx): this table's changes are one run */
	for (walker_seek(wr, w, wc->seq); w->cur == wc->seq; walker_step(wr, w))
	{
		text	   *t = DatumGetTextPP(w->vals[2]);

		if ((int) VARSIZE_ANY_EXHDR(t) == wr->tbl_len &&
			memcmp(VARDATA_ANY(t), wr->tbl, wr->tbl_len) == 0 &&
			walker_fetch(wr, w, wr->ch_slot))
			add_window_change(pc, wr, wc);
	}
	ExecClearTuple(wr->ch_slot);
}

/* The window's running totals (§3.6 rules plus the response budget). */
typedef struct WindowState
{
	int64		limit;
	int64		matched;		/* matching changes read (look-ahead) */
	int64		delivered;		/* changes delivered */
	int64		ncommits;		/* commits delivered */
	int64		last_delivered;
	bool		stopped;		/* a commit was held back */
	bool		saturated;		/* stop reading: look-ahead passed limitCommits, or budget */
} WindowState;

/* May the next commit still be delivered (then its frame is written as it is read)? */
static bool
may_deliver(const WindowState *ws)
{
	return !ws->stopped && (ws->ncommits == 0 || ws->delivered < ws->limit);
}

static void
finish_commit(PullCtx *pc, WindowCommit *wc, WindowState *ws)
{
	if (!wc->live || wc->nchanges == 0)
	{
		if (wc->encoding)
			pc->round->out->len = wc->start;	/* nothing of this commit matched */
		return;
	}
	ws->matched += wc->nchanges;
	if (!ws->stopped && (ws->ncommits == 0 ||
						 (ws->delivered < ws->limit && ws->delivered + wc->nchanges <= ws->limit)))
	{
		Assert(wc->encoding);
		if (keep_commit(pc, wc))
		{
			ws->delivered += wc->nchanges;
			ws->ncommits++;
			ws->last_delivered = wc->seq;
		}
		else
			ws->stopped = ws->saturated = true;	/* the budget is spent: read no further */
	}
	else
	{
		if (wc->encoding)
			pc->round->out->len = wc->start;	/* held back: not split (§3.6) */
		ws->stopped = true;
	}
	if (ws->matched > ws->limit)
		ws->saturated = true;
}

void
pull_incremental(PullCtx *pc, SyncPullResult *result)
{
	SyncRound  *round = pc->round;
	int64		cursor = pc->sub->cursor;
	WindowState ws;
	WindowReader wr;
	int64		seq;

	memset(&ws, 0, sizeof(ws));
	ws.limit = round->limit_commits;
	ws.last_delivered = cursor;
	pull_write_sub_start(pc, SSP_SUB_ACTIVE, "", false);
	result->active = true;
	if (round->budget_spent)
	{
		/* no room left in this response: no commits, the cursor stays (Budget) */
		result->next_cursor = cursor;
		pull_write_sub_end(pc, cursor, NULL);
		return;
	}

	window_open(&wr, pc, cursor);
	while (!ws.saturated && (seq = next_candidate(&wr)) >= 0)
	{
		WindowCommit wc;
		MemoryContext old = MemoryContextSwitchTo(pc->work);

		CHECK_FOR_INTERRUPTS();
		begin_commit(pc, &wr, seq, may_deliver(&ws), &wc);
		if (wc.live)
			read_changes(pc, &wr, &wc);
		MemoryContextSwitchTo(old);
		finish_commit(pc, &wc, &ws);
		MemoryContextReset(pc->work);
	}
	window_close(&wr);

	if (!ws.saturated && !ws.stopped)
		result->next_cursor = Max(cursor, round->max_seq);
	else
		result->next_cursor = Max(cursor, ws.last_delivered);
	pull_write_sub_end(pc, result->next_cursor, NULL);
}
