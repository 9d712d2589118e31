/*
 * watches.c — live query watches (REMOTE.md revision 1 §6), transport-independent.
 *
 * Client messages are encoded objects (§4): {revision: 1, kind: "watch", watchId, clientId,
 * operationId, params} and {revision: 1, kind: "unwatch", watchId}.  Server messages are the
 * extension's: {revision: 1, kind: "snapshot", watchId, operationId, rows, maxCommitSeq} and
 * {revision: 1, kind: "watch_error", watchId, code, message, retryable}.
 *
 * Every watch belongs to its connection and to the partition of the connection's host
 * authentication.  The database does the work: per partition, ONE call of
 * syncular.operations_watch_rerun at a time carries every watch that may need a snapshot (a new
 * one, or one a commit wake-up after its last snapshot's maxCommitSeq marked dirty), and
 * reruns, in one snapshot, only those whose answer a change of the window can alter (a scoped
 * watch only for changes carrying its covered scope values).  So a wake-up costs one call per
 * partition, never one per watch.
 *
 * At most one rerun per watch is pending (§6): wake-ups arriving while the partition's call
 * runs only mark the watch dirty (with the highest commit seen); when the call's answer already
 * reflects that commit the mark is cleared, else the watch goes into the next call.  An
 * unwatch or a closed connection removes watches at once; an answer still running for them is
 * dropped (a batch holds references, never the connection).  A watch whose registration
 * snapshot fails is removed after its watch_error (it never held an answer; the id is free
 * again); a later failing rerun sends watch_error and the watch stays.
 *
 * Malformed client messages: with a readable watchId, watch_error operation.invalid_request;
 * without one, the connection is closed 1007 "operation.invalid_request".  A reused active
 * watchId is watch_error operation.invalid_request; more than --ws-max-watches watches on one
 * connection is watch_error operation.invalid_request naming the limit.
 */
#include "watches.h"
#include "gateway.h"
#include "metrics.h"

#include "ops.h"

#include <arpa/inet.h>
#include <endian.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct WatchPart WatchPart;
typedef struct Watch Watch;

struct Watch
{
	GwWatchConn *conn;          /* NULL once removed (unwatch, close) */
	WatchPart  *part;
	char       *id;             /* watchId */
	char       *message;        /* the canonical encoding of the client's watch message */
	size_t      message_len;
	int64_t     seq;            /* maxCommitSeq of the last snapshot; -1 none yet */
	int64_t     want;           /* highest commit seq a wake-up announced */
	bool        dirty;          /* needs to be in the next call */
	bool        lost;           /* wake-ups were lost: the next call must include it */
	bool        running;        /* in the partition's running call */
	int         refs;           /* the lists' reference + running batches */
	Watch      *cnext;          /* in the connection */
	Watch      *pnext;          /* in the partition */
};

struct WatchPart
{
	char       *name;
	Watch      *watches;
	int         nwatches;
	int         nconns;         /* connections authenticated to it */
	bool        busy;           /* a rerun call is in flight */
	WatchPart  *next;
};

struct GwWatchConn
{
	WatchPart  *part;
	char       *actor_json;     /* the actor as a JSON string, for the batch */
	GwWatchSendFn send;
	GwWatchCloseFn close;
	void       *transport;
	Watch      *watches;
	int         nwatches;
	GwWatchConn *next;
};

typedef struct Batch
{
	WatchPart  *part;
	int         n;
	Watch     **w;
} Batch;

static WatchPart *parts;
static GwWatchConn *conns;
static int nwatches_total;

int
gw_watch_count(void)
{
	return nwatches_total;
}

/* ---------------------------------------------------------------- lifetime */

static void
watch_release(Watch *w)
{
	if (--w->refs > 0)
		return;
	free(w->id);
	free(w->message);
	free(w);
}

static WatchPart *
part_get(const char *name)
{
	WatchPart *p;

	for (p = parts; p; p = p->next)
		if (strcmp(p->name, name) == 0)
			return p;
	if (!(p = calloc(1, sizeof(WatchPart))) || !(p->name = strdup(name)))
	{
		free(p);
		return NULL;
	}
	p->next = parts;
	parts = p;
	return p;
}

/* drop a partition without watches and connections, unless its call is still running */
static void
part_maybe_free(WatchPart *p)
{
	if (p->nwatches > 0 || p->nconns > 0 || p->busy)
		return;
	for (WatchPart **pp = &parts; *pp; pp = &(*pp)->next)
		if (*pp == p)
		{
			*pp = p->next;
			break;
		}
	free(p->name);
	free(p);
}

