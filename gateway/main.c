/*
 * main.c — syncular-gateway: startup checks, the libwebsockets context, signals and drain.
 *
 * Startup refuses (exit 1, one clear line on stderr) when the database is unreachable, the
 * syncular extension is not installed in it, or its version differs from GW_EXTVERSION, the
 * version this gateway was built with (the Makefile's EXTVERSION).
 * SIGTERM/SIGINT drain: new requests get 503, in-flight rounds finish (up to --drain seconds),
 * every socket gets a close frame (1001 going away), then the process exits 0.
 */
#include "gateway.h"

#include <libpq-fe.h>
#include <libwebsockets.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

size_t gw_http_sess_size(void);
size_t gw_ws_sess_size(void);

volatile int gw_draining;
static volatile sig_atomic_t got_signal;
struct lws_context *gw_ctx;

void
gw_log(const char *fmt, ...)
{
	va_list ap;
	struct timespec ts;
	struct tm tm;
	char when[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(stderr, "%s.%03ldZ syncular-gateway: ", when, ts.tv_nsec / 1000000);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* protocols[0] serves HTTP and the realtime WebSocket; the pool's raw fds have their own */
static int
main_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
	switch (reason)
	{
		case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
		case LWS_CALLBACK_ESTABLISHED:
		case LWS_CALLBACK_RECEIVE:
		case LWS_CALLBACK_SERVER_WRITEABLE:
		case LWS_CALLBACK_CLOSED:
		case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
			return gw_ws_callback(wsi, (int) reason, user, in, len);
		default:
			return gw_http_callback(wsi, (int) reason, user, in, len);
	}
}

static int
pg_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
	return gw_pool_callback(wsi, (int) reason, user, in, len);
}

static struct lws_protocols protocols[] = {
	{"syncular", main_callback, 0, 0, 0, NULL, 0},
	{"syncular-pg", pg_callback, 0, 0, 0, NULL, 0},
	{NULL, NULL, 0, 0, 0, NULL, 0}
};

/* while draining, wake the loop often enough to notice the end or the deadline */
static lws_sorted_usec_list_t drain_tick;
static void
drain_tick_cb(lws_sorted_usec_list_t *sul)
{
	lws_sul_schedule(gw_ctx, 0, &drain_tick, drain_tick_cb, 100 * 1000);
}

static void
on_signal(int sig)
{
	(void) sig;
	got_signal = 1;
	if (gw_ctx)
		lws_cancel_service(gw_ctx);
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

int
main(int argc, char **argv)
{
	struct lws_context_creation_info info;
	struct lws_vhost *vh;
	static lws_retry_bo_t retry;
	int rc;
	time_t drain_deadline = 0;

	if ((rc = gw_config_load(argc, argv)) != 0)
		return rc == 1 ? 0 : 2;
	if (gw_auth_init() != 0 || startup_checks() != 0)
		return 1;
	lws_set_log_level(gw_cfg.verbose ? (LLL_ERR | LLL_WARN | LLL_NOTICE) : LLL_ERR, NULL);

	protocols[0].per_session_data_size = gw_http_sess_size() > gw_ws_sess_size()
		? gw_http_sess_size() : gw_ws_sess_size();
	/* lws allocates this per WebSocket: small keeps idle sockets cheap; larger messages arrive
	 * in fragments that ws.c assembles up to --ws-max-message */
	protocols[0].rx_buffer_size = 4096;
	memset(&info, 0, sizeof(info));
	info.port = gw_cfg.listen_port;
	info.iface = gw_cfg.listen_host;
	info.protocols = protocols;
	info.options = LWS_SERVER_OPTION_DISABLE_IPV6 * (strchr(gw_cfg.listen_host, ':') == NULL) |
		LWS_SERVER_OPTION_VALIDATE_UTF8;
	info.timeout_secs = 30;
	info.max_http_header_data = 8192;
	info.ka_time = 0;
	info.vhost_name = "syncular";
	/* WebSocket liveness: ping after --heartbeat idle seconds, hang up after --idle-timeout */
	retry.secs_since_valid_ping = (uint16_t) (gw_cfg.heartbeat_s > 65535 ? 65535 : gw_cfg.heartbeat_s);
	retry.secs_since_valid_hangup = (uint16_t) (gw_cfg.idle_timeout_s > 65535 ? 65535 : gw_cfg.idle_timeout_s);
	info.retry_and_idle_policy = &retry;
	gw_ctx = lws_create_context(&info);
	if (!gw_ctx)
	{
		fprintf(stderr, "syncular-gateway: cannot listen on %s:%d\n", gw_cfg.listen_host, gw_cfg.listen_port);
		return 1;
	}
	vh = lws_get_vhost_by_name(gw_ctx, "syncular");
	if (!vh || gw_pool_init(gw_ctx, vh) != 0)
	{
		fprintf(stderr, "syncular-gateway: cannot start the database pool\n");
		lws_context_destroy(gw_ctx);
		return 1;
	}
	gw_ws_init(gw_ctx);
	gw_shards_init(gw_ctx);
	gw_limits_init(gw_ctx);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGPIPE, SIG_IGN);
	gw_log("listening on http://%s:%d%s (pool %d, auth %s, syncular %s, max body %zu%s, inflight budget %zu)",
		   gw_cfg.listen_host, gw_cfg.listen_port, gw_cfg.mount, gw_cfg.pool,
		   gw_cfg.auth_none ? "NONE" : gw_auth_is_jwt() ? "jwt" : "sql",
		   GW_EXTVERSION, gw_cfg.max_body, gw_cfg.max_body_set ? "" : " from the database",
		   gw_cfg.max_inflight_bytes);
	if (gw_cfg.auth_none)
		gw_log("WARNING: --auth none: NO AUTHENTICATION. Every request is actor \"%s\" in partition "
			   "\"%s\". For development only; never expose this gateway.", gw_cfg.dev_actor,
			   gw_cfg.partition);
	if (gw_cfg.router)
		gw_log("database is a syncular_router: commit wake-ups come from every shard");

	for (;;)
	{
		if (lws_service(gw_ctx, 0) < 0)
			break;
		if (got_signal && !gw_draining)
		{
			gw_draining = 1;
			drain_deadline = time(NULL) + gw_cfg.drain_s;
			gw_log("draining: %d request(s) in flight, %d socket(s)", gw_http_inflight(), gw_ws_count());
			gw_ws_drain();
			drain_tick_cb(&drain_tick);
		}
		if (gw_draining && ((gw_http_inflight() == 0 && gw_ws_count() == 0) || time(NULL) >= drain_deadline))
			break;
	}
	gw_log("stopped (%d request(s) still in flight)", gw_http_inflight());
	lws_sul_cancel(&drain_tick);
	gw_shards_shutdown();
	gw_pool_shutdown();
	lws_context_destroy(gw_ctx);
	return 0;
}
