/*
 * fanout.c — syncular.realtime_fanout(partition, commit_seq, connections jsonb) and
 * syncular.realtime_fanout_arrays(partition, commit_seq, conn_ids, cursors, registrations): the
 * deltas and wake-ups of every realtime connection a gateway holds on a partition, for one commit
 * notification, in one call (SPEC §8.2, §8.3; contract and decision order: docs/realtime.md).
 * Both read their input into the same connections (registrations parsed by fanout_regs.c; the
 * arrays' registration texts through its backend-local cache) and share everything else.
 *
 * Cost model: the partition state, the serve gate and the commit window are read once, in the
 * calling statement's snapshot (SPI read-only).  Subscriptions with the same table and the same
 * registered effective scopes form a group; each group is matched against the window once
 * (sync_scopes_match, the pull's rule).  Only a connection that would receive a change pays
 * more: its actor's live grant (the scope resolver, once per (actor, client) per call) and its
 * effective scopes recomputed by sync_scopes_effective, then the final match of its candidate
 * changes against those.  A delta is sent only when the live grant still yields exactly the
 * registered effective scopes; otherwise the connection is woken (catchup-required), so no
 * delta ever carries a row outside the live grant.  Connections equal in everything steps 7-9
 * read (the grant's content included) share one computed outcome ("shared outcomes").
 *
 * Frames are the pull's (SUB_START / COMMIT / SUB_END through ssp_write_frame, scopes maps from
 * pull.c), one COMMIT per commit, changes in commit order, commits never split.  Memory: the
 * window holds at most syncular.realtime_max_window_changes changes (plus one commit when a
 * single commit is larger), each delta at most syncular.realtime_max_delta_bytes, the deltas
 * kept for sharing at most four times that; per-connection work lives in a context reset after
 * its row is emitted.
 */
#include "postgres.h"

#include <limits.h>

#include "catalog/pg_type.h"
#include "utils/array.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "common/hashfn.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

#include "engine.h"
#include "fanout_regs.h"
#include "realtime.h"
#include "storage.h"
#include "storage_log.h"

typedef struct WinChange
{
	int64		seq;
	int			commit;			/* index into the window's commits, -1: commit row gone */
	char	   *table;
	Jsonb	   *scopes;
	SspChange	change;			/* table_index 0: each COMMIT frame names one table */
} WinChange;

typedef struct WinCommit
{
	int64		seq;
	int64		created_at_ms;
	char	   *actor_id;
} WinCommit;

typedef struct RtConn
{
	int			index;
	int64		conn;
	int64		cursor;
	const RtReg *reg;			/* read-only: may be shared with other calls (fanout_regs.c) */
	int		   *group;			/* per subscription of reg: its ScopeGroup */
	/* decision */
	const char *action;
	const char *reason;
	int64		next;
	bool		candidate;		/* reached the grant check (docs/realtime.md step 7) */
	SyncAllowed *allowed;
	char	   *grant_key;		/* the live grant's content as a string (grant_key) */
} RtConn;

typedef struct ScopeGroup
{
	SyncTable  *table;
	const SyncEffective *effective;
	int			nmatch;
	int		   *match;			/* window change indexes, ascending */
} ScopeGroup;

typedef struct Fanout
{
	const char *partition;
	SyncSchema *schema;
	char	   *epoch;
	int64		max_seq;		/* the partition's max commit_seq */
	int64		upper;			/* u: min(commit_seq, max_seq) */
	int64		window_lo;		/* commits in (window_lo, upper] are read completely */
	int			nchanges;
	WinChange  *changes;
	int			ncommits;
	WinCommit  *commits;
	int			ngroups;
	ScopeGroup	   *groups;
} Fanout;

/* ---------------------------------------------------------------- input */

static void
malformed(int index, const char *field)
{
	sync_fanout_malformed(index, field);
}

/* an integer in the ±(2^53−1) contract (§8.1) */
static int64
safe_int(int64 x, int index, const char *field)
{
	if (x > SSP_I64_SAFE_MAX || x < -SSP_I64_SAFE_MAX)
		malformed(index, field);
	return x;
}

/*
 * A string built in a StringInfo (1 KiB at least) as a chunk of its own length: what parsing
 * keeps per connection for the whole call stays small, so a call over many connections does
 * not grow its memory (and fault in fresh pages) by a kilobyte per string.
 */
