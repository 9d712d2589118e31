/*
 * http.c — the HTTP routes of SPEC §1.1 under <mount>:
 *   POST /sync            one round per transaction through syncular.handle_http (JWT mode) or
 *                         syncular.handle_http_authenticated (SQL authenticator mode); the
 *                         gateway holds no protocol logic: status, content type and body are the
 *                         database's.  415 / 413 / 401 / gzip (§1.3) are decided here.
 *   GET  /healthz         process alive
 *   GET  /readyz          syncular.readiness() ready and a live pool connection
 *   GET  /metrics         Prometheus text (metrics.c); 404 with --metrics off
 *   PUT/GET /blobs/{id}   blobs.c (SPEC §5.9)
 *   GET  /segments/{id}   segments.c (SPEC §5.4, §5.5)
 * Errors before a body byte are JSON (§10.1) with catalogue statuses.
 */
#include "gateway.h"
#include "metrics.h"
#include "parse.h"

#include <arpa/inet.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <libwebsockets.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK 65536

typedef struct HttpSess
{
	struct lws *wsi;
	GwRoute     route;
	bool        active;
	bool        in_body;        /* waiting for the POST body */
	bool        too_large;
	int         gzip_in;
	bool        gzip_ok;        /* client accepts gzip */
	bool        close_after;    /* body left unread: close instead of keep-alive */
	bool        metrics_wait;   /* waiting for the statistics scrape */
	int         completions;    /* BODY_COMPLETION callbacks of this request (see on_body_completion) */
	int         body_turns;     /* loop turns the completion work has waited */
	lws_sorted_usec_list_t body_sul;    /* the body's completion work, two loop turns later */
	GwIdentity  id;
	char       *ctype;
	char       *headers_json;   /* SQL authenticator mode */
	char       *query_json;
	char        path[512];
	uint8_t    *body;
	size_t      body_len, body_cap;
	size_t      held;           /* bytes of the memory budget (budget.c) held by this request */
	GwJob      *job;
	GwBlob     *blob;           /* the blob routes (blobs.c) */
	GwSeg      *seg;            /* the segment route (segments.c) */
	GwOps      *ops;            /* the operations route (operations.c) */
	/* response */
	bool        responding;
	bool        headers_sent;
	int         status;
	const char *resp_type;
	bool        resp_gzip;
	uint8_t    *resp;
	size_t      resp_len, resp_off;
} HttpSess;

static int inflight;

/* /metrics requests waiting for the one statistics query in flight */
#define MAX_METRICS_WAITERS 32
static HttpSess *metrics_waiters[MAX_METRICS_WAITERS];

int
gw_http_inflight(void)
{
	return inflight;
}

static void
sess_reset(HttpSess *s)
{
	lws_sul_cancel(&s->body_sul);
	if (s->job)
		s->job->user = NULL;    /* the pool drops or ignores it */
	if (s->metrics_wait)
		for (int i = 0; i < MAX_METRICS_WAITERS; i++)
			if (metrics_waiters[i] == s)
				metrics_waiters[i] = NULL;
	free(s->ctype);
	free(s->headers_json);
	free(s->query_json);
	free(s->body);
	free(s->resp);
	gw_budget_give(s->held);
	gw_blob_free(s->blob);
	gw_seg_free(s->seg);
	gw_ops_free(s->ops);
	if (s->active)
		inflight--;
	memset(s, 0, sizeof(*s));
}

static void
respond(HttpSess *s, int status, const char *type, uint8_t *body, size_t len, bool gz)
{
	s->in_body = false;
	s->responding = true;
	s->status = status;
	s->resp_type = type;
	s->resp = body;
	s->resp_len = len;
	s->resp_gzip = gz;
	gw_budget_force(len);       /* counted while it waits to be written, never refused */
	s->held += len;
	gw_metrics_http(s->route, status);
	lws_callback_on_writable(s->wsi);
}

static void
respond_error(HttpSess *s, const char *code, const char *message, int status_override)
{
	int status;
	char *j = gw_error_json(code, message, status_override, &status);

	respond(s, status, "application/json", (uint8_t *) j, j ? strlen(j) : 0, false);
}

static void
respond_json(HttpSess *s, int status, json_t *o)
{
	char *j = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);

	json_decref(o);
	respond(s, status, "application/json", (uint8_t *) j, j ? strlen(j) : 0, false);
}

