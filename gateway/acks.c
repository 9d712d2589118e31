/*
 * acks.c — realtime acks (SPEC §8.2; docs/realtime.md §3) written in batches, in the background.
 *
 * An SDK acks every delta, so N sockets send N acks per commit.  One statement per ack put N
 * statements in front of the next fanout call and the next rounds, and one function call per
 * socket inside one statement still cost the database a plan execution per socket.  Instead
 * each socket keeps only its highest ack not yet written (the record keeps the maximum anyway:
 * cursor = GREATEST(cursor, n), so the highest of several acks is all that is left of them),
 * and every --ack-flush-ms the pending acks of the whole gateway go to the database in ONE
 * statement calling syncular.realtime_ack_many once per partition: one set-based UPDATE of
 * all of that partition's client records.  That statement is a background job
 * of the pool (pool.c): it is sent only when no round or fanout call waits for a connection,
 * and it waits while fanout calls run (defer_for_fanout).  At most one write is in flight;
 * acks that arrive meanwhile wait for the next one.
 *
 * A socket on the pending list is held (the caller of acks_note holds it when it is listed; this
 * file gives it back through the release callback ws.c sets: no call up), so its ack is written
 * after it closed, and
 * the drain (main.c) waits until nothing is pending: no ack a client sent is lost by a close
 * or a SIGTERM.  Partitions are written in name order, and realtime_ack_many updates a
 * partition's records in clientId order, so two gateways writing acks of the same clients lock
 * their records in the same order.
 */
#include "gateway.h"
#include "metrics.h"
#include "pgarray.h"
#include "ws.h"

#include <libpq-fe.h>
#include "loop.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* one syncular.realtime_ack_many call per partition of the batch (one set-based UPDATE each),
 * which checks every element as realtime_ack would (epoch, actor, range); the sum is what it
 * recorded, for the log only */
#define ACK_SQL \
	"SELECT coalesce(sum(syncular.realtime_ack_many(b.partition, b.actor_ids, b.client_ids, " \
	"b.cursors, b.log_epochs)), 0) FROM (SELECT a.partition, array_agg(a.actor_id) AS actor_ids, " \
	"array_agg(a.client_id) AS client_ids, array_agg(a.cursor) AS cursors, " \
	"array_agg(a.log_epoch) AS log_epochs " \
	"FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[]) " \
	"AS a(partition, actor_id, client_id, cursor, log_epoch) GROUP BY a.partition " \
	"ORDER BY a.partition) b"

/* the longest pending acks wait for running realtime_fanout calls (write_pending) */
#define ACK_DEFER_MAX_US 1000000

static Sock   *pending;         /* sockets with an ack not yet written */
static int     npending;
static bool    writing;         /* a write is in flight */
static bool    warned;          /* a failed write was logged (until one succeeds) */
static GwTimer flush_timer;
static int64_t deferred_us;     /* when the write started waiting for fanout calls, 0: not */

static void (*release_sock)(Sock *s);	/* ws.c's ws_release */

static void flush_cb(GwTimer *t);

void
acks_init(void (*release)(Sock *s))
{
	release_sock = release;
}

static void
arm(void)
{
	if (!flush_timer.armed && !writing && pending)
		gw_timer_after(&flush_timer, flush_cb, (int64_t) gw_cfg.ack_flush_ms * 1000);
}

bool
acks_note(Sock *s, int64_t cursor)
{
	if (s->ack_listed)
	{
		/* an ack sent under an older registration (a log epoch rotated since) is not mixed
		 * with this one: acks of another epoch are refused, so only the new one counts */
		if (strcmp(s->ack_epoch, s->log_epoch) != 0)
		{
			snprintf(s->ack_epoch, sizeof(s->ack_epoch), "%s", s->log_epoch);
			s->ack_pending = cursor;
		}
		else if (cursor > s->ack_pending)
			s->ack_pending = cursor;
		return false;
	}
	s->ack_pending = cursor;
	snprintf(s->ack_epoch, sizeof(s->ack_epoch), "%s", s->log_epoch);
	s->ack_listed = true;
	s->ack_next = pending;
	pending = s;
	npending++;
	arm();
	return true;
}

bool
gw_acks_busy(void)
{
	return pending != NULL || writing;
}

/* ---------------------------------------------------------------- the write */

static int
by_partition_client(const void *a, const void *b)
{
	const Sock *x = *(Sock *const *) a, *y = *(Sock *const *) b;
	int c = strcmp(x->who.partition, y->who.partition);

	return c ? c : strcmp(x->client, y->client);
}