static char *
exact_copy(char *s)
{
	char	   *c = pstrdup(s);

	pfree(s);
	return c;
}

static void
set_reg(RtConn *c, const RtReg *reg)
{
	c->reg = reg;
	c->group = palloc0(sizeof(int) * Max(reg->nsubs, 1));
}

/* one element of realtime_fanout's jsonb array: {conn, cursor, registration} */
static void
parse_conn(Fanout *f, JsonbValue *el, int index, RtConn *c)
{
	JsonbContainer *obj;
	JsonbValue	v;

	if (el->type != jbvBinary || !JsonContainerIsObject(el->val.binary.data))
		malformed(index, "connection");
	obj = el->val.binary.data;
	c->index = index;
	c->conn = sync_fanout_member_int(obj, "conn", index, "conn");
	c->cursor = sync_fanout_member_int(obj, "cursor", index, "cursor");
	if (getKeyJsonValueFromContainer(obj, "registration", 12, &v) == NULL || v.type != jbvBinary ||
		!JsonContainerIsObject(v.val.binary.data))
		malformed(index, "registration");
	set_reg(c, sync_fanout_reg_parse(f->schema, v.val.binary.data, f->partition, index));
}

/* ---------------------------------------------------------------- partition state */

/* The serve gate in this snapshot: NULL when ready, else the refusal kind (RFC 0007 §4). */
static char *
gate_refusal(Fanout *f)
{
	MemoryContext caller = CurrentMemoryContext;
	Oid			types[2] = {TEXTOID, INT4OID};
	Datum		args[2];
	bool		isnull;
	Datum		d;
	int			rc;

	args[0] = CStringGetTextDatum(f->partition);
	args[1] = Int32GetDatum(f->schema->version);
	rc = SPI_execute_with_args(
		"SELECT g ->> 'ready', g -> 'refusal' ->> 'kind' FROM syncular.serve_gate($1, "
		"coalesce(nullif(btrim(current_setting('syncular.checkpoints', true)), '')::jsonb, "
		"'[]'::jsonb), $2) g", 2, types, args, NULL, true, 1);
	MemoryContextSwitchTo(caller);	/* SPI returns in its procedure context */
	if (rc != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "syncular realtime: serve gate read failed");
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (!isnull && strcmp(TextDatumGetCString(d), "true") == 0)
		return NULL;
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull);
	return isnull ? pstrdup("unknown") : TextDatumGetCString(d);
}

static void
decide(RtConn *c, const char *action, const char *reason, int64 next)
{
	c->action = action;
	c->reason = reason;
	c->next = next;
}

/* ---------------------------------------------------------------- the window */

/* A stored change as a window change (frames name one table: tableIndex 0). */
static void
fill_change(const SyncStoredChange *sc, WinChange *wc)
{
	SspChange  *ch = &wc->change;

	wc->seq = sc->seq;
	wc->table = sc->table;
	wc->scopes = sc->scopes;
	wc->commit = -1;
	memset(ch, 0, sizeof(*ch));
	ch->row_id.ptr = sc->row_id;
	ch->row_id.len = (uint32) strlen(ch->row_id.ptr);
	ch->op = (uint8) sc->op;
	ch->scopes = sync_pull_stored_scopes(wc->scopes);
	if (ch->op == SSP_OP_UPSERT)
	{
		ch->has_row_version = true;
		ch->row_version = sc->row_version;
		if (!sc->has_row_version)
			sync_raise("sync.internal_error", "realtime: a stored upsert change has no row version", NULL);
		if (sc->payload == NULL)
			sync_raise("sync.internal_error", "realtime: a stored upsert change has no payload", NULL);
		ch->has_row = true;
		ch->row.ptr = (const uint8_t *) VARDATA_ANY(sc->payload);
		ch->row.len = (uint32) VARSIZE_ANY_EXHDR(sc->payload);
	}
}

/*
 * Read (lo, upper]: at most max_window_changes changes of whole commits, newest first.  When the
 * limit cuts the oldest commit read, the window starts after it; when a single commit is larger
 * than the limit, that commit alone is read.
 */
