/*
 * http.c — the HTTP layer: libmicrohttpd 0.9.75 (docs/gateway.md "Design") in external-epoll
 * mode inside the gateway's loop, one GwReq per request, and the gateway's own checks on top of
 * the library's parser.  The routes (routes.c) see a request head, body chunks and the end of
 * the body, and answer with gw_req_answer / gw_req_stream at any time, also later from a
 * database callback: the connection is suspended (MHD_suspend_connection) while an answer, the
 * next bytes of a stream or room for more body bytes are awaited, and resumed when they come.
 *
 * libmicrohttpd frames requests (RFC 9112 §6), answers pipelined requests in order (§9.3.2),
 * and answers heads over its 32 KiB connection memory with 431.  The gateway adds (RFC 9112
 * §6.3, §11.2; RFC 9110 §5.5): one Content-Length of digits and none beside Transfer-Encoding
 * (request smuggling), no control bytes in the target or a field (the raw target is checked
 * where the library still has it: the URI log callback, before it is cut at a NUL or
 * unescaped), heads over 8 KiB are 431, a chunked body is 411 (send Content-Length).  Each
 * such refusal is catalogue JSON (SPEC §10.1) with Connection: close.
 */
#include "gateway.h"
#include "loop.h"
#include "metrics.h"

#include <microhttpd.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#define HEAD_MAX 8192           /* bytes of a request head the gateway accepts */
#define STREAM_BLOCK 65536

struct GwReq
{
	struct MHD_Connection *c;
	GwRouteReq *route;
	GwReq      *prev, *next;        /* live requests (resumed before the daemon stops) */
	bool        started;            /* the head was handled */
	bool        active;             /* counted in gw_http_inflight */
	bool        suspended;
	bool        hold_head;          /* suspended before its body is read (gw_req_pause_body) */
	bool        read_again;         /* suspended only to be read again (read_again_if_pending) */
	bool        pause;
	bool        body_done;
	bool        body_expected;
	bool        bad_target;         /* NUL, control byte or space in the raw target */
	char        method[16];
	size_t      target_len;
	/* the answer */
	bool        has_answer, close_after, upgrade;
	int         status;
	char       *type;
	uint8_t    *body;
	size_t      len;
	void        (*body_free) (void *);  /* NULL: body is malloc'd */
	void       *body_free_cls;
	char      **hdrs;               /* name, value pairs, NULL-terminated */
	GwReadFn    read;
	void       *rcls;
	uint64_t    total;
	void       *ws_sock;
	char        ws_accept[64];
};

static struct MHD_Daemon *daemon_;
static bool stopping;           /* gw_http_stop: nothing is suspended again */
static const GwHttpHandlers *hd;
static GwReq *live;
static int inflight;
static int kicks;                  /* requests suspended by read_again_if_pending */

int
gw_http_inflight(void)
{
	return inflight;
}

/* ---------------------------------------------------------------- the request's head */

const char *
gw_req_header(GwReq *r, const char *name)
{
	return MHD_lookup_connection_value(r->c, MHD_HEADER_KIND, name);
}

const char *
gw_req_arg(GwReq *r, const char *name)
{
	return MHD_lookup_connection_value(r->c, MHD_GET_ARGUMENT_KIND, name);
}

bool
gw_req_method_is(GwReq *r, const char *method)
{
	return strcmp(r->method, method) == 0;
}

typedef struct KvCall
{
	GwKvFn      fn;
	void       *cls;
} KvCall;

static enum MHD_Result
kv_each(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	KvCall *k = cls;

	(void) kind;
	k->fn(k->cls, key, value);
	return MHD_YES;
}

void
gw_req_headers(GwReq *r, GwKvFn fn, void *cls)
{
	KvCall k = {fn, cls};

	MHD_get_connection_values(r->c, MHD_HEADER_KIND, kv_each, &k);
}

void
gw_req_args(GwReq *r, GwKvFn fn, void *cls)
{
	KvCall k = {fn, cls};

	MHD_get_connection_values(r->c, MHD_GET_ARGUMENT_KIND, kv_each, &k);
}

/* ---------------------------------------------------------------- suspend and resume */

static void
suspend(GwReq *r)
{
	if (!r->suspended && !stopping)
	{
		MHD_suspend_connection(r->c);
		r->suspended = true;
	}
}

void
gw_req_wake(GwReq *r)
{
	r->pause = false;
	if (r->suspended)
	{
		r->suspended = false;
		MHD_resume_connection(r->c);
	}
}

