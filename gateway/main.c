/*
 * main.c — syncular-gateway: startup checks, the event loop (loop.c), signals and drain.
 *
 * Startup refuses (exit 1, one clear line on stderr) when the database is unreachable, the
 * syncular extension is not installed in it, or its version differs from GW_EXTVERSION, the
 * version this gateway was built with (the Makefile's EXTVERSION).
 * SIGTERM/SIGINT drain: new requests get 503, in-flight rounds finish (up to --drain seconds),
 * every socket gets a close frame (1001 going away), then the process exits 0.
 */
#include "gateway.h"
#include "loop.h"
#include "metrics.h"

#include <libpq-fe.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

volatile int gw_draining;
static volatile sig_atomic_t got_signal;

/* the loop waits at most this long, so a signal that arrives just before epoll_wait is seen */
#define TURN_MS 100

static void
on_signal(int sig)
{
	(void) sig;
	got_signal = 1;
}

/* the checks a gateway must pass before it listens */
/*
 * Without a JWT key the gateway authenticates with the SQL authenticator registered in the
 * database; with none registered every request would be 401, so it does not start at all
 * (--auth none is the explicit development opt-out).  0 when a request can be authenticated, or
 * when the gateway's role may not read the registration.
 */
static int
auth_possible(PGconn *c)
{
	PGresult *r;
	int rc;

	if (gw_auth_is_jwt())
		return 0;
	r = PQexec(c, gw_cfg.router
			   ? "SELECT authenticator IS NOT NULL FROM syncular.router_settings WHERE id = 1"
			   : "SELECT authenticator IS NOT NULL FROM syncular.sync_settings WHERE id = 1");
	/* a least-privilege gateway role (EXECUTE only) cannot read the settings: it cannot tell,
	 * and starts; requests then answer 401 as the authenticator (or its absence) decides */
	if (PQresultStatus(r) != PGRES_TUPLES_OK)
		rc = 0;
	else
		rc = PQntuples(r) == 1 && strcmp(PQgetvalue(r, 0, 0), "t") == 0 ? 0 : 1;
	if (rc != 0)
		fprintf(stderr, "syncular-gateway: no authentication is possible: no --jwt-secret or "
				"--jwt-public-key and no SQL authenticator registered in database \"%s\" (SELECT "
				"syncular.set_authenticator(...)); for a development setup without authentication "
				"use --auth none\n", PQdb(c));
	PQclear(r);
	return rc;
}

static int
startup_checks(void)
{
	PGconn *c = PQconnectdb(gw_cfg.db);
	PGresult *r;
	int rc = 1;

	if (PQstatus(c) != CONNECTION_OK)
	{
		fprintf(stderr, "syncular-gateway: cannot connect to the database (--db): %s",
				PQerrorMessage(c));
		goto out;
	}
	/* a syncular_router database (docs/scaling.md) serves the same functions, routed to shards */
	r = PQexec(c, "SELECT extname, extversion FROM pg_catalog.pg_extension "
			   "WHERE extname IN ('syncular', 'syncular_router') ORDER BY extname");
	if (PQresultStatus(r) != PGRES_TUPLES_OK)
		fprintf(stderr, "syncular-gateway: cannot read pg_extension: %s", PQresultErrorMessage(r));
	else if (PQntuples(r) == 0)
		fprintf(stderr, "syncular-gateway: the syncular extension is not installed in database \"%s\" "
				"(run CREATE EXTENSION syncular)\n", PQdb(c));
	else if (strcmp(PQgetvalue(r, 0, 1), GW_EXTVERSION) != 0)
		fprintf(stderr, "syncular-gateway: database \"%s\" has %s %s but this gateway was built for %s "
				"(ALTER EXTENSION %s UPDATE, or use the matching gateway)\n",
				PQdb(c), PQgetvalue(r, 0, 0), PQgetvalue(r, 0, 1), GW_EXTVERSION, PQgetvalue(r, 0, 0));
	else
	{
		gw_cfg.router = strcmp(PQgetvalue(r, 0, 0), "syncular_router") == 0;
		gw_limits_startup(c);
		rc = auth_possible(c);
	}
	PQclear(r);
out:
	PQfinish(c);
	return rc;
}