static void
read_window(Fanout *f, int64 lo)
{
	int64		limit = sync_realtime_max_window_changes;
	SyncStoredChange *sc;
	SyncStoredCommit *cm;
	uint64		n = sync_log_read_changes(f->partition, lo, f->upper, limit + 1, &sc);
	uint64		keep;
	int64		oldest;

	f->window_lo = lo;
	keep = n;
	if (n > (uint64) limit)
	{
		int64		newest = sc[0].seq;

		oldest = sc[n - 1].seq;
		if (oldest == newest)
		{
			/* one commit larger than the limit: read it whole (a push wrote it whole) */
			f->window_lo = newest - 1;
			n = sync_log_read_changes(f->partition, newest - 1, newest, 0, &sc);
			keep = n;
		}
		else
		{
			f->window_lo = oldest;
			while (keep > 0 && sc[keep - 1].seq == oldest)
				keep--;
		}
	}
	f->nchanges = (int) keep;
	f->changes = palloc0(sizeof(WinChange) * Max(keep, 1));
	for (uint64 r = 0; r < keep; r++)
		fill_change(&sc[r], &f->changes[keep - 1 - r]);

	n = sync_log_read_commits(f->partition, f->window_lo, f->upper, &cm);
	f->ncommits = (int) n;
	f->commits = palloc0(sizeof(WinCommit) * Max(n, 1));
	for (uint64 r = 0; r < n; r++)
	{
		f->commits[r].seq = cm[r].seq;
		f->commits[r].created_at_ms = cm[r].created_at_ms;
		f->commits[r].actor_id = cm[r].actor_id;
	}
	/* both ascend: attach each change to its commit row */
	for (int i = 0, k = 0; i < f->nchanges; i++)
	{
		while (k < f->ncommits && f->commits[k].seq < f->changes[i].seq)
			k++;
		if (k < f->ncommits && f->commits[k].seq == f->changes[i].seq)
			f->changes[i].commit = k;
	}
}

/* ---------------------------------------------------------------- groups */

/* a subscription of a candidate and where its group index goes */
typedef struct SubSlot
{
	const RtSub *sub;
	int		   *group;
} SubSlot;

static int
cmp_sub_key(const void *a, const void *b)
{
	return strcmp(((const SubSlot *) a)->sub->group_key, ((const SubSlot *) b)->sub->group_key);
}

/* one group per distinct (table, registered effective scopes); each matched once */
static void
match_groups(Fanout *f, RtConn *conns, int nconns)
{
	int			nsubs = 0;
	SubSlot    *subs;

	for (int i = 0; i < nconns; i++)
		if (conns[i].candidate)
			nsubs += conns[i].reg->nsubs;
	subs = palloc(sizeof(SubSlot) * Max(nsubs, 1));
	nsubs = 0;
	for (int i = 0; i < nconns; i++)
		if (conns[i].candidate)
			for (int s = 0; s < conns[i].reg->nsubs; s++)
			{
				subs[nsubs].sub = &conns[i].reg->subs[s];
				subs[nsubs++].group = &conns[i].group[s];
			}
	qsort(subs, nsubs, sizeof(SubSlot), cmp_sub_key);
	f->groups = palloc0(sizeof(ScopeGroup) * Max(nsubs, 1));
	f->ngroups = 0;
	for (int i = 0; i < nsubs; i++)
	{
		ScopeGroup *g;

		if (i > 0 && strcmp(subs[i - 1].sub->group_key, subs[i].sub->group_key) == 0)
		{
			*subs[i].group = *subs[i - 1].group;
			continue;
		}
		g = &f->groups[f->ngroups];
		*subs[i].group = f->ngroups++;
		g->table = subs[i].sub->table;
		g->effective = subs[i].sub->effective;
		g->match = palloc(sizeof(int) * Max(f->nchanges, 1));
		for (int c = 0; c < f->nchanges; c++)
		{
			WinChange  *wc = &f->changes[c];

			if (wc->commit >= 0 && strcmp(wc->table, g->table->name) == 0 &&
				sync_scopes_match(g->effective, wc->scopes))
				g->match[g->nmatch++] = c;
		}
	}
}

/* does any subscription of c have a group match past its cursor? */
static bool
has_candidates(Fanout *f, RtConn *c)
{
	for (int s = 0; s < c->reg->nsubs; s++)
	{
		ScopeGroup *g = &f->groups[c->group[s]];

		if (g->nmatch > 0 && f->changes[g->match[g->nmatch - 1]].seq > c->cursor)
			return true;
	}
	return false;
}

/* ---------------------------------------------------------------- the live grant */

