/*
 * fanout.c — commit wake-ups to realtime sockets (SPEC §8.2, §8.3).
 *
 * Wake-ups arrive as NOTIFY syncular_commit with payload base64url(partition) ":" commitSeq
 * (fanout_on_notify), or from the ring of syncular.wait_commits (fanout_on_commit; pool.c runs
 * the waiter, docs/realtime.md "Commit wake-ups").  For each partition this gateway holds sockets
 * on, the syncular.realtime_fanout_arrays calls of one wake-up (batches of --fanout-batch
 * sockets, run side by side: run_fanout) name every idle socket (id, delivered cursor, the
 * registration text realtime_connect answered: the same text every commit, so the database
 * parses it once per backend, src/fanout_regs.c); the extension answers each one's delta bytes
 * or wake-up reason, computed with the same scope rules as a pull.  One wake-up's calls per partition are in flight at a time: wake-ups that
 * arrive meanwhile coalesce into one follow-up wake-up at the highest sequence.  Sockets over
 * the unacked-delta budget, and sockets behind (§8.2: at connect, or since a wake-up, until an
 * ack or a round reaches that head) get a catchup-required wake-up from the gateway itself,
 * never a gap-bridging delta (the reference keeps no replay buffer; SDK state machines expect
 * the wake-ups).  Sockets with a socket round in flight get nothing until the round's
 * re-registration decides (§8.7, ws.c).  When the ring reports wake-ups lost, every
 * partition gets one wake-up at GW_SEQ_HEAD: realtime_fanout covers (cursor, min(seq, the
 * partition's max commit_seq)], so its calls deliver whatever the lost wake-ups would have.
 */
#include "ws.h"

#include "pgarray.h"

#include <endian.h>
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

static WsPart *parts;

WsPart *
fanout_parts(void)
{
	return parts;
}

bool
fanout_running(void)
{
	for (WsPart *p = parts; p; p = p->next)
		if (p->fanout_calls > 0)
			return true;
	return false;
}

WsPart *
fanout_join(Sock *s, const char *partition)
{
	WsPart *p;

	for (p = parts; p; p = p->next)
		if (strcmp(p->name, partition) == 0)
			break;
	if (!p)
	{
		if (!(p = calloc(1, sizeof(WsPart))) || !(p->name = strdup(partition)))
		{
			free(p);
			return NULL;
		}
		p->next = parts;
		parts = p;
	}
	s->pnext = p->socks;
	p->socks = s;
	p->nsocks++;
	s->part = p;
	return p;
}

/* drop a partition entry without sockets, unless a fanout call still points to it */
static void
part_maybe_free(WsPart *p)
{
	if (p->nsocks > 0 || p->fanout_calls > 0)
		return;
	for (WsPart **pp = &parts; *pp; pp = &(*pp)->next)
		if (*pp == p)
		{
			*pp = p->next;
			break;
		}
	free(p->name);
	free(p);
}

void
fanout_leave(Sock *s)
{
	WsPart *p = s->part;

	if (!p)
		return;
	for (Sock **pp = &p->socks; *pp; pp = &(*pp)->pnext)
		if (*pp == s)
		{
			*pp = s->pnext;
			p->nsocks--;
			break;
		}
	s->part = NULL;
	s->pnext = NULL;
	part_maybe_free(p);
}

/* base64url without padding -> bytes; -1 on a bad character */
static int
b64url_decode(const char *in, size_t n, char *out, size_t cap)
{
	uint32_t acc = 0;
	int bits = 0;
	size_t o = 0;

	for (size_t i = 0; i < n; i++)
	{
		char c = in[i];
		int v = c >= 'A' && c <= 'Z' ? c - 'A' : c >= 'a' && c <= 'z' ? c - 'a' + 26
			: c >= '0' && c <= '9' ? c - '0' + 52 : c == '-' ? 62 : c == '_' ? 63 : -1;

		if (v < 0)
			return -1;
		acc = acc << 6 | (uint32_t) v;
		bits += 6;
		if (bits >= 8)
		{
			bits -= 8;
			if (o + 1 >= cap)
				return -1;
			out[o++] = (char) (acc >> bits & 0xff);
		}
	}
	out[o] = '\0';
	return (int) o;
}

static void run_fanout(WsPart *p, int64_t seq);

