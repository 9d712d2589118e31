/*
 * routes.c — the HTTP routes of SPEC §1.1 under <mount>:
 *   POST /sync            one round per transaction through syncular.handle_http (JWT mode) or
 *                         syncular.handle_http_authenticated (SQL authenticator mode); the
 *                         gateway holds no protocol logic: status, content type and body are the
 *                         database's.  415 / 413 / 401 / gzip (§1.3) are decided here.
 *   GET  /healthz         process alive
 *   GET  /readyz          syncular.readiness() ready and a live pool connection
 *   GET  /metrics         Prometheus text (metrics.c); 404 with --metrics off
 *   PUT/GET /blobs/{id}   blobs.c (SPEC §5.9)
 *   GET  /segments/{id}   segments.c (SPEC §5.4, §5.5)
 *   POST /operations      operations.c (REMOTE.md §5)
 * Errors are JSON (§10.1) with catalogue statuses.  The HTTP layer (http.c) frames requests and
 * carries the answers.
 */
#include "gateway.h"
#include "metrics.h"
#include "parse.h"
#include "ssp.h"

#include <arpa/inet.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct GwRouteReq
{
	GwReq      *r;
	GwRoute     route;
	bool        in_body;        /* reading the POST /sync body */
	bool        too_large;
	int         gzip_in;
	bool        gzip_ok;        /* client accepts gzip */
	bool        gzip_always;    /* client refuses identity: compress below --gzip-min too */
	bool        metrics_wait;   /* waiting for the statistics scrape */
	GwIdentity  id;
	char       *ctype;
	char       *headers_json;   /* SQL authenticator mode */
	char       *query_json;
	char        path[512];
	uint8_t    *body;
	size_t      body_len, body_cap;
	size_t      held;           /* bytes of the memory budget (budget.c) held by this request */
	GwJob      *job;
	GwZJob     *gz;             /* the answer being compressed (compress.c) */
	GwBlob     *blob;           /* the blob routes (blobs.c) */
	GwSeg      *seg;            /* the segment route (segments.c) */
	GwOps      *ops;            /* the operations route (operations.c) */
};

typedef GwRouteReq RouteReq;

/* /metrics requests waiting for the one statistics query in flight */
#define MAX_METRICS_WAITERS 32
static RouteReq *metrics_waiters[MAX_METRICS_WAITERS];

void
gw_route_free(RouteReq *s)
{
	if (s->job)
		s->job->user = NULL;    /* the pool drops or ignores it */
	gw_gzip_cancel(s->gz);      /* its answer is dropped when the worker is done */
	if (s->metrics_wait)
		for (int i = 0; i < MAX_METRICS_WAITERS; i++)
			if (metrics_waiters[i] == s)
				metrics_waiters[i] = NULL;
	free(s->ctype);
	free(s->headers_json);
	free(s->query_json);
	free(s->body);
	gw_budget_give(s->held);
	gw_blob_free(s->blob);
	gw_seg_free(s->seg);
	gw_ops_free(s->ops);
	free(s);
}

/* the answer is held in the memory budget until the request ends (counted, never refused: the
 * work is done); free_fn NULL: body is malloc'd */
static void
respond_owned(RouteReq *s, int status, const char *type, const uint8_t *body, size_t len, bool gz,
			  void (*free_fn) (void *), void *free_cls)
{
	const char *sync_hdrs[] = {"Cache-Control", "no-store", "Vary", "Accept-Encoding",
		gz ? "Content-Encoding" : NULL, "gzip", NULL};
	const char *hdrs[] = {"Cache-Control", "no-store", NULL};
	const char *const *h = s->route == GW_ROUTE_SYNC ? sync_hdrs : hdrs;

	s->in_body = false;
	gw_budget_force(len);
	s->held += len;
	gw_metrics_http(s->route, status);
	if (gw_cfg.verbose)
		gw_log("%s -> %d (%zu bytes%s)", s->path, status, len, gz ? ", gzip" : "");
	if (free_fn)
		gw_req_answer_owned(s->r, status, type, body, len, h, free_fn, free_cls);
	else
		gw_req_answer(s->r, status, type, (uint8_t *) body, len, h);
}

