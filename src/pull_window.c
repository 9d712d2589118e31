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

/* One candidate commit of the window, with its matching changes (copied out of the scans). */
typedef struct WindowCommit
{
	int64		seq;
	bool		live;			/* the commit row exists (not pruned) */
	int64		created_at_ms;
	char	   *actor_id;
	int			nchanges;
	int			maxchanges;
	SspChange  *changes;
} WindowCommit;

/*
 * Encode wc's COMMIT frame into the response and keep it when the budget allows (pull.c
 * "Budget").  false when it was held back.
 */
static bool
write_commit(PullCtx *pc, const WindowCommit *wc)
{
	SspFrame	f;
	SspStr		table = pc->sub->table;
	SspBuf	   *out = pc->round->out;
	size_t		start = out->len;
	size_t		len;
	SspError	err;
	bool		fits;
	MemoryContext old;

	memset(&f, 0, sizeof(f));
	f.type = SSP_FRAME_COMMIT;
	f.commit.commit_seq = wc->seq;
	f.commit.created_at_ms = wc->created_at_ms;
	f.commit.actor_id = pull_mkstr(wc->actor_id);
	f.commit.ntables = 1;
	f.commit.tables = &table;
	f.commit.nchanges = (uint32) wc->nchanges;
	f.commit.changes = wc->changes;
	/* encoded in place, then measured: held back (the length rolled back) when it does not fit */
	old = MemoryContextSwitchTo(pc->outer);
	if (!ssp_write_frame(out, pc->round->wire_version, &f, &err))
		pull_raise_codec("writing a commit frame", &err);
	MemoryContextSwitchTo(old);
	len = out->len - start;
	out->len = start;
	fits = pull_budget_allows(pc->round, len);
	if (fits)
	{
		out->len = start + len;
		pc->round->data_delivered = true;
		sync_stats_commit_served(pc->table->name, wc->nchanges);
	}
	return fits;
}

/*
 * The window is read by direct ordered index scans in the pull's snapshot (no executor, no
 * plan): the candidate commits from sync_change_scopes_pkey (partition, tbl, var, value,
 * commit_seq), one scan per value of the first effective variable merged in commit order
 * (a commit under two values once); per candidate, its commit row from sync_commits_pkey (gone:
 * pruned, skipped) and its changes of this table in idx order from sync_changes_by_table.
 * Reading stops as soon as the look-ahead is reached, so a round reads the commits it delivers
 * plus one, whatever the window's length.
 */
