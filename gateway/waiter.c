/*
 * waiter.c — the commit wake-up ring's waiter loop (docs/realtime.md "Commit wake-ups", SPEC
 * §8.2): syncular.wait_commits(position, WAIT_MS) on a connection of its own (a backend inside
 * a long statement receives no NOTIFY), the position kept across calls and reconnects, each
 * answer's commits handed to the fanout, "lost" (the ring moved past the position) handed on
 * as a resynchronization of every partition.
 *
 * While nothing consumes wake-ups (no realtime socket, watch or fanout call: the demand
 * callback), the next call waits IDLE_WAIT_US after an answer and then takes that time's
 * commits in one answer, instead of one call, one database wake-up and one loop turn per
 * commit; a WebSocket upgrade ends the wait at once (gw_waiter_resume), from the kept position,
 * so no commit after it goes unseen.  The pool owns the connection and passes its send and
 * readiness as callbacks: calls go down (pool.c -> waiter.c).
 */
#include "waiter.h"

#include <libpq-fe.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* milliseconds one wait_commits call sleeps when there is nothing to report */
#define WAIT_MS "5000"
/* microseconds between an answer and the next call while nothing consumes wake-ups (the ring
 * holds 4,096 wake-ups) */
#define IDLE_WAIT_US (250 * 1000)

static GwCommitFn commit_fn;
static GwDemandFn demand_fn;    /* NULL: wake-ups are always wanted */
static unsigned long long calls;
static unsigned long long lost;

static bool
wanted(void)
{
	return !demand_fn || demand_fn();
}

static void
retry_cb(GwTimer *t)
{
	GwWaiter *w = gw_container_of(t, GwWaiter, retry);

	if (w->ready(w->conn))
		gw_waiter_next(w);
}

/* one answer's rows: commits to the fanout, the position kept */
static void
take_rows(GwWaiter *w, PGresult *res)
{
	for (int i = 0; i < PQntuples(res); i++)
	{
		const char *kind = PQgetvalue(res, i, 0);

		if (strcmp(kind, "commit") == 0)
		{
			if (commit_fn && !PQgetisnull(res, i, 2))
				commit_fn(PQgetvalue(res, i, 2), strtoll(PQgetvalue(res, i, 3), NULL, 10));
			continue;
		}
		if (strcmp(kind, "lost") == 0)
		{
			/* while nothing consumed wake-ups, nobody missed one: no log, no count */
			if (wanted())
			{
				gw_log("commit wake-ups were lost%s%s (the ring moved past this gateway's position): "
					   "resynchronizing every partition", w->shard ? " on shard " : "",
					   w->shard ? w->shard : "");
				lost++;
			}
			if (commit_fn)
				commit_fn(NULL, 0);
		}
		snprintf(w->pos, sizeof(w->pos), "%s", PQgetvalue(res, i, 1));
		w->have_pos = true;
	}
}

static void
call_done(GwJob *job, PGresult *res, const char *err)
{
	GwWaiter *w = job->user;
	const char *state;

	(void) err;
	if (!res)
		return;                 /* the connection died: the position stays for the next one */
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
	{
		state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
		if (state && strcmp(state, "57014") == 0)
		{
			gw_waiter_next(w);  /* canceled or statement_timeout: nothing is lost, ask again */
			return;
		}
		if (!w->warned)
			gw_log("syncular.wait_commits%s%s failed (retrying every second, logged once): %s",
				   w->shard ? " on shard " : "", w->shard ? w->shard : "", PQresultErrorMessage(res));
		w->warned = true;
		gw_timer_after(&w->retry, retry_cb, 1000 * 1000);
		return;
	}
	w->warned = false;
	take_rows(w, res);
	if (!wanted())
	{
		w->idle = true;         /* gw_waiter_resume calls at once when a consumer comes */
		gw_timer_after(&w->retry, retry_cb, IDLE_WAIT_US);
		return;
	}
	gw_waiter_next(w);
}

void
gw_waiter_next(GwWaiter *w)
{
	GwJob *j;

	w->idle = false;
	j = gw_job_new("SELECT kind, position, partition, commit_seq "
				   "FROM syncular.wait_commits($1::bigint, $2::integer)", call_done, w);
	if (!j)
	{
		gw_timer_after(&w->retry, retry_cb, 1000 * 1000);
		return;
	}
	j->result_format = 0;
	gw_job_param(j, w->have_pos ? w->pos : NULL, w->have_pos ? (int) strlen(w->pos) : 0, 0, false);
	gw_job_param(j, WAIT_MS, (int) strlen(WAIT_MS), 0, false);
	calls++;
	(void) w->send(w->conn, j);
}

void
gw_waiter_resume(GwWaiter *w)
{
	if (!w->idle)
		return;                 /* a call is in flight (or a failure's retry is due) */
	gw_timer_cancel(&w->retry);
	w->idle = false;
	if (w->ready(w->conn))
		gw_waiter_next(w);
}

void
gw_waiter_cancel(GwWaiter *w)
{
	gw_timer_cancel(&w->retry);
}

void
gw_waiter_set_commit(GwCommitFn fn)
{
	commit_fn = fn;
}

void
gw_waiter_set_demand(GwDemandFn fn)
{
	demand_fn = fn;
}

unsigned long long
gw_waiter_calls(void)
{
	return calls;
}

unsigned long long
gw_waiter_lost(void)
{
	return lost;
}