static void
respond(RouteReq *s, int status, const char *type, uint8_t *body, size_t len, bool gz)
{
	respond_owned(s, status, type, body, len, gz, NULL, NULL);
}

static void
respond_error(RouteReq *s, const char *code, const char *message, int status_override)
{
	int status;
	char *j = gw_error_json(code, message, status_override, &status);

	respond(s, status, "application/json", (uint8_t *) j, j ? strlen(j) : 0, false);
}

static void
respond_json(RouteReq *s, int status, json_t *o)
{
	char *j = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);

	json_decref(o);
	respond(s, status, "application/json", (uint8_t *) j, j ? strlen(j) : 0, false);
}

/* ---- database answers ---- */

/* the gzip of an answer, back on the loop (compress.c) */
static void
gzip_done(void *owner, uint8_t *out, size_t outlen)
{
	RouteReq *s = owner;

	s->gz = NULL;
	if (!out)
		respond_error(s, "sync.internal_error", "out of memory", 0);
	else
		respond(s, 200, s->ctype, out, outlen, true);
}

static void
clear_result(void *res)
{
	PQclear(res);
}

/*
 * The body stays in the PGresult (taken from the pool, cleared once the answer was sent or
 * compressed): a bootstrap page is not copied out.  SPEC §1.3 lets a server answer gzip; a
 * small body (where it saves little) is sent as it is (--gzip-min), a larger one is compressed
 * by compress.c's worker threads while the loop serves other sockets; when their queue is full,
 * uncompressed.
 */
static void
answer_round(RouteReq *s, GwJob *job, PGresult *res, int status)
{
	const uint8_t *body = (const uint8_t *) PQgetvalue(res, 0, 2);
	size_t blen = (size_t) PQgetlength(res, 0, 2);

	gw_job_take_result(job);
	if (status == 200 && s->gzip_ok && (blen >= gw_cfg.gzip_min || s->gzip_always))
	{
		bool queued;

		s->gz = gw_gzip_submit(body, blen, clear_result, res, s->gzip_always, gzip_done, s, &queued);
		if (queued)
			return;
	}
	respond_owned(s, status, s->ctype, body, blen, false, clear_result, res);
}

static void
round_done(GwJob *job, PGresult *res, const char *err)
{
	RouteReq *s = job->user;
	int status;

	if (!s)
		return;
	s->job = NULL;
	if (!res)
	{
		gw_log("round failed: %s", err ? err : "unknown");
		respond_error(s, "sync.internal_error", "the database connection failed during the round; retry", 0);
		return;
	}
	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1 || PQgetlength(res, 0, 0) != 4)
	{
		/* not a catalogue answer (handle_http catches those): the text goes to our log only */
		gw_log("round failed: %s", PQresultErrorMessage(res));
		respond_error(s, "sync.internal_error", "internal server error", 0);
		return;
	}
	status = (int) ntohl(*(const uint32_t *) PQgetvalue(res, 0, 0));
	free(s->ctype);
	s->ctype = strndup(PQgetvalue(res, 0, 1), (size_t) PQgetlength(res, 0, 1));
	if (!s->ctype)
	{
		respond_error(s, "sync.internal_error", "out of memory", 0);
		return;
	}
	answer_round(s, job, res, status);
}

static void
readyz_done(GwJob *job, PGresult *res, const char *err)
{
	RouteReq *s = job->user;
	json_t *o, *r;
	json_error_t je;
	bool ready;

	if (!s)
		return;
	s->job = NULL;
	if (!res)
	{
		respond_json(s, 503, json_pack("{s:b, s:s}", "ready", 0, "reason", "database unreachable"));
		return;
	}
	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1)
	{
		/* the database answered, but the readiness call failed: most often a missing EXECUTE
		 * grant of the gateway role (docs/gateway.md); the operator reads why in the log */
		const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);

		gw_log("readyz: syncular.readiness() failed: %s", PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY)
			   ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : PQresStatus(PQresultStatus(res)));
		respond_json(s, 503, json_pack("{s:b, s:s, s:s}", "ready", 0, "reason", "readiness check failed",
									   "sqlstate", state ? state : ""));
		return;
	}
	r = json_loads(PQgetvalue(res, 0, 0), 0, &je);
	ready = r && json_is_true(json_object_get(r, "ready"));
	o = json_pack("{s:b, s:i, s:o}", "ready", ready, "poolLive", gw_pool_live(),
				  "readiness", r ? r : json_null());
	respond_json(s, ready ? 200 : 503, o);
}

