/*
 * pull.c — one subscription section of a pull: SUB_START .. SUB_END into round->out.
 *
 * round.c pushes ONE snapshot for the whole pull and calls sync_pull_subscription per
 * SUBSCRIPTION frame in request order (engine.h, "Round <-> pull seam").  Every read here goes
 * through SPI with read_only = true, so it uses that snapshot: max_seq, horizon_seq, the commit
 * window and the row scans all agree.
 *
 * Decision per subscription (shared/reference/push-and-pull.md §3.5, with this project's
 * decision on unusable resume tokens):
 *   1. revoked                                   -> revoked, sync.scope_revoked, nextCursor = cursor
 *   2. a resume token is present                 -> bootstrap; resumed when the token is valid
 *      (see parse_token) and its pin is >= horizon, otherwise restarted with a fresh pin —
 *      whatever the cursor (an unusable token is never an error and never ignored)
 *   3. no token and 0 <= cursor < horizon        -> reset, sync.cursor_expired, nextCursor = cursor
 *   4. cursor < 0 or cursor > maxSeq             -> bootstrap with a fresh pin
 *   5. otherwise (horizon <= cursor <= maxSeq)   -> incremental
 *
 * Incremental (§3.6): window cursor < commit_seq <= maxSeq, candidates from sync_change_scopes
 * driven by the first effective variable (sorted key order), exact match on every variable
 * afterwards against the stored scopes (sync_scopes_match).  The read looks ahead for
 * limitCommits + 1 matching changes; commits are never split, the first is always delivered,
 * then commits are added while delivered + next <= limitCommits.  nextCursor = max(cursor,
 * maxSeq) when the look-ahead stayed within budget, else max(cursor, last delivered commit).
 *
 * Bootstrap (§3.7).  The sqlite lane (§5.3, accept bit 2) is tried at the start of a table
 * (pull_image_lane); otherwise the rows lane: up to maxSnapshotPages pages of limitSnapshotRows rows
 * each, keyset-paged by _sync_row_id under COLLATE "C" (the same order for the page's ids, its
 * rows and the resume cursor, whatever the database's default collation); each page is one
 * SSG2 segment, sent inline (SEGMENT_INLINE) or stored and referenced (SEGMENT_REF, §5.4) as
 * PageLane decides from the accept bits; the first page is always sent, even with 0 rows.
 * SUB_END.nextCursor = the pin; the resume token {"asOfCommitSeq","tables","tableIndex",
 * "rowCursor"} is present iff incomplete.
 *
 * The §3.6 continuity re-check (horizon read again after the window) is not needed: the horizon
 * and the window are read in the same snapshot, so pruning cannot pass the cursor in between.
 *
 * Bounds: a response section holds at most maxSnapshotPages * limitSnapshotRows rows, or
 * limitCommits changes plus one commit; round.c clamps those values.
 *
 * Budget (syncular.max_response_bytes = B): row data enters the response one item at a time, a
 * bootstrap row (into the page being built) or an incremental COMMIT frame, and an item is
 * added only when the response length, the page built so far, the item and the page's framing
 * together stay <= B.  The round's first item is always added, so every round makes progress
 * even when a single row or commit is larger than B.  The first item that does not fit ends its
 * section and spends the budget:
 *   - a bootstrap ends at that page boundary: the page holds the rows added so far (a section's
 *     first page is sent even when empty, §4.7), SUB_END carries the resume token at the last
 *     row read, and the client continues from it next round;
 *   - an incremental section ends at its last delivered commit (nextCursor = that commit, or
 *     the request cursor when none was delivered; commits are never split);
 *   - every later section of the round carries no data: a bootstrap sends one empty page and
 *     its resume token (unchanged when resumed, row cursor null when fresh), an incremental
 *     section no commits with nextCursor = its cursor; revoked and reset sections are as usual.
 * A SEGMENT_REF (an external page or an image, §5.4) carries no row data and spends nothing:
 * with external rows accepted, a page that does not fit goes by reference instead of ending the
 * section.
 * So the row data never passes B except for a single oversized first item; what is added past
 * it is framing only (SUB_START/SUB_END, empty pages), bounded per subscription, and the
 * number of subscriptions is bounded by syncular.max_subscriptions_per_request.  A response
 * whose budget was spent always carries a resume token or a commit, so the client pulls again
 * (§4.5: "clients pull again whenever a response contained commits").  Rows are read through
 * SPI portals PULL_FETCH_ROWS at a time, so SPI never holds more than one such batch, plus the
 * current commit's changes (incremental) or the current page (bootstrap).
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

/* Rows per SPI_cursor_fetch: what SPI holds at once is one batch, never a whole page/window. */
#define PULL_FETCH_ROWS 256