typedef struct CandScan
{
	IndexScanDesc scan;
	ScanKeyData keys[5];
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
	ScanKeyData keys[2];		/* partition = $1, commit_seq >= placed */
	bool		placed;
	int64		cur;			/* commit_seq of the current entry, -1 at the end */
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
seq_next(WindowReader *wr, CandScan *v, int64 max_seq)
{
	ItemPointer tid;
	MemoryContext old = MemoryContextSwitchTo(wr->cxt);

	while ((tid = index_getnext_tid(v->scan, ForwardScanDirection)) != NULL)
	{
		bool		isnull;
		int64		seq;

		if (!VM_ALL_VISIBLE(wr->cs_heap, ItemPointerGetBlockNumber(tid), &wr->vmbuf))
		{
			if (!index_fetch_heap(v->scan, wr->cs_slot))
				continue;		/* not visible in the snapshot */
			ExecClearTuple(wr->cs_slot);
		}
		else
			PredicateLockPage(wr->cs_heap, ItemPointerGetBlockNumber(tid), wr->snap);
		seq = DatumGetInt64(index_getattr(v->scan->xs_itup, 5, v->scan->xs_itupdesc, &isnull));
		v->cur = seq <= max_seq ? seq : -1;
		MemoryContextSwitchTo(old);
		return;
	}
	v->cur = -1;
	MemoryContextSwitchTo(old);
}

static void
walker_open(WindowReader *wr, SeqWalker *w, Relation heap, Relation index, Datum part)
{
	w->scan = index_beginscan(heap, index, wr->snap, 2, 0);
	w->scan->xs_want_itup = true;
	pull_eq_key(&w->keys[0], index, 1, part);
	w->placed = false;
	w->cur = -1;
}

static void
walker_step(WindowReader *wr, SeqWalker *w)
{
	MemoryContext old = MemoryContextSwitchTo(wr->cxt);
	bool		isnull;

	if (index_getnext_tid(w->scan, ForwardScanDirection) == NULL)
		w->cur = -1;
	else
		w->cur = DatumGetInt64(index_getattr(w->scan->xs_itup, 2, w->scan->xs_itupdesc, &isnull));
	MemoryContextSwitchTo(old);
}

/* Bring w to the first entry of commit `seq`, or past it when it has none. */
static void
walker_seek(WindowReader *wr, SeqWalker *w, int64 seq)
{
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
		index_rescan(w->scan, w->keys, 2, NULL, 0);
		MemoryContextSwitchTo(old);
		w->placed = true;
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

		v->scan = index_beginscan(wr->cs_heap, wr->cs_idx, wr->snap, 5, 0);
		v->scan->xs_want_itup = true;
		pull_eq_key(&v->keys[0], wr->cs_idx, 1, part);
		pull_eq_key(&v->keys[1], wr->cs_idx, 2, tbl);
		pull_eq_key(&v->keys[2], wr->cs_idx, 3, CStringGetTextDatum(e->vars[0]));
		pull_eq_key(&v->keys[3], wr->cs_idx, 4, CStringGetTextDatum(e->values[0][i]));
		ScanKeyEntryInitialize(&v->keys[4], 0, 5, BTGreaterStrategyNumber, InvalidOid,
							   InvalidOid, F_INT8GT, Int64GetDatum(after));
		index_rescan(v->scan, v->keys, 5, NULL, 0);
		seq_next(wr, v, pc->round->max_seq);
	}

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
next_candidate(WindowReader *wr, int64 max_seq)
{
	int64		min = -1;

	for (int i = 0; i < wr->nvalues; i++)
		if (wr->vs[i].cur >= 0 && (min < 0 || wr->vs[i].cur < min))
			min = wr->vs[i].cur;
	for (int i = 0; min >= 0 && i < wr->nvalues; i++)
		if (wr->vs[i].cur == min)
			seq_next(wr, &wr->vs[i], max_seq);
	return min;
}

/* Start wc for commit `seq`: its commit row (live = not pruned). */
static void
begin_commit(WindowReader *wr, int64 seq, WindowCommit *wc)
{
	bool		isnull;

	memset(wc, 0, sizeof(*wc));
	wc->seq = seq;
	walker_seek(wr, &wr->cm, seq);
	for (; wr->cm.cur == seq && !wc->live; walker_step(wr, &wr->cm))
		wc->live = walker_fetch(wr, &wr->cm, wr->cm_slot);
	if (!wc->live)
		return;
	wc->created_at_ms = DatumGetInt64(slot_getattr(wr->cm_slot, wr->cm_created, &isnull));
	wc->actor_id = TextDatumGetCString(slot_getattr(wr->cm_slot, wr->cm_actor, &isnull));
	ExecClearTuple(wr->cm_slot);
}

/*
 * Add one stored change (in wr->ch_slot) to wc when it matches the effective scopes.  Everything
 * is copied into the current (per-commit) context.
 */
static void
add_window_change(PullCtx *pc, WindowReader *wr, WindowCommit *wc)
{
	TupleTableSlot *slot = wr->ch_slot;
	bool		isnull;
	Datum		d;
	Jsonb	   *scopes;
	SspChange  *ch;
	int16		op;

	scopes = DatumGetJsonbPCopy(slot_getattr(slot, wr->ch_scopes, &isnull));
	if (isnull || !sync_scopes_match(pc->effective, scopes))
		return;

	if (wc->nchanges == wc->maxchanges)
	{
		wc->maxchanges = Max(16, wc->maxchanges * 2);
		wc->changes = wc->changes
			? repalloc(wc->changes, sizeof(SspChange) * wc->maxchanges)
			: palloc(sizeof(SspChange) * wc->maxchanges);
	}
	ch = &wc->changes[wc->nchanges++];
	memset(ch, 0, sizeof(*ch));
	ch->table_index = 0;
	ch->row_id = pull_mkstr(TextDatumGetCString(slot_getattr(slot, wr->ch_row_id, &isnull)));
	op = DatumGetInt16(slot_getattr(slot, wr->ch_op, &isnull));
	ch->op = (uint8) op;
	ch->scopes = sync_pull_stored_scopes(scopes);
	if (op == SSP_OP_UPSERT)
	{
		bytea	   *payload;

		ch->has_row_version = true;
		ch->row_version = DatumGetInt64(slot_getattr(slot, wr->ch_row_version, &isnull));
		if (isnull)
			sync_raise("sync.internal_error", "pull: a stored upsert change has no row version", NULL);
		d = slot_getattr(slot, wr->ch_payload, &isnull);
		if (isnull)
			sync_raise("sync.internal_error", "pull: a stored upsert change has no payload", NULL);
		payload = DatumGetByteaPCopy(d);
		ch->has_row = true;
		ch->row.ptr = (const uint8_t *) VARDATA_ANY(payload);
		ch->row.len = (uint32) VARSIZE_ANY_EXHDR(payload);
	}
}

/* wc's changes of this table, in idx order. */
static void
read_changes(PullCtx *pc, WindowReader *wr, WindowCommit *wc)
{
	SeqWalker  *w = &wr->ch;

	/* the index is (partition, commit_seq, tbl, idx): this table's changes are one run */
	for (walker_seek(wr, w, wc->seq); w->cur == wc->seq; walker_step(wr, w))
	{
		bool		isnull;
		text	   *t = DatumGetTextPP(index_getattr(w->scan->xs_itup, 3, w->scan->xs_itupdesc,
													 &isnull));

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

static void
finish_commit(PullCtx *pc, const WindowCommit *wc, WindowState *ws)
{
	if (!wc->live || wc->nchanges == 0)
		return;
	ws->matched += wc->nchanges;
	if (!ws->stopped && (ws->ncommits == 0 ||
						 (ws->delivered < ws->limit && ws->delivered + wc->nchanges <= ws->limit)))
	{
		if (write_commit(pc, wc))
		{
			ws->delivered += wc->nchanges;
			ws->ncommits++;
			ws->last_delivered = wc->seq;
		}
		else
			ws->stopped = ws->saturated = true;	/* the budget is spent: read no further */
	}
	else
		ws->stopped = true;
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
	while (!ws.saturated && (seq = next_candidate(&wr, round->max_seq)) >= 0)
	{
		WindowCommit wc;
		MemoryContext old = MemoryContextSwitchTo(pc->work);

		CHECK_FOR_INTERRUPTS();
		begin_commit(&wr, seq, &wc);
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