/* j to the pool; with push_partition (a push round of a JWT partition) through group commit
 * (groupcommit.c), which waits while a push of that partition is in the database and then runs
 * the waiting ones together */
static void
submit_to(RouteReq *s, GwJob *j, const char *push_partition)
{
	if (!j)
	{
		respond_error(s, "sync.internal_error", "out of memory", 0);
		return;
	}
	s->job = j;
	s->in_body = false;
	if (!(push_partition ? gw_gc_submit(j, push_partition) : gw_pool_submit(j)))
	{
		s->job = NULL;
		respond_error(s, "sync.rate_limited", "too many rounds waiting for the database", 0);
	}
}

static void
submit(RouteReq *s, GwJob *j)
{
	submit_to(s, j, NULL);
}

/* Content-Encoding gzip (SPEC §1.3): the inflated body replaces the wire body, and holds the
 * budget instead of it; false when an answer was given */
static bool
inflate_body(RouteReq *s)
{
	uint8_t *out;
	size_t len;
	int rc = gw_gunzip(s->body, s->body_len, gw_cfg.max_body, &out, &len);

	if (rc == -1)
		respond_error(s, "sync.invalid_request", "request body is not a valid gzip stream", 0);
	else if (rc == -2)
		respond_error(s, "sync.invalid_request", "request body exceeds the size limit once inflated", 413);
	else if (rc != 0)
		respond_error(s, "sync.internal_error", "out of memory", 0);
	else if (!gw_budget_take(len))
	{
		free(out);
		respond_error(s, "sync.rate_limited", "the gateway's memory budget for request bodies is in use; retry", 503);
	}
	else
	{
		free(s->body);
		gw_budget_give(s->held);
		s->body = out;
		s->body_len = s->body_cap = len;
		s->held = len;
		return true;
	}
	return false;
}

/* the job takes the request body and the budget it holds: a queued round keeps counting after
 * its client went away, until the pool frees it */
static void
start_round(RouteReq *s)
{
	GwJob *j;

	if (s->gzip_in && !inflate_body(s))
		return;
	if (!s->body && !(s->body = malloc(1)))   /* an empty body is an empty bytea, not NULL */
	{
		respond_error(s, "sync.internal_error", "out of memory", 0);
		return;
	}
	if (gw_auth_is_jwt())
		j = gw_job_new("SELECT status, content_type, body FROM syncular.handle_http($1, $2, $3, $4)",
					   round_done, s);
	else
		j = gw_job_new("SELECT status, content_type, body FROM "
					   "syncular.handle_http_authenticated($1, 'POST', $2, $3::jsonb, $4::jsonb, $5)",
					   round_done, s);
	if (!j)
	{
		submit(s, NULL);
		return;
	}
	j->prepare = true;
	j->bootstrap = ssp_request_bootstraps((const uint8_t *) s->body, s->body_len);
	gw_job_param_take(j, s->body, (int) s->body_len, 1, s->held);
	s->body = NULL;
	s->body_len = s->body_cap = 0;
	s->held = 0;
	if (gw_auth_is_jwt())
	{
		gw_job_param(j, s->id.partition, (int) strlen(s->id.partition), 0, true);
		gw_job_param(j, s->id.actor, (int) strlen(s->id.actor), 0, true);
	}
	else
	{
		gw_job_param(j, s->path, (int) strlen(s->path), 0, true);
		gw_job_param(j, s->headers_json, (int) strlen(s->headers_json), 0, true);
		gw_job_param(j, s->query_json, (int) strlen(s->query_json), 0, true);
	}
	gw_job_param(j, s->ctype, (int) strlen(s->ctype), 0, true);
	submit_to(s, j, gw_auth_is_jwt() && ssp_request_pushes((const uint8_t *) j->values[0], (size_t) j->lengths[0])
			  ? s->id.partition : NULL);
}

