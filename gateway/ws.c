/*
 * ws.c — the realtime WebSocket `GET <mount>/realtime?clientId=...` (SPEC §8): upgrade checks
 * and host authentication (§8.1; also of the live query watch socket `GET
 * <mount>/operations/realtime`, REMOTE.md §6, which then goes to wswatch.c), the hello built
 * from syncular.realtime_connect, control messages (§8.2 acks, §8.6 presence), sync rounds over the socket (§8.7: 0x01 chunks both
 * ways, one round at a time), bounded per-socket buffers and close codes.
 *
 * Close codes: 1001 going away (drain, idle), 1002 a round stream without a valid SSP2 request
 * header, 1003 an unknown binary channel tag, 1007 a malformed control message, 1008 a second
 * round while one is in flight / bytes past END / a slow consumer, 1009 a message over
 * --ws-max-message, 1013 the round queue is full; refusals carry the catalogue code as reason:
 * 4400 a bad upgrade (no clientId on /realtime) or a connection the extension refused (e.g.
 * sync.invalid_client_id), 4401 sync.auth_required, 4404 not a WebSocket route, 4429
 * sync.websocket_connection_limit, 4500 sync.internal_error.
 */
#include "ws.h"
#include "loop.h"
#include "waiter.h"

#include "ssp.h"

#include <arpa/inet.h>
#include <libpq-fe.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#define ROUND_CHUNK 65536

static void ws_on_open(Sock *s);
static void ws_on_closed(Sock *s);
static void ws_on_message_start(Sock *s, bool binary);
static void ws_on_message_bytes(Sock *s, const uint8_t *in, size_t len);
static void ws_on_message_end(Sock *s);

static int nsocks;          /* sockets between upgrade and close */
static uint64_t next_id = 1;

int
gw_ws_count(void)
{
	return nsocks;
}

/* commit wake-ups are consumed by open sockets (fanout, watches) and by fanout calls running */
static bool
wakeups_wanted(void)
{
	return nsocks > 0 || gw_watch_count() > 0 || fanout_parts() != NULL;
}

/* ---------------------------------------------------------------- lifetime */

void
ws_hold(Sock *s)
{
	s->refs++;
}

static void
sock_free(Sock *s)
{
	WsMsg *m = s->qhead;

	while (m)
	{
		WsMsg *n = m->next;

		free(m);
		m = n;
	}
	json_decref(s->scope_keys);
	free(s->registration_text);
	free(s->headers_json);
	free(s->query_json);
	free(s->path);
	free(s->rx);
	free(s->round);
	gw_budget_give(s->held);
	free(s);
}

void
ws_release(Sock *s)
{
	if (--s->refs == 0)
		sock_free(s);
}

/* ---------------------------------------------------------------- errors from the database */

/* the catalogue code of a failed statement (DETAIL {"code": ...}), else sync.internal_error */
static void
error_code_of(PGresult *res, char *code, size_t cap)
{
	const char *det = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL) : NULL;
	json_error_t je;
	json_t *d = det ? json_loads(det, 0, &je) : NULL;
	const char *c = d ? json_string_value(json_object_get(d, "code")) : NULL;

	snprintf(code, cap, "%s", c ? c : "sync.internal_error");
	json_decref(d);
}

/* ---------------------------------------------------------------- registration */

static void connect_done(GwJob *job, PGresult *res, const char *err);

static void
start_connect(Sock *s)
{
	GwJob *j;

	if (s->ops)
	{
		ws_watch_open(s);       /* <mount>/operations/realtime: no SSP2 registration (wswatch.c) */
		return;
	}
	/*
	 * The answer without its registration, and the registration apart, as the database prints it:
	 * the text fanout calls send back (read once, not also inside the answer); the
	 * backend answering realtime_connect keeps its parse (src/fanout_regs.c), and the job prefers
	 * the connection of the socket's fanout call (fanout_prefer), so that call finds it parsed.
	 */
	j = gw_job_new("SELECT (c - 'registration')::text, (c -> 'registration')::text "
				   "FROM syncular.realtime_connect($1, $2, $3) c", connect_done, s);

	if (!j)
	{
		ws_close(s, 4500, "sync.internal_error");
		return;
	}
	j->result_format = 0;
	j->prefer = fanout_prefer(s);
	j->prefer_only = true;      /* a registration is worth its wait: later commits find it parsed */
	gw_job_param(j, s->who.partition, (int) strlen(s->who.partition), 0, true);
	gw_job_param(j, s->who.actor, (int) strlen(s->who.actor), 0, true);
	gw_job_param(j, s->client, (int) strlen(s->client), 0, true);
	ws_hold(s);
	if (!gw_pool_submit(j))
	{
		ws_release(s);
		ws_close(s, 1013, "sync.rate_limited");
	}
}