static int
write_headers(struct lws *wsi, HttpSess *s)
{
	uint8_t buf[LWS_PRE + 1024];
	uint8_t *start = buf + LWS_PRE, *p = start, *end = buf + sizeof(buf) - 1;

	if (lws_add_http_common_headers(wsi, (unsigned int) s->status, s->resp_type,
									(lws_filepos_t) s->resp_len, &p, end))
		return -1;
	if (s->resp_gzip &&
		lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_CONTENT_ENCODING,
									 (const unsigned char *) "gzip", 4, &p, end))
		return -1;
	if (s->route == GW_ROUTE_SYNC &&
		lws_add_http_header_by_name(wsi, (const unsigned char *) "vary:",
									(const unsigned char *) "Accept-Encoding", 15, &p, end))
		return -1;
	if (lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_CACHE_CONTROL,
									 (const unsigned char *) "no-store", 8, &p, end))
		return -1;
	if (s->close_after &&
		lws_add_http_header_by_token(wsi, WSI_TOKEN_CONNECTION,
									 (const unsigned char *) "close", 5, &p, end))
		return -1;
	return lws_finalize_write_http_header(wsi, start, &p, end) ? -1 : 0;
}

static int
on_writeable(struct lws *wsi, HttpSess *s)
{
	static uint8_t buf[LWS_PRE + CHUNK];
	size_t n;
	bool last;

	if (!s->responding)
		return 0;
	if (!s->headers_sent)
	{
		if (write_headers(wsi, s))
			return -1;
		s->headers_sent = true;
		if (s->resp_len)
		{
			lws_callback_on_writable(wsi);
			return 0;
		}
	}
	n = s->resp_len - s->resp_off;
	if (n > CHUNK)
		n = CHUNK;
	last = s->resp_off + n == s->resp_len;
	if (n)
	{
		memcpy(buf + LWS_PRE, s->resp + s->resp_off, n);
		if (lws_write(wsi, buf + LWS_PRE, n, last ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP) != (int) n)
			return -1;
		gw_metrics_bytes(GW_M_HTTP, false, n);
		s->resp_off += n;
	}
	if (!last)
	{
		lws_callback_on_writable(wsi);
		return 0;
	}
	if (gw_cfg.verbose)
		gw_log("%s -> %d (%zu bytes%s)", s->path, s->status, s->resp_len, s->resp_gzip ? ", gzip" : "");
	{
		bool close = s->close_after || gw_draining;

		sess_reset(s);
		if (close)
			return -1;
	}
	return lws_http_transaction_completed(wsi) ? -1 : 0;
}

/* ---- database answers ---- */

static void
round_done(GwJob *job, PGresult *res, const char *err)
{
	HttpSess *s = job->user;
	const char *ct;
	int ctlen, blen, status;
	uint8_t *body;

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
	ct = PQgetvalue(res, 0, 1);
	ctlen = PQgetlength(res, 0, 1);
	blen = PQgetlength(res, 0, 2);
	body = malloc(blen > 0 ? (size_t) blen : 1);
	if (!body)
	{
		respond_error(s, "sync.internal_error", "out of memory", 0);
		return;
	}
	memcpy(body, PQgetvalue(res, 0, 2), (size_t) blen);
	free(s->ctype);
	s->ctype = strndup(ct, (size_t) ctlen);     /* the response type outlives res */
	if (status == 200 && s->gzip_ok)
	{
		uint8_t *z;
		size_t zlen;

		if (gw_gzip(body, (size_t) blen, &z, &zlen) == 0)
		{
			free(body);
			respond(s, status, s->ctype, z, zlen, true);
			return;
		}
	}
	respond(s, status, s->ctype, body, (size_t) blen, false);
}

static void
readyz_done(GwJob *job, PGresult *res, const char *err)
{
	HttpSess *s = job->user;
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

static void
submit(HttpSess *s, GwJob *j)
{
	if (!j)
	{
		respond_error(s, "sync.internal_error", "out of memory", 0);
		return;
	}
	s->job = j;
	s->in_body = false;
	/* a long round (a large bootstrap) waits on the database, not on the client */
	lws_set_timeout(s->wsi, NO_PENDING_TIMEOUT, 0);
	if (!gw_pool_submit(j))
	{
		s->job = NULL;
		respond_error(s, "sync.rate_limited", "too many rounds waiting for the database", 0);
	}
}

/* Content-Encoding gzip (SPEC §1.3): the inflated body replaces the wire body, and holds the
 * budget instead of it; false when an answer was given */
static bool
inflate_body(HttpSess *s)
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
start_round(HttpSess *s)
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
	submit(s, j);
}

