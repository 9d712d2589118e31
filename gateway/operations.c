/*
 * operations.c — POST <mount>/operations, the HTTP binding of the remote operation protocol
 * (REMOTE.md revision 1 §5).  Host authentication as for /sync (JWT, or the SQL authenticator
 * through syncular.authenticate), then one syncular.operations_http call per request: status,
 * content type and body are the database's (an operation failure is an encoded kind "error"
 * body with 200).  Decided here, before the database: 405 for another method, 415 for another
 * content type (judged before authentication, as /sync), 413 over --max-body, 401 for failed
 * host authentication (catalogue JSON bodies).
 */
#include "gateway.h"
#include "metrics.h"
#include "parse.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define OPS_CT "application/vnd.syncular.operations.v1+json"

struct GwOps
{
	GwReq      *r;
	char        path[512];
	char       *ctype;
	GwIdentity  id;
	char       *headers_json;   /* SQL authenticator mode */
	char       *query_json;
	bool        in_body;
	size_t      held;           /* bytes of the memory budget (budget.c) held by this request */
	bool        too_large;
	uint8_t    *body;
	size_t      body_len, body_cap;
	GwJob      *job;
};

static void
respond(GwOps *o, int status, const char *type, uint8_t *body, size_t len)
{
	const char *hdrs[] = {"Cache-Control", "no-store", NULL};

	o->in_body = false;
	gw_metrics_http(GW_ROUTE_OPERATIONS, status);
	if (gw_cfg.verbose)
		gw_log("%s -> %d (%zu bytes)", o->path, status, body ? len : 0);
	gw_req_answer(o->r, status, type ? type : "application/octet-stream", body, len, hdrs);
}

static void
fail(GwOps *o, const char *code, const char *message, int status_override)
{
	int status;
	char *j = gw_error_json(code, message, status_override, &status);

	respond(o, status, "application/json", (uint8_t *) j, j ? strlen(j) : 0);
}

/* the media type of ct without parameters is the operations type (case-insensitive) */
static bool
content_type_ok(const char *ct)
{
	size_t n = strlen(OPS_CT);

	while (*ct == ' ' || *ct == '\t')
		ct++;
	if (strncasecmp(ct, OPS_CT, n) != 0)
		return false;
	ct += n;
	while (*ct == ' ' || *ct == '\t')
		ct++;
	return *ct == '\0' || *ct == ';';
}

static char *
hdr_dup(GwReq *r, const char *name)
{
	const char *v = gw_req_header(r, name);

	return strdup(v ? v : "");
}

/* ---- database answers ---- */

static void
operation_done(GwJob *job, PGresult *res, const char *err)
{
	GwOps *o = job->user;
	uint8_t *body;
	int blen;

	if (!o)
		return;
	o->job = NULL;
	if (!res)
	{
		gw_log("operation failed: %s", err ? err : "unknown");
		fail(o, "sync.internal_error", "the database connection failed during the operation; retry", 0);
		return;
	}
	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1 || PQgetlength(res, 0, 0) != 4)
	{
		/* operations_http answers operation failures itself: this text goes to our log only */
		gw_log("operation failed: %s", PQresultErrorMessage(res));
		fail(o, "sync.internal_error", "internal server error", 0);
		return;
	}
	blen = PQgetlength(res, 0, 2);
	if (!(body = malloc(blen > 0 ? (size_t) blen : 1)))
	{
		fail(o, "sync.internal_error", "out of memory", 0);
		return;
	}
	memcpy(body, PQgetvalue(res, 0, 2), (size_t) blen);
	respond(o, (int) ntohl(*(const uint32_t *) PQgetvalue(res, 0, 0)), PQgetvalue(res, 0, 1), body,
			(size_t) blen);
}

static void
submit(GwOps *o, GwJob *j)
{
	if (!j)
	{
		fail(o, "sync.internal_error", "out of memory", 0);
		return;
	}
	o->job = j;
	if (!gw_pool_submit(j))
	{
		o->job = NULL;
		fail(o, "sync.rate_limited", "too many requests waiting for the database", 0);
	}
}

static void
run_operation(GwOps *o)
{
	GwJob *j = gw_job_new("SELECT status, content_type, body FROM syncular.operations_http($1, $2, $3, $4)",
						  operation_done, o);

	if (j)
	{
		gw_job_param(j, o->body ? o->body : (uint8_t *) "", (int) o->body_len, 1, true);
		gw_job_param(j, o->id.partition, (int) strlen(o->id.partition), 0, true);
		gw_job_param(j, o->id.actor, (int) strlen(o->id.actor), 0, true);
		gw_job_param(j, o->ctype, (int) strlen(o->ctype), 0, true);
	}
	submit(o, j);
}

