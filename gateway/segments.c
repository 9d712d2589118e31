/*
 * segments.c — GET <mount>/segments/{segmentId} (SPEC §5.4, §5.5).
 *
 * Two ways in, each one statement answering one row (status, headers, body):
 *   ?st=<token>  a bare signed-URL fetch (§5.4): no host authentication, the token is the whole
 *                grant; syncular.segment_url_download verifies it.
 *   otherwise    the direct endpoint (§5.5): host authentication exactly as /sync (JWT, or the
 *                SQL authenticator in its own statement first), then syncular.segment_download
 *                with the X-Syncular-Scopes header (§5.5) and the clientId query argument.
 * If-None-Match and Accept-Encoding go through as they are; the answer's status, every member of
 * its headers object and its body come back unchanged (the extension compresses, §5.8).  Client
 * values travel as parameters only, never in SQL text.
 */
#include "gateway.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <libwebsockets.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEG_CHUNK 65536
#define SEG_SCOPES_MAX 65536

struct GwSeg
{
	struct lws *wsi;
	GwJob      *job;
	char       *seg_id;
	char       *scopes;         /* X-Syncular-Scopes, JSON text */
	char       *inm;            /* If-None-Match, NULL when absent */
	char       *ae;             /* Accept-Encoding, NULL when absent */
	char       *client_id;      /* ?clientId=, NULL when absent */
	GwIdentity  id;
	/* response */
	bool        responding, headers_sent, close_after;
	int         status;
	json_t     *headers;        /* {name: value} */
	uint8_t    *body;
	size_t      len, off;
};

static void
seg_respond(GwSeg *g, int status, json_t *headers, uint8_t *body, size_t len)
{
	g->responding = true;
	g->status = status;
	g->headers = headers;
	g->body = body;
	g->len = len;
	lws_callback_on_writable(g->wsi);
}

static void
seg_error(GwSeg *g, const char *code, const char *message, int status_override)
{
	int status;
	char *j = gw_error_json(code, message, status_override, &status);

	seg_respond(g, status, json_pack("{s:s}", "Content-Type", "application/json"),
				(uint8_t *) j, j ? strlen(j) : 0);
}

/* NULL when the header is absent (the SQL functions take NULL for "not sent") */
static char *
hdr_or_null(struct lws *wsi, enum lws_token_indexes t)
{
	int n = lws_hdr_total_length(wsi, t);
	char *v;

	if (n <= 0 || !(v = malloc((size_t) n + 1)))
		return NULL;
	if (lws_hdr_copy(wsi, v, n + 1, t) < 0)
		v[0] = '\0';
	return v;
}

/* the value of query argument name ("st", "clientId"), malloc'd, or NULL */
static char *
urlarg(struct lws *wsi, const char *name)
{
	char frag[4096];
	size_t nl = strlen(name);

	for (int i = 0; lws_hdr_copy_fragment(wsi, frag, sizeof(frag), WSI_TOKEN_HTTP_URI_ARGS, i) > 0; i++)
		if (strncmp(frag, name, nl) == 0 && frag[nl] == '=')
			return strdup(frag + nl + 1);
	return NULL;
}

/* ---- the answer ---- */

static void
download_done(GwJob *job, PGresult *res, const char *err)
{
	GwSeg *g = job->user;
	json_error_t je;
	json_t *h;
	uint8_t *body;
	int blen;

	if (!g)
		return;
	g->job = NULL;
	if (!res)
	{
		gw_log("segment download failed: %s", err ? err : "unknown");
		seg_error(g, "sync.internal_error", "the database connection failed; retry", 0);
		return;
	}
	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1 || PQgetlength(res, 0, 0) != 4 ||
		PQgetisnull(res, 0, 1))
	{
		gw_log("segment download failed: %s", PQresultErrorMessage(res));
		seg_error(g, "sync.internal_error", "internal server error", 0);
		return;
	}
	h = json_loadb(PQgetvalue(res, 0, 1), (size_t) PQgetlength(res, 0, 1), 0, &je);
	if (!json_is_object(h))
	{
		json_decref(h);
		seg_error(g, "sync.internal_error", "internal server error", 0);
		return;
	}
	blen = PQgetisnull(res, 0, 2) ? 0 : PQgetlength(res, 0, 2);
	if (!(body = malloc(blen > 0 ? (size_t) blen : 1)))
	{
		json_decref(h);
		seg_error(g, "sync.internal_error", "out of memory", 0);
		return;
	}
	memcpy(body, PQgetvalue(res, 0, 2), (size_t) blen);
	seg_respond(g, (int) ntohl(*(const uint32_t *) PQgetvalue(res, 0, 0)), h, body, (size_t) blen);
}