static char *
hdr_dup(struct lws *wsi, enum lws_token_indexes t)
{
	int n = lws_hdr_total_length(wsi, t);
	char *v;

	if (n <= 0)
		return strdup("");
	if (!(v = malloc((size_t) n + 1)))
		return NULL;
	if (lws_hdr_copy(wsi, v, n + 1, t) < 0)
		v[0] = '\0';
	return v;
}

static void
on_sync(struct lws *wsi, HttpSess *s)
{
	char *ae, *ce;
	char clen[32];
	const char *why;
	int rc;

	if (lws_hdr_total_length(wsi, WSI_TOKEN_POST_URI) <= 0)
	{
		respond_error(s, "sync.invalid_request", "use POST for /sync", 405);
		return;
	}
	s->ctype = hdr_dup(wsi, WSI_TOKEN_HTTP_CONTENT_TYPE);
	/* the content type is judged before authentication, as the reference adapter does */
	if (!s->ctype || !gw_content_type_ok(s->ctype))
	{
		s->close_after = true;
		respond_error(s, "sync.invalid_request", "content type must be application/vnd.syncular.sync.v2", 415);
		return;
	}
	ce = hdr_dup(wsi, WSI_TOKEN_HTTP_CONTENT_ENCODING);
	s->gzip_in = gw_content_encoding(ce);
	free(ce);
	if (s->gzip_in < 0)
	{
		s->close_after = true;
		respond_error(s, "sync.invalid_request", "unsupported Content-Encoding (identity or gzip)", 415);
		return;
	}
	ae = hdr_dup(wsi, WSI_TOKEN_HTTP_ACCEPT_ENCODING);
	s->gzip_ok = gw_accepts_gzip(ae);
	free(ae);
	/* the declared length is checked and held before a byte is read */
	if ((rc = gw_budget_admit_body(wsi, &s->held)) != 0)
	{
		s->close_after = true;
		if (rc == 413)
			respond_error(s, "sync.invalid_request", "request body exceeds the size limit", 413);
		else
			respond_error(s, "sync.rate_limited", "the gateway's memory budget for request bodies is in use; retry", 503);
		return;
	}
	if (gw_auth_is_jwt())
	{
		if (gw_auth_jwt(wsi, &s->id, &why) != 0)
		{
			s->close_after = true;
			respond_error(s, "sync.auth_required", why, 0);
			return;
		}
	}
	else
	{
		s->headers_json = gw_auth_headers_json(wsi);
		s->query_json = gw_auth_query_json(wsi);
		if (!s->headers_json || !s->query_json)
		{
			respond_error(s, "sync.internal_error", "out of memory", 0);
			return;
		}
	}
	s->in_body = true;
	/* no Content-Length (and no Transfer-Encoding, refused before) is an empty body
	 * (RFC 9112 §6.3): no body callbacks will come */
	if (lws_hdr_copy(wsi, clen, sizeof(clen), WSI_TOKEN_HTTP_CONTENT_LENGTH) <= 0 || atoll(clen) == 0)
		start_round(s);
}

static void
on_body(HttpSess *s, const uint8_t *in, size_t len)
{
	gw_metrics_bytes(GW_M_HTTP, true, len);
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
metrics_respond(HttpSess *s)
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
		HttpSess *s = metrics_waiters[i];

		metrics_waiters[i] = NULL;
		if (s)
			metrics_respond(s);
	}
}

static void
on_metrics(struct lws *wsi, HttpSess *s)
{
	if (!gw_cfg.metrics_on)
	{
		s->close_after = lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI) <= 0;
		respond_error(s, "sync.not_found", "no such route", 0);
		return;
	}
	if (lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI) <= 0)
	{
		s->close_after = true;
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
				lws_set_timeout(s->wsi, NO_PENDING_TIMEOUT, 0);
				return;
			}
	}
	metrics_respond(s);
}

/* RFC 9110 §5.5: a field value (or the target) with CR, LF, NUL or another control character
 * than HTAB is refused, not passed on to the SQL authenticator or logged */