void
gw_req_pause_body(GwReq *r)
{
	r->pause = true;
}

void
gw_req_close_after(GwReq *r)
{
	r->close_after = true;
}

bool
gw_req_has_answer(GwReq *r)
{
	return r->has_answer;
}

/* ---------------------------------------------------------------- answers */

static void
answer_clear(GwReq *r)
{
	free(r->type);
	if (r->body_free)
		r->body_free(r->body_free_cls);
	else
		free(r->body);
	r->body_free = NULL;
	if (r->hdrs)
		for (char **h = r->hdrs; *h; h++)
			free(*h);
	free(r->hdrs);
	r->type = NULL;
	r->body = NULL;
	r->hdrs = NULL;
}

static void
answer_set(GwReq *r, int status, const char *type, const char *const *hdrs)
{
	int n = 0;

	answer_clear(r);
	r->has_answer = true;
	r->status = status;
	r->type = type ? strdup(type) : NULL;
	while (hdrs && hdrs[n])
		n++;
	if (n && (r->hdrs = calloc((size_t) n + 1, sizeof(char *))) != NULL)
		for (int i = 0; i < n; i++)
			r->hdrs[i] = strdup(hdrs[i]);
}

void
gw_req_answer(GwReq *r, int status, const char *type, uint8_t *body, size_t len, const char *const *hdrs)
{
	answer_set(r, status, type, hdrs);
	r->body = body;
	r->len = body ? len : 0;
	r->read = NULL;
	gw_req_wake(r);
}

void
gw_req_answer_owned(GwReq *r, int status, const char *type, const uint8_t *body, size_t len,
					const char *const *hdrs, void (*free_fn) (void *), void *free_cls)
{
	answer_set(r, status, type, hdrs);
	r->body = (uint8_t *) body;
	r->len = len;
	r->body_free = free_fn;
	r->body_free_cls = free_cls;
	r->read = NULL;
	gw_req_wake(r);
}

void
gw_req_stream(GwReq *r, int status, const char *type, uint64_t total, GwReadFn read, void *cls,
			  const char *const *hdrs)
{
	answer_set(r, status, type, hdrs);
	r->read = read;
	r->rcls = cls;
	r->total = total;
	gw_req_wake(r);
}

void
gw_http_upgrade_answer(GwReq *r, const char *accept, void *sock)
{
	answer_set(r, 101, NULL, NULL);
	r->upgrade = true;
	r->ws_sock = sock;
	snprintf(r->ws_accept, sizeof(r->ws_accept), "%s", accept);
	gw_req_wake(r);
}

/* the next bytes of a streamed answer; none yet: the connection waits (gw_req_wake) */
static ssize_t
stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	GwReq *r = cls;
	long n = r->read(r->rcls, pos, buf, max);

	if (n < 0)
		return MHD_CONTENT_READER_END_WITH_ERROR;
	if (n == 0)
	{
		suspend(r);
		return 0;
	}
	gw_metrics_bytes(GW_M_HTTP, false, (size_t) n);
	return n;
}

/* RFC 6455 §4.2.2: the socket of an accepted upgrade goes to ws.c */
static void
on_upgraded(void *cls, struct MHD_Connection *c, void *con_cls, const char *extra, size_t extra_len,
			MHD_socket sock, struct MHD_UpgradeResponseHandle *urh)
{
	GwReq *r = con_cls;

	(void) c;
	if (r)
	{
		r->ws_sock = NULL;      /* ws.c owns it now */
		if (r->active)
			inflight--;         /* the socket is counted by ws.c from now on */
		r->active = false;
	}
	hd->upgraded(cls, sock, extra, extra_len, urh);
}

void
gw_http_upgrade_close(void *handle)
{
	MHD_upgrade_action((struct MHD_UpgradeResponseHandle *) handle, MHD_UPGRADE_ACTION_CLOSE);
}