static int
cmp_conn_identity(const void *a, const void *b)
{
	const RtConn *x = *(RtConn *const *) a;
	const RtConn *y = *(RtConn *const *) b;
	int			r = strcmp(x->reg->actor, y->reg->actor);

	return r != 0 ? r : strcmp(x->reg->client, y->reg->client);
}

static void
append_counted(StringInfo b, const char *p, size_t len)
{
	appendStringInfo(b, "%zu:", len);
	appendBinaryStringInfo(b, p, (int) len);
}

/*
 * A grant's whole content as a string (every field, each string length-prefixed: equal strings
 * mean equal grants); connections share an outcome only when these are equal.
 */
static char *
grant_key(const SyncAllowed *a)
{
	StringInfoData b;

	initStringInfo(&b);
	appendStringInfo(&b, "%d%d%d", a->failed, a->leased, a->nvars);
	for (int i = 0; i < a->nvars; i++)
	{
		append_counted(&b, a->vars[i], strlen(a->vars[i]));
		appendStringInfo(&b, "%d%d", a->any[i], a->nvalues[i]);
		for (int k = 0; k < a->nvalues[i]; k++)
			append_counted(&b, a->values[i][k], strlen(a->values[i][k]));
	}
	return b.data;
}

/* the live grant, once per (actor, client) among the candidates (realtime_grants.c) */
static void
resolve_grants(Fanout *f, RtConn *conns, int nconns)
{
	RtConn	  **list = palloc(sizeof(RtConn *) * Max(nconns, 1));
	int			n = 0;
	int64		now_ms = sync_now_ms();

	for (int i = 0; i < nconns; i++)
		if (conns[i].candidate)
			list[n++] = &conns[i];
	qsort(list, n, sizeof(RtConn *), cmp_conn_identity);
	for (int i = 0; i < n; i++)
	{
		if (i > 0 && cmp_conn_identity(&list[i - 1], &list[i]) == 0)
		{
			list[i]->allowed = list[i - 1]->allowed;
			list[i]->grant_key = list[i - 1]->grant_key;
			continue;
		}
		list[i]->allowed = sync_realtime_grant(f->schema, f->partition, list[i]->reg->actor,
											   list[i]->reg->client, now_ms);
		list[i]->grant_key = exact_copy(grant_key(list[i]->allowed));
	}
}

/* ---------------------------------------------------------------- the delta */

static bool
write_frame(SspBuf *out, int wire, const SspFrame *fr)
{
	SspError	err;

	if (!ssp_write_frame(out, (uint16) wire, fr, &err))
		sync_raise("sync.internal_error", "realtime: a delta frame could not be encoded", NULL);
	return out->len <= (size_t) sync_realtime_max_delta_bytes;
}

/* One section: SUB_START, a COMMIT per commit of `idx` (ascending change indexes), SUB_END. */
static bool
write_section(Fanout *f, SspBuf *out, int wire, const RtSub *s, const SyncEffective *eff,
			  const int *idx, int n)
{
	SspFrame	fr;
	SspStr		table;

	memset(&fr, 0, sizeof(fr));
	fr.type = SSP_FRAME_SUB_START;
	fr.sub_start.id.ptr = s->id;
	fr.sub_start.id.len = (uint32) strlen(s->id);
	fr.sub_start.status = SSP_SUB_ACTIVE;
	fr.sub_start.reason_code.ptr = "";
	fr.sub_start.effective_scopes = sync_pull_effective_map(eff);
	if (!write_frame(out, wire, &fr))
		return false;

	table.ptr = s->table->name;
	table.len = (uint32) strlen(s->table->name);
	for (int i = 0; i < n;)
	{
		const WinChange *first = &f->changes[idx[i]];
		const WinCommit *wc = &f->commits[first->commit];
		int			k = i;

		while (k < n && f->changes[idx[k]].seq == first->seq)
			k++;
		memset(&fr, 0, sizeof(fr));
		fr.type = SSP_FRAME_COMMIT;
		fr.commit.commit_seq = wc->seq;
		fr.commit.created_at_ms = wc->created_at_ms;
		fr.commit.actor_id.ptr = wc->actor_id;
		fr.commit.actor_id.len = (uint32) strlen(wc->actor_id);
		fr.commit.ntables = 1;
		fr.commit.tables = &table;
		fr.commit.nchanges = (uint32) (k - i);
		fr.commit.changes = palloc(sizeof(SspChange) * (k - i));
		for (int j = i; j < k; j++)
			fr.commit.changes[j - i] = f->changes[idx[j]].change;
		if (!write_frame(out, wire, &fr))
			return false;
		i = k;
	}

	memset(&fr, 0, sizeof(fr));
	fr.type = SSP_FRAME_SUB_END;
	fr.sub_end.next_cursor = f->upper;
	return write_frame(out, wire, &fr);
}