static char *
hdr_dup(RouteReq *s, const char *name)
{
	const char *v = gw_req_header(s->r, name);

	return strdup(v ? v : "");
}

static void
on_sync(RouteReq *s)
{
	char *ae, *ce;
	const char *why;
	int rc;

	if (!gw_req_method_is(s->r, "POST"))
	{
		respond_error(s, "sync.invalid_request", "use POST for /sync", 405);
		return;
	}
	s->ctype = hdr_dup(s, "Content-Type");
	/* the content type is judged before authentication, as the reference adapter does */
	if (!s->ctype || !gw_content_type_ok(s->ctype))
	{
		gw_req_close_after(s->r);
		respond_error(s, "sync.invalid_request", "content type must be application/vnd.syncular.sync.v2", 415);
		return;
	}
	ce = hdr_dup(s, "Content-Encoding");
	s->gzip_in = gw_content_encoding(ce);
	free(ce);
	if (s->gzip_in < 0)
	{
		gw_req_close_after(s->r);
		respond_error(s, "sync.invalid_request", "unsupported Content-Encoding (identity or gzip)", 415);
		return;
	}
	ae = hdr_dup(s, "Accept-Encoding");
	s->gzip_ok = gw_accepts_gzip(ae);
	s->gzip_always = gw_refuses_identity(ae);
	free(ae);
	/* the declared length is checked and held before a byte is read */
	if ((rc = gw_budget_admit_body(gw_req_header(s->r, "Content-Length"), &s->held)) != 0)
	{
		gw_req_close_after(s->r);
		if (rc == 413)
			respond_error(s, "sync.invalid_request", "request body exceeds the size limit", 413);
		else
			respond_error(s, "sync.rate_limited", "the gateway's memory budget for request bodies is in use; retry", 503);
		return;
	}
	if (gw_auth_is_jwt())
	{
		if (gw_auth_jwt(s->r, &s->id, &why) != 0)
		{
			gw_req_close_after(s->r);
			respond_error(s, "sync.auth_required", why, 0);
			return;
		}
	}
	else
	{
		s->headers_json = gw_auth_headers_json(s->r);
		s->query_json = gw_auth_query_json(s->r);
		if (!s->headers_json || !s->query_json)
		{
			respond_error(s, "sync.internal_error", "out of memory", 0);
			return;
		}
	}
	s->in_body = true;          /* the round starts at the body's end, also for an empty one */
}

static void
on_body(RouteReq *s, const uint8_t *in, size_t len)
{
	if (!s->in_body || s->too_large)
		return;
	if (s->body_len + len > gw_cfg.max_body)
	{
		s->too_large = true;
		free(s->body);
		s->body = NULL;
		s->body_len = s->body_cap = 0;
		return;
	}
	if (s->body_len + len > s->body_cap)
	{
		size_t cap = s->body_cap ? s->body_cap * 2 : s->held > 0 ? s->held : 16384;
		uint8_t *nb;

		while (cap < s->body_len + len)
			cap *= 2;
		if (cap > gw_cfg.max_body)
			cap = gw_cfg.max_body;
		if (!(nb = realloc(s->body, cap)))
		{
			s->too_large = true;
			return;
		}
		s->body = nb;
		s->body_cap = cap;
	}
	memcpy(s->body + s->body_len, in, len);
	s->body_len += len;
}

/* ---- /metrics ---- */

static void
metrics_respond(RouteReq *s)
{
	size_t len = 0;
	char *text;

	s->metrics_wait = false;
	if (!(text = gw_metrics_render(&len)))
	{
		respond_error(s, "sync.internal_error", "out of memory", 0);
		return;
	}
	respond(s, 200, "text/plain; version=0.0.4; charset=utf-8", (uint8_t *) text, len, false);
}

