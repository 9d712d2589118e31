/*
 * pull_window.c — an incremental section (SPEC §3.6): the commit window after the cursor, read
 * in the pull's snapshot through the storage layer's window iterator (storage_log.c), delivered
 * as COMMIT frames within limitCommits and the response budget.  What is decided here: which
 * changes match the effective scopes, which commits are delivered (whole, §3.6), and when
 * reading stops.  The frames are written by the codec's streaming COMMIT writer straight into
 * the response.  See pull.c for the decision and the budget rules.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "engine.h"
#include "stats.h"
#include "storage_log.h"
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
 * (wire-format.md §3.4) is written straight into the response as its changes are read, and
 * abandoned when it matches nothing, is not delivered or does not fit.
 */
typedef struct WindowCommit
{
	int64		seq;
	bool		live;			/* the commit row exists (not pruned) */
	bool		encoding;		/* its frame is being written by w */
	SspCommitWriter w;
	int			nchanges;		/* matching changes */
} WindowCommit;

/*
 * The stored scopes (a jsonb object of strings, SPEC §3.3) as a change record's `scopes` map:
 * its string members, read in place into pairs (the codec writes them in UTF-16 key order).
 */
#define MAX_CHANGE_SCOPES 64

static SspStrMap
change_scopes(Jsonb *scopes, SspStrPair *pairs)
{
	JsonbContainer *jc = &scopes->root;
	int			npairs = JsonContainerSize(jc);
	const char *base = (const char *) &jc->children[npairs * 2];
	SspStrMap	m = {0, pairs};

	if (npairs > MAX_CHANGE_SCOPES)
		sync_raise("sync.internal_error", "pull: a stored change has too many scopes", NULL);
	for (int i = 0; i < npairs; i++)
	{
		if (!JBE_ISSTRING(jc->children[npairs + i]))
			continue;
		pairs[m.n].key.ptr = base + getJsonbOffset(jc, i);
		pairs[m.n].key.len = getJsonbLength(jc, i);
		pairs[m.n].value.ptr = base + getJsonbOffset(jc, npairs + i);
		pairs[m.n].value.len = getJsonbLength(jc, npairs + i);
		m.n++;
	}
	return m;
}

/* Keep wc's frame when the budget allows (pull.c "Budget"); false when it was held back. */
static bool
keep_commit(PullCtx *pc, WindowCommit *wc)
{
	SspBuf	   *out = pc->round->out;
	SspError	err;
	size_t		len;

	if (!ssp_commit_end(&wc->w, &err))
		pull_raise_codec("writing a commit frame", &err);
	len = out->len - wc->w.start;
	out->len = wc->w.start;		/* the budget counts the response without this frame */
	if (!pull_budget_allows(pc->round, len))
		return false;
	out->len = wc->w.start + len;
	pc->round->data_delivered = true;
	sync_stats_commit_served(pc->table->name, wc->nchanges);
	return true;
}

/* Start wc for commit `seq`: its commit row (live = not pruned); its frame head when `encode`. */
static void
begin_commit(PullCtx *pc, SyncLogWindow *lw, int64 seq, bool encode, WindowCommit *wc)
{
	SyncLogCommit c;
	SspStr		actor;
	SspStr		table = pull_mkstr(pc->table->name);
	SspError	err;

	memset(wc, 0, sizeof(*wc));
	wc->seq = seq;
	wc->live = sync_log_commit_read(lw, seq, encode ? &c : NULL);
	if (!wc->live || !encode)
		return;
	actor.ptr = c.actor_id;
	actor.len = c.actor_len;
	/* tables: this subscription's table, so every change's tableIndex is 0 */
	if (!ssp_commit_begin(&wc->w, pc->round->out, seq, c.created_at_ms, &actor, 1, &table, &err))
		pull_raise_codec("writing a commit frame", &err);
	wc->encoding = true;
}

/*
 * One stored change: counted when it matches the effective scopes, and its change record
 * appended to wc's frame while that is being written.
 */
static void
add_window_change(PullCtx *pc, SyncLogWindow *lw, WindowCommit *wc, Jsonb *scopes)
{
	SyncLogChange c;
	SspChange	ch;
	SspStrPair	pairs[MAX_CHANGE_SCOPES];
	SspError	err;
	bool		upsert;

	if (scopes == NULL || !sync_scopes_match(pc->effective, scopes))
		return;
	wc->nchanges++;
	if (!wc->encoding)
		return;

	sync_log_change_read(lw, &c);
	if (c.op != SSP_OP_UPSERT && c.op != SSP_OP_DELETE)
		sync_raise("sync.internal_error",
				   psprintf("pull: writing a commit frame: COMMIT.op value %u out of range",
							(unsigned) (uint8) c.op), NULL);
	upsert = c.op == SSP_OP_UPSERT;
	if (upsert && !c.has_row_version)
		sync_raise("sync.internal_error", "pull: a stored upsert change has no row version", NULL);
	if (upsert && c.payload == NULL)
		sync_raise("sync.internal_error", "pull: a stored upsert change has no payload", NULL);
	memset(&ch, 0, sizeof(ch));
	ch.row_id.ptr = c.row_id;
	ch.row_id.len = c.row_id_len;
	ch.op = (uint8) c.op;
	ch.has_row_version = ch.has_row = upsert;
	ch.row_version = c.row_version;
	ch.scopes = change_scopes(scopes, pairs);
	ch.row.ptr = (const uint8 *) c.payload;
	ch.row.len = c.payload_len;
	if (!ssp_commit_add(&wc->w, &ch, &err))
		pull_raise_codec("writing a commit frame", &err);
}

/* wc's changes of this table, in idx order. */
static void
read_changes(PullCtx *pc, SyncLogWindow *lw, WindowCommit *wc)
{
	Jsonb	   *scopes;

	sync_log_changes_begin(lw, wc->seq);
	while (sync_log_change_next(lw, &scopes))
		add_window_change(pc, lw, wc, scopes);
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
			ssp_commit_abandon(&wc->w);	/* nothing of this commit matched */
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
			ssp_commit_abandon(&wc->w);	/* held back: not split (§3.6) */
		ws->stopped = true;
	}
	if (ws->matched > ws->limit)
		ws->saturated = true;
}

/*
 * The window's candidates are the commits with a change-scope entry for a value of the first
 * effective variable (storage_log.c); every change is then checked against all of them.
 */
void
pull_incremental(PullCtx *pc, SyncPullResult *result)
{
	SyncRound  *round = pc->round;
	const SyncEffective *e = pc->effective;
	int64		cursor = pc->sub->cursor;
	WindowState ws;
	SyncLogWindow *lw;
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

	lw = sync_log_window_open(round->partition, pc->table->name, e->vars[0], e->nvalues[0],
							  e->values[0], cursor, round->max_seq);
	while (!ws.saturated && (seq = sync_log_window_next(lw)) >= 0)
	{
		WindowCommit wc;
		MemoryContext old = MemoryContextSwitchTo(pc->work);

		CHECK_FOR_INTERRUPTS();
		begin_commit(pc, lw, seq, may_deliver(&ws), &wc);
		if (wc.live)
			read_changes(pc, lw, &wc);
		MemoryContextSwitchTo(old);
		finish_commit(pc, &wc, &ws);
		MemoryContextReset(pc->work);
	}
	sync_log_window_close(lw);

	if (!ws.saturated && !ws.stopped)
		result->next_cursor = Max(cursor, round->max_seq);
	else
		result->next_cursor = Max(cursor, ws.last_delivered);
	pull_write_sub_end(pc, result->next_cursor, NULL);
}
