/*
 * blobs.c — the blob routes of SPEC §1.1 / §5.9 (docs/blobs.md), thin over the extension:
 *   PUT  <mount>/blobs/{blobId}   upload (§5.9.3): BEGIN; [authenticate;] blob_upload_begin(...,
 *        Content-Length); blob_upload_append(piece) per ~256 kB of body; blob_upload_finish;
 *        COMMIT.  One transaction pinned to one pool connection (gw_pool_submit_pinned); the
 *        body is read from the client only while no append is waiting (the request pauses), so
 *        the gateway holds at most a piece or two of any body.  The cap is checked by
 *        blob_upload_begin against the declared Content-Length before a body byte is read.
 *   GET  <mount>/blobs/{blobId}   download (§5.9.5): BEGIN; [authenticate;] DECLARE a cursor over
 *        blob_get(...); FETCH 1 per ≤ 1 MiB chunk, each written to the client before the next
 *        is fetched; 403/404 rows carry the catalogue JSON body.
 *        With syncular.blob_url_base set the authorized answer is {url, urlExpiresAtMs}.
 *   POST <mount>/blobs/{blobId}/upload-grant   presigned upload grant (§5.9.3): body
 *        {"byteLength": n}; BEGIN; [authenticate;] blob_upload_grant(...); COMMIT; the JSON, or
 *        404 when the extension offers no grants (syncular.blob_url_base empty).
 *   PUT/GET <mount>/blobs/{blobId}?bt=<token>   a signed blob URL: no host authentication, the
 *        token is the whole grant (§5.9.3, §5.9.5); blob_url_upload_begin / blob_url_get verify it.
 * With the SQL authenticator, syncular.authenticate runs first inside the same transaction.
 */
#include "gateway.h"
#include "parse.h"

#include <arpa/inet.h>
#include <endian.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PIECE    (256 * 1024)     /* bytes per blob_upload_append */
#define MAX_BUF  (4 * PIECE)      /* a client ignoring flow control is cut off here */
#define GRANT_BODY_MAX 4096       /* the upload-grant JSON request */

typedef enum { B_START, B_BODY, B_DONE } BPhase;

struct GwBlob
{
	GwReq      *r;
	bool        put;
	bool        grant;              /* POST .../upload-grant */
	char       *token;              /* bt= of a signed blob URL, or NULL */
	char       *grant_json;         /* the grant answer, sent after COMMIT */
	BPhase      phase;
	char        blob_id[128];
	char        path[512];
	char        inm[160];           /* If-None-Match */
	GwIdentity  id;
	char       *headers_json, *query_json;
	bool        has_len;
	long long   content_length;
	/* the pinned transaction */
	int         conn;
	bool        pinned;
	bool        counted;            /* holds one of the pin slots */
	GwJob      *job;
	char        upload[32];         /* handle of blob_upload_begin, as text */
	/* upload body */
	uint8_t    *buf;
	size_t      len;
	bool        body_done;
	size_t      held;           /* bytes of the memory budget (budget.c) held by the upload */
	bool        paused;
	/* response */
	bool        streaming;
	bool        broken;             /* a download failed after its headers: close */
	uint8_t    *resp;
	size_t      resp_len, resp_off;
	long long   total, sent;        /* download */
};

static int pins;

static int
pin_limit(void)
{
	return gw_cfg.pool > 1 ? gw_cfg.pool - 1 : 1;    /* keep a connection for /sync */
}

static void
unpin(GwBlob *b)
{
	if (b->job)
		b->job->user = NULL;        /* a hold job in flight is released when it completes */
	b->job = NULL;
	if (b->pinned)
		gw_pool_release(b->conn, b);
	b->pinned = false;
	if (b->counted)
		pins--;
	b->counted = false;
}

void
gw_blob_free(GwBlob *b)
{
	if (!b)
		return;
	unpin(b);
	gw_budget_give(b->held);
	free(b->headers_json);
	free(b->query_json);
	free(b->token);
	free(b->grant_json);
	free(b->buf);
	free(b->resp);
	free(b);
}

/* ---- responses ---- */