/*
 * Steps 7-9 for a candidate: the live grant, the final match, the body.  Returns the body
 * (palloc'd) for a delta, or NULL with the decision recorded in c.
 */
static bytea *
build_delta(Fanout *f, RtConn *c)
{
	int			nsubs = c->reg->nsubs;
	int			wire = c->reg->wire;
	SyncEffective **eff = palloc(sizeof(SyncEffective *) * nsubs);
	int		  **idx = palloc(sizeof(int *) * nsubs);
	int		   *nidx = palloc0(sizeof(int) * nsubs);
	int			total = 0;
	SspBuf		out;
	SspFrame	fr;
	SspError	err;
	bytea	   *body;

	for (int s = 0; s < nsubs; s++)
	{
		const RtSub *sub = &c->reg->subs[s];
		ScopeGroup *g = &f->groups[c->group[s]];

		eff[s] = sync_scopes_effective(c->allowed, sub->table, &sub->requested);
		if (eff[s]->revoked || eff[s]->nvars == 0 ||
			strcmp(sync_effective_json(eff[s]), sub->effective_json) != 0)
		{
			decide(c, "wake", "catchup-required", c->cursor);
			return NULL;
		}
		idx[s] = palloc(sizeof(int) * Max(g->nmatch, 1));
		for (int m = 0; m < g->nmatch; m++)
		{
			WinChange  *wc = &f->changes[g->match[m]];

			if (wc->seq > c->cursor && sync_scopes_match(eff[s], wc->scopes))
				idx[s][nidx[s]++] = g->match[m];
		}
		total += nidx[s];
	}
	if (total == 0)
	{
		decide(c, "none", NULL, f->upper);
		return NULL;
	}

	ssp_buf_init(&out);
	if (!ssp_write_message_header(&out, (uint16) wire, SSP_KIND_RESPONSE, &err))
		sync_raise("sync.internal_error", "realtime: a delta header could not be encoded", NULL);
	memset(&fr, 0, sizeof(fr));
	fr.type = SSP_FRAME_RESP_HEADER;
	fr.resp_header.has_latest_schema_version = true;
	fr.resp_header.latest_schema_version = f->schema->version;
	fr.resp_header.log_epoch.ptr = f->epoch;
	fr.resp_header.log_epoch.len = (uint32) strlen(f->epoch);
	if (!write_frame(&out, wire, &fr))
		goto too_large;
	for (int s = 0; s < nsubs; s++)
		if (nidx[s] > 0 && !write_section(f, &out, wire, &c->reg->subs[s], eff[s], idx[s], nidx[s]))
			goto too_large;
	if (!ssp_write_end(&out, &err))
		sync_raise("sync.internal_error", "realtime: a delta could not be encoded", NULL);
	if (out.len > (size_t) sync_realtime_max_delta_bytes)
		goto too_large;

	body = palloc(VARHDRSZ + out.len);
	SET_VARSIZE(body, VARHDRSZ + out.len);
	memcpy(VARDATA(body), out.data, out.len);
	decide(c, "delta", NULL, f->upper);
	return body;

too_large:
	decide(c, "wake", "delta-too-large", c->cursor);
	return NULL;
}

/* ---------------------------------------------------------------- shared outcomes */

/*
 * Steps 7-9 read nothing of a connection but its live grant, its subscriptions (id, table,
 * requested scopes and registered effective scopes, i.e. its group), its cursor and its wire
 * version.  Connections equal in all of these (many sockets of one app registered alike, at the
 * same cursor) get the outcome computed for the first of them: the same decision and the same
 * delta bytes, without matching and encoding again.  The key holds the grant's whole content
 * (grant_key), so a connection whose live grant differs in anything, even from a socket of the
 * same registration, is judged on its own and never handed another's delta.  Kept delta bodies
 * total at most SHARED_BODY_BYTES; past that an outcome keeps only its decision and each such
 * delta is encoded again.
 */
#define SHARED_BODY_BYTES ((Size) 4 * sync_realtime_max_delta_bytes)