static void
seg_submit(GwSeg *g, GwJob *j)
{
	if (!j)
	{
		seg_error(g, "sync.internal_error", "out of memory", 0);
		return;
	}
	g->job = j;
	lws_set_timeout(g->wsi, NO_PENDING_TIMEOUT, 0);
	if (!gw_pool_submit(j))
	{
		g->job = NULL;
		seg_error(g, "sync.rate_limited", "too many requests waiting for the database", 0);
	}
}

static void
param_or_null(GwJob *j, const char *v)
{
	gw_job_param(j, v, v ? (int) strlen(v) : 0, 0, true);
}

/* §5.5: with the identity known */
static void
start_download(GwSeg *g)
{
	GwJob *j = gw_job_new("SELECT status, headers::text, body FROM "
						  "syncular.segment_download($1, $2, $3, $4::jsonb, $5, $6, $7)",
						  download_done, g);

	if (j)
	{
		param_or_null(j, g->seg_id);
		param_or_null(j, g->id.partition);
		param_or_null(j, g->id.actor);
		param_or_null(j, g->scopes);
		param_or_null(j, g->inm);
		param_or_null(j, g->ae);
		param_or_null(j, g->client_id);
	}
	seg_submit(g, j);
}

/* SQL authenticator mode: its answer, then the download in a second statement */
static void
auth_done(GwJob *job, PGresult *res, const char *err)
{
	GwSeg *g = job->user;
	json_error_t je;
	json_t *r;
	const char *a, *p;

	if (!g)
		return;
	g->job = NULL;
	if (!res || PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1)
	{
		/* the authenticator's text goes to our log only */
		gw_log("segment authentication failed: %s", res ? PQresultErrorMessage(res) : err);
		seg_error(g, "sync.internal_error", "internal server error", 0);
		return;
	}
	if (PQgetisnull(res, 0, 0))
	{
		seg_error(g, "sync.auth_required", "authentication required", 0);
		return;
	}
	r = json_loads(PQgetvalue(res, 0, 0), 0, &je);
	a = json_string_value(json_object_get(r, "actorId"));
	p = json_string_value(json_object_get(r, "partition"));
	if (!a || !p || strlen(a) >= sizeof(g->id.actor) || strlen(p) >= sizeof(g->id.partition))
	{
		json_decref(r);
		seg_error(g, "sync.internal_error", "internal server error", 0);
		return;
	}
	strcpy(g->id.actor, a);
	strcpy(g->id.partition, p);
	json_decref(r);
	start_download(g);
}

static void
start_auth(GwSeg *g, const char *uri)
{
	char *hj = gw_auth_headers_json(g->wsi), *qj = gw_auth_query_json(g->wsi);
	GwJob *j = NULL;

	if (hj && qj &&
		(j = gw_job_new("SELECT syncular.authenticate('GET', $1, $2::jsonb, $3::jsonb)::text", auth_done, g)))
	{
		j->result_format = 0;
		gw_job_param(j, uri, (int) strlen(uri), 0, true);
		gw_job_param(j, hj, (int) strlen(hj), 0, true);
		gw_job_param(j, qj, (int) strlen(qj), 0, true);
	}
	free(hj);
	free(qj);
	seg_submit(g, j);
}

/* §5.4: the token is the grant */
static void
start_url_download(GwSeg *g, char *st)
{
	GwJob *j = gw_job_new("SELECT status, headers::text, body FROM "
						  "syncular.segment_url_download($1, $2, $3, $4)", download_done, g);

	if (j)
	{
		param_or_null(j, g->seg_id);
		param_or_null(j, st);
		param_or_null(j, g->inm);
		param_or_null(j, g->ae);
	}
	seg_submit(g, j);
}

/* ---- the request ---- */