/* a fanout call up to the partition's current head (a resynchronization) */
#define GW_SEQ_HEAD INT64_MAX

static int64_t
be64(const char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return (int64_t) be64toh(v);
}

/*
 * The socket of a result row.  Rows come back in input order, which is the order of p->socks
 * when the call was made; since then sockets may have joined (at the head) or left, but the
 * others kept their order.  So the search resumes after the previous row's socket (*from):
 * linear over the whole answer instead of per row; a socket that left costs one scan.
 */
static Sock *
find_sock(WsPart *p, uint64_t id, Sock **from)
{
	for (Sock *s = *from ? *from : p->socks; s; s = s->pnext)
		if (s->id == id)
		{
			*from = s->pnext;
			return s;
		}
	for (Sock *s = p->socks; s; s = s->pnext)	/* out of order: a full scan */
		if (s->id == id)
			return s;
	return NULL;
}

static void
apply_row(WsPart *p, PGresult *res, int row, int64_t latest, Sock **from)
{
	Sock *s;
	const char *action;

	if (PQgetisnull(res, row, 0) || PQgetlength(res, row, 0) != 8)
		return;
	if (!(s = find_sock(p, (uint64_t) be64(PQgetvalue(res, row, 0)), from)) || s->st != WS_OPEN)
		return;                 /* closed meanwhile */
	action = PQgetvalue(res, row, 1);
	if (s->round_busy || s->reregistering)
	{
		/* a round began meanwhile: its end decides (§8.7, after_round_registration) */
		if (strcmp(action, "none") != 0 && latest > s->round_missed)
			s->round_missed = latest;
		return;
	}
	if (gw_cfg.verbose)
		gw_log("fanout %s: %s %s (%d bytes, queued %zu)", s->client, action,
			   PQgetisnull(res, row, 2) ? "" : PQgetvalue(res, row, 2), PQgetlength(res, row, 3), s->qbytes);
	if (strcmp(action, "delta") == 0)
	{
		int64_t next = PQgetlength(res, row, 4) == 8 ? be64(PQgetvalue(res, row, 4)) : s->cursor;

		if (next <= s->cursor)
			return;             /* a later call already delivered this window */
		if (ws_send_binary(s, 0x00, (const uint8_t *) PQgetvalue(res, row, 3),
						   (size_t) PQgetlength(res, row, 3), true))
		{
			s->cursor = next;
			s->last_delta_cursor = next;
			s->unacked++;
			gw_metrics_delta(p->notify_us[0]);
		}
		else
			/* §8.2 flow control: over the message size, or the socket is not draining */
			ws_send_wake(s, latest, (size_t) PQgetlength(res, row, 3) + 1 > gw_cfg.ws_max_message
						 ? "delta-too-large" : "catchup-required");
	}
	else if (strcmp(action, "wake") == 0)
		ws_send_wake(s, latest, PQgetisnull(res, row, 2) ? "catchup-required" : PQgetvalue(res, row, 2));
	else if (!PQgetisnull(res, row, 4) && PQgetlength(res, row, 4) == 8)
	{
		int64_t next = be64(PQgetvalue(res, row, 4));

		if (next > s->cursor)
			s->cursor = next;
	}
}

static void
fanout_done(GwJob *job, PGresult *res, const char *err)
{
	WsPart *p = job->user;
	int64_t seq = p->seen_seq;

	p->fanout_calls--;
	if (gw_cfg.verbose)
		gw_log("realtime_fanout for %d socket(s) of a partition: %lld ms", res ? PQntuples(res) : 0,
			   (long long) (ws_now_ms() - p->fanout_started_ms));
	if (!res || PQresultStatus(res) != PGRES_TUPLES_OK)
		gw_log("realtime_fanout on a partition failed: %s", res ? PQresultErrorMessage(res) : err ? err : "?");
	else
	{
		Sock *from = NULL;

		for (int i = 0; i < PQntuples(res); i++)
			apply_row(p, res, i, seq, &from);
	}
	if (p->fanout_calls > 0)
		return;                 /* the other batches of this wake-up still run */
	if (p->pending_seq > 0)
	{
		int64_t next = p->pending_seq;

		p->pending_seq = 0;
		gw_metrics_notify_next(p->notify_us);
		run_fanout(p, next);
	}
	else
		part_maybe_free(p);     /* it may have lost its last socket while the call ran */
}