/* unlink from the connection and the partition; a running answer for it is then dropped */
static void
watch_remove(Watch *w)
{
	GwWatchConn *c = w->conn;

	if (!c)
		return;
	for (Watch **pp = &c->watches; *pp; pp = &(*pp)->cnext)
		if (*pp == w)
		{
			*pp = w->cnext;
			c->nwatches--;
			break;
		}
	for (Watch **pp = &w->part->watches; *pp; pp = &(*pp)->pnext)
		if (*pp == w)
		{
			*pp = w->pnext;
			w->part->nwatches--;
			break;
		}
	w->conn = NULL;
	nwatches_total--;
	part_maybe_free(w->part);
	watch_release(w);
}

/* ---------------------------------------------------------------- output */

/* watch_error produced by the gateway itself (the database produces the others) */
static void
send_error(GwWatchConn *c, const char *watch_id, const char *code, const char *message)
{
	SspOpValue fields[6], obj;
	SspStr keys[6];
	const char *names[6] = {"revision", "kind", "watchId", "code", "message", "retryable"};
	const char *texts[6] = {NULL, "watch_error", watch_id, code, message, NULL};
	SspBuf b;
	SspError err;

	memset(fields, 0, sizeof(fields));
	for (int i = 0; i < 6; i++)
	{
		keys[i].ptr = names[i];
		keys[i].len = (uint32_t) strlen(names[i]);
		if (texts[i])
		{
			fields[i].kind = SSP_OP_STRING;
			fields[i].str.ptr = texts[i];
			fields[i].str.len = (uint32_t) strlen(texts[i]);
		}
	}
	fields[0].kind = SSP_OP_NUMBER;
	fields[0].num = 1;
	fields[5].kind = SSP_OP_BOOLEAN;
	memset(&obj, 0, sizeof(obj));
	obj.kind = SSP_OP_OBJECT;
	obj.count = 6;
	obj.keys = keys;
	obj.items = fields;
	ssp_buf_init(&b);
	if (ssp_op_encode(&b, &obj, &err) && !b.oom)
		c->send(c->transport, (const char *) b.data, b.len);
	ssp_buf_free(&b);
}

/* ---------------------------------------------------------------- reruns */

static void run_part(WatchPart *p);

static int64_t
be64(const char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return (int64_t) be64toh(v);
}

static void
batch_free(Batch *b)
{
	for (int i = 0; i < b->n; i++)
		watch_release(b->w[i]);
	free(b->w);
	free(b);
}

/* one answer row: result columns w, max_commit_seq, outcome, message (binary format) */
static void
apply_row(Batch *b, PGresult *res, int row)
{
	Watch *w;
	int64_t i;
	const char *outcome;

	if (PQgetisnull(res, row, 0) || PQgetlength(res, row, 0) != 8 || PQgetlength(res, row, 1) != 8)
		return;
	i = be64(PQgetvalue(res, row, 0));
	if (i < 0 || i >= b->n || !(w = b->w[i])->conn)
		return;                 /* unwatched or closed meanwhile: the answer is suppressed (§6) */
	outcome = PQgetvalue(res, row, 2);
	if (strcmp(outcome, "unchanged") != 0 && !PQgetisnull(res, row, 3))
		w->conn->send(w->conn->transport, PQgetvalue(res, row, 3), (size_t) PQgetlength(res, row, 3));
	if (strcmp(outcome, "error") == 0 && w->seq < 0)
	{
		watch_remove(w);        /* the registration failed: the watch never existed */
		return;
	}
	w->seq = be64(PQgetvalue(res, row, 1));
	if (!w->lost && w->want <= w->seq)
		w->dirty = false;       /* this answer already reflects every announced commit */
}

static void
rerun_done(GwJob *job, PGresult *res, const char *err)
{
	Batch *b = job->user;
	WatchPart *p = b->part;

	for (int i = 0; i < b->n; i++)
		b->w[i]->running = false;
	if (!res || PQresultStatus(res) != PGRES_TUPLES_OK)
	{
		/* the watches stay dirty and go into the next call (the next wake-up or registration) */
		gw_log("operations_watch_rerun on a partition failed: %s",
			   res ? PQresultErrorMessage(res) : err ? err : "?");
		for (int i = 0; i < b->n; i++)
			b->w[i]->dirty = true;
	}
	else
		for (int r = 0; r < PQntuples(res); r++)
			apply_row(b, res, r);
	batch_free(b);
	p->busy = false;            /* only now: the answer's watches may leave the partition above */
	if (res && PQresultStatus(res) == PGRES_TUPLES_OK)
		run_part(p);            /* watches that got dirty meanwhile */
	else
		part_maybe_free(p);
}

