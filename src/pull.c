/*
 * pull.c — one subscription section of a pull: SUB_START .. SUB_END into round->out.
 *
 * round.c pushes ONE snapshot for the whole pull and calls sync_pull_subscription per
 * SUBSCRIPTION frame in request order (engine.h, "Round <-> pull seam").  Every read here uses
 * that snapshot (the direct index scans of pull_window.c and pull_rows.c take the active
 * snapshot; statements go through SPI with read_only = true): max_seq, horizon_seq, the commit
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
 * Incremental (§3.6): window cursor < commit_seq <= maxSeq, candidates from the change-scope
 * index (storage_log.c) driven by the first effective variable (sorted key order), exact match on every variable
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
 * (§4.5: "clients pull again whenever a response contained commits").  Rows are read one at a
 * time by direct index scans, so a section holds the current commit's changes (incremental) or
 * the current page (bootstrap), never the window or the table.
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

/* ---------------------------------------------------------------- resume token */

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
		sync_raise("sync.unknown_table", "pull: the subscription's table is not served",
				   sync_json_member("table", sub->table.ptr));
	result->active = false;
	result->next_cursor = cursor;

	/* 1. revoked (also when nothing effective is left: revoked by definition) */
	if (effective == NULL || effective->revoked || effective->nvars == 0)
	{
		pull_write_sub_start(&pc, SSP_SUB_REVOKED, "sync.scope_revoked", false);
		pull_write_sub_end(&pc, cursor, NULL);
		return;
	}

	/* 3. reset: cursor behind the horizon, and no resume token at all */
	if (!has_token && cursor >= 0 && cursor < round->horizon_seq)
	{
		pull_write_sub_start(&pc, SSP_SUB_RESET, "sync.cursor_expired", false);
		pull_write_sub_end(&pc, cursor, NULL);
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