/* the HTTP layer's requests go to the routes, its upgrades to the realtime layer */
static const GwHttpHandlers handlers = {
	gw_route_start, gw_route_body, gw_route_body_done, gw_route_free,
	gw_ws_upgrade, gw_ws_upgraded, gw_ws_abandon
};

static void
log_start(void)
{
	gw_log("listening on http://%s:%d%s (pool %d, bootstrap rounds on %d of them, auth %s, syncular %s, "
		   "max body %zu%s, inflight budget %zu)",
		   gw_cfg.listen_host, gw_cfg.listen_port, gw_cfg.mount, gw_cfg.pool, gw_cfg.bootstrap_connections,
		   gw_cfg.auth_none ? "NONE" : gw_auth_is_jwt() ? "jwt" : "sql",
		   GW_EXTVERSION, gw_cfg.max_body, gw_cfg.max_body_set ? "" : " from the database",
		   gw_cfg.max_inflight_bytes);
	if (gw_cfg.auth_none)
		gw_log("WARNING: --auth none: NO AUTHENTICATION. Every request is actor \"%s\" in partition "
			   "\"%s\". For development only; never expose this gateway.", gw_cfg.dev_actor,
			   gw_cfg.partition);
	if (gw_cfg.router)
		gw_log("database is a syncular_router: commit wake-ups come from every shard");
}

/* the loop until a signal's drain ends: in-flight requests and sockets done, or --drain over */
static void
serve(void)
{
	time_t drain_deadline = 0;

	for (;;)
	{
		gw_loop_once(gw_http_timeout_ms(TURN_MS));
		gw_http_run();
		if (got_signal && !gw_draining)
		{
			gw_draining = 1;
			drain_deadline = time(NULL) + gw_cfg.drain_s;
			gw_log("draining: %d request(s) in flight, %d socket(s)", gw_http_inflight(), gw_ws_count());
			gw_ws_drain();
			gw_acks_flush_now();
		}
		/* the acks of closed sockets are written before the pool closes (SPEC §8.2) */
		if (gw_draining && ((gw_http_inflight() == 0 && gw_ws_count() == 0 && !gw_acks_busy()) ||
							time(NULL) >= drain_deadline))
			break;
	}
}

int
main(int argc, char **argv)
{
	int rc;

	if ((rc = gw_config_load(argc, argv)) != 0)
		return rc == 1 ? 0 : 2;
	if (gw_auth_init() != 0 || startup_checks() != 0)
		return 1;
	signal(SIGPIPE, SIG_IGN);
	if (gw_loop_init() != 0 || gw_http_start(&handlers) != 0)
	{
		fprintf(stderr, "syncular-gateway: cannot listen on %s:%d\n", gw_cfg.listen_host, gw_cfg.listen_port);
		return 1;
	}
	if (gw_pool_init() != 0)
	{
		fprintf(stderr, "syncular-gateway: cannot start the database pool\n");
		gw_http_stop();
		return 1;
	}
	if (gw_gzip_init() != 0)
	{
		fprintf(stderr, "syncular-gateway: cannot start the compression threads (--gzip-threads)\n");
		gw_pool_shutdown();
		gw_http_stop();
		return 1;
	}
	gw_metrics_set_group_commit_waiting(gw_gc_waiting);
	gw_ws_init();
	gw_shards_init();
	gw_limits_init();
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	log_start();
	serve();
	gw_log("stopped (%d request(s) still in flight)", gw_http_inflight());
	gw_shards_shutdown();
	gw_ws_shutdown();
	gw_http_stop();
	gw_gzip_shutdown();     /* after the requests: none waits for an answer any more */
	gw_pool_shutdown();
	gw_loop_shutdown();
	return 0;
}
