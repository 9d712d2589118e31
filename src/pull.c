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
 * Bootstrap (§3.7), rows lane only: this server hosts no segment store, so there are no sqlite
 * images and no external segments.  A client that accepts only external rows segments (accept
 * bit 1 without bit 0) still gets SEGMENT_INLINE frames: with nowhere to store a segment, inline
 * is the only way to deliver it, and every SDK decodes SEGMENT_INLINE (it is the mandatory
 * rows-segment carrier).  Up to maxSnapshotPages pages of limitSnapshotRows rows each, keyset-paged by
 * _sync_row_id under COLLATE "C" (the same order for the page query, the "more" probe and the
 * resume cursor, whatever the database's default collation); each page is one SSG2 segment;
 * the first page is always sent, even with 0 rows.  SUB_END.nextCursor = the pin; the resume
 * token {"asOfCommitSeq","tables","tableIndex","rowCursor"} is present iff incomplete.
 *
 * The §3.6 continuity re-check (horizon read again after the window) is not needed: the horizon
 * and the window are read in the same snapshot, so pruning cannot pass the cursor in between.
 *
 * Bounds: a response section holds at most maxSnapshotPages * limitSnapshotRows rows, or
 * limitCommits changes plus one commit; round.c clamps those values.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "engine.h"

/* ---------------------------------------------------------------- output helpers */

typedef struct PullCtx
{
	SyncRound  *round;
	const SspSubscription *sub;
	const SyncEffective *effective;
	SyncTable  *table;
	MemoryContext outer;		/* the caller's context: round->out grows there */
	MemoryContext work;			/* reset per batch / page */
} PullCtx;

static void
raise_codec(const char *what, const SspError *err)
{
	char	   *msg = psprintf("pull: %s: %s", what, err->message);

	sync_raise(err->code && strcmp(err->code, SSP_ERR_INVALID_REQUEST) != 0 ? err->code : "sync.internal_error",
			   msg, NULL);
}

static void
write_frame(PullCtx *pc, const SspFrame *f)
{
	MemoryContext old = MemoryContextSwitchTo(pc->outer);
	SspError	err;

	if (!ssp_write_frame(pc->round->out, pc->round->wire_version, f, &err))
		raise_codec("writing a response frame", &err);
	MemoryContextSwitchTo(old);
}

static SspStr
mkstr(const char *s)
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
	s->reason_code = mkstr(reason);
	s->bootstrap = bootstrap;
	if (status == SSP_SUB_ACTIVE)
		s->effective_scopes = sync_pull_effective_map(pc->effective);
	write_frame(pc, &f);
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

		ent->key = mkstr(e->vars[i]);
		ent->nvalues = (uint32) e->nvalues[i];
		ent->values = palloc0(sizeof(SspStr) * Max(e->nvalues[i], 1));
		for (int k = 0; k < e->nvalues[i]; k++)
			ent->values[k] = mkstr(e->values[i][k]);
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
		f.sub_end.bootstrap_state = mkstr(bootstrap_state);
	}
	write_frame(pc, &f);
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

/* One candidate commit of the window, with its matching changes. */
typedef struct WindowCommit
{
	int64		seq;
	int64		created_at_ms;
	char	   *actor_id;
	int			nchanges;
	SspChange  *changes;
} WindowCommit;

static void
write_commit(PullCtx *pc, const WindowCommit *wc)
{
	SspFrame	f;
	SspStr		table = pc->sub->table;

	memset(&f, 0, sizeof(f));
	f.type = SSP_FRAME_COMMIT;
	f.commit.commit_seq = wc->seq;
	f.commit.created_at_ms = wc->created_at_ms;
	f.commit.actor_id = mkstr(wc->actor_id);
	f.commit.ntables = 1;
	f.commit.tables = &table;
	f.commit.nchanges = (uint32) wc->nchanges;
	f.commit.changes = wc->changes;
	write_frame(pc, &f);
}

/*
 * Read tuptable rows [*pos, end of this commit) into wc, keeping only the changes that match
 * the effective scopes.  Returns false when the commit row itself is gone (pruned).
 */
static bool
read_commit(PullCtx *pc, SPITupleTable *tt, uint64 ntuples, uint64 *pos, WindowCommit *wc)
{
	TupleDesc	td = tt->tupdesc;
	bool		isnull;
	uint64		start = *pos;
	uint64		end = start;
	bool		have_commit;

	wc->seq = DatumGetInt64(SPI_getbinval(tt->vals[start], td, 1, &isnull));
	while (end < ntuples &&
		   DatumGetInt64(SPI_getbinval(tt->vals[end], td, 1, &isnull)) == wc->seq)
		end++;
	*pos = end;

	wc->nchanges = 0;
	wc->changes = palloc0(sizeof(SspChange) * (end - start));
	(void) SPI_getbinval(tt->vals[start], td, 2, &isnull);
	have_commit = !isnull;
	if (!have_commit)
		return false;
	wc->created_at_ms = DatumGetInt64(SPI_getbinval(tt->vals[start], td, 2, &isnull));
	wc->actor_id = TextDatumGetCString(SPI_getbinval(tt->vals[start], td, 3, &isnull));

	for (uint64 r = start; r < end; r++)
	{
		HeapTuple	tup = tt->vals[r];
		Datum		d;
		Jsonb	   *scopes;
		SspChange  *ch;
		int16		op;

		d = SPI_getbinval(tup, td, 4, &isnull);
		if (isnull)
			continue;			/* a candidate without a change of this table */
		scopes = DatumGetJsonbP(SPI_getbinval(tup, td, 7, &isnull));
		if (isnull || !sync_scopes_match(pc->effective, scopes))
			continue;

		ch = &wc->changes[wc->nchanges++];
		ch->table_index = 0;
		ch->row_id = mkstr(TextDatumGetCString(d));
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
			payload = DatumGetByteaPP(d);
			ch->has_row = true;
			ch->row.ptr = (const uint8_t *) VARDATA_ANY(payload);
			ch->row.len = (uint32) VARSIZE_ANY_EXHDR(payload);
		}
	}
	return true;
}