/*
 * One call's connections as the three array parameters of syncular.realtime_fanout_arrays, in
 * PostgreSQL's binary array format (pgarray.c), so that the registration texts travel as they
 * are, with nothing to escape.
 */
typedef struct Batch
{
	GwArray ids;                /* bigint[] of socket ids */
	GwArray cursors;            /* bigint[] of delivered cursors */
	GwArray regs;               /* text[] of registration texts */
} Batch;

static void
batch_start(Batch *bt)
{
	gw_array_start(&bt->ids, GW_OID_INT8);
	gw_array_start(&bt->cursors, GW_OID_INT8);
	gw_array_start(&bt->regs, GW_OID_TEXT);
}

static void
batch_free(Batch *bt)
{
	gw_array_free(&bt->ids);
	gw_array_free(&bt->cursors);
	gw_array_free(&bt->regs);
}

static void
batch_add(Batch *bt, const Sock *s)
{
	gw_array_int8(&bt->ids, (int64_t) s->id);
	gw_array_int8(&bt->cursors, s->cursor);
	gw_array_text(&bt->regs, s->registration_text, strlen(s->registration_text));
}

/* one realtime_fanout_arrays call for the connections of bt (freed) */
static void
submit_batch(WsPart *p, int64_t seq, Batch *bt, int prefer)
{
	char seqtxt[24];
	GwJob *j;

	if (!gw_array_finish(&bt->ids) || !gw_array_finish(&bt->cursors) ||
		!gw_array_finish(&bt->regs) ||
		!(j = gw_job_new("SELECT conn, action, reason, body, next_cursor "
						 "FROM syncular.realtime_fanout_arrays($1, $2::bigint, $3::bigint[], "
						 "$4::bigint[], $5::text[])", fanout_done, p)))
	{
		batch_free(bt);
		return;
	}
	j->prepare = true;
	snprintf(seqtxt, sizeof(seqtxt), "%lld", (long long) seq);
	gw_job_param(j, p->name, (int) strlen(p->name), 0, true);
	gw_job_param(j, seqtxt, (int) strlen(seqtxt), 0, true);
	/* the buffers are handed over (freed with the job) */
	gw_array_param(j, &bt->ids);
	gw_array_param(j, &bt->cursors);
	gw_array_param(j, &bt->regs);
	j->prefer = prefer;
	if (gw_pool_submit(j))
		p->fanout_calls++;
	else
		gw_log("realtime fanout skipped: the round queue is full");
}

/* the most calls one wake-up may take, and the connection slots they prefer: half the pool */
static int
fanout_slots(void)
{
	return gw_cfg.pool / 2 > 1 ? gw_cfg.pool / 2 : 1;
}

/*
 * How many calls one wake-up of p takes: one per --fanout-batch sockets, at most fanout_slots
 * (larger calls past that), so rounds keep connections.
 */
static int
fanout_ncalls(int nsocks)
{
	int max = fanout_slots();
	int n = (nsocks + gw_cfg.fanout_batch - 1) / gw_cfg.fanout_batch;

	return n < 1 ? 1 : n > max ? max : n;
}

/*
 * The pool connection slot of socket (or call) `id` of `partition`: id modulo fanout_slots,
 * shifted by the partition's hash (FNV-1a) so that partitions spread over the slots.  It
 * depends on neither the socket count nor the number of calls, so a socket's realtime_connect,
 * sent while its partition's sockets still connect, prefers the slot its fanout call will.  The
 * slots are the lower half of the pool, which jobs without a preference take last (pool.c).
 */
static int
fanout_slot(const char *partition, uint64_t id)
{
	uint32_t h = 2166136261u;

	for (const unsigned char *c = (const unsigned char *) partition; *c; c++)
		h = (h ^ *c) * 16777619u;
	return (int) ((h + id % (uint64_t) fanout_slots()) % (uint32_t) fanout_slots());
}

int
fanout_prefer(const Sock *s)
{
	return fanout_slot(s->who.partition, s->id);
}

/*
 * The idle sockets of p in fanout_ncalls calls, all sent at once: the pool runs them on as many
 * connections (each on its fanout_slot when that is free), so the database computes calls side
 * by side and each call's sockets get their deltas as soon as that call answers, while later
 * calls still run (the last socket waits for its call, not for the whole partition).  A socket
 * is in one call per wake-up, and the next wake-up's calls start only when all of these
 * answered, so each socket still receives its deltas in commit order.
 */