static struct MHD_Response *
make_response(GwReq *r)
{
	struct MHD_Response *resp;

	if (r->upgrade)
	{
		if (!(resp = MHD_create_response_for_upgrade(on_upgraded, r->ws_sock)))
			return NULL;
		MHD_add_response_header(resp, MHD_HTTP_HEADER_UPGRADE, "websocket");
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "Upgrade");
		MHD_add_response_header(resp, "Sec-WebSocket-Accept", r->ws_accept);
		return resp;
	}
	if (r->read)
		resp = MHD_create_response_from_callback(r->total, STREAM_BLOCK, stream_read, r, NULL);
	else
	{
		/* the response frees the body once sent: with free(), or with the owner's function (a
		 * PGresult the body points into: not copied out) */
		if (r->body_free)
			resp = MHD_create_response_from_buffer_with_free_callback_cls(r->len, r->body, r->body_free,
																		  r->body_free_cls);
		else
			resp = MHD_create_response_from_buffer(r->len, r->body, MHD_RESPMEM_MUST_FREE);
		if (resp)
		{
			gw_metrics_bytes(GW_M_HTTP, false, r->len);
			r->body = NULL;
			r->body_free = NULL;
		}
	}
	if (!resp)
		return NULL;
	if (r->type)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r->type);
	if (r->hdrs)
		for (char **h = r->hdrs; h[0] && h[1]; h += 2)
			MHD_add_response_header(resp, h[0], h[1]);
	if (r->close_after || gw_draining)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
	return resp;
}

static enum MHD_Result
queue(GwReq *r)
{
	struct MHD_Response *resp = make_response(r);
	enum MHD_Result rc;

	if (!resp)
		return MHD_NO;          /* out of memory: the connection closes */
	rc = MHD_queue_response(r->c, (unsigned int) r->status, resp);
	MHD_destroy_response(resp);
	return rc;
}

/* ---------------------------------------------------------------- the gateway's checks */

static void
refuse(GwReq *r, int status, const char *why)
{
	char *j = gw_error_json("sync.invalid_request", why, status, &status);

	r->close_after = true;
	gw_req_answer(r, status, "application/json", (uint8_t *) j, j ? strlen(j) : 0, NULL);
}

typedef struct HeadScan
{
	size_t      bytes;
	int         content_lengths;
	bool        bad_length;
	bool        te;
	bool        control;
	const char *prev_end;       /* where the previous field value ends in the library's buffer */
} HeadScan;

/*
 * A NUL inside a field value: the library keeps each value in its read buffer, ended by the NUL
 * it wrote over the line's CR (and LF), so the byte after a value's end is another NUL or the
 * next field's name; anything else is what followed a NUL byte of the value, which the library
 * cut there.  (An obs-fold continuation line shows the same way; RFC 9112 §5.2 allows a 400.)
 */
static bool
nul_in_value(const char *value_end, const char *next_key)
{
	return value_end && value_end[1] != '\0' && value_end + 1 != next_key;
}

/* RFC 9110 §5.5: CR, LF, NUL and other controls than HTAB are not field content */
static bool
has_control(const char *s)
{
	for (; *s; s++)
		if (((unsigned char) *s < 0x20 && *s != '\t') || *s == 0x7f)
			return true;
	return false;
}

static enum MHD_Result
scan_field(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	HeadScan *h = cls;

	(void) kind;
	if (nul_in_value(h->prev_end, key))
		h->control = true;
	h->prev_end = value ? value + strlen(value) : NULL;
	value = value ? value : "";
	h->bytes += strlen(key) + strlen(value) + 4;
	if (has_control(key) || has_control(value))
		h->control = true;
	if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0)
	{
		h->content_lengths++;
		if (!*value || strlen(value) > 19 || strspn(value, "0123456789") != strlen(value))
			h->bad_length = true;
	}
	if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0)
		h->te = true;
	return MHD_YES;
}

/* RFC 9112 §6 framing and RFC 9110 §5.5 field bytes: true when the request was refused */
static bool
framing_refused(GwReq *r, const char *method)
{
	HeadScan h = {strlen(method) + r->target_len + 12, 0, false, false, false, NULL};

	MHD_get_connection_values(r->c, MHD_HEADER_KIND, scan_field, &h);
	if (nul_in_value(h.prev_end, NULL))
		h.control = true;
	r->body_expected = h.te || (h.content_lengths > 0 &&
								strcmp(gw_req_header(r, MHD_HTTP_HEADER_CONTENT_LENGTH), "0") != 0);
	if (h.bytes > HEAD_MAX)
		refuse(r, 431, "request head over 8 KiB");
	else if (r->bad_target || h.control)
		refuse(r, 400, "control character in the request line or a header field");
	else if (h.content_lengths > 1)
		refuse(r, 400, "more than one Content-Length header");
	else if (h.bad_length)
		refuse(r, 400, "Content-Length is not a decimal number");
	else if (h.content_lengths > 0 && h.te)
		refuse(r, 400, "Content-Length together with Transfer-Encoding");
	else if (h.te)
		refuse(r, 411, "chunked request bodies are not accepted: send Content-Length");
	else
		return false;
	return true;
}