static void
pull_incremental(PullCtx *pc, SyncPullResult *result)
{
	SyncRound  *round = pc->round;
	int64		cursor = pc->sub->cursor;
	int64		limit = round->limit_commits;
	int64		batch = Max(64, limit + 1);
	int64		after = cursor;
	int64		matched = 0;	/* matching changes read (look-ahead) */
	int64		delivered = 0;	/* changes delivered */
	int64		ncommits = 0;	/* commits delivered */
	int64		last_delivered = cursor;
	bool		stopped = false;	/* a commit was held back */
	bool		saturated = false;	/* the look-ahead passed limitCommits */
	Oid			argtypes[7] = {TEXTOID, TEXTOID, TEXTOID, TEXTARRAYOID, INT8OID, INT8OID, INT8OID};
	Datum		args[7];
	SPIPlanPtr	plan = get_plan(WINDOW_SQL, 7, argtypes);

	write_sub_start(pc, SSP_SUB_ACTIVE, "", false);

	args[0] = CStringGetTextDatum(round->partition);
	args[1] = CStringGetTextDatum(pc->table->name);
	args[2] = CStringGetTextDatum(pc->effective->vars[0]);
	args[3] = first_var_values(pc->effective);
	args[5] = Int64GetDatum(round->max_seq);
	args[6] = Int64GetDatum(batch);

	while (!saturated && after < round->max_seq)
	{
		int			rc;
		uint64		n,
					pos = 0,
					ncand = 0;
		SPITupleTable *tt;

		args[4] = Int64GetDatum(after);
		rc = SPI_execute_plan(plan, args, NULL, true, 0);
		if (rc != SPI_OK_SELECT)
			elog(ERROR, "syncular pull: commit window read failed: %s", SPI_result_code_string(rc));
		tt = SPI_tuptable;
		n = SPI_processed;
		if (n == 0)
		{
			SPI_freetuptable(tt);
			break;
		}

		while (pos < n && !saturated)
		{
			MemoryContext old = MemoryContextSwitchTo(pc->work);
			WindowCommit wc;
			bool		live = read_commit(pc, tt, n, &pos, &wc);

			ncand++;
			after = wc.seq;
			if (live && wc.nchanges > 0)
			{
				matched += wc.nchanges;
				if (!stopped && (ncommits == 0 ||
								 (delivered < limit && delivered + wc.nchanges <= limit)))
				{
					write_commit(pc, &wc);
					delivered += wc.nchanges;
					ncommits++;
					last_delivered = wc.seq;
				}
				else
					stopped = true;
				if (matched > limit)
					saturated = true;
			}
			MemoryContextSwitchTo(old);
			MemoryContextReset(pc->work);
		}
		SPI_freetuptable(tt);
		if (ncand < (uint64) batch)
			break;				/* the window is exhausted */
	}

	result->active = true;
	if (!saturated && !stopped)
		result->next_cursor = Max(cursor, round->max_seq);
	else
		result->next_cursor = Max(cursor, last_delivered);
	write_sub_end(pc, result->next_cursor, NULL);
}

/* ---------------------------------------------------------------- bootstrap */