static void
metrics_ready(void)
{
	for (int i = 0; i < MAX_METRICS_WAITERS; i++)
	{
		RouteReq *s = metrics_waiters[i];

		metrics_waiters[i] = NULL;
		if (s)
			metrics_respond(s);
	}
}

static void
on_metrics(RouteReq *s)
{
	if (!gw_cfg.metrics_on)
	{
		respond_error(s, "sync.not_found", "no such route", 0);
		return;
	}
	if (!gw_req_method_is(s->r, "GET"))
	{
		gw_req_close_after(s->r);
		respond_error(s, "sync.invalid_request", "use GET for /metrics", 405);
		return;
	}
	if (!gw_metrics_scrape(metrics_ready) || gw_metrics_scrape_running())
	{
		/* wait for the statistics query; past the waiter table, answer the cached figures */
		for (int i = 0; i < MAX_METRICS_WAITERS; i++)
			if (!metrics_waiters[i])
			{
				metrics_waiters[i] = s;
				s->metrics_wait = true;
				return;
			}
	}
	metrics_respond(s);
}

static void
on_readyz(RouteReq *s)
{
	GwJob *j;

	if (gw_pool_live() == 0)
	{
		respond_json(s, 503, json_pack("{s:b, s:i, s:s}", "ready", 0, "poolLive", 0,
									   "reason", "no live database connection"));
		return;
	}
	j = gw_job_new("SELECT syncular.readiness()::text", readyz_done, s);
	if (j)
		j->result_format = 0;
	submit(s, j);
}

/* a route module that could not start (out of memory) */
static void
no_module(RouteReq *s)
{
	gw_req_close_after(s->r);
	respond_error(s, "sync.internal_error", "out of memory", 0);
}

static void
dispatch(RouteReq *s, const char *uri)
{
	switch (s->route)
	{
		case GW_ROUTE_SYNC:
			on_sync(s);
			return;
		case GW_ROUTE_HEALTHZ:
			respond_json(s, 200, json_pack("{s:s, s:s}", "status", "ok", "extensionVersion", GW_EXTVERSION));
			return;
		case GW_ROUTE_READYZ:
			on_readyz(s);
			return;
		case GW_ROUTE_REALTIME:
		case GW_ROUTE_OPS_REALTIME:
			respond_error(s, "sync.invalid_request", "the realtime route needs a WebSocket upgrade", 400);
			return;
		case GW_ROUTE_METRICS:
			on_metrics(s);
			return;
		case GW_ROUTE_SEGMENT:
			if (!(s->seg = gw_seg_start(s->r, uri, gw_cfg.mount)))
				no_module(s);
			return;
		case GW_ROUTE_OPERATIONS:
			if (!(s->ops = gw_ops_start(s->r, uri)))
				no_module(s);
			return;
		case GW_ROUTE_BLOB:
			if (!(s->blob = gw_blob_start(s->r, uri)))
				no_module(s);
			return;
		default:
			respond_error(s, "sync.not_found", "no such route", 0);
			return;
	}
}

GwRouteReq *
gw_route_start(GwReq *r, const char *uri)
{
	RouteReq *s = calloc(1, sizeof(RouteReq));

	if (!s)
		return NULL;
	s->r = r;
	snprintf(s->path, sizeof(s->path), "%s", uri);
	s->route = gw_route(uri, gw_cfg.mount);
	dispatch(s, uri);
	return s;
}

void
gw_route_body(RouteReq *s, const uint8_t *in, size_t len)
{
	if (s->blob)
		gw_blob_body(s->blob, in, len);
	else if (s->ops)
		gw_ops_body(s->ops, in, len);
	else
		on_body(s, in, len);
}

void
gw_route_body_done(RouteReq *s)
{
	if (s->blob)
		gw_blob_body_done(s->blob);
	if (s->ops)
		gw_ops_body_done(s->ops);
	if (!s->in_body)
		return;
	if (s->too_large)
	{
		respond_error(s, "sync.invalid_request", "request body exceeds the size limit", 413);
		return;
	}
	start_round(s);
}