/* §5.9.5 response headers of the direct path (bytes, 304), or no-store for everything else */
static void
respond(GwBlob *b, int status, const char *type, char *body, size_t len)
{
	char etag[140];
	const char *bytes_hdrs[] = {"ETag", etag, "Cache-Control", "private, max-age=0",
		"Vary", "Authorization, Accept-Encoding", NULL};
	const char *hdrs[] = {"Cache-Control", "no-store", NULL};

	b->phase = B_DONE;
	if (!b->body_done && (b->put || b->grant))
		gw_req_close_after(b->r);   /* the rest of the body is not used */
	b->paused = false;
	snprintf(etag, sizeof(etag), "\"%s\"", b->blob_id);
	if (gw_cfg.verbose)
		gw_log("%s -> %d", b->path, status);
	gw_req_answer(b->r, status, type, (uint8_t *) body, len, status == 304 ? bytes_hdrs : hdrs);
}

static long blob_read(void *cls, uint64_t pos, char *buf, size_t max);
static void commit_forget(GwBlob *b);

/* an authorized download (§5.9.5): total bytes, the first chunk in b->resp */
static void
respond_stream(GwBlob *b, const char *type)
{
	char etag[140];
	const char *bytes_hdrs[] = {"ETag", etag, "Cache-Control", "private, max-age=0",
		"Vary", "Authorization, Accept-Encoding", NULL};

	b->phase = B_DONE;
	b->streaming = true;
	snprintf(etag, sizeof(etag), "\"%s\"", b->blob_id);
	if (b->total == 0)
		commit_forget(b);       /* no bytes will be read */
	gw_req_stream(b->r, 200, type, (uint64_t) b->total, blob_read, b, bytes_hdrs);
}

static void
fail(GwBlob *b, const char *code, const char *message, int status_override)
{
	int status;
	char *j;

	unpin(b);
	if (b->streaming)
	{
		/* headers and bytes are out: the promised length cannot be met, close */
		gw_log("blob %s: download broke: %s", b->blob_id, message);
		b->broken = true;
		gw_req_wake(b->r);
		return;
	}
	j = gw_error_json(code, message, status_override, &status);
	respond(b, status, "application/json", j, j ? strlen(j) : 0);
}

/* an error result: a catalogue error raised by the blob functions (code in DETAIL, §10.1)
 * answers with that code; anything else is a fixed internal error (text to our log) */
static void
fail_result(GwBlob *b, PGresult *res, const char *err)
{
	const char *detail = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL) : NULL;
	const char *msg = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	json_t *d = detail ? json_loads(detail, 0, NULL) : NULL;
	const char *code = d ? json_string_value(json_object_get(d, "code")) : NULL;

	if (!res)
	{
		gw_log("blob %s failed: %s", b->blob_id, err ? err : "unknown");
		fail(b, "sync.internal_error", "the database connection failed; retry", 0);
	}
	else if (code && msg && (strcmp(code, "blob.too_large") == 0 || strcmp(code, "blob.hash_mismatch") == 0 ||
							 strcmp(code, "blob.not_found") == 0 || strcmp(code, "sync.invalid_request") == 0 ||
							 strcmp(code, "blob.forbidden") == 0))
		fail(b, code, msg, 0);
	else
	{
		gw_log("blob %s failed: %s", b->blob_id, PQresultErrorMessage(res));
		fail(b, "sync.internal_error", "internal server error", 0);
	}
	json_decref(d);
}

/* ---- the pinned transaction ---- */

static void step_done(GwJob *job, PGresult *res, const char *err);

/* run sql as the next job of the transaction (the first one pins a connection) */
static bool
run(GwBlob *b, GwJob *j)
{
	bool ok;

	if (!j)
	{
		fail(b, "sync.internal_error", "out of memory", 0);
		return false;
	}
	j->hold = true;
	b->job = j;
	ok = b->pinned ? gw_pool_submit_pinned(b->conn, j) : gw_pool_submit(j);
	if (!ok)
	{
		b->job = NULL;
		if (b->pinned)
		{
			b->pinned = false;
			fail(b, "sync.internal_error", "the database connection failed; retry", 0);
		}
		else
			fail(b, "sync.rate_limited", "too many requests waiting for the database", 0);
	}
	return ok;
}

static GwJob *
job(GwBlob *b, const char *sql)
{
	GwJob *j = gw_job_new(sql, step_done, b);

	if (j)
		j->result_format = 0;
	return j;
}

static void
param(GwJob *j, const char *s)
{
	gw_job_param(j, s, (int) strlen(s), 0, true);
}