static void
send_hello(Sock *s, json_t *r)
{
	char sid[33];
	uint8_t rnd[16];

	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
		memset(rnd, 0, sizeof(rnd));
	for (int i = 0; i < 16; i++)
		snprintf(sid + 2 * i, 3, "%02x", rnd[i]);
	ws_send_event(s, "hello", json_pack("{s:i, s:s, s:s, s:s, s:O, s:O, s:O, s:I}",
									 "protocolVersion", 1, "sessionId", sid,
									 "actorId", s->who.actor, "clientId", s->client,
									 "cursor", json_object_get(r, "cursor"),
									 "latestCursor", json_object_get(r, "latestCursor"),
									 "requiresSync", json_object_get(r, "requiresSync"),
									 "timestamp", (json_int_t) ws_now_ms()));
}

/*
 * §8.7, decided by what the database shows, never by which event the loop handled first: the
 * round is over and realtime_connect read the client's cursor and the partition's head in one
 * snapshot.  A commit visible by then that the round did not deliver (head > cursor) — every
 * commit that landed while the round ran — gets exactly this catchup-required wake-up, after
 * the response; the socket is behind until an ack or a pull reaches that head.  Wake-ups the
 * loop received meanwhile for commits newer than that snapshot go through a normal fanout.
 */
static void
after_round_registration(Sock *s, int64_t head)
{
	int64_t missed = s->round_missed;

	s->reregistering = false;
	s->round_missed = 0;
	if (head > s->cursor)
		ws_send_wake(s, head, "catchup-required");
	if (missed > head)
		fanout_on_commit(s->who.partition, missed);
}

static void
connect_done(GwJob *job, PGresult *res, const char *err)
{
	Sock *s = job->user;
	json_error_t je;
	json_t *r, *old_keys;
	char code[64];

	if (s->st == WS_GONE || s->st == WS_CLOSING)
	{
		ws_release(s);
		return;
	}
	if (!res || PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1 || PQnfields(res) != 2)
	{
		error_code_of(res, code, sizeof(code));
		if (res)
			gw_log("realtime_connect for %s refused: %s", s->client, PQresultErrorMessage(res));
		else
			gw_log("realtime_connect for %s failed: %s", s->client, err ? err : "?");
		ws_close(s, strcmp(code, "sync.internal_error") == 0 ? 4500 : 4400, code);
		ws_release(s);
		return;
	}
	r = json_loads(PQgetvalue(res, 0, 0), 0, &je);
	/* the registration apart (a JSON object: jsonb prints one starting with '{') */
	if (!r || PQgetisnull(res, 0, 1) || PQgetvalue(res, 0, 1)[0] != '{')
	{
		json_decref(r);
		ws_close(s, 4500, "sync.internal_error");
		ws_release(s);
		return;
	}
	/* kept as text only: it goes back verbatim in realtime_fanout's argument */
	free(s->registration_text);
	if (!(s->registration_text = strdup(PQgetvalue(res, 0, 1))))
	{
		json_decref(r);
		ws_close(s, 4500, "sync.internal_error");
		ws_release(s);
		return;
	}
	snprintf(s->log_epoch, sizeof(s->log_epoch), "%s",
			 json_string_value(json_object_get(r, "logEpoch")) ? json_string_value(json_object_get(r, "logEpoch")) : "");
	old_keys = s->scope_keys;
	s->scope_keys = json_incref(json_object_get(r, "scopeKeys"));
	if (!json_is_array(s->scope_keys))
	{
		json_decref(s->scope_keys);
		s->scope_keys = json_array();
	}
	s->cursor = json_integer_value(json_object_get(r, "cursor"));
	s->unacked = 0;
	if (s->st == WS_CONNECTING && gw_draining)
		ws_close(s, 1001, "gateway shutting down");
	else if (s->st == WS_CONNECTING)
	{
		/* §8.2 (the reference's choice): a socket behind at connect gets no gap-bridging delta,
		 * only catchup-required wake-ups until an ack or a round reaches this head */
		s->head_needed = json_integer_value(json_object_get(r, "latestCursor"));
		send_hello(s, r);
		s->st = WS_OPEN;
		fanout_join(s, s->who.partition);
	}
	else if (s->reregistering)
		after_round_registration(s, json_integer_value(json_object_get(r, "latestCursor")));
	presence_on_registration(s, old_keys);
	json_decref(old_keys);
	json_decref(r);
	ws_release(s);
}