/* ---------------------------------------------------------------- output helpers */


void
pull_raise_codec(const char *what, const SspError *err)
{
	char	   *msg = psprintf("pull: %s: %s", what, err->message);

	sync_raise(err->code && strcmp(err->code, SSP_ERR_INVALID_REQUEST) != 0 ? err->code : "sync.internal_error",
			   msg, NULL);
}

void
pull_write_frame(PullCtx *pc, const SspFrame *f)
{
	MemoryContext old = MemoryContextSwitchTo(pc->outer);
	SspError	err;

	if (!ssp_write_frame(pc->round->out, pc->round->wire_version, f, &err))
		pull_raise_codec("writing a response frame", &err);
	MemoryContextSwitchTo(old);
}

/*
 * May `pending` more bytes of row data enter the response (see "Budget" above)?  Spends the
 * budget (round->budget_spent) when they may not.
 */
bool
pull_budget_allows(SyncRound *round, size_t pending)
{
	if (round->budget_spent)
		return false;
	if (!round->data_delivered)
		return true;			/* the round's first item always goes */
	if (round->out->len + pending <= (size_t) sync_max_response_bytes)
		return true;
	round->budget_spent = true;
	return false;
}

SspStr
pull_mkstr(const char *s)
{
	SspStr		r;

	r.ptr = s;
	r.len = (uint32) strlen(s);
	return r;
}

static void
write_sub_start(PullCtx *pc, uint8 status, const char *reason, bool bootstrap)
{
	SspFrame	f;
	SspSubStart *s = &f.sub_start;

	memset(&f, 0, sizeof(f));
	f.type = SSP_FRAME_SUB_START;
	s->id = pc->sub->id;
	s->status = status;
	s->reason_code = pull_mkstr(reason);
	s->bootstrap = bootstrap;
	if (status == SSP_SUB_ACTIVE)
		s->effective_scopes = sync_pull_effective_map(pc->effective);
	pull_write_frame(pc, &f);
	sync_stats_section(pc->table->name, status, bootstrap);
}

/* SUB_START.effectiveScopes of an effective map (also used by realtime deltas, §8.2). */
SspScopeMap
sync_pull_effective_map(const SyncEffective *e)
{
	SspScopeMap m;

	m.n = (uint32) e->nvars;
	m.entries = palloc0(sizeof(SspScopeEntry) * Max(e->nvars, 1));
	for (int i = 0; i < e->nvars; i++)
	{
		SspScopeEntry *ent = &m.entries[i];

		ent->key = pull_mkstr(e->vars[i]);
		ent->nvalues = (uint32) e->nvalues[i];
		ent->values = palloc0(sizeof(SspStr) * Max(e->nvalues[i], 1));
		for (int k = 0; k < e->nvalues[i]; k++)
			ent->values[k] = pull_mkstr(e->values[i][k]);
	}
	return m;
}

static void
write_sub_end(PullCtx *pc, int64 next_cursor, const char *bootstrap_state)
{
	SspFrame	f;

	memset(&f, 0, sizeof(f));
	f.type = SSP_FRAME_SUB_END;
	f.sub_end.next_cursor = next_cursor;
	if (bootstrap_state)
	{
		f.sub_end.has_bootstrap_state = true;
		f.sub_end.bootstrap_state = pull_mkstr(bootstrap_state);
	}
	pull_write_frame(pc, &f);
}

/* text[] of the first effective variable's values */
static Datum
first_var_values(const SyncEffective *e)
{
	Datum	   *elems = palloc(sizeof(Datum) * Max(e->nvalues[0], 1));

	for (int k = 0; k < e->nvalues[0]; k++)
		elems[k] = CStringGetTextDatum(e->values[0][k]);
	return PointerGetDatum(construct_array(elems, e->nvalues[0], TEXTOID, -1, false, TYPALIGN_INT));
}

/* ---------------------------------------------------------------- prepared plans */