static bool
append_watch(SspBuf *buf, int idx, Watch *w)
{
	char head[96];

	snprintf(head, sizeof(head), "%s{\"w\":%d,\"seq\":%lld,\"actorId\":", idx ? "," : "", idx,
			 (long long) w->seq);
	ssp_buf_append(buf, head, strlen(head));
	ssp_buf_append(buf, w->conn->actor_json, strlen(w->conn->actor_json));
	ssp_buf_append(buf, ",\"message\":", 11);
	ssp_buf_append(buf, w->message, w->message_len);
	ssp_buf_append(buf, "}", 1);
	return !buf->oom;
}

/* one call for the partition's dirty watches (at most --watch-batch of them) */
static void
run_part(WatchPart *p)
{
	SspBuf buf;
	Batch *b;
	GwJob *j;
	int n = 0;

	if (p->busy)
		return;
	for (Watch *w = p->watches; w; w = w->pnext)
		if (w->dirty)
			n++;
	if (n == 0)
	{
		part_maybe_free(p);
		return;
	}
	if (n > gw_cfg.watch_batch)
		n = gw_cfg.watch_batch;
	if (!(b = calloc(1, sizeof(Batch))) || !(b->w = calloc((size_t) n, sizeof(Watch *))))
	{
		free(b);
		return;
	}
	b->part = p;
	ssp_buf_init(&buf);
	ssp_buf_append(&buf, "[", 1);
	for (Watch *w = p->watches; w && b->n < n; w = w->pnext)
		if (w->dirty)
		{
			append_watch(&buf, b->n, w);
			w->refs++;
			b->w[b->n++] = w;
		}
	ssp_buf_append(&buf, "]", 1);
	ssp_buf_append(&buf, "", 1);   /* a text parameter is NUL-terminated */
	j = buf.oom ? NULL : gw_job_new("SELECT w, max_commit_seq, outcome, message "
									"FROM syncular.operations_watch_rerun($1, $2::jsonb)", rerun_done, b);
	if (!j)
	{
		ssp_buf_free(&buf);
		batch_free(b);
		return;
	}
	gw_job_param(j, p->name, (int) strlen(p->name), 0, true);
	gw_job_param_take(j, buf.data, (int) buf.len - 1, 0, 0);
	for (int i = 0; i < b->n; i++)
	{
		b->w[i]->dirty = false;
		b->w[i]->lost = false;
		b->w[i]->running = true;
	}
	p->busy = true;
	if (gw_pool_submit(j))
		gw_metrics_watch_call();
	else
	{
		/* the queue is full: the watches stay dirty for the next wake-up or registration */
		gw_log("watch reruns skipped: the round queue is full");
		p->busy = false;
		for (int i = 0; i < b->n; i++)
		{
			b->w[i]->dirty = true;
			b->w[i]->running = false;
		}
		batch_free(b);
	}
}

void
gw_watch_on_commit(const char *partition, int64_t seq)
{
	for (WatchPart *p = parts, *next; p; p = next)
	{
		next = p->next;
		if (partition && strcmp(p->name, partition) != 0)
			continue;
		for (Watch *w = p->watches; w; w = w->pnext)
		{
			if (!partition)
				w->dirty = w->lost = true;
			else if (seq > w->seq)
			{
				if (seq > w->want)
					w->want = seq;
				w->dirty = true;
			}
		}
		run_part(p);
		if (partition)
			return;
	}
}

/* ---------------------------------------------------------------- client messages */

static bool
str_is(const SspOpValue *v, const char *lit)
{
	return v && v->kind == SSP_OP_STRING && v->str.len == strlen(lit) && memcmp(v->str.ptr, lit, v->str.len) == 0;
}

static bool
nonempty_string(const SspOpValue *v)
{
	return v && v->kind == SSP_OP_STRING && v->str.len > 0 && v->str.len <= 256 &&
		!memchr(v->str.ptr, '\0', v->str.len);
}

static Watch *
find_watch(GwWatchConn *c, const char *id)
{
	for (Watch *w = c->watches; w; w = w->cnext)
		if (strcmp(w->id, id) == 0)
			return w;
	return NULL;
}