/* ---------------------------------------------------------------- libmicrohttpd callbacks */

static GwReq *
req_new(struct MHD_Connection *c)
{
	GwReq *r = calloc(1, sizeof(GwReq));

	if (!r)
		return NULL;
	r->c = c;
	r->next = live;
	if (live)
		live->prev = r;
	live = r;
	return r;
}

/* Called with the raw request target, before the library unescapes it or cuts it at a NUL
 * byte: it ends at the NUL the library wrote over the space before "HTTP/"; anything else after
 * the first NUL means a NUL inside the target.  (The callback runs only once the library parsed
 * an "HTTP/d.d" version after the target, so the bytes read here are inside the request line.) */
static void *
on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
	GwReq *r = req_new(c);
	size_t n = strlen(uri);

	(void) cls;
	if (!r)
		return NULL;
	r->target_len = n;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char) uri[i] <= 0x20 || uri[i] == 0x7f)
			r->bad_target = true;
	if (strncmp(uri + n + 1, "HTTP/", 5) != 0)
		r->bad_target = true;
	return r;
}

static void
on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
	GwReq *r = *con_cls;

	(void) cls, (void) c, (void) toe;
	if (!r)
		return;
	*con_cls = NULL;
	if (r->route)
		hd->route_free(r->route);
	if (r->ws_sock)
		hd->abandon(r->ws_sock);
	if (r->active)
		inflight--;
	answer_clear(r);
	if (r->prev)
		r->prev->next = r->next;
	else
		live = r->next;
	if (r->next)
		r->next->prev = r->prev;
	free(r);
}

static enum MHD_Result
on_head(GwReq *r, const char *url, const char *method)
{
	r->started = true;
	r->active = true;
	inflight++;
	snprintf(r->method, sizeof(r->method), "%s", method);
	if (!framing_refused(r, method))
	{
		if (gw_draining)
		{
			char *j;
			int st;

			r->close_after = true;
			j = gw_error_json("sync.internal_error", "gateway is shutting down; retry", 503, &st);
			gw_req_answer(r, st, "application/json", (uint8_t *) j, j ? strlen(j) : 0, NULL);
		}
		else if (gw_req_header(r, MHD_HTTP_HEADER_UPGRADE) && strcmp(method, "GET") == 0)
			hd->upgrade(r, url);
		else if (!(r->route = hd->route_start(r, url)) && !r->has_answer)
			return MHD_NO;
	}
	/* an answer before the body: sent at once, the body is not read, the connection closes */
	if (r->has_answer && r->body_expected)
	{
		r->close_after = true;
		return queue(r);
	}
	if (r->pause && !r->has_answer)
	{
		r->hold_head = true;    /* no body byte before the route is ready for it */
		suspend(r);
	}
	return MHD_YES;
}

/*
 * The library (0.9.75, epoll mode: edge-triggered) takes a read shorter than its buffer as "the
 * socket is drained"; bytes or a close that were already queued behind that read raise no new
 * edge, and the request would wait for the 30 s connection timeout with its transaction open.
 * A resumed connection is read again, so when the socket still has something to read after a
 * body chunk (a peek, no bytes taken), the connection is suspended here and resumed at the start
 * of the library's next turn, which comes at once (gw_http_timeout_ms); a resume inside the
 * callback that suspended would be lost.
 */
static void
read_again_if_pending(GwReq *r)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(r->c, MHD_CONNECTION_INFO_CONNECTION_FD);
	char b;

	if (!ci || recv(ci->connect_fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) < 0)
		return;                 /* EAGAIN: the next bytes or the close raise an edge */
	suspend(r);
	r->read_again = true;
	kicks++;
}

static void
on_upload(GwReq *r, const char *data, size_t len)
{
	gw_metrics_bytes(GW_M_HTTP, true, len);
	if (!r->has_answer && r->route)
		hd->route_body(r->route, (const uint8_t *) data, len);
	if (r->pause && !r->has_answer)
		suspend(r);
	else if (!r->suspended)
		read_again_if_pending(r);
}