static bool
fields_clean(struct lws *wsi)
{
	char v[8192];

	for (int t = 0; t < (int) WSI_TOKEN_COUNT; t++)
	{
		int n = lws_hdr_total_length(wsi, (enum lws_token_indexes) t);

		if (n <= 0 || n >= (int) sizeof(v) || lws_hdr_copy(wsi, v, sizeof(v), (enum lws_token_indexes) t) < 0)
			continue;
		for (int i = 0; i < n; i++)
			if (((unsigned char) v[i] < 0x20 && v[i] != '\t') || v[i] == 0x7f)
				return false;
	}
	return true;
}

/*
 * Request framing (RFC 9112 §6): a body is delimited by exactly one Content-Length made of
 * digits.  Duplicate or conflicting lengths, a length that is not a number, and a length beside
 * Transfer-Encoding are what request smuggling through a proxy is made of (RFC 9112 §6.3,
 * §11.2): 400 and close.  Chunked request bodies are not read: 411 at once (send
 * Content-Length), and close, since the chunks that follow are not a request.
 */
static bool
framing_refused(struct lws *wsi, HttpSess *s)
{
	char v[32];
	int n = lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH);
	bool te = lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING) > 0;
	const char *why = NULL;

	if (n > 0 && lws_hdr_fragment_length(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH, 1) > 0)
		why = "more than one Content-Length header";
	else if (n > 0 && (n > 19 || lws_hdr_copy(wsi, v, sizeof(v), WSI_TOKEN_HTTP_CONTENT_LENGTH) != n ||
					   strspn(v, "0123456789") != (size_t) n))
		why = "Content-Length is not a decimal number";
	else if (n > 0 && te)
		why = "Content-Length together with Transfer-Encoding";
	if (!why && !fields_clean(wsi))
		why = "control character in the request line or a header field";
	if (why)
	{
		s->close_after = true;
		respond_error(s, "sync.invalid_request", why, 400);
		return true;
	}
	if (te)
	{
		s->close_after = true;
		respond_error(s, "sync.invalid_request", "chunked request bodies are not accepted: send Content-Length", 411);
		return true;
	}
	return false;
}

static void
on_request(struct lws *wsi, HttpSess *s, const char *uri)
{
	GwJob *j;

	s->active = true;         /* in flight until the last byte is written */
	inflight++;
	snprintf(s->path, sizeof(s->path), "%s", uri);
	s->route = gw_route(uri, gw_cfg.mount);
	if (framing_refused(wsi, s))
		return;
	if (gw_draining)
	{
		s->close_after = true;
		respond_error(s, "sync.internal_error", "gateway is shutting down; retry", 503);
		return;
	}
	switch (s->route)
	{
		case GW_ROUTE_SYNC:
			on_sync(wsi, s);
			return;
		case GW_ROUTE_HEALTHZ:
			respond_json(s, 200, json_pack("{s:s, s:s}", "status", "ok", "extensionVersion", GW_EXTVERSION));
			return;
		case GW_ROUTE_READYZ:
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
			return;
		case GW_ROUTE_REALTIME:
		case GW_ROUTE_OPS_REALTIME:
			respond_error(s, "sync.invalid_request", "the realtime route needs a WebSocket upgrade", 400);
			return;
		case GW_ROUTE_METRICS:
			on_metrics(wsi, s);
			return;
		case GW_ROUTE_SEGMENT:
			if (!(s->seg = gw_seg_start(wsi, uri, gw_cfg.mount)))
			{
				s->close_after = true;
				respond_error(s, "sync.internal_error", "out of memory", 0);
			}
			return;
		case GW_ROUTE_OPERATIONS:
			if (!(s->ops = gw_ops_start(wsi, uri)))
				respond_error(s, "sync.internal_error", "out of memory", 0);
			return;
		case GW_ROUTE_BLOB:
			if (!(s->blob = gw_blob_start(wsi, uri)))
			{
				s->close_after = true;
				respond_error(s, "sync.internal_error", "out of memory", 0);
			}
			return;
		default:
			s->close_after = lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI) <= 0;
			respond_error(s, "sync.not_found", "no such route", 0);
			return;
	}
}

/* ---- the end of a request body ---- */