static void
commit_forget(GwBlob *b)
{
	/* blob_get only reads, but the resolver it calls may write: COMMIT, then the connection
	 * goes back to the pool (no hold) */
	GwJob *j = gw_job_new("COMMIT", NULL, b);

	if (b->pinned && j)
		gw_pool_submit_pinned(b->conn, j);
	else
		free(j);
	b->pinned = false;
	unpin(b);
}

static void
start_blob_call(GwBlob *b)
{
	GwJob *j;

	if (b->grant)
	{
		char len[32];

		j = job(b, "SELECT syncular.blob_upload_grant($1, $2, $3, $4::bigint)::text");
		if (j)
		{
			param(j, b->id.partition);
			param(j, b->id.actor);
			param(j, b->blob_id);
			snprintf(len, sizeof(len), "%lld", b->content_length);
			param(j, len);
		}
	}
	else if (b->token && b->put)
	{
		char len[32];

		j = job(b, "SELECT syncular.blob_url_upload_begin($1, $2, $3::bigint)");
		if (j)
		{
			param(j, b->blob_id);
			param(j, b->token);
			snprintf(len, sizeof(len), "%lld", b->content_length);
			param(j, len);
		}
	}
	else if (b->token)
	{
		j = job(b, "DECLARE syncular_blob NO SCROLL CURSOR FOR "
				"SELECT status, content_type, byte_length, body FROM syncular.blob_url_get($1, $2)");
		if (j)
		{
			j->result_format = 1;
			param(j, b->blob_id);
			param(j, b->token);
		}
	}
	else if (b->put)
	{
		char len[32];

		j = job(b, "SELECT syncular.blob_upload_begin($1, $2, $3, $4::bigint)");
		if (j)
		{
			param(j, b->id.partition);
			param(j, b->id.actor);
			param(j, b->blob_id);
			snprintf(len, sizeof(len), "%lld", b->content_length);
			if (b->has_len)
				param(j, len);
			else
				gw_job_param(j, NULL, 0, 0, false);
		}
	}
	else
	{
		j = job(b, "DECLARE syncular_blob NO SCROLL CURSOR FOR "
				"SELECT status, content_type, byte_length, body FROM syncular.blob_get($1, $2, $3)");
		if (j)
		{
			j->result_format = 1;
			param(j, b->id.partition);
			param(j, b->id.actor);
			param(j, b->blob_id);
		}
	}
	run(b, j);
}

static void
send_piece(GwBlob *b, size_t n)
{
	GwJob *j = job(b, "SELECT syncular.blob_upload_append($1::bigint, $2)");

	if (j)
	{
		param(j, b->upload);
		gw_job_param(j, b->buf, (int) n, 1, true);
	}
	memmove(b->buf, b->buf + n, b->len - n);
	b->len -= n;
	run(b, j);
}

/* upload: send what is due; called when no job is in flight */
static void
upload_next(GwBlob *b)
{
	if (b->len >= PIECE || (b->body_done && b->len > 0))
		send_piece(b, b->len > PIECE ? PIECE : b->len);
	else if (b->body_done)
	{
		GwJob *j = job(b, "SELECT syncular.blob_upload_finish($1::bigint)::text");

		if (j)
			param(j, b->upload);
		run(b, j);
	}
	else if (b->paused)
	{
		b->paused = false;
		gw_req_wake(b->r);      /* room for the next piece */
	}
}

static void
fetch(GwBlob *b)
{
	GwJob *j = job(b, "FETCH 1 FROM syncular_blob");

	if (j)
		j->result_format = 1;
	run(b, j);
}