typedef struct Outcome
{
	uint64		hash;			/* the key of the hash table */
	char	   *key;
	const char *action;
	const char *reason;
	int64		next;
	bytea	   *body;			/* a delta's bytes when kept, else NULL */
} Outcome;

typedef struct Shared
{
	HTAB	   *table;
	MemoryContext cxt;			/* keys and kept bodies */
	Size		kept;			/* bytes of the kept bodies */
} Shared;

static void
shared_init(Shared *sh, MemoryContext cxt)
{
	HASHCTL		ctl;

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(uint64);
	ctl.entrysize = sizeof(Outcome);
	ctl.hcxt = cxt;
	sh->table = hash_create("syncular realtime outcomes", 64, &ctl,
							HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	sh->cxt = cxt;
	sh->kept = 0;
}

/* everything build_delta reads of c, as a string (in the current context) */
static char *
outcome_key(RtConn *c)
{
	StringInfoData b;

	initStringInfo(&b);
	appendStringInfo(&b, "%d " INT64_FORMAT " %d ", c->reg->wire, c->cursor, c->reg->nsubs);
	append_counted(&b, c->grant_key, strlen(c->grant_key));
	for (int s = 0; s < c->reg->nsubs; s++)
	{
		const RtSub *sub = &c->reg->subs[s];

		append_counted(&b, sub->id, strlen(sub->id));
		appendStringInfo(&b, "%d %u ", c->group[s], sub->requested.n);
		for (uint32 i = 0; i < sub->requested.n; i++)
		{
			SspScopeEntry *e = &sub->requested.entries[i];

			append_counted(&b, e->key.ptr, e->key.len);
			appendStringInfo(&b, "%u ", e->nvalues);
			for (uint32 k = 0; k < e->nvalues; k++)
				append_counted(&b, e->values[k].ptr, e->values[k].len);
		}
	}
	return b.data;
}

/* Steps 7-9 for candidate c, shared with the connections equal to it (above). */
static bytea *
shared_delta(Shared *sh, Fanout *f, RtConn *c)
{
	char	   *key = outcome_key(c);
	uint64		hash = hash_bytes_extended((const unsigned char *) key, strlen(key), 0);
	bool		found;
	Outcome    *o = hash_search(sh->table, &hash, HASH_ENTER, &found);
	bytea	   *body;

	if (found && strcmp(o->key, key) == 0 &&
		(o->body != NULL || strcmp(o->action, "delta") != 0))
	{
		decide(c, o->action, o->reason, o->next);
		return o->body;
	}
	body = build_delta(f, c);
	if (found)
		return body;			/* a hash collision, or a body not kept: not replaced */
	o->key = MemoryContextStrdup(sh->cxt, key);
	o->action = c->action;
	o->reason = c->reason;
	o->next = c->next;
	o->body = NULL;
	if (body != NULL && sh->kept + VARSIZE(body) <= SHARED_BODY_BYTES)
	{
		o->body = MemoryContextAlloc(sh->cxt, VARSIZE(body));
		memcpy(o->body, body, VARSIZE(body));
		sh->kept += VARSIZE(body);
	}
	return body;
}

/* ---------------------------------------------------------------- steps 1-6 */

static void
decide_early(Fanout *f, RtConn *c, const char *gate, int64 horizon)
{
	int64		u = f->upper;

	if (strcmp(c->reg->epoch, f->epoch) != 0 || c->reg->schema_version != f->schema->version ||
		(gate && strcmp(gate, "schema") == 0))
		decide(c, "wake", "reset-required", c->cursor);
	else if (gate)
		decide(c, "wake", "catchup-required", c->cursor);
	else if (c->reg->nsubs == 0)
		decide(c, "none", NULL, Max(c->cursor, u));
	else if (c->cursor > f->max_seq)
		decide(c, "wake", "catchup-required", c->cursor);	/* from the future: bootstrap */
	else if (u <= c->cursor)
		decide(c, "none", NULL, c->cursor);
	else if (c->cursor < 0)
		decide(c, "wake", "catchup-required", c->cursor);
	else if (c->cursor < horizon)
		decide(c, "wake", "reset-required", c->cursor);
	else if (u - c->cursor > sync_realtime_max_window_commits)
		decide(c, "wake", "catchup-required", c->cursor);
	else
		c->candidate = true;	/* needs the window */
}

/* ---------------------------------------------------------------- entry point */

static void
emit(Tuplestorestate *ts, TupleDesc td, RtConn *c, bytea *body)
{
	Datum		values[5];
	bool		nulls[5] = {false, false, false, false, false};

	values[0] = Int64GetDatum(c->conn);
	values[1] = CStringGetTextDatum(c->action);
	if (c->reason)
		values[2] = CStringGetTextDatum(c->reason);
	else
		nulls[2] = true;
	if (body)
		values[3] = PointerGetDatum(body);
	else
		nulls[3] = true;
	values[4] = Int64GetDatum(c->next);
	tuplestore_putvalues(ts, td, values, nulls);
}

/* Steps 1-9 for every connection, one row each in input order (the caller is connected to SPI). */
static void
fanout_run(ReturnSetInfo *rsinfo, Fanout *f, RtConn *conns, int nconns, int64 commit_seq)
{
	MemoryContext cxt = CurrentMemoryContext;
	MemoryContext per_conn;
	Shared		shared;
	int64		max_seq = 0;
	int64		touched;
	int64		horizon = 0;
	int64		lo = PG_INT64_MAX;
	char	   *gate = NULL;

	/* the partition's state, once, in this statement's snapshot */
	f->epoch = sync_storage_partition_epoch(f->partition, 0, false, &touched);
	if (f->epoch != NULL)
	{
		sync_storage_read_seqs(f->partition, &max_seq, &horizon);
		if (nconns > 0)
			gate = gate_refusal(f);
	}
	f->max_seq = max_seq;
	f->upper = Min(commit_seq, max_seq);

	for (int i = 0; i < nconns; i++)
	{
		if (f->epoch == NULL)
			decide(&conns[i], "none", NULL, conns[i].cursor);	/* a partition never seen */
		else
			decide_early(f, &conns[i], gate, horizon);
		if (conns[i].candidate)
			lo = Min(lo, conns[i].cursor);
	}

	if (lo != PG_INT64_MAX)
	{
		read_window(f, lo);
		for (int i = 0; i < nconns; i++)
			if (conns[i].candidate && conns[i].cursor < f->window_lo)
			{
				conns[i].candidate = false;
				decide(&conns[i], "wake", "catchup-required", conns[i].cursor);
			}
		match_groups(f, conns, nconns);
		for (int i = 0; i < nconns; i++)
			if (conns[i].candidate && !has_candidates(f, &conns[i]))
			{
				conns[i].candidate = false;
				decide(&conns[i], "none", NULL, f->upper);
			}
		resolve_grants(f, conns, nconns);
	}

	shared_init(&shared, cxt);
	per_conn = AllocSetContextCreate(cxt, "syncular realtime connection", ALLOCSET_DEFAULT_SIZES);
	for (int i = 0; i < nconns; i++)
	{
		MemoryContext old = MemoryContextSwitchTo(per_conn);
		bytea	   *body = NULL;

		CHECK_FOR_INTERRUPTS();
		if (conns[i].candidate)
			body = shared_delta(&shared, f, &conns[i]);
		emit(rsinfo->setResult, rsinfo->setDesc, &conns[i], body);
		MemoryContextSwitchTo(old);
		MemoryContextReset(per_conn);
	}
}

/* partition (non-empty) and commit_seq, then SPI and the schema: what both signatures start with */
static void
fanout_begin(FunctionCallInfo fcinfo, Fanout *f, const char *null_args)
{
	for (int i = 0; i < PG_NARGS(); i++)
		if (PG_ARGISNULL(i))
			sync_raise("sync.invalid_request", "realtime: an argument is NULL",
					   psprintf("{\"argument\": \"%s\"}", null_args));
	memset(f, 0, sizeof(*f));
	f->partition = text_to_cstring(PG_GETARG_TEXT_PP(0));
	if (f->partition[0] == '\0')
		sync_raise("sync.invalid_request", "realtime: an argument is empty",
				   "{\"argument\": \"partition\"}");
}

static void
fanout_connect(FunctionCallInfo fcinfo, Fanout *f)
{
	InitMaterializedSRF(fcinfo, 0);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "syncular realtime: SPI_connect failed");
	f->schema = sync_schema_get();
	if (f->schema == NULL)
		sync_raise_no_schema();
}

