/*
 * limits.c — the default --max-body follows the database's syncular.max_request_bytes: the
 * gateway should not buffer a body the engine refuses anyway (it answers such a request 400
 * with maxRequestBytes).  Read at start, and again whenever the pool has made a new round
 * connection (a restarted or re-pointed database may have another setting).  An explicit
 * --max-body is kept.  The setting exists in a session once the library is loaded, hence the
 * call of a C function of the extension in the same statement.
 */
#include "gateway.h"

#include <libpq-fe.h>
#include "loop.h"
#include <stdlib.h>
#include <string.h>

#define LIMITS_SQL "SELECT syncular.commit_wakeup_mode() IS NOT NULL, " \
	"pg_size_bytes(current_setting('syncular.max_request_bytes', true))"

static GwTimer tick;
static int seen_connects;
static bool asking;

static void
apply(PGresult *r)
{
	long long n;

	if (!r || PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1 || PQgetisnull(r, 0, 1))
		return;                 /* not readable (an older or router database): keep the value */
	n = strtoll(PQgetvalue(r, 0, 1), NULL, 10);
	if (n < 1024 || (size_t) n == gw_cfg.max_body)
		return;
	gw_log("--max-body follows syncular.max_request_bytes: %lld bytes", n);
	gw_cfg.max_body = (size_t) n;
}

void
gw_limits_startup(PGconn *conn)
{
	PGresult *r;

	if (gw_cfg.max_body_set)
		return;
	r = PQexecParams(conn, LIMITS_SQL, 0, NULL, NULL, NULL, NULL, 0);
	apply(r);
	PQclear(r);
}

static void
asked(GwJob *job, PGresult *res, const char *err)
{
	(void) job;
	(void) err;
	asking = false;
	apply(res);
}

static void
tick_cb(GwTimer *t)
{
	GwJob *j;

	if (!asking && gw_pool_connects() != seen_connects && (j = gw_job_new(LIMITS_SQL, asked, NULL)))
	{
		j->result_format = 0;
		j->user = &tick;        /* not NULL: the pool runs jobs whose requester is still there */
		if (gw_pool_submit(j))
		{
			seen_connects = gw_pool_connects();
			asking = true;
		}
	}
	gw_timer_after(&tick, tick_cb, 1000 * 1000);
}

void
gw_limits_init(void)
{
	if (gw_cfg.max_body_set)
		return;
	seen_connects = 0;
	gw_timer_after(&tick, tick_cb, 1000 * 1000);
}