static void
fetched(GwBlob *b, PGresult *res)
{
	int status;
	const char *ct;

	if (PQntuples(res) != 1 || PQgetlength(res, 0, 0) != 4)
	{
		fail(b, "sync.internal_error", b->streaming ? "fewer bytes than the blob's length" : "internal server error", 0);
		return;
	}
	status = (int) ntohl(*(const uint32_t *) PQgetvalue(res, 0, 0));
	free(b->resp);
	b->resp_len = (size_t) PQgetlength(res, 0, 3);
	b->resp = malloc(b->resp_len ? b->resp_len : 1);
	b->resp_off = 0;
	if (!b->resp)
	{
		fail(b, "sync.internal_error", "out of memory", 0);
		return;
	}
	memcpy(b->resp, PQgetvalue(res, 0, 3), b->resp_len);
	if (b->streaming)
	{
		if (b->resp_len == 0)
			fail(b, "sync.internal_error", "fewer bytes than the blob's length", 0);
		else
			gw_req_wake(b->r);
		return;
	}
	ct = PQgetvalue(res, 0, 1);
	if (status != 200 || PQgetlength(res, 0, 2) != 8)
	{
		char *body = (char *) b->resp;

		b->resp = NULL;
		if (status == 200)
			commit_forget(b);   /* a signed URL (§5.9.5): keep a secret its minting created */
		else
			unpin(b);
		respond(b, status, ct, body, b->resp_len);
		return;
	}
	/* authorized (§5.9.5): a matching If-None-Match is 304 */
	b->total = (long long) be64toh(*(const uint64_t *) PQgetvalue(res, 0, 2));
	if (b->inm[0] && strstr(b->inm, b->blob_id))
	{
		commit_forget(b);
		respond(b, 304, ct, NULL, 0);
		return;
	}
	respond_stream(b, ct);
}

/* The transaction began: the blob call now, or first the SQL authenticator. */
static void
after_begin(GwBlob *b)
{
	GwJob *a;

	if (gw_auth_is_jwt() || b->token)
	{
		start_blob_call(b);
		return;
	}
	a = job(b, "SELECT syncular.authenticate($1, $2, $3::jsonb, $4::jsonb)::text");
	if (a)
	{
		param(a, b->put ? "PUT" : "GET");
		param(a, b->path);
		param(a, b->headers_json);
		param(a, b->query_json);
	}
	run(b, a);
}

/* The SQL authenticator answered: {actorId, partition}, or NULL (401). */
static void
after_authenticate(GwBlob *b, PGresult *res)
{
	if (!gw_auth_identity(PQgetisnull(res, 0, 0) ? NULL : PQgetvalue(res, 0, 0), &b->id))
	{
		fail(b, "sync.auth_required", "authentication required", 0);
		return;
	}
	start_blob_call(b);
}

/* The transaction's work is done: COMMIT, on the connection held for it. */
static void
commit_held(GwBlob *b)
{
	GwJob *c = job(b, "COMMIT");

	if (c)
		c->hold = true;
	run(b, c);
}

/* An upload grant (§5.9.3), or none offered (NULL: 404 blob.not_found). */
static void
after_grant(GwBlob *b, PGresult *res)
{
	if (PQgetisnull(res, 0, 0))
	{
		commit_forget(b);
		fail(b, "blob.not_found", "presigned upload grants are not offered: PUT the bytes to the blob route", 0);
		return;
	}
	b->grant_json = strdup(PQgetvalue(res, 0, 0));
	commit_held(b);             /* the grant may have created the server secret */
}

/* Committed: the grant's JSON, or the empty 200 of a finished upload (§5.9.3). */
static void
after_commit(GwBlob *b)
{
	unpin(b);
	if (b->grant && b->grant_json)
	{
		char *body = b->grant_json;

		b->grant_json = NULL;
		respond(b, 200, "application/json", body, strlen(body));
	}
	else
		respond(b, 200, "application/octet-stream", NULL, 0);
}

static void
step_done(GwJob *j, PGresult *res, const char *err)
{
	GwBlob *b = j->user;
	ExecStatusType st;
	const char *sql = j->sql;

	if (!b)
		return;
	b->job = NULL;
	if (res && j->hold)
	{
		b->pinned = true;
		b->conn = j->conn;
	}
	st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
	if (!res || (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK))
	{
		if (!res)
			b->pinned = false;
		fail_result(b, res, err);
		return;
	}
	if (strcmp(sql, "BEGIN") == 0)
		after_begin(b);
	else if (strstr(sql, "syncular.authenticate("))
		after_authenticate(b, res);
	else if (strstr(sql, "blob_upload_grant("))
		after_grant(b, res);
	else if (strstr(sql, "upload_begin("))
	{
		snprintf(b->upload, sizeof(b->upload), "%s", PQgetvalue(res, 0, 0));
		b->phase = B_BODY;
		upload_next(b);
	}
	else if (strstr(sql, "blob_upload_append("))
		upload_next(b);
	else if (strstr(sql, "blob_upload_finish("))
		commit_held(b);
	else if (strcmp(sql, "COMMIT") == 0)
		after_commit(b);
	else if (strncmp(sql, "DECLARE", 7) == 0)
		fetch(b);
	else
		fetched(b, res);
}