PG_FUNCTION_INFO_V1(syncular_realtime_fanout);

/* syncular.realtime_fanout(partition text, commit_seq bigint, connections jsonb) */
Datum
syncular_realtime_fanout(PG_FUNCTION_ARGS)
{
	Fanout		f;
	Jsonb	   *input;
	RtConn	   *conns;
	int			nconns;

	fanout_begin(fcinfo, &f, "partition, commit_seq or connections");
	input = PG_GETARG_JSONB_P(2);
	if (!JB_ROOT_IS_ARRAY(input) || JB_ROOT_IS_SCALAR(input))
		sync_raise("sync.invalid_request", "realtime_fanout: connections must be a JSON array",
				   "{\"argument\": \"connections\"}");
	fanout_connect(fcinfo, &f);

	/* every element is validated before anything is answered */
	nconns = JB_ROOT_COUNT(input);
	conns = palloc0(sizeof(RtConn) * Max(nconns, 1));
	for (int i = 0; i < nconns; i++)
		parse_conn(&f, getIthJsonbValueFromContainer(&input->root, i), i, &conns[i]);

	fanout_run((ReturnSetInfo *) fcinfo->resultinfo, &f, conns, nconns, PG_GETARG_INT64(1));
	SPI_finish();
	return (Datum) 0;
}

