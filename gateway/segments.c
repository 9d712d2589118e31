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
#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEG_MAX_HEADERS 16
#define SEG_SCOPES_MAX 65536

struct GwSeg
{
	GwReq      *r;
	GwJob      *job;
	char       *seg_id;
	char       *scopes;         /* X-Syncular-Scopes, JSON text */
	char       *inm;            /* If-None-Match, NULL when absent */
	char       *ae;             /* Accept-Encoding, NULL when absent */
	char       *client_id;      /* ?clientId=, NULL when absent */
	GwIdentity  id;
};

/* the answer with the headers the extension chose ({name: value}; headers is consumed) */
static void
seg_respond(GwSeg *g, int status, json_t *headers, uint8_t *body, size_t len)
{
	const char *hdrs[2 * SEG_MAX_HEADERS + 1];
	const char *k;
	json_t *v;
	int n = 0;

	json_object_foreach(headers, k, v)
	{
		const char *s = json_string_value(v);

		/* the extension's own names and values; still, nothing that could split a header */
		if (!s || !*k || strpbrk(s, "\r\n") || strpbrk(k, "\r\n:") || n == 2 * SEG_MAX_HEADERS)
			continue;
		hdrs[n++] = k;
		hdrs[n++] = s;
	}
	hdrs[n] = NULL;
	if (gw_cfg.verbose)
		gw_log("segment %s -> %d (%zu bytes)", g->seg_id ? g->seg_id : "?", status, len);
	gw_req_answer(g->r, status, NULL, body, len, hdrs);
	json_decref(headers);
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
hdr_or_null(GwReq *r, const char *name)
{
	const char *v = gw_req_header(r, name);

	return v ? strdup(v) : NULL;
}

/* the value of query argument name ("st", "clientId"), malloc'd, or NULL */
static char *
urlarg(GwReq *r, const char *name)
{
	const char *v = gw_req_arg(r, name);

	return v ? strdup(v) : NULL;
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
	if (!gw_auth_identity(PQgetvalue(res, 0, 0), &g->id))
	{
		seg_error(g, "sync.internal_error", "internal server error", 0);
		return;
	}
	start_download(g);
}

static void
start_auth(GwSeg *g, const char *uri)
{
	char *hj = gw_auth_headers_json(g->r), *qj = gw_auth_query_json(g->r);
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
	GwReq *r = g->r;
	const char *why, *scopes;
	char *st;
	json_error_t je;
	json_t *sc;

	if (!gw_req_method_is(r, "GET"))
	{
		gw_req_close_after(r);
		seg_error(g, "sync.invalid_request", "use GET for segments", 405);
		return;
	}
	g->seg_id = strdup(uri + strlen(mount) + strlen("/segments/"));
	g->inm = hdr_or_null(r, "If-None-Match");
	g->ae = hdr_or_null(r, "Accept-Encoding");
	if ((st = urlarg(r, "st")))
	{
		/* a signed URL names no partition, so a router cannot route it (docs/scaling.md) */
		if (gw_cfg.router)
			seg_error(g, "sync.not_found", "signed segment URLs are not served in front of a "
					  "syncular_router: unset syncular.segment_url_base on the shards", 0);
		else
			start_url_download(g, st);
		free(st);
		return;
	}
	g->client_id = urlarg(r, "clientId");
	/* §5.5: the requested scope map of the owning subscription; absent = {} */
	scopes = gw_req_header(r, "X-Syncular-Scopes");
	if (scopes && strlen(scopes) > SEG_SCOPES_MAX)
	{
		seg_error(g, "sync.invalid_request", "X-Syncular-Scopes is too large", 400);
		return;
	}
	g->scopes = strdup(scopes && *scopes ? scopes : "{}");
	if (!g->seg_id || !g->scopes)
	{
		seg_error(g, "sync.internal_error", "out of memory", 0);
		return;
	}
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
	if (gw_auth_jwt(r, &g->id, &why) != 0)
	{
		seg_error(g, "sync.auth_required", why, 0);
		return;
	}
	start_download(g);
}

GwSeg *
gw_seg_start(GwReq *r, const char *uri, const char *mount)
{
	GwSeg *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->r = r;
	on_request(g, uri, mount);
	return g;
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
	free(g);
}