static char *
scan_sql(const SyncTable *t)
{
	return psprintf(
		"SELECT k.row_id, t._sync_server_version, t._sync_scopes, t._sync_payload"
		"  FROM (SELECT DISTINCT s.row_id COLLATE \"C\" AS row_id"
		"          FROM syncular.sync_row_scopes s"
		"         WHERE s.partition = $1 AND s.tbl = $2 AND s.var = $3 AND s.value = ANY($4)"
		"           AND ($5::text IS NULL OR s.row_id COLLATE \"C\" > $5::text COLLATE \"C\")"
		"         ORDER BY 1 LIMIT $6) k"
		/*
		 * One primary-key probe per row id.  The LATERAL ... LIMIT 1 keeps the subquery from
		 * being flattened into a join: with stale statistics (a partition just filled) the
		 * planner otherwise picked a nested loop filtering the whole partition per row id,
		 * quadratic in the page size (56 s for a 12k-row page in bench/).  The probe asks for the
		 * first row id >= the candidate in key order (then checks equality): only the primary
		 * key yields that order, so no user index on (partition, ...) is used with a filter.
		 */
		"  LEFT JOIN LATERAL (SELECT z._sync_server_version, z._sync_scopes, z._sync_payload"
		"                       FROM (SELECT r._sync_row_id, r._sync_server_version, r._sync_scopes,"
		"                                    r._sync_payload"
		"                               FROM %s r"
		"                              WHERE r._sync_partition = $1"
		"                                AND r._sync_row_id >= (k.row_id COLLATE \"default\")"
		"                              ORDER BY r._sync_row_id LIMIT 1) z"
		"                      WHERE z._sync_row_id = (k.row_id COLLATE \"default\")) t ON true"
		" ORDER BY k.row_id",
		t->qualified);
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

static void
pull_bootstrap(PullCtx *pc, const ResumeToken *resume, SyncPullResult *result)
{
	SyncRound  *round = pc->round;
	SyncTable  *t = pc->table;
	int64		pin = resume ? resume->as_of : round->max_seq;
	char	   *after = resume ? resume->row_cursor : NULL;
	int64		limit = round->limit_snapshot_rows;
	bool		complete = false;
	Oid			argtypes[6] = {TEXTOID, TEXTOID, TEXTOID, TEXTARRAYOID, TEXTOID, INT8OID};
	Datum		args[6];
	char		nulls[6] = {' ', ' ', ' ', ' ', ' ', ' '};
	SPIPlanPtr	plan = get_plan(scan_sql(t), 6, argtypes);

	write_sub_start(pc, SSP_SUB_ACTIVE, "", true);

	args[0] = CStringGetTextDatum(round->partition);
	args[1] = CStringGetTextDatum(t->name);
	args[2] = CStringGetTextDatum(pc->effective->vars[0]);
	args[3] = first_var_values(pc->effective);
	args[5] = Int64GetDatum(limit + 1);

	for (int page = 0; page < round->max_snapshot_pages; page++)
	{
		int			rc;
		uint64		n,
					take;
		SPITupleTable *tt;
		TupleDesc	td;
		SspBuf		seg;
		SspSegmentWriter w;
		SspError	err;
		SspFrame	f;
		MemoryContext old;

		if (after)
		{
			args[4] = CStringGetTextDatum(after);
			nulls[4] = ' ';
		}
		else
		{
			args[4] = (Datum) 0;
			nulls[4] = 'n';
		}
		rc = SPI_execute_plan(plan, args, nulls, true, 0);
		if (rc != SPI_OK_SELECT)
			elog(ERROR, "syncular pull: row scan failed: %s", SPI_result_code_string(rc));
		tt = SPI_tuptable;
		td = tt->tupdesc;
		n = SPI_processed;
		take = Min(n, (uint64) limit);

		old = MemoryContextSwitchTo(pc->work);
		ssp_buf_init(&seg);
		if (!ssp_segment_begin(&w, &seg, t->name, (uint32) strlen(t->name), round->schema->version,
							   t->codec_columns, (uint16) t->ncolumns, &err))
			raise_codec("starting a rows segment", &err);
		for (uint64 r = 0; r < take; r++)
		{
			HeapTuple	tup = tt->vals[r];
			bool		isnull;
			Datum		d;
			int64		sv;
			bytea	   *payload;

			d = SPI_getbinval(tup, td, 3, &isnull);
			if (isnull)
				continue;		/* the row is gone; the keyset still advances */
			if (!sync_scopes_match(pc->effective, DatumGetJsonbP(d)))
				continue;
			sv = DatumGetInt64(SPI_getbinval(tup, td, 2, &isnull));
			payload = DatumGetByteaPP(SPI_getbinval(tup, td, 4, &isnull));
			if (isnull)
				sync_raise("sync.internal_error", "pull: a stored row has no payload", NULL);
			if (!ssp_segment_add_row(&w, sv, (const uint8_t *) VARDATA_ANY(payload),
									 VARSIZE_ANY_EXHDR(payload), &err))
				raise_codec("adding a row to a rows segment", &err);
		}
		if (!ssp_segment_finish(&w, &err))
			raise_codec("finishing a rows segment", &err);

		memset(&f, 0, sizeof(f));
		f.type = SSP_FRAME_SEGMENT_INLINE;
		f.segment_inline.payload.ptr = seg.data;
		f.segment_inline.payload.len = (uint32) seg.len;
		write_frame(pc, &f);
		ssp_buf_free(&seg);
		MemoryContextSwitchTo(old);

		if (n <= (uint64) limit)
		{
			complete = true;
			SPI_freetuptable(tt);
			MemoryContextReset(pc->work);
			break;
		}
		/* more rows: the next page starts after the last row of this one */
		{
			bool		isnull;

			after = TextDatumGetCString(SPI_getbinval(tt->vals[take - 1], td, 1, &isnull));
		}
		SPI_freetuptable(tt);
		MemoryContextReset(pc->work);
	}

	result->active = true;
	result->next_cursor = pin;
	write_sub_end(pc, pin, complete ? NULL : resume_token_json(t->name, pin, after));
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