static void
add_watch(GwWatchConn *c, const char *id, const SspOpValue *root)
{
	SspBuf enc;
	SspError err;
	Watch *w;

	if (find_watch(c, id))
	{
		send_error(c, id, "operation.invalid_request", "watchId is already active on this connection");
		return;
	}
	if (c->nwatches >= gw_cfg.ws_max_watches)
	{
		send_error(c, id, "operation.invalid_request", "this connection holds the most watches the gateway allows");
		return;
	}
	ssp_buf_init(&enc);
	if (!ssp_op_encode(&enc, root, &err) || enc.oom || !(w = calloc(1, sizeof(Watch))))
	{
		ssp_buf_free(&enc);
		send_error(c, id, "operation.execution_failed", "out of memory");
		return;
	}
	w->id = strdup(id);
	w->message = (char *) enc.data;     /* taken from the buffer */
	w->message_len = enc.len;
	if (!w->id)
	{
		free(w->id);
		free(w->message);
		free(w);
		send_error(c, id, "operation.execution_failed", "out of memory");
		return;
	}
	w->conn = c;
	w->part = c->part;
	w->seq = -1;
	w->dirty = true;            /* the registration snapshot */
	w->refs = 1;
	w->cnext = c->watches;
	c->watches = w;
	c->nwatches++;
	w->pnext = c->part->watches;
	c->part->watches = w;
	c->part->nwatches++;
	nwatches_total++;
	run_part(c->part);
}

void
gw_watch_receive(GwWatchConn *c, const uint8_t *msg, size_t len)
{
	SspArena *a = ssp_arena_new();
	SspOpValue *root = NULL;
	SspError err;
	const SspOpValue *rev, *kind, *wid;
	char id[257];

	if (!a)
	{
		c->close(c->transport, 1011, "out of memory");
		return;
	}
	if (!ssp_op_decode(a, (const char *) msg, len, &root, &err) || root->kind != SSP_OP_OBJECT ||
		!nonempty_string(wid = ssp_op_member(root, "watchId")))
	{
		c->close(c->transport, 1007, "operation.invalid_request");
		ssp_arena_free(a);
		return;
	}
	snprintf(id, sizeof(id), "%.*s", (int) wid->str.len, wid->str.ptr);
	rev = ssp_op_member(root, "revision");
	kind = ssp_op_member(root, "kind");
	if (!rev || !((rev->kind == SSP_OP_INTEGER && rev->i == 1) || (rev->kind == SSP_OP_NUMBER && rev->num == 1)))
		send_error(c, id, "operation.invalid_request", "revision must be 1");
	else if (str_is(kind, "unwatch"))
	{
		Watch *w = find_watch(c, id);

		if (w)
			watch_remove(w);
	}
	else if (!str_is(kind, "watch"))
		send_error(c, id, "operation.invalid_request", "kind must be \"watch\" or \"unwatch\"");
	else if (!nonempty_string(ssp_op_member(root, "clientId")) ||
			 !nonempty_string(ssp_op_member(root, "operationId")))
		send_error(c, id, "operation.invalid_request", "clientId and operationId must be non-empty strings");
	else
		add_watch(c, id, root);
	ssp_arena_free(a);
}

/* ---------------------------------------------------------------- connections */

GwWatchConn *
gw_watch_conn_new(const char *partition, const char *actor, GwWatchSendFn send,
				  GwWatchCloseFn close, void *transport)
{
	GwWatchConn *c = calloc(1, sizeof(GwWatchConn));
	json_t *a = json_string(actor);

	if (!c || !a || !(c->actor_json = json_dumps(a, JSON_ENCODE_ANY)) || !(c->part = part_get(partition)))
	{
		json_decref(a);
		if (c)
			free(c->actor_json);
		free(c);
		return NULL;
	}
	json_decref(a);
	c->part->nconns++;
	c->send = send;
	c->close = close;
	c->transport = transport;
	c->next = conns;
	conns = c;
	return c;
}

void
gw_watch_conn_close(GwWatchConn *c)
{
	WatchPart *p;

	if (!c)
		return;
	p = c->part;
	while (c->watches)
		watch_remove(c->watches);
	p->nconns--;
	part_maybe_free(p);
	for (GwWatchConn **pp = &conns; *pp; pp = &(*pp)->next)
		if (*pp == c)
		{
			*pp = c->next;
			break;
		}
	free(c->actor_json);
	free(c);
}

void
gw_watch_drain(void)
{
	for (GwWatchConn *c = conns; c; c = c->next)
		c->close(c->transport, 1001, "gateway shutting down");
}