/* the elements of a one-dimensional (or empty) array argument; false when it has more dimensions */
static bool
array_elements(ArrayType *a, Oid type, Datum **values, bool **nulls, int *n)
{
	int16		len;
	bool		byval;
	char		align;

	if (ARR_NDIM(a) > 1)
		return false;
	get_typlenbyvalalign(type, &len, &byval, &align);
	deconstruct_array(a, type, len, byval, align, values, nulls, n);
	return true;
}

PG_FUNCTION_INFO_V1(syncular_realtime_fanout_arrays);

/*
 * syncular.realtime_fanout_arrays(partition text, commit_seq bigint, conn_ids bigint[],
 * cursors bigint[], registrations text[]): realtime_fanout with the i-th elements of the three
 * arrays as the i-th connection ({conn, cursor, registration}; error details count it from 0, as
 * the jsonb signature's do).  The registration texts go through this backend's cache of parsed
 * registrations (fanout_regs.c), so a gateway sending the same text each commit parses it once.
 */
Datum
syncular_realtime_fanout_arrays(PG_FUNCTION_ARGS)
{
	static const char *const names[3] = {"conn_ids", "cursors", "registrations"};
	Oid			types[3] = {INT8OID, INT8OID, TEXTOID};
	Datum	   *values[3];
	bool	   *nulls[3];
	int			n[3];
	Fanout		f;
	RtConn	   *conns;

	fanout_begin(fcinfo, &f, "partition, commit_seq, conn_ids, cursors or registrations");
	for (int a = 0; a < 3; a++)
		if (!array_elements(PG_GETARG_ARRAYTYPE_P(2 + a), types[a], &values[a], &nulls[a], &n[a]))
			sync_raise("sync.invalid_request", "realtime_fanout: an array argument has more than one dimension",
					   psprintf("{\"argument\": \"%s\"}", names[a]));
	if (n[1] != n[0] || n[2] != n[0])
		sync_raise("sync.invalid_request",
				   "realtime_fanout: conn_ids, cursors and registrations differ in length",
				   psprintf("{\"conn_ids\": %d, \"cursors\": %d, \"registrations\": %d}",
							n[0], n[1], n[2]));
	fanout_connect(fcinfo, &f);
	sync_fanout_regs_begin(f.schema);

	/* every element is validated before anything is answered */
	conns = palloc0(sizeof(RtConn) * Max(n[0], 1));
	for (int i = 0; i < n[0]; i++)
	{
		RtConn	   *c = &conns[i];
		text	   *reg;

		c->index = i;
		if (nulls[0][i])
			malformed(i, "conn");
		c->conn = safe_int(DatumGetInt64(values[0][i]), i, "conn");
		if (nulls[1][i])
			malformed(i, "cursor");
		c->cursor = safe_int(DatumGetInt64(values[1][i]), i, "cursor");
		if (nulls[2][i])
			malformed(i, "registration");
		reg = DatumGetTextPP(values[2][i]);
		set_reg(c, sync_fanout_reg_text(f.schema, VARDATA_ANY(reg), VARSIZE_ANY_EXHDR(reg),
										f.partition, i));
	}

	fanout_run((ReturnSetInfo *) fcinfo->resultinfo, &f, conns, n[0], PG_GETARG_INT64(1));
	SPI_finish();
	return (Datum) 0;
}