/* ---- hooks (called by routes.c) ---- */

static void grant_body_done(GwBlob *b);

/* a request header's value (empty when absent) */
static void
hdr(GwBlob *b, const char *name, char *out, size_t size)
{
	const char *v = gw_req_header(b->r, name);

	snprintf(out, size, "%s", v ? v : "");
}

/* The method of the route (§5.9): PUT or GET of a blob, POST of an upload grant; false: answered. */
static bool
check_method(GwBlob *b, bool grant_route)
{
	b->put = gw_req_method_is(b->r, "PUT");
	b->body_done = !b->put;
	if (grant_route)
	{
		if (!gw_req_method_is(b->r, "POST"))
		{
			gw_req_close_after(b->r);
			fail(b, "sync.invalid_request", "use POST for an upload grant", 405);
			return false;
		}
		b->grant = true;
		b->body_done = false;
	}
	else if (!b->put && !gw_req_method_is(b->r, "GET"))
	{
		gw_req_close_after(b->r);
		fail(b, "sync.invalid_request", "use PUT or GET for a blob", 405);
		return false;
	}
	return true;
}

/*
 * An upload's headers: identity encoding and a Content-Length, whose buffering the memory
 * budget holds before a byte is read; false: answered.
 */
static bool
check_upload(GwBlob *b)
{
	char v[64];

	hdr(b, "Content-Encoding", v, sizeof(v));
	if (gw_content_encoding(v) != 0)
	{
		fail(b, "sync.invalid_request", "blob uploads take Content-Encoding identity only", 415);
		return false;
	}
	hdr(b, "Content-Length", v, sizeof(v));
	b->has_len = v[0] != '\0';
	b->content_length = atoll(v);
	if (!b->has_len)
	{
		fail(b, "sync.invalid_request", "a blob upload needs a Content-Length", 411);
		return false;
	}
	b->body_done = b->content_length == 0;   /* no body callbacks will come */
	/* the most an upload buffers: MAX_BUF received plus the piece copied into its job */
	b->held = b->content_length > 0 ? MAX_BUF + PIECE : 0;
	if (b->held && !gw_budget_take(b->held))
	{
		b->held = 0;
		gw_req_close_after(b->r);
		fail(b, "sync.rate_limited", "the gateway's memory budget for request bodies is in use; retry", 503);
		return false;
	}
	return true;
}

/*
 * Who asks: a signed URL's token (the whole grant, §5.9.3, §5.9.5; never for an upload grant),
 * a bearer JWT, or the SQL authenticator's inputs; false: answered.
 */
static bool
check_auth(GwBlob *b)
{
	const char *why;

	b->token = gw_req_arg(b->r, "bt") ? strdup(gw_req_arg(b->r, "bt")) : NULL;
	if (b->token && b->grant)
	{
		fail(b, "sync.invalid_request", "an upload grant needs host authentication, not a token", 400);
		return false;
	}
	if (b->token)
		return true;
	if (gw_auth_is_jwt())
	{
		if (gw_auth_jwt(b->r, &b->id, &why) != 0)
		{
			fail(b, "sync.auth_required", why, 0);
			return false;
		}
		return true;
	}
	if (!(b->headers_json = gw_auth_headers_json(b->r)) || !(b->query_json = gw_auth_query_json(b->r)))
	{
		fail(b, "sync.internal_error", "out of memory", 0);
		return false;
	}
	return true;
}