static enum MHD_Result
on_access(void *cls, struct MHD_Connection *c, const char *url, const char *method, const char *version,
		  const char *upload, size_t *upload_size, void **con_cls)
{
	GwReq *r = *con_cls;

	(void) cls, (void) version;
	if (!r && !(r = *con_cls = req_new(c)))
		return MHD_NO;
	if (stopping && !r->has_answer)
		return MHD_NO;          /* past the drain: the connection closes unanswered */
	r->c = c;
	if (!r->started)
		return on_head(r, url, method);
	if (*upload_size)
	{
		on_upload(r, upload, *upload_size);
		*upload_size = 0;
		return MHD_YES;
	}
	if (r->hold_head)
	{
		/* resumed before the body: an answer now is early (the body is not read) */
		r->hold_head = false;
		if (r->has_answer && r->body_expected)
			r->close_after = true;
		return r->has_answer ? queue(r) : MHD_YES;
	}
	if (!r->body_done)
	{
		r->body_done = true;
		if (r->route && !r->has_answer)
			hd->route_body_done(r->route);
	}
	if (r->has_answer)
		return queue(r);
	suspend(r);
	return MHD_YES;
}

/* ---------------------------------------------------------------- the daemon in the loop */

static void
on_daemon_fd(int fd, uint32_t events, void *arg)
{
	(void) fd, (void) events, (void) arg;   /* gw_http_run follows every loop turn */
}

static void
mhd_log(void *cls, const char *fmt, va_list ap)
{
	char line[512];

	(void) cls;
	vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = '\0';
	gw_log("http: %s", line);
}

int
gw_http_start(const GwHttpHandlers *h)
{
	struct addrinfo hints, *ai = NULL;
	char port[16];
	const union MHD_DaemonInfo *info;
	unsigned int flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_ALLOW_UPGRADE;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	snprintf(port, sizeof(port), "%d", gw_cfg.listen_port);
	hd = h;
	if (getaddrinfo(gw_cfg.listen_host, port, &hints, &ai) != 0 || !ai)
		return -1;
	if (ai->ai_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	if (gw_cfg.verbose)
		flags |= MHD_USE_ERROR_LOG;
	daemon_ = MHD_start_daemon(flags, (uint16_t) gw_cfg.listen_port, NULL, NULL, on_access, NULL,
							   MHD_OPTION_SOCK_ADDR, ai->ai_addr,
							   MHD_OPTION_URI_LOG_CALLBACK, on_uri, NULL,
							   MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
							   MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
							   MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int) 30,
							   MHD_OPTION_CONNECTION_LIMIT, (unsigned int) (gw_cfg.ws_max_sockets + 4096),
							   MHD_OPTION_LISTENING_ADDRESS_REUSE, (unsigned int) 1,
							   MHD_OPTION_END);
	freeaddrinfo(ai);
	if (!daemon_)
		return -1;
	info = MHD_get_daemon_info(daemon_, MHD_DAEMON_INFO_EPOLL_FD);
	if (!info || gw_loop_watch(info->epoll_fd, EPOLLIN, on_daemon_fd, NULL) != 0)
	{
		MHD_stop_daemon(daemon_);
		daemon_ = NULL;
		return -1;
	}
	return 0;
}

int
gw_http_timeout_ms(int max_ms)
{
	MHD_UNSIGNED_LONG_LONG t;

	if (kicks > 0)
		return 0;               /* resume them at once (gw_http_run) */
	if (daemon_ && MHD_get_timeout(daemon_, &t) == MHD_YES && t < (MHD_UNSIGNED_LONG_LONG) max_ms)
		return (int) t;
	return max_ms;
}

void
gw_http_run(void)
{
	if (!daemon_)
		return;
	/* the connections suspended to be read again, in the library's previous turn */
	for (GwReq *r = live; r && kicks > 0; r = r->next)
		if (r->read_again)
		{
			r->read_again = false;
			kicks--;
			if (r->suspended)
			{
				r->suspended = false;
				MHD_resume_connection(r->c);
			}
		}
	kicks = 0;
	MHD_run(daemon_);
}

/* the library may not stop with suspended connections: resume them, unanswered ones close
 * (their routes are freed with them) */
void
gw_http_stop(void)
{
	if (!daemon_)
		return;
	stopping = true;
	for (GwReq *r = live; r; r = r->next)
		if (r->suspended)
		{
			r->suspended = false;
			MHD_resume_connection(r->c);
		}
	MHD_run(daemon_);
	MHD_stop_daemon(daemon_);
	daemon_ = NULL;
}