static void
on_request(GwSeg *g, const char *uri, const char *mount)
{
	struct lws *wsi = g->wsi;
	const char *why;
	char *st;
	json_error_t je;
	json_t *sc;
	int n;

	if (lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI) <= 0)
	{
		g->close_after = true;
		seg_error(g, "sync.invalid_request", "use GET for segments", 405);
		return;
	}
	g->seg_id = strdup(uri + strlen(mount) + strlen("/segments/"));
	g->inm = hdr_or_null(wsi, WSI_TOKEN_HTTP_IF_NONE_MATCH);
	g->ae = hdr_or_null(wsi, WSI_TOKEN_HTTP_ACCEPT_ENCODING);
	if ((st = urlarg(wsi, "st")))
	{
		start_url_download(g, st);
		free(st);
		return;
	}
	g->client_id = urlarg(wsi, "clientId");
	/* §5.5: the requested scope map of the owning subscription; absent = {} */
	n = lws_hdr_custom_length(wsi, "x-syncular-scopes:", 18);
	if (n > SEG_SCOPES_MAX)
	{
		seg_error(g, "sync.invalid_request", "X-Syncular-Scopes is too large", 400);
		return;
	}
	g->scopes = malloc(n > 0 ? (size_t) n + 1 : 3);
	if (!g->seg_id || !g->scopes)
	{
		seg_error(g, "sync.internal_error", "out of memory", 0);
		return;
	}
	if (n <= 0 || lws_hdr_custom_copy(wsi, g->scopes, n + 1, "x-syncular-scopes:", 18) < 0)
		strcpy(g->scopes, "{}");
	if (!(sc = json_loads(g->scopes, 0, &je)))
	{
		seg_error(g, "sync.invalid_request", "X-Syncular-Scopes is not JSON", 400);
		return;
	}
	json_decref(sc);
	if (!gw_auth_is_jwt())
	{
		start_auth(g, uri);
		return;
	}
	if (gw_auth_jwt(wsi, &g->id, &why) != 0)
	{
		seg_error(g, "sync.auth_required", why, 0);
		return;
	}
	start_download(g);
}

GwSeg *
gw_seg_start(struct lws *wsi, const char *uri, const char *mount)
{
	GwSeg *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->wsi = wsi;
	on_request(g, uri, mount);
	return g;
}

/* ---- writing ---- */

static int
write_headers(GwSeg *g)
{
	uint8_t buf[LWS_PRE + 2048];
	uint8_t *start = buf + LWS_PRE, *p = start, *end = buf + sizeof(buf) - 1;
	const char *k;
	json_t *v;

	if (lws_add_http_header_status(g->wsi, (unsigned int) g->status, &p, end))
		return -1;
	json_object_foreach(g->headers, k, v)
	{
		char name[64];
		const char *s = json_string_value(v);
		size_t i, kl = strlen(k);

		/* the extension's own names and values; still, nothing that could split a header */
		if (!s || kl == 0 || kl + 2 > sizeof(name) || strpbrk(s, "\r\n") || strpbrk(k, "\r\n:"))
			continue;
		for (i = 0; i < kl; i++)
			name[i] = (char) tolower((unsigned char) k[i]);
		name[kl] = ':';
		name[kl + 1] = '\0';
		if (lws_add_http_header_by_name(g->wsi, (const unsigned char *) name, (const unsigned char *) s,
										(int) strlen(s), &p, end))
			return -1;
	}
	if (lws_add_http_header_content_length(g->wsi, (lws_filepos_t) g->len, &p, end))
		return -1;
	if (g->close_after &&
		lws_add_http_header_by_token(g->wsi, WSI_TOKEN_CONNECTION, (const unsigned char *) "close", 5, &p, end))
		return -1;
	return lws_finalize_write_http_header(g->wsi, start, &p, end) ? -1 : 0;
}

int
gw_seg_writeable(GwSeg *g)
{
	static uint8_t buf[LWS_PRE + SEG_CHUNK];
	size_t n;
	bool last;

	if (!g->responding)
		return 0;
	if (!g->headers_sent)
	{
		if (write_headers(g))
			return -1;
		g->headers_sent = true;
		if (g->len)
		{
			lws_callback_on_writable(g->wsi);
			return 0;
		}
	}
	n = g->len - g->off;
	if (n > SEG_CHUNK)
		n = SEG_CHUNK;
	last = g->off + n == g->len;
	if (n)
	{
		memcpy(buf + LWS_PRE, g->body + g->off, n);
		if (lws_write(g->wsi, buf + LWS_PRE, n, last ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP) != (int) n)
			return -1;
		g->off += n;
	}
	if (!last)
	{
		lws_callback_on_writable(g->wsi);
		return 0;
	}
	if (gw_cfg.verbose)
		gw_log("segment %s -> %d (%zu bytes)", g->seg_id ? g->seg_id : "?", g->status, g->len);
	return g->close_after ? -1 : 1;
}

void
gw_seg_free(GwSeg *g)
{
	if (!g)
		return;
	if (g->job)
		g->job->user = NULL;    /* the pool drops or ignores it */
	free(g->seg_id);
	free(g->scopes);
	free(g->inm);
	free(g->ae);
	free(g->client_id);
	json_decref(g->headers);
	free(g->body);
	free(g);
}