/*
 * Plans are prepared once per backend per query text (SPI_keepplan) and kept in
 * TopMemoryContext; the plan cache re-plans them after DDL on the tables they read.  The row
 * scan's text embeds the table's qualified name, so there is one entry per synced table.
 */
typedef struct KeptPlan
{
	char	   *sql;
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
	plan = SPI_prepare(sql, nargs, argtypes);
	if (plan == NULL)
		elog(ERROR, "syncular pull: SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
	if (SPI_keepplan(plan) != 0)
		elog(ERROR, "syncular pull: SPI_keepplan failed");
	k = MemoryContextAlloc(TopMemoryContext, sizeof(KeptPlan));
	k->sql = MemoryContextStrdup(TopMemoryContext, sql);
	k->plan = plan;
	k->next = kept_plans;
	kept_plans = k;
	return plan;
}

/* ---------------------------------------------------------------- resume token */

typedef struct ResumeToken
{
	int64		as_of;
	char	   *row_cursor;		/* NULL = table start */
} ResumeToken;

static const SspJson *
json_member(const SspJson *obj, const char *key)
{
	const SspJson *found = NULL;

	/* duplicate keys: the last one wins, as JSON.parse does */
	for (uint32 i = 0; i < obj->count; i++)
		if (obj->keys[i].len == strlen(key) && memcmp(obj->keys[i].ptr, key, obj->keys[i].len) == 0)
			found = &obj->items[i];
	return found;
}

static bool
json_integer(const SspJson *j, int64 *out)
{
	double		d;

	if (j == NULL || j->kind != SSP_JSON_NUMBER)
		return false;
	d = j->num;
	if (!(d >= -(double) SSP_I64_SAFE_MAX && d <= (double) SSP_I64_SAFE_MAX) || d != (double) (int64) d)
		return false;
	*out = (int64) d;
	return true;
}

/*
 * A token is usable iff (the reference's rules, §3.5) it is JSON, asOfCommitSeq is a number,
 * tables is an array whose first element is this subscription's table, tableIndex is a number
 * and rowCursor is null or a string — plus, since this server writes only
 * {tables: [table], tableIndex: 0} tokens and pins at or below maxSeq: asOfCommitSeq is an
 * integer in [0, maxSeq], tableIndex is 0 and rowCursor holds no U+0000.  Anything else
 * restarts the bootstrap with a fresh pin.
 */
static bool
parse_token(PullCtx *pc, ResumeToken *tok)
{
	const SspSubscription *sub = pc->sub;
	SspArena   *arena = ssp_arena_new();
	SspJson    *root = NULL;
	SspError	err;
	const SspJson *v;
	int64		idx;
	bool		ok = false;

	tok->as_of = 0;
	tok->row_cursor = NULL;
	if (arena == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	if (!ssp_json_parse(arena, sub->bootstrap_state.ptr, sub->bootstrap_state.len, &root, &err) ||
		root->kind != SSP_JSON_OBJECT)
		goto done;
	if (!json_integer(json_member(root, "asOfCommitSeq"), &tok->as_of) ||
		tok->as_of < 0 || tok->as_of > pc->round->max_seq)
		goto done;
	v = json_member(root, "tables");
	if (v == NULL || v->kind != SSP_JSON_ARRAY || v->count < 1 ||
		v->items[0].kind != SSP_JSON_STRING ||
		v->items[0].text.len != sub->table.len ||
		memcmp(v->items[0].text.ptr, sub->table.ptr, sub->table.len) != 0)
		goto done;
	if (!json_integer(json_member(root, "tableIndex"), &idx) || idx != 0)
		goto done;
	v = json_member(root, "rowCursor");
	if (v == NULL)
		goto done;
	if (v->kind == SSP_JSON_STRING)
	{
		if (memchr(v->text.ptr, '\0', v->text.len) != NULL)
			goto done;
		tok->row_cursor = pnstrdup(v->text.ptr, v->text.len);
	}
	else if (v->kind != SSP_JSON_NULL)
		goto done;
	ok = true;
done:
	ssp_arena_free(arena);
	return ok;
}

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

static void
pull_incremental(PullCtx *pc, SyncPullResult *result)
{
	SyncRound  *round = pc->round;
	int64		cursor = pc->sub->cursor;
	int64		batch = Max(64, (int64) round->limit_commits + 1);
	int64		after = cursor;
	WindowState ws;
	Oid			argtypes[7] = {TEXTOID, TEXTOID, TEXTOID, TEXTARRAYOID, INT8OID, INT8OID, INT8OID};
	Datum		args[7];
	SPIPlanPtr	plan = get_plan(WINDOW_SQL, 7, argtypes);

	memset(&ws, 0, sizeof(ws));
	ws.limit = round->limit_commits;
	ws.last_delivered = cursor;
	write_sub_start(pc, SSP_SUB_ACTIVE, "", false);
	result->active = true;
	if (round->budget_spent)
	{
		/* no room left in this response: no commits, the cursor stays (Budget) */
		result->next_cursor = cursor;
		write_sub_end(pc, cursor, NULL);
		return;
	}

	args[0] = CStringGetTextDatum(round->partition);
	args[1] = CStringGetTextDatum(pc->table->name);
	args[2] = CStringGetTextDatum(pc->effective->vars[0]);
	args[3] = first_var_values(pc->effective);
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
	write_sub_end(pc, result->next_cursor, NULL);
}

/* ---------------------------------------------------------------- bootstrap */

/*
 * A bootstrap page is read in two statements.  First its row ids (ID_SQL): per scope value of
 * the first effective variable, an ordered range scan of the paging index (partition, tbl,
 * var, value, row_id COLLATE "C") from the cursor, stopped at page size + 1; then the union of
 * those few ids in order.  It reads at most values x (page + 1) index entries, never every
 * entry past the cursor.  Then the rows (scan_sql): one index scan of the synced table's
 * primary key for the page's ids (= ANY, no per-row join probe), in the same C order.  The
 * page boundary and the "more" look-ahead come from the ids, so a row that is gone cannot end
 * the table early.
 */
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

static char *
scan_sql(const SyncTable *t)
{
	return psprintf(
		"SELECT r._sync_row_id, r._sync_server_version, r._sync_scopes, r._sync_payload"
		"  FROM %s r"
		" WHERE r._sync_partition = $1 AND r._sync_row_id = ANY ($2::text[])"
		" ORDER BY r._sync_row_id COLLATE \"C\"",
		t->qualified);
}

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

static char *
resume_token_json(const char *table, int64 as_of, const char *row_cursor)
{
	StringInfoData b;

	initStringInfo(&b);
	appendStringInfo(&b, "{\"asOfCommitSeq\":" INT64_FORMAT ",\"tables\":[", as_of);
	escape_json(&b, table);
	appendStringInfoString(&b, "],\"tableIndex\":0,\"rowCursor\":");
	if (row_cursor)
		escape_json(&b, row_cursor);
	else
		appendStringInfoString(&b, "null");
	appendStringInfoChar(&b, '}');
	return b.data;
}

/*
 * Fill one page: rows after `cursor` (keyset), at most `limit`, while the budget allows.  The
 * page's last row read is left in *cursor (rows that are gone or out of scope advance it too).
 * Returns the rows added; *scanned: the rows read; *more: a row past the page exists; *full:
 * the budget stopped it.  Rows go into the rows segment w, or into the sqlite image img when it
 * is given (then w and seg are unused and the page is never budgeted).
 */
uint64
pull_fill_page(PullCtx *pc, SPIPlanPtr plan, Datum *args, char *nulls, int64 limit, bool budgeted,
		  SspSegmentWriter *w, SspBuf *seg, SyncImage *img, StringInfo cursor,
		  uint64 *scanned_out, bool *more, bool *full)
{
	SyncRound  *round = pc->round;
	Portal		portal;
	uint64		added = 0;
	SspError	err;
	Datum		rargs[2];
	int			nids;
	StringInfoData last_id;

	*more = *full = false;
	*scanned_out = 0;
	initStringInfo(&last_id);
	page_ids(args, nulls, limit, &rargs[1], &nids, &last_id, more);
	if (nids == 0)
		return 0;
	rargs[0] = args[0];
	portal = SPI_cursor_open(NULL, plan, rargs, NULL, true);
	if (portal == NULL)
		elog(ERROR, "syncular pull: row scan failed: %s", SPI_result_code_string(SPI_result));
	while (!*full)
	{
		SPITupleTable *tt;
		uint64		n;

		SPI_cursor_fetch(portal, true, PULL_FETCH_ROWS);
		tt = SPI_tuptable;
		n = SPI_processed;
		for (uint64 r = 0; r < n; r++)
		{
			HeapTuple	tup = tt->vals[r];
			TupleDesc	td = tt->tupdesc;
			bool		isnull;
			Datum		d;
			text	   *id;

			d = SPI_getbinval(tup, td, 3, &isnull);
			if (!isnull && sync_scopes_match(pc->effective, DatumGetJsonbP(d)))
			{
				int64		sv = DatumGetInt64(SPI_getbinval(tup, td, 2, &isnull));
				Datum		raw = SPI_getbinval(tup, td, 4, &isnull);
				bytea	   *payload;
				size_t		len;

				if (isnull)
					sync_raise("sync.internal_error", "pull: a stored row has no payload", NULL);
				payload = DatumGetByteaPP(raw);
				len = VARSIZE_ANY_EXHDR(payload);
				if (budgeted &&
					!pull_budget_allows(round, seg->len + w->block.len + len + SEGMENT_SLACK))
				{
					*full = true;
					*more = false;
					break;
				}
				if (img)
					sync_image_add_row(img, sv, (const uint8 *) VARDATA_ANY(payload), len);
				else if (!ssp_segment_add_row(w, sv, (const uint8_t *) VARDATA_ANY(payload), len, &err))
					pull_raise_codec("adding a row to a rows segment", &err);
				if (budgeted)
					round->data_delivered = true;
				added++;
				if ((Pointer) payload != DatumGetPointer(raw))
					pfree(payload);
			}
			/* this row is read: the next page (or the resume token) starts after it */
			id = DatumGetTextPP(SPI_getbinval(tup, td, 1, &isnull));
			resetStringInfo(cursor);
			appendBinaryStringInfo(cursor, VARDATA_ANY(id), VARSIZE_ANY_EXHDR(id));
			(*scanned_out)++;
		}
		SPI_freetuptable(tt);
		if (n == 0)
			break;
	}
	SPI_cursor_close(portal);
	if (!*full)
	{
		/* every id of the page is read, including ids whose row is gone */
		resetStringInfo(cursor);
		appendBinaryStringInfo(cursor, last_id.data, last_id.len);
		*scanned_out = (uint64) nids;
	}
	return added;
}

static void
pull_bootstrap(PullCtx *pc, const ResumeToken *resume, SyncPullResult *result)
{
	SyncRound  *round = pc->round;
	SyncTable  *t = pc->table;
	int64		pin = resume ? resume->as_of : round->max_seq;
	int64		limit = round->limit_snapshot_rows;
	bool		complete = false;
	bool		have_cursor = resume && resume->row_cursor;
	StringInfoData cursor;
	Oid			argtypes[2] = {TEXTOID, TEXTARRAYOID};
	Datum		args[6];
	char		nulls[6] = {' ', ' ', ' ', ' ', ' ', ' '};
	SPIPlanPtr	plan = get_plan(scan_sql(t), 2, argtypes);
	PageLane	lane;

	write_sub_start(pc, SSP_SUB_ACTIVE, "", true);
	args[0] = CStringGetTextDatum(round->partition);
	args[1] = CStringGetTextDatum(t->name);
	args[2] = CStringGetTextDatum(pc->effective->vars[0]);
	args[3] = first_var_values(pc->effective);
	args[5] = Int64GetDatum(limit + 1);
	if (!have_cursor && pull_image_lane(pc, pin, plan, args, nulls))
	{
		result->active = true;
		result->next_cursor = pin;
		write_sub_end(pc, pin, NULL);
		return;
	}
	pull_lane_init(pc, pin, &lane);

	initStringInfo(&cursor);
	if (have_cursor)
		appendStringInfoString(&cursor, resume->row_cursor);

	for (int page = 0; page < round->max_snapshot_pages; page++)
	{
		SspBuf		seg;
		SspSegmentWriter w;
		SspError	err;
		MemoryContext old;
		bool		more = false;
		bool		full = round->budget_spent;	/* no room: one empty page (Budget) */
		uint64		added = 0;

		if (have_cursor)
		{
			args[4] = CStringGetTextDatum(cursor.data);
			nulls[4] = ' ';
		}
		else
		{
			args[4] = (Datum) 0;
			nulls[4] = 'n';
		}

		old = MemoryContextSwitchTo(pc->work);
		if (lane.external)
		{
			char	   *page_start = have_cursor ? pstrdup(cursor.data) : NULL;

			full = false;		/* a reference carries no row data (Budget) */
			more = pull_external_page(pc, &lane, plan, args, nulls, page_start, page == 0, &cursor,
								 &have_cursor);
			MemoryContextSwitchTo(old);
			MemoryContextReset(pc->work);
			if (!more)
			{
				complete = true;
				break;
			}
			continue;
		}
		ssp_buf_init(&seg);
		if (!ssp_segment_begin(&w, &seg, t->name, (uint32) strlen(t->name), round->schema->version,
							   t->codec_columns, (uint16) t->ncolumns, &err))
			pull_raise_codec("starting a rows segment", &err);
		if (!full)
		{
			uint64		scanned;

			added = pull_fill_page(pc, plan, args, nulls, limit, true, &w, &seg, NULL, &cursor,
							  &scanned, &more, &full);
			have_cursor = have_cursor || scanned > 0;
		}
		if (!ssp_segment_finish(&w, &err))
			pull_raise_codec("finishing a rows segment", &err);

		/* a page is sent when it has rows, and a section's first page always (§4.7) */
		if (page == 0 || added > 0)
		{
			pull_write_inline(pc, seg.data, seg.len);
			sync_stats_rows_served(t->name, added);
		}
		ssp_buf_free(&seg);
		MemoryContextSwitchTo(old);
		MemoryContextReset(pc->work);

		if (!more && !full)
		{
			complete = true;
			break;
		}
		if (full)
			break;				/* the budget is spent: resume from the cursor next round */
	}

	result->active = true;
	result->next_cursor = pin;
	write_sub_end(pc, pin, complete ? NULL :
				  resume_token_json(t->name, pin, have_cursor ? cursor.data : NULL));
}

/* ---------------------------------------------------------------- entry point */

void
sync_pull_subscription(SyncRound *round, const SspFrame *subscription,
					   const SyncEffective *effective, SyncPullResult *result)
{
	PullCtx		pc;
	const SspSubscription *sub = &subscription->subscription;
	int64		cursor = sub->cursor;
	bool		has_token = sub->has_bootstrap_state;
	ResumeToken token;
	bool		token_ok = false;

	memset(&pc, 0, sizeof(pc));
	pc.round = round;
	pc.sub = sub;
	pc.effective = effective;
	pc.outer = CurrentMemoryContext;
	pc.table = sync_schema_table(round->schema, sub->table.ptr);
	if (pc.table == NULL)
		sync_raise("sync.unknown_table", "pull: the subscription's table is not served", NULL);
	result->active = false;
	result->next_cursor = cursor;

	/* 1. revoked (also when nothing effective is left: revoked by definition) */
	if (effective == NULL || effective->revoked || effective->nvars == 0)
	{
		write_sub_start(&pc, SSP_SUB_REVOKED, "sync.scope_revoked", false);
		write_sub_end(&pc, cursor, NULL);
		return;
	}

	/* 3. reset: cursor behind the horizon, and no resume token at all */
	if (!has_token && cursor >= 0 && cursor < round->horizon_seq)
	{
		write_sub_start(&pc, SSP_SUB_RESET, "sync.cursor_expired", false);
		write_sub_end(&pc, cursor, NULL);
		return;
	}

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "syncular pull: SPI_connect failed");
	pc.work = AllocSetContextCreate(pc.outer, "syncular pull", ALLOCSET_DEFAULT_SIZES);

	if (has_token)
	{
		/* 2. a token: resume when usable and not behind the horizon, else a fresh pin */
		MemoryContext old = MemoryContextSwitchTo(pc.outer);

		token_ok = parse_token(&pc, &token) && token.as_of >= round->horizon_seq;
		MemoryContextSwitchTo(old);
		pull_bootstrap(&pc, token_ok ? &token : NULL, result);
	}
	else if (cursor < 0 || cursor > round->max_seq)
		pull_bootstrap(&pc, NULL, result);	/* 4 */
	else
		pull_incremental(&pc, result);	/* 5 */

	MemoryContextDelete(pc.work);
	SPI_finish();
}