/* SQL authenticator mode: the identity first (syncular.authenticate), then the operation */
static void
authenticated(GwJob *job, PGresult *res, const char *err)
{
	GwOps *o = job->user;

	if (!o)
		return;
	o->job = NULL;
	if (!res || PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1)
	{
		gw_log("authentication failed: %s", res ? PQresultErrorMessage(res) : (err ? err : "unknown"));
		fail(o, "sync.internal_error", "internal server error", 0);
		return;
	}
	if (PQgetisnull(res, 0, 0))
	{
		fail(o, "sync.auth_required", "authentication required", 0);
		return;
	}
	if (!gw_auth_identity(PQgetvalue(res, 0, 0), &o->id))
	{
		fail(o, "sync.auth_required", "authentication required", 0);
		return;
	}
	run_operation(o);
}

static void
start(GwOps *o)
{
	GwJob *j;

	o->in_body = false;
	if (gw_auth_is_jwt())
	{
		run_operation(o);
		return;
	}
	j = gw_job_new("SELECT syncular.authenticate('POST', $1, $2::jsonb, $3::jsonb)::text", authenticated, o);
	if (j)
	{
		j->result_format = 0;
		gw_job_param(j, o->path, (int) strlen(o->path), 0, true);
		gw_job_param(j, o->headers_json, (int) strlen(o->headers_json), 0, true);
		gw_job_param(j, o->query_json, (int) strlen(o->query_json), 0, true);
	}
	submit(o, j);
}

/* ---- hooks (called by routes.c) ---- */

GwOps *
gw_ops_start(GwReq *r, const char *uri)
{
	GwOps *o = calloc(1, sizeof(GwOps));
	const char *why;
	int rc;

	if (!o)
		return NULL;
	o->r = r;
	snprintf(o->path, sizeof(o->path), "%s", uri);
	if (!gw_req_method_is(r, "POST"))
	{
		gw_req_close_after(r);
		fail(o, "sync.invalid_request", "use POST for /operations", 405);
		return o;
	}
	o->ctype = hdr_dup(r, "Content-Type");
	if (!o->ctype || !content_type_ok(o->ctype))
	{
		gw_req_close_after(r);
		fail(o, "sync.invalid_request", "content type must be " OPS_CT, 415);
		return o;
	}
	/* the declared length is checked and held from the process's memory budget before a byte
	 * is read, as for /sync (docs/gateway.md "Limits and malformed input"), and given back with
	 * the request */
	if ((rc = gw_budget_admit_body(gw_req_header(r, "Content-Length"), &o->held)) != 0)
	{
		gw_req_close_after(r);
		if (rc == 413)
			fail(o, "sync.invalid_request", "request body exceeds the size limit", 413);
		else
			fail(o, "sync.rate_limited", "the gateway's memory budget for request bodies is in use; retry", 503);
		return o;
	}
	if (gw_auth_is_jwt())
	{
		if (gw_auth_jwt(r, &o->id, &why) != 0)
		{
			gw_req_close_after(r);
			fail(o, "sync.auth_required", why, 0);
			return o;
		}
	}
	else if (!(o->headers_json = gw_auth_headers_json(r)) || !(o->query_json = gw_auth_query_json(r)))
	{
		fail(o, "sync.internal_error", "out of memory", 0);
		return o;
	}
	o->in_body = true;          /* started by gw_ops_body_done, also for an empty body */
	return o;
}

int
gw_ops_body(GwOps *o, const uint8_t *in, size_t len)
{
	if (!o->in_body || o->too_large)
		return 0;
	if (o->body_len + len > gw_cfg.max_body)
	{
		o->too_large = true;
		free(o->body);
		o->body = NULL;
		o->body_len = o->body_cap = 0;
		return 0;
	}
	if (o->body_len + len > o->body_cap)
	{
		size_t cap = o->body_cap ? o->body_cap * 2 : 4096;
		uint8_t *nb;

		while (cap < o->body_len + len)
			cap *= 2;
		if (cap > gw_cfg.max_body)
			cap = gw_cfg.max_body;
		if (!(nb = realloc(o->body, cap)))
		{
			o->too_large = true;
			return 0;
		}
		o->body = nb;
		o->body_cap = cap;
	}
	memcpy(o->body + o->body_len, in, len);
	o->body_len += len;
	return 0;
}

void
gw_ops_body_done(GwOps *o)
{
	if (!o->in_body)
		return;
	if (o->too_large)
	{
		fail(o, "sync.invalid_request", "request body exceeds the size limit", 413);
		return;
	}
	start(o);
}

void
gw_ops_free(GwOps *o)
{
	if (!o)
		return;
	if (o->job)
		o->job->user = NULL;    /* the pool drops or ignores it */
	gw_budget_give(o->held);
	free(o->ctype);
	free(o->headers_json);
	free(o->query_json);
	free(o->body);
	free(o);
}