GwBlob *
gw_blob_start(GwReq *r, const char *uri)
{
	GwBlob *b = calloc(1, sizeof(GwBlob));
	const char *id = uri + strlen(gw_cfg.mount) + strlen("/blobs/");
	const char *slash = strchr(id, '/');
	char v[64];

	if (!b)
		return NULL;
	b->r = r;
	b->conn = -1;
	snprintf(b->path, sizeof(b->path), "%s", uri);
	snprintf(b->blob_id, sizeof(b->blob_id), "%.*s", (int) (slash ? slash - id : (long) strlen(id)), id);
	if (gw_cfg.router)
	{
		/* a blob's upload and download are transactions of several calls on one connection,
		 * which PL/Proxy's routed calls (each its own transaction on the shard) cannot carry */
		gw_req_close_after(r);
		fail(b, "blob.not_found", "blobs are not served in front of a syncular_router", 0);
		return b;
	}
	if (!check_method(b, slash != NULL))
		return b;
	hdr(b, "If-None-Match", b->inm, sizeof(b->inm));
	if ((b->put && !check_upload(b)) || !check_auth(b))
		return b;
	if (pins >= pin_limit())
	{
		fail(b, "sync.rate_limited", "too many blob transfers in progress", 0);
		return b;
	}
	pins++;
	b->counted = true;
	if (b->put && !b->body_done)
	{
		gw_req_pause_body(r);       /* no body byte before blob_upload_begin accepted the length */
		b->paused = true;
	}
	if (!b->grant)
		run(b, job(b, "BEGIN"));
	else
	{
		/* a grant begins once its JSON body is read; no body callbacks come for an empty one */
		hdr(b, "Content-Length", v, sizeof(v));
		if (v[0] == '\0' || atoll(v) == 0)
			grant_body_done(b);
	}
	return b;
}

/* returns -1 when the body is refused (answered) */
int
gw_blob_body(GwBlob *b, const uint8_t *in, size_t len)
{
	uint8_t *nb;

	if (b->grant && b->phase != B_DONE)
	{
		if (b->len + len > GRANT_BODY_MAX)
		{
			fail(b, "sync.invalid_request", "the upload-grant request body is too large", 413);
			return 0;
		}
		if (!(nb = realloc(b->buf, b->len + len + 1)))
		{
			fail(b, "sync.internal_error", "out of memory", 0);
			return -1;
		}
		b->buf = nb;
		memcpy(b->buf + b->len, in, len);
		b->len += len;
		return 0;
	}
	if (!b->put || b->phase == B_DONE)
		return 0;
	/* the request pauses at PIECE bytes: more is a bug, refused rather than buffered */
	if (b->len + len > MAX_BUF || !(nb = realloc(b->buf, b->len + len)))
	{
		fail(b, "sync.internal_error", "upload buffer exhausted", 0);
		return -1;
	}
	b->buf = nb;
	memcpy(b->buf + b->len, in, len);
	b->len += len;
	if (b->len >= PIECE)
	{
		if (b->phase == B_BODY && !b->job)
			upload_next(b);
		if (b->len >= PIECE && !b->paused && b->phase != B_DONE)
		{
			gw_req_pause_body(b->r);
			b->paused = true;
		}
	}
	return 0;
}

/* the upload-grant request {"byteLength": n, "mediaType"?: s} is read: authenticate and grant */
static void
grant_body_done(GwBlob *b)
{
	json_t *req = b->buf ? json_loadb((const char *) b->buf, b->len, 0, NULL) : NULL;
	json_t *n = json_object_get(req, "byteLength");

	b->body_done = true;
	if (!json_is_integer(n) || json_integer_value(n) < 0)
	{
		json_decref(req);
		fail(b, "sync.invalid_request", "the upload-grant body is {\"byteLength\": <int >= 0>}", 400);
		return;
	}
	b->content_length = (long long) json_integer_value(n);
	json_decref(req);
	free(b->buf);
	b->buf = NULL;
	b->len = 0;
	run(b, job(b, "BEGIN"));
}

void
gw_blob_body_done(GwBlob *b)
{
	if (b->grant && b->phase != B_DONE)
	{
		grant_body_done(b);
		return;
	}
	if (!b->put || b->phase == B_DONE)
		return;
	b->body_done = true;
	if (b->phase == B_BODY && !b->job)
		upload_next(b);
}

/* the download's next bytes: a chunk fetched with FETCH 1, one in memory at a time; 0 while
 * the next one is being fetched (the request waits for gw_req_wake), -1 when the stream broke */
static long
blob_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	GwBlob *b = cls;
	size_t n;

	(void) pos;
	if (b->broken)
		return -1;
	if (b->resp_off == b->resp_len)
	{
		if (b->job)
			return 0;
		b->sent += (long long) b->resp_len;
		b->resp_len = b->resp_off = 0;
		fetch(b);               /* the next chunk, only now */
		return b->broken ? -1 : 0;
	}
	n = b->resp_len - b->resp_off;
	if (n > max)
		n = max;
	memcpy(buf, b->resp + b->resp_off, n);
	b->resp_off += n;
	if (b->sent + (long long) b->resp_off >= b->total)
		commit_forget(b);       /* the last bytes are handed over */
	return (long) n;
}