static void
run_fanout(WsPart *p, int64_t seq)
{
	Batch one;
	int ncalls = fanout_ncalls(p->nsocks);
	Batch *bts = ncalls > 1 ? calloc((size_t) ncalls, sizeof(Batch)) : NULL;

	if (!bts)
	{
		ncalls = 1;             /* out of memory: one call, no preference lost beyond warmth */
		bts = &one;
	}
	for (int k = 0; k < ncalls; k++)
		batch_start(&bts[k]);
	p->fanout_started_ms = ws_now_ms();
	for (Sock *s = p->socks; s; s = s->pnext)
	{
		if (s->st != WS_OPEN || !s->registration_text)
			continue;
		if (s->round_busy || s->reregistering)
		{
			/* §8.7: nothing while the round runs; its end owes the wake-up (ws.c) */
			if (seq > s->round_missed)
				s->round_missed = seq;
			continue;
		}
		if (s->unacked >= gw_cfg.ws_max_unacked || s->cursor < s->head_needed)
		{
			/* §8.2 flow control, or a socket behind (at connect, or since a wake-up): no delta
			 * that bridges its gap, a coalescible wake-up until an ack or a pull catches up */
			if (seq > s->cursor)
			{
				if (gw_cfg.verbose)
					gw_log("fanout %s: wake catchup-required (%s, queued %zu)", s->client,
						   s->cursor < s->head_needed ? "behind" : "unacked", s->qbytes);
				ws_send_wake(s, seq != GW_SEQ_HEAD ? seq : p->seen_seq > s->cursor ? p->seen_seq : s->cursor,
							 "catchup-required");
			}
			continue;
		}
		/* the call of the socket's slot: each call holds the sockets of one slot or more, and
		 * prefers the first one's connection (the only one when the calls are fanout_slots) */
		batch_add(&bts[(s->id % (uint64_t) fanout_slots()) % (uint64_t) ncalls], s);
	}
	for (int k = 0; k < ncalls; k++)
	{
		if (bts[k].ids.n > 0)
			submit_batch(p, seq, &bts[k], fanout_slot(p->name, (uint64_t) k));
		else
			batch_free(&bts[k]);
	}
	if (bts != &one)
		free(bts);
}

/* one wake-up: partition and commitSeq, or partition NULL when wake-ups were lost */
void
fanout_on_commit(const char *part, int64_t seq)
{
	gw_watch_on_commit(part, seq);  /* live query watches (REMOTE.md 6): one rerun call per partition */
	for (WsPart *p = parts; p; p = p->next)
	{
		if (part && strcmp(p->name, part) != 0)
			continue;
		if (part && seq > p->seen_seq)
			p->seen_seq = seq;
		gw_metrics_notify(p->notify_us, p->fanout_calls > 0);
		if (!part)
			seq = GW_SEQ_HEAD;	/* resynchronize every partition */
		if (p->fanout_calls > 0)
		{
			if (seq > p->pending_seq)
				p->pending_seq = seq;
		}
		else
			run_fanout(p, seq);
		if (part)
			return;
	}
}

void
fanout_on_notify(const char *channel, const char *payload)
{
	const char *colon;
	char part[1024];
	char *end;
	long long seq;

	if (payload == NULL)
	{
		/* a listen connection came back: whatever was committed meanwhile is unknown here */
		gw_watch_on_commit(NULL, 0);    /* every live query watch may have changed */
		for (WsPart *p = parts; p; p = p->next)
			for (Sock *s = p->socks; s; s = s->pnext)
				if (s->st == WS_OPEN && s->registration_text)
					ws_send_wake(s, p->seen_seq > s->cursor ? p->seen_seq : s->cursor, "catchup-required");
		return;
	}
	if (strcmp(channel, "syncular_commit") != 0 || !(colon = strrchr(payload, ':')))
		return;
	seq = strtoll(colon + 1, &end, 10);
	if (*end || seq <= 0 || b64url_decode(payload, (size_t) (colon - payload), part, sizeof(part)) < 0)
		return;
	fanout_on_commit(part, seq);
}
