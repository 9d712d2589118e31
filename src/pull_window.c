/*
 * pull_window.c — an incremental section (SPEC §3.6): the commit window after the cursor, read
 * in the pull's snapshot, delivered as COMMIT frames within limitCommits and the response
 * budget.  See pull.c for the decision and the budget rules.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
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

/*
 * The LATERAL probes (LIMIT 1 / OFFSET 0 keep them from being flattened) look every commit up
 * by key: with stale statistics (a partition just filled) a flattened join became a nested loop
 * filtering the whole partition per commit, quadratic in the window (bench/README.md).  The
 * commit probe asks for the first commit_seq >= the candidate in key order (then checks
 * equality): only the primary key yields that order, so the planner cannot pick
 * sync_commits_by_time with a filter instead.
 */
#define WINDOW_SQL \
	"WITH cand AS (" \
	" SELECT DISTINCT cs.commit_seq FROM syncular.sync_change_scopes cs" \
	"  WHERE cs.partition = $1 AND cs.tbl = $2 AND cs.var = $3 AND cs.value = ANY($4)" \
	"    AND cs.commit_seq > $5 AND cs.commit_seq <= $6" \
	"  ORDER BY cs.commit_seq LIMIT $7)" \
	" SELECT c.commit_seq, cm.created_at_ms, cm.actor_id, ch.row_id, ch.op, ch.row_version," \
	"        ch.scopes, ch.payload" \
	"   FROM cand c" \
	"   LEFT JOIN LATERAL (SELECT z.created_at_ms, z.actor_id" \
	"                        FROM (SELECT m.commit_seq, m.created_at_ms, m.actor_id" \
	"                                FROM syncular.sync_commits m" \
	"                               WHERE m.partition = $1 AND m.commit_seq >= c.commit_seq" \
	"                               ORDER BY m.commit_seq LIMIT 1) z" \
	"                       WHERE z.commit_seq = c.commit_seq) cm ON true" \
	"   LEFT JOIN LATERAL (SELECT x.idx, x.row_id, x.op, x.row_version, x.scopes, x.payload" \
	"                        FROM syncular.sync_changes x" \
	"                       WHERE x.partition = $1 AND x.commit_seq = c.commit_seq AND x.tbl = $2" \
	"                       ORDER BY x.idx OFFSET 0) ch ON true" \
	"  ORDER BY c.commit_seq, ch.idx"

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

/* One candidate commit of the window, with its matching changes (copied out of SPI). */
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
 * Encode wc's COMMIT frame into a scratch buffer and append it to the response when the budget
 * allows (see "Budget" above).  false when it was held back.
 */
static bool
write_commit(PullCtx *pc, const WindowCommit *wc)
{
	SspFrame	f;
	SspStr		table = pc->sub->table;
	SspBuf		frame;
	SspError	err;
	bool		fits;

	memset(&f, 0, sizeof(f));
	f.type = SSP_FRAME_COMMIT;
	f.commit.commit_seq = wc->seq;
	f.commit.created_at_ms = wc->created_at_ms;
	f.commit.actor_id = pull_mkstr(wc->actor_id);
	f.commit.ntables = 1;
	f.commit.tables = &table;
	f.commit.nchanges = (uint32) wc->nchanges;
	f.commit.changes = wc->changes;
	ssp_buf_init(&frame);
	if (!ssp_write_frame(&frame, pc->round->wire_version, &f, &err))
		pull_raise_codec("writing a commit frame", &err);
	fits = pull_budget_allows(pc->round, frame.len);
	if (fits)
	{
		MemoryContext old = MemoryContextSwitchTo(pc->outer);

		if (!ssp_buf_append(pc->round->out, frame.data, frame.len))
			ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
		MemoryContextSwitchTo(old);
		pc->round->data_delivered = true;
		sync_stats_commit_served(pc->table->name, wc->nchanges);
	}
	ssp_buf_free(&frame);
	return fits;
}

/* Start wc from the first tuple of its commit (columns 1-3). */
static void
begin_commit(HeapTuple tup, TupleDesc td, WindowCommit *wc)
{
	bool		isnull;
	Datum		d;

	memset(wc, 0, sizeof(*wc));
	wc->seq = DatumGetInt64(SPI_getbinval(tup, td, 1, &isnull));
	d = SPI_getbinval(tup, td, 2, &isnull);
	wc->live = !isnull;
	if (!wc->live)
		return;
	wc->created_at_ms = DatumGetInt64(d);
	wc->actor_id = TextDatumGetCString(SPI_getbinval(tup, td, 3, &isnull));
}