static void
body_complete(lws_sorted_usec_list_t *sul)
{
	HttpSess *s = lws_container_of(sul, HttpSess, body_sul);

	/* timers run at the top of a loop turn, buffered input at its bottom: waiting two turns
	 * lets a whole turn's buffered-input pass show a repeated completion first */
	if (s->body_turns++ == 0)
	{
		lws_sul_schedule(gw_ctx, 0, &s->body_sul, body_complete, 1);
		return;
	}
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

/*
 * Pipelining (RFC 9112 §9.3.2) and request bodies: when more bytes than one request with a body
 * arrived on a connection (a request pipelined behind it, or it behind another), libwebsockets
 * 4.1.6 calls BODY_COMPLETION again on every loop turn from its buffered-input path, and does
 * not serve the connection's answer (the wedge of docs/gateway.md "Design"); only closing the
 * connection ends that.  So the work of a completed body waits two loop turns (body_complete):
 * when a second call comes first, nothing has started (no round, no blob commit), the client
 * gets a retryable 503 with Connection: close written at once, and the connection closes.
 * Requests before it were answered in order; a client retries unanswered pipelined requests on
 * a new connection (RFC 9112 §9.3.2).
 */
static int
refuse_pipelined(struct lws *wsi, HttpSess *s)
{
	uint8_t buf[LWS_PRE + 1024];
	uint8_t *start = buf + LWS_PRE, *p = start, *end = buf + sizeof(buf) - 1;

	lws_sul_cancel(&s->body_sul);
	/* an answer decided already (a refusal before the body: small JSON) goes out as it is */
	if (!s->responding)
		respond_error(s, "sync.rate_limited", "pipelined request with a body: send it again on a new "
					  "connection, after the previous response", 503);
	if (s->resp && !s->headers_sent && s->resp_len < 4096 &&
		!lws_add_http_common_headers(wsi, (unsigned int) s->status, s->resp_type, s->resp_len, &p, end) &&
		!lws_add_http_header_by_token(wsi, WSI_TOKEN_CONNECTION, (const unsigned char *) "close", 5, &p, end) &&
		lws_finalize_write_http_header(wsi, start, &p, end) == 0)
		(void) lws_write(wsi, s->resp, s->resp_len, LWS_WRITE_HTTP_FINAL);
	gw_log("closing a connection: request with a body pipelined on %s", s->path);
	return -1;
}

static int
on_body_completion(struct lws *wsi, HttpSess *s)
{
	if (s->completions++)
		return refuse_pipelined(wsi, s);
	lws_sul_schedule(gw_ctx, 0, &s->body_sul, body_complete, 1);
	return 0;
}

int
gw_http_callback(struct lws *wsi, int reason, void *user, void *in, size_t len)
{
	HttpSess *s = user;

	/* lws allocates the session with the first complete request header: a connection closed
	 * (or timed out) before that reaches CLOSED_HTTP with none, and has nothing to release */
	if (!s)
		return lws_callback_http_dummy(wsi, (enum lws_callback_reasons) reason, user, in, len);
	switch (reason)
	{
		case LWS_CALLBACK_HTTP:
			sess_reset(s);
			s->wsi = wsi;
			on_request(wsi, s, (const char *) in);
			return 0;
		case LWS_CALLBACK_HTTP_BODY:
			if (s->blob || s->ops)
				return s->blob ? gw_blob_body(s->blob, in, len) : gw_ops_body(s->ops, in, len);
			on_body(s, in, len);
			return 0;
		case LWS_CALLBACK_HTTP_BODY_COMPLETION:
			return on_body_completion(wsi, s);
		case LWS_CALLBACK_HTTP_WRITEABLE:
			if (s->blob || s->seg || s->ops)
			{
				int r = s->blob ? gw_blob_writeable(s->blob) : s->seg ? gw_seg_writeable(s->seg)
					: gw_ops_writeable(s->ops);

				if (r <= 0)
					return r;
				sess_reset(s);
				return gw_draining || lws_http_transaction_completed(wsi) ? -1 : 0;
			}
			return on_writeable(wsi, s);
		case LWS_CALLBACK_CLOSED_HTTP:
			sess_reset(s);
			return 0;
		default:
			return lws_callback_http_dummy(wsi, (enum lws_callback_reasons) reason, user, in, len);
	}
}

size_t gw_http_sess_size(void);
size_t
gw_http_sess_size(void)
{
	return sizeof(HttpSess);
}