static void
auth_done(GwJob *job, PGresult *res, const char *err)
{
	Sock *s = job->user;

	(void) err;
	if (s->st == WS_GONE || s->st == WS_CLOSING)
	{
		ws_release(s);
		return;
	}
	if (!res || PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1)
	{
		if (res)
			gw_log("authenticator failed at upgrade: %s", PQresultErrorMessage(res));
		ws_close(s, 4500, "sync.internal_error");
		ws_release(s);
		return;
	}
	if (!gw_auth_identity(PQgetisnull(res, 0, 0) ? NULL : PQgetvalue(res, 0, 0), &s->who))
	{
		ws_close(s, 4401, "sync.auth_required");
		ws_release(s);
		return;
	}
	s->st = WS_CONNECTING;
	start_connect(s);
	ws_release(s);
}

static void
start_auth(Sock *s)
{
	GwJob *j = gw_job_new("SELECT syncular.authenticate('GET', $1, $2::jsonb, $3::jsonb)::text",
						  auth_done, s);

	if (!j)
	{
		ws_close(s, 4500, "sync.internal_error");
		return;
	}
	j->result_format = 0;
	gw_job_param(j, s->path, (int) strlen(s->path), 0, true);
	gw_job_param(j, s->headers_json, (int) strlen(s->headers_json), 0, true);
	gw_job_param(j, s->query_json, (int) strlen(s->query_json), 0, true);
	ws_hold(s);
	if (!gw_pool_submit(j))
	{
		ws_release(s);
		ws_close(s, 1013, "sync.rate_limited");
	}
}

/* ---------------------------------------------------------------- acks (§8.2) */

/* the socket's delivered cursor moves at once (flow control, §8.2); the client record's cursor
 * is written with the other pending acks, in the background (acks.c) */
static void
on_ack(Sock *s, int64_t n)
{
	if (s->st != WS_OPEN)
		return;
	gw_metrics_ack_received();
	if (n > s->cursor)
		s->cursor = n;
	if (n >= s->last_delta_cursor)
		s->unacked = 0;
	if (n < 0 || !s->log_epoch[0])
		return;                 /* nothing to record */
	if (acks_note(s, n))
		ws_hold(s);
}

/* ---------------------------------------------------------------- socket rounds (§8.7) */

static void
send_round_bytes(Sock *s, const uint8_t *p, size_t len)
{
	for (size_t off = 0; off < len; off += ROUND_CHUNK)
		ws_send_binary(s, 0x01, p + off, len - off > ROUND_CHUNK ? ROUND_CHUNK : len - off, false);
}

static SspStr
sstr(const char *p)
{
	SspStr r = {p, (uint32_t) strlen(p)};

	return r;
}

/* a request-level failure as a minimal response stream: RESP_HEADER, ERROR, END (§8.7) */
static void
send_round_error(Sock *s, const char *code, const char *category, bool retryable,
				 const char *action, const char *message, const char *details)
{
	SspBuf b;
	SspError err;
	SspFrame f;
	uint16_t wire = s->round_wire >= 2 && s->round_wire <= 3 ? s->round_wire : 3;

	ssp_buf_init(&b);
	memset(&f, 0, sizeof(f));
	f.type = SSP_FRAME_RESP_HEADER;
	f.resp_header.log_epoch = sstr(s->log_epoch[0] ? s->log_epoch : "unknown");
	if (ssp_write_message_header(&b, wire, SSP_KIND_RESPONSE, &err) && ssp_write_frame(&b, wire, &f, &err))
	{
		memset(&f, 0, sizeof(f));
		f.type = SSP_FRAME_ERROR;
		f.error.code = sstr(code);
		f.error.category = sstr(category);
		f.error.retryable = retryable;
		f.error.recommended_action = sstr(action);
		f.error.message = sstr(message);
		if (details)
		{
			f.error.has_details = true;
			f.error.details = sstr(details);
		}
		if (ssp_write_frame(&b, wire, &f, &err) && ssp_write_end(&b, &err))
			send_round_bytes(s, b.data, b.len);
		else
			gw_log("cannot encode an ERROR frame: %s", err.message);
	}
	ssp_buf_free(&b);
}