/*
 * Add one tuple's change to wc when it belongs to this table and matches the effective scopes.
 * Everything is copied into the current (per-commit) context: the tuple table is freed after
 * each fetch, and a commit's changes may span fetches.
 */
static void
add_window_change(PullCtx *pc, HeapTuple tup, TupleDesc td, WindowCommit *wc)
{
	bool		isnull;
	Datum		d;
	Jsonb	   *scopes;
	SspChange  *ch;
	int16		op;

	if (!wc->live)
		return;
	d = SPI_getbinval(tup, td, 4, &isnull);
	if (isnull)
		return;					/* a candidate without a change of this table */
	scopes = DatumGetJsonbPCopy(SPI_getbinval(tup, td, 7, &isnull));
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
	ch->row_id = pull_mkstr(TextDatumGetCString(d));
	op = DatumGetInt16(SPI_getbinval(tup, td, 5, &isnull));
	ch->op = (uint8) op;
	ch->scopes = sync_pull_stored_scopes(scopes);
	if (op == SSP_OP_UPSERT)
	{
		bytea	   *payload;

		ch->has_row_version = true;
		ch->row_version = DatumGetInt64(SPI_getbinval(tup, td, 6, &isnull));
		if (isnull)
			sync_raise("sync.internal_error", "pull: a stored upsert change has no row version", NULL);
		d = SPI_getbinval(tup, td, 8, &isnull);
		if (isnull)
			sync_raise("sync.internal_error", "pull: a stored upsert change has no payload", NULL);
		payload = DatumGetByteaPCopy(d);
		ch->has_row = true;
		ch->row.ptr = (const uint8_t *) VARDATA_ANY(payload);
		ch->row.len = (uint32) VARSIZE_ANY_EXHDR(payload);
	}
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
	int64		batch = Max(64, (int64) round->limit_commits + 1);
	int64		after = cursor;
	WindowState ws;
	Oid			argtypes[7] = {TEXTOID, TEXTOID, TEXTOID, TEXTARRAYOID, INT8OID, INT8OID, INT8OID};
	Datum		args[7];
	SPIPlanPtr	plan = pull_get_plan(WINDOW_SQL, 7, argtypes);

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

	args[0] = CStringGetTextDatum(round->partition);
	args[1] = CStringGetTextDatum(pc->table->name);
	args[2] = CStringGetTextDatum(pc->effective->vars[0]);
	args[3] = pull_first_var_values(pc->effective);
	args[5] = Int64GetDatum(round->max_seq);
	args[6] = Int64GetDatum(batch);

	while (!ws.saturated && after < round->max_seq)
	{
		Portal		portal;
		uint64		ncand = 0;
		bool		have = false;
		WindowCommit wc;

		args[4] = Int64GetDatum(after);
		/* a portal, fetched in batches: never the whole window as one SPI result */
		portal = SPI_cursor_open(NULL, plan, args, NULL, true);
		if (portal == NULL)
			elog(ERROR, "syncular pull: commit window read failed: %s",
				 SPI_result_code_string(SPI_result));
		while (!ws.saturated)
		{
			SPITupleTable *tt;
			uint64		n;

			SPI_cursor_fetch(portal, true, PULL_FETCH_ROWS);
			tt = SPI_tuptable;
			n = SPI_processed;
			for (uint64 r = 0; r < n && !ws.saturated; r++)
			{
				HeapTuple	tup = tt->vals[r];
				bool		isnull;
				int64		seq = DatumGetInt64(SPI_getbinval(tup, tt->tupdesc, 1, &isnull));
				MemoryContext old;

				if (!have || seq != wc.seq)
				{
					if (have)
					{
						finish_commit(pc, &wc, &ws);
						MemoryContextReset(pc->work);
						if (ws.saturated)
							break;
					}
					old = MemoryContextSwitchTo(pc->work);
					begin_commit(tup, tt->tupdesc, &wc);
					MemoryContextSwitchTo(old);
					have = true;
					ncand++;
					after = seq;
				}
				old = MemoryContextSwitchTo(pc->work);
				add_window_change(pc, tup, tt->tupdesc, &wc);
				MemoryContextSwitchTo(old);
			}
			SPI_freetuptable(tt);
			if (n == 0)
				break;
		}
		if (have && !ws.saturated)
			finish_commit(pc, &wc, &ws);
		MemoryContextReset(pc->work);
		SPI_cursor_close(portal);
		if (ncand < (uint64) batch)
			break;				/* the window is exhausted */
	}

	if (!ws.saturated && !ws.stopped)
		result->next_cursor = Max(cursor, round->max_seq);
	else
		result->next_cursor = Max(cursor, ws.last_delivered);
	pull_write_sub_end(pc, result->next_cursor, NULL);
}