static void
write_done(GwJob *job, PGresult *res, const char *err)
{
	(void) job;
	writing = false;
	if (!res || PQresultStatus(res) != PGRES_TUPLES_OK)
	{
		if (!warned && !gw_draining)
			gw_log("writing realtime acks failed (logged once until a write succeeds): %s",
				   res ? PQresultErrorMessage(res) : (err ? err : "no connection"));
		warned = true;
	}
	else
		warned = false;
	arm();
}

/*
 * While realtime_fanout calls run, the sockets of their later batches wait for deltas, and the
 * ack write would take the database's CPU from those calls (the acks of the first batches
 * arrive while the others still compute).  So a flush waits until no fanout call runs (SPEC
 * §8.2: bookkeeping never delays a delta), at most ACK_DEFER_MAX_US, so that a gateway whose
 * fanouts never pause still writes its acks; checked again every --ack-flush-ms (1 ms at
 * least: the loop does not spin while it waits).
 */
static bool
defer_for_fanout(void)
{
	int64_t now;

	if (!fanout_running())
	{
		deferred_us = 0;
		return false;
	}
	now = gw_loop_now_us();
	if (!deferred_us)
		deferred_us = now;
	if (now - deferred_us >= ACK_DEFER_MAX_US)
	{
		deferred_us = 0;
		return false;
	}
	gw_timer_after(&flush_timer, flush_cb,
				   (int64_t) (gw_cfg.ack_flush_ms > 1 ? gw_cfg.ack_flush_ms : 1) * 1000);
	return true;
}

/*
 * The pending acks as five array parameters of one statement, in PostgreSQL's binary array
 * format (pgarray.c, as fanout.c's): partition, actor and client ids and log epochs are client
 * bytes, passed as they are, never escaped into a literal.  The sockets are released.
 */
static void
write_pending(void)
{
	enum {PARTS, ACTORS, CLIENTS, CURSORS, EPOCHS, NCOLS};
	static const uint32_t types[NCOLS] = {GW_OID_TEXT, GW_OID_TEXT, GW_OID_TEXT, GW_OID_INT8,
										  GW_OID_TEXT};
	Sock **v;
	GwArray cols[NCOLS];
	GwJob *j;
	bool ok = true;
	int n = 0;

	if (!pending || writing)
		return;
	if (!(v = malloc(sizeof(Sock *) * (size_t) npending)))
	{
		arm();                  /* the next tick tries again */
		return;
	}
	for (Sock *s = pending; s; s = s->ack_next)
		v[n++] = s;
	pending = NULL;
	npending = 0;
	qsort(v, (size_t) n, sizeof(Sock *), by_partition_client);
	for (int c = 0; c < NCOLS; c++)
		gw_array_start(&cols[c], types[c]);
	for (int i = 0; i < n; i++)
	{
		Sock *s = v[i];

		gw_array_text(&cols[PARTS], s->who.partition, strlen(s->who.partition));
		gw_array_text(&cols[ACTORS], s->who.actor, strlen(s->who.actor));
		gw_array_text(&cols[CLIENTS], s->client, strlen(s->client));
		gw_array_int8(&cols[CURSORS], s->ack_pending);
		gw_array_text(&cols[EPOCHS], s->ack_epoch, strlen(s->ack_epoch));
		s->ack_listed = false;
		s->ack_next = NULL;
		release_sock(s);
	}
	free(v);
	for (int c = 0; c < NCOLS; c++)
		ok = gw_array_finish(&cols[c]) && ok;
	if (!ok || !(j = gw_job_new(ACK_SQL, write_done, NULL)))
	{
		for (int c = 0; c < NCOLS; c++)
			gw_array_free(&cols[c]);
		gw_log("writing realtime acks: out of memory, %d ack(s) dropped", n);
		return;
	}
	j->result_format = 0;
	j->prepare = true;
	for (int c = 0; c < NCOLS; c++)
		gw_array_param(j, &cols[c]);
	writing = true;
	gw_metrics_ack_write(n);
	gw_pool_submit_background(j);
}

static void
flush_cb(GwTimer *t)
{
	(void) t;
	if (pending && !writing && defer_for_fanout())
		return;
	write_pending();
}

void
gw_acks_flush_now(void)
{
	gw_timer_cancel(&flush_timer);
	write_pending();
}