/* a catalogue JSON body (from handle_http or the gateway) as ERROR frames */
static void
send_round_error_json(Sock *s, const char *json, size_t len)
{
	json_error_t je;
	json_t *o = json_loadb(json, len, 0, &je);
	json_t *d = o ? json_object_get(o, "details") : NULL;
	char *details = d && !json_is_null(d) ? json_dumps(d, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
	const char *code = o ? json_string_value(json_object_get(o, "code")) : NULL;

	if (!code)
		send_round_error(s, "sync.internal_error", "internal", true, "retryLater", "internal server error", NULL);
	else
		send_round_error(s, code, json_string_value(json_object_get(o, "category")) ?: "internal",
						 json_is_true(json_object_get(o, "retryable")),
						 json_string_value(json_object_get(o, "recommendedAction")) ?: "retryLater",
						 json_string_value(json_object_get(o, "message")) ?: "", details);
	free(details);
	json_decref(o);
}

static void
round_finish(Sock *s)
{
	s->round_busy = false;
	s->round_len = 0;
	memset(&s->scan, 0, sizeof(s->scan));
	if (s->round_cap > 65536)
	{
		gw_budget_give(s->round_cap);   /* a large request buffer does not stay with the socket */
		s->held -= s->round_cap;
		free(s->round);
		s->round = NULL;
		s->round_cap = 0;
	}
}

static void
round_done(GwJob *job, PGresult *res, const char *err)
{
	Sock *s = job->user;
	int status;

	if (s->st != WS_OPEN)
	{
		ws_release(s);
		return;
	}
	if (!res || PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1 || PQgetlength(res, 0, 0) != 4)
	{
		gw_log("socket round failed: %s", res ? PQresultErrorMessage(res) : err ? err : "?");
		send_round_error(s, "sync.internal_error", "internal", true, "retryLater",
						 "the database connection failed during the round; retry", NULL);
		round_finish(s);
		s->reregistering = true;
		start_connect(s);
		ws_release(s);
		return;
	}
	status = (int) ntohl(*(const uint32_t *) PQgetvalue(res, 0, 0));
	if (status == 200)
		send_round_bytes(s, (const uint8_t *) PQgetvalue(res, 0, 2), (size_t) PQgetlength(res, 0, 2));
	else
		send_round_error_json(s, PQgetvalue(res, 0, 2), (size_t) PQgetlength(res, 0, 2));
	round_finish(s);
	/* §8.7: a completed round replaces the registration (a failed one leaves it as it was,
	 * which re-reading gives too); until it is read again the socket takes no fanout, and the
	 * re-read decides whether a commit of the round's window is owed a wake-up */
	s->reregistering = true;
	start_connect(s);
	ws_release(s);
}

static void
start_round(Sock *s)
{
	SspMessage msg;
	SspError err;
	GwJob *j;

	s->round_busy = true;
	s->round_wire = (uint16_t) (s->round[4] | s->round[5] << 8);
	memset(&msg, 0, sizeof(msg));
	/* §8.7: the round's clientId must be the connection's; undecodable bytes go to the engine,
	 * which answers the decode error exactly as POST /sync does */
	if (ssp_decode_message(s->round, s->round_len, &msg, &err))
	{
		bool same = msg.nframes > 0 && msg.frames[0].type == SSP_FRAME_REQ_HEADER &&
			msg.frames[0].req_header.client_id.len == strlen(s->client) &&
			memcmp(msg.frames[0].req_header.client_id.ptr, s->client, strlen(s->client)) == 0;

		ssp_message_free(&msg);
		if (!same)
		{
			send_round_error(s, "sync.invalid_client_id", "invalid-request", false, "resetClientId",
							 "the round's clientId is not the connection's", NULL);
			round_finish(s);
			return;
		}
	}
	j = gw_job_new("SELECT status, content_type, body FROM syncular.handle_http($1, $2, $3)", round_done, s);
	if (!j)
	{
		send_round_error(s, "sync.internal_error", "internal", true, "retryLater", "out of memory", NULL);
		round_finish(s);
		return;
	}
	j->prepare = true;
	/* the queued round's copy of the request counts until the pool frees the job */
	if (!gw_budget_take(s->round_len))
	{
		gw_job_free(j);
		send_round_error(s, "sync.rate_limited", "rate-limited", true, "retryLater",
						 "the gateway's memory budget is in use", NULL);
		round_finish(s);
		return;
	}
	j->budget = s->round_len;
	j->bootstrap = ssp_request_bootstraps(s->round, s->round_len);
	gw_job_param(j, s->round, (int) s->round_len, 1, true);
	gw_job_param(j, s->who.partition, (int) strlen(s->who.partition), 0, true);
	gw_job_param(j, s->who.actor, (int) strlen(s->who.actor), 0, true);
	ws_hold(s);
	/* a push waits for its partition's push in the database and runs with the others waiting
	 * (groupcommit.c) */
	if (!(ssp_request_pushes(s->round, s->round_len) ? gw_gc_submit(j, s->who.partition) : gw_pool_submit(j)))
	{
		ws_release(s);
		send_round_error(s, "sync.rate_limited", "rate-limited", true, "retryLater",
						 "too many rounds waiting for the database", NULL);
		round_finish(s);
	}
}

/*
 * An inbound message or a round's request stream is assembled in a buffer of the socket that
 * grows within the process's memory budget (budget.c), like HTTP bodies; when it does not fit,
 * the socket is closed 1013 (try again later, RFC 6455 §7.4.1).  false: closed.
 */
static bool
ws_grow(Sock *s, uint8_t **buf, size_t *cap, size_t need)
{
	size_t ncap = *cap ? *cap : 4096;
	uint8_t *nb;

	while (ncap < need)
		ncap *= 2;
	if (!gw_budget_take(ncap - *cap))
	{
		ws_close(s, 1013, "the gateway's memory budget is in use; retry later");
		return false;
	}
	if (!(nb = realloc(*buf, ncap)))
	{
		gw_budget_give(ncap - *cap);
		ws_close(s, 1011, "out of memory");
		return false;
	}
	s->held += ncap - *cap;
	*buf = nb;
	*cap = ncap;
	return true;
}

static void
on_round_chunk(Sock *s, const uint8_t *p, size_t len)
{
	GwScan r;

	if (s->round_busy)
	{
		ws_close(s, 1008, "a sync round is already in flight (SPEC 8.7)");
		return;
	}
	if (s->round_len + len > gw_cfg.ws_max_message)
	{
		ws_close(s, 1009, "sync round request too large");
		return;
	}
	if (s->round_len + len > s->round_cap && !ws_grow(s, &s->round, &s->round_cap, s->round_len + len))
		return;
	memcpy(s->round + s->round_len, p, len);
	s->round_len += len;
	r = gw_round_scan(&s->scan, s->round, s->round_len, gw_cfg.ws_max_message);
	if (r == GW_SCAN_BAD_HEADER)
		ws_close(s, 1002, "not an SSP2 request stream (SPEC 8.7)");
	else if (r == GW_SCAN_BAD_FRAME)
		ws_close(s, 1002, "malformed END frame in the round stream");
	else if (r == GW_SCAN_TOO_LARGE)
		ws_close(s, 1009, "sync round request too large");
	else if (r == GW_SCAN_DONE && s->scan.end != s->round_len)
		ws_close(s, 1008, "bytes after END: one round at a time (SPEC 8.7)");
	else if (r == GW_SCAN_DONE)
		start_round(s);
}

/* ---------------------------------------------------------------- inbound messages */

static void
on_message(Sock *s)
{
	if (s->ops)
	{
		ws_watch_message(s);    /* live query watches (wswatch.c) */
		return;
	}
	if (s->st != WS_OPEN)
		return;                 /* before hello nothing is accepted; after close, nothing matters */
	if (s->rx_binary)
	{
		if (s->rx_len == 0 || s->rx[0] != 0x01)
			ws_close(s, 1003, "unknown binary channel tag (SPEC 8.7)");
		else
			on_round_chunk(s, s->rx + 1, s->rx_len - 1);
		return;
	}
	{
		GwControl c;

		gw_control_parse((const char *) s->rx, s->rx_len, &c);
		if (c.kind == GW_CTL_BAD)
			ws_close(s, 1007, c.error);
		else if (c.kind == GW_CTL_ACK)
			on_ack(s, c.cursor);
		else if (c.kind == GW_CTL_PRESENCE)
			presence_on_control(s, &c);
		gw_control_free(&c);
	}
}

static void
ws_on_message_start(Sock *s, bool binary)
{
	s->rx_len = 0;
	s->rx_binary = binary;
}

static void
ws_on_message_bytes(Sock *s, const uint8_t *in, size_t len)
{
	gw_metrics_bytes(GW_M_WS, true, len);
	if (s->st == WS_CLOSING)
		return;
	if (s->rx_len + len > gw_cfg.ws_max_message)
	{
		ws_close(s, 1009, "message too large");
		return;
	}
	if (s->rx_len + len > s->rx_cap && !ws_grow(s, &s->rx, &s->rx_cap, s->rx_len + len))
		return;
	if (len)
		memcpy(s->rx + s->rx_len, in, len);
	s->rx_len += len;
}

static void
ws_on_message_end(Sock *s)
{
	if (s->st == WS_CLOSING)
		return;
	on_message(s);
	s->rx_len = 0;
	if (s->rx_cap > 65536)
	{
		gw_budget_give(s->rx_cap);
		s->held -= s->rx_cap;
		free(s->rx);            /* do not keep a large buffer per idle socket */
		s->rx = NULL;
		s->rx_cap = 0;
	}
}

/* ---------------------------------------------------------------- upgrade */

/*
 * Refusals at upgrade are made after it: the upgrade is accepted and the socket closed at once
 * with a 44xx code whose reason is the catalogue code (errors.md: auth_required and
 * websocket_connection_limit surface as a WebSocket close), which every WebSocket client can
 * read, unlike an HTTP answer to its handshake.
 */
static Sock *
new_sock(const char *client)
{
	Sock *s = calloc(1, sizeof(Sock));

	if (!s)
		return NULL;
	snprintf(s->client, sizeof(s->client), "%s", client);
	s->id = next_id++;
	s->refs = 1;                /* the connection's own reference, dropped at close */
	nsocks++;
	gw_pool_wakeups_wanted();   /* before its first round: no commit after it goes unseen */
	return s;
}

static void
refused(Sock *s, int code, const char *reason)
{
	s->st = WS_REFUSED;
	s->close_code = code;
	snprintf(s->close_reason, sizeof(s->close_reason), "%s", reason);
}

/* RFC 6455 §4.2.2: Sec-WebSocket-Accept = base64(SHA-1(key + the protocol's GUID)) */
static bool
accept_key(GwReq *r, char out[64])
{
	static const char guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
	const char *key = gw_req_header(r, "Sec-WebSocket-Key");
	const char *ver = gw_req_header(r, "Sec-WebSocket-Version");
	char buf[128];
	unsigned char md[SHA_DIGEST_LENGTH];

	if (!key || !ver || strcmp(ver, "13") != 0 || strlen(key) != 24)
		return false;
	snprintf(buf, sizeof(buf), "%s%s", key, guid);
	SHA1((const unsigned char *) buf, strlen(buf), md);
	EVP_EncodeBlock((unsigned char *) out, md, SHA_DIGEST_LENGTH);
	return true;
}

/* the socket's identity: JWT now, or the SQL authenticator's inputs for after the upgrade */
static void
upgrade_auth(Sock *s, GwReq *r, const char *path)
{
	const char *why;

	if (gw_auth_is_jwt())
	{
		s->st = WS_CONNECTING;
		if (gw_auth_jwt(r, &s->who, &why) != 0)
			refused(s, 4401, "sync.auth_required");
		return;
	}
	s->st = WS_AUTH;
	s->path = strdup(path);
	s->headers_json = gw_auth_headers_json(r);
	s->query_json = gw_auth_query_json(r);
	if (!s->path || !s->headers_json || !s->query_json)
		refused(s, 4500, "sync.internal_error");
}

void
gw_ws_upgrade(GwReq *r, const char *path)
{
	char accept[64];
	GwRoute route = gw_route(path, gw_cfg.mount);
	bool ops = route == GW_ROUTE_OPS_REALTIME;
	/* a watch socket has no clientId in its URL: each watch message carries its own (REMOTE.md 6) */
	const char *client = ops ? "" : gw_req_arg(r, "clientId");
	bool ok = client && (*client || ops) && strlen(client) < 256;
	Sock *s;

	if (!accept_key(r, accept))
	{
		char *j;
		int st;

		j = gw_error_json("sync.invalid_request", "not a WebSocket upgrade (RFC 6455 §4.1)", 400, &st);
		gw_req_close_after(r);
		gw_req_answer(r, st, "application/json", (uint8_t *) j, j ? strlen(j) : 0, NULL);
		return;
	}
	if (!(s = new_sock(ok ? client : "")))
		return;                 /* no answer: the connection closes */
	s->ops = ops;
	if (route != GW_ROUTE_REALTIME && !ops)
		refused(s, 4404, "sync.not_found");
	else if (gw_draining)
		refused(s, 1001, "gateway shutting down");
	else if (nsocks > gw_cfg.ws_max_sockets)
		refused(s, 4429, "sync.websocket_connection_limit");
	else if (!ok)
		refused(s, 4400, "sync.invalid_request");
	else
		upgrade_auth(s, r, path);
	gw_http_upgrade_answer(r, accept, s);
}

/* the upgrade answer was never sent (the client left first) */
void
gw_ws_abandon(void *sock)
{
	Sock *s = sock;

	s->st = WS_GONE;
	nsocks--;
	ws_release(s);
}

static void
ws_on_open(Sock *s)
{
	if (s->st == WS_REFUSED)
	{
		char reason[sizeof(s->close_reason)];

		memcpy(reason, s->close_reason, sizeof(reason));
		s->st = WS_OPEN;        /* so that ws_close takes it */
		ws_close(s, s->close_code, reason);
	}
	else if (s->st == WS_AUTH)
		start_auth(s);
	else
		start_connect(s);
}

static void
ws_on_closed(Sock *s)
{
	ws_watch_closed(s);         /* every watch of the socket goes */
	presence_on_close(s);
	fanout_leave(s);
	if (s->ack_listed)
		gw_acks_flush_now();    /* a closed socket's last ack is written now, not later */
	s->st = WS_GONE;
	s->io = NULL;
	nsocks--;
	ws_release(s);
}

/* ---------------------------------------------------------------- heartbeat and drain */

static GwTimer heartbeat;

static void
heartbeat_cb(GwTimer *t)
{
	json_t *d;

	for (WsPart *p = fanout_parts(); p; p = p->next)
		for (Sock *s = p->socks; s; s = s->pnext)
			if (s->st == WS_OPEN)
			{
				d = json_pack("{s:I}", "timestamp", (json_int_t) ws_now_ms());
				ws_send_event(s, "heartbeat", d);
			}
	gw_timer_after(t, heartbeat_cb, (int64_t) gw_cfg.heartbeat_s * 1000000);
}

/* LISTEN notifications: presence has its channel, commit wake-ups go to the fanout */
static void
on_notify(const char *channel, const char *payload)
{
	if (payload && strcmp(channel, "syncular_presence") == 0)
		presence_on_notify(payload);
	else
		fanout_on_notify(channel, payload);
}

void
gw_ws_init(void)
{
	static const WsIoHandlers io = {
		ws_on_open, ws_on_closed, ws_on_message_start, ws_on_message_bytes, ws_on_message_end
	};

	ws_io_init(&io);
	acks_init(ws_release);
	gw_metrics_set_sockets(gw_ws_count);
	gw_metrics_set_watches(gw_watch_count);
	gw_pool_set_notify(on_notify);
	gw_waiter_set_commit(fanout_on_commit);
	gw_waiter_set_demand(wakeups_wanted);
	presence_init();
	gw_timer_after(&heartbeat, heartbeat_cb, (int64_t) gw_cfg.heartbeat_s * 1000000);
}

void
gw_ws_drain(void)
{
	gw_watch_drain();           /* the watch sockets are in no partition list: closed 1001 here */
	for (WsPart *p = fanout_parts(); p; p = p->next)
		for (Sock *s = p->socks; s; s = s->pnext)
			ws_close(s, 1001, "gateway shutting down");
}

/* the process stops: sockets still open after the drain end now */
void
gw_ws_shutdown(void)
{
	gw_timer_cancel(&heartbeat);
	ws_io_shutdown();
}
