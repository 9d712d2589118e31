/*
 * wsio.c — the framing of upgraded realtime sockets (RFC 6455) with wslay 1.1.1's server
 * context, in the gateway's event loop.  wslay checks what the wire must be (§5.1 masked client
 * frames, §5.2 reserved bits and opcodes, §5.4 fragmentation, §5.5 control frames of at most 125
 * bytes, unfragmented) and answers violations with close 1002 or, for frames its parser refuses,
 * by ending the connection; it answers pings and closes.  The
 * gateway keeps, on top: the outbound queue of each socket (ws_send_*, used by ws.c, fanout.c and
 * presence.c) bounded by --ws-max-buffer, of which one message at a time goes to wslay; message
 * assembly within --ws-max-message and the memory budget (ws.c, reported to through the handlers
 * it registers); close codes; liveness: a ping after --heartbeat quiet seconds, a hang-up after
 * --idle-timeout.
 *
 * Sockets are never freed inside a call that may come from a fanout walking a partition's
 * sockets: writes happen when the loop reports the socket writable, and a socket ends only from
 * its own loop callback or the liveness tick.
 */
#include "ws.h"
#include "loop.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <wslay/wslay.h>

#define PONGS_MAX 16            /* control answers queued before reading stops (ping floods) */
#define CLOSE_WAIT_US 2000000   /* after our close frame, the peer's answer is awaited this long */

struct WsIo
{
	Sock       *s;
	int         fd;
	void       *urh;            /* the library's handle of the upgraded connection (http.c) */
	wslay_event_context_ptr ctx;
	uint8_t    *extra;          /* bytes read with the upgrade request, served before the socket */
	size_t      extra_len, extra_off;
	int64_t     last_rx_us;
	int64_t     close_sent_us;
	bool        ping_out;
	bool        close_queued;
	bool        in_data;        /* the frame being received carries message payload */
	bool        fin;
	bool        dead;
	bool        linger;         /* our close is out, the peer's awaited: its bytes are discarded */
	bool        in_ready;       /* inside io_ready: it writes what is queued when it returns */
	bool        drained;        /* a short read emptied the socket: no recv until it is readable */
	uint8_t     hdr[14];        /* a frame header held back to leave with its payload (io_send) */
	uint8_t     hdr_len;
	uint32_t    events;
	GwTimer     first;          /* serves the bytes that came with the upgrade request */
	WsIo       *prev, *next;
};

static WsIo *ios;
static const WsIoHandlers *hd;
static GwTimer tick;

int64_t
ws_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---------------------------------------------------------------- output (ws.c, fanout.c, presence.c) */

static bool
enqueue(Sock *s, bool binary, uint8_t tag, bool tagged, const uint8_t *p, size_t len)
{
	WsMsg *m;
	size_t n = len + (tagged ? 1 : 0);

	if (!s->io || s->st == WS_CLOSING || s->st == WS_GONE)
		return false;
	if (!(m = malloc(sizeof(WsMsg) + n)))
		return false;
	m->next = NULL;
	m->binary = binary;
	m->wake = false;
	m->len = n;
	if (tagged)
		m->data[0] = tag;
	memcpy(m->data + (tagged ? 1 : 0), p, len);
	if (s->qtail)
		s->qtail->next = m;
	else
		s->qhead = m;
	s->qtail = m;
	s->qbytes += n;
	ws_io_kick(s);
	return true;
}

bool
ws_send_text_len(Sock *s, const char *text, size_t len)
{
	/* control events are small; a socket that cannot take them is a slow consumer */
	if (s->qbytes > gw_cfg.ws_max_buffer)
	{
		ws_close(s, 1008, "slow consumer: send buffer full");
		return false;
	}
	return enqueue(s, false, 0, false, (const uint8_t *) text, len);
}

bool
ws_send_text(Sock *s, const char *text)
{
	return ws_send_text_len(s, text, strlen(text));
}

bool
ws_send_binary(Sock *s, uint8_t tag, const uint8_t *p, size_t len, bool droppable)
{
	if (droppable && (s->qbytes + len + 1 > gw_cfg.ws_max_buffer || len + 1 > gw_cfg.ws_max_message))
		return false;           /* §8.2 flow control: the caller answers with a wake-up */
	return enqueue(s, true, tag, true, p, len);
}

void
ws_close(Sock *s, int code, const char *reason)
{
	if (!s->io || s->st == WS_CLOSING || s->st == WS_GONE)
		return;
	s->st = WS_CLOSING;
	s->close_code = code;
	snprintf(s->close_reason, sizeof(s->close_reason), "%s", reason);
	if (gw_cfg.verbose)
		gw_log("realtime %s: close %d %s", s->client, code, reason);
	ws_io_kick(s);
}

void
ws_send_event(Sock *s, const char *event, json_t *data)
{
	json_t *o = json_pack("{s:s, s:o}", "event", event, "data", data);
	char *t = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;

	if (t)
		ws_send_text(s, t);
	free(t);
	json_decref(o);
}

void
ws_send_wake(Sock *s, int64_t cursor, const char *reason)
{
	/* §8.2: a socket told to pull is behind until an ack or a round reaches this cursor */
	if (cursor > s->head_needed)
		s->head_needed = cursor;
	/* wake-ups are idempotent and coalescible (§8.3): one unsent wake-up is enough */
	if (s->qtail && s->qtail->wake)
		return;
	ws_send_event(s, "sync", json_pack("{s:I, s:b, s:s, s:I}", "cursor", (json_int_t) cursor,
									"requiresPull", 1, "reason", reason, "timestamp",
									(json_int_t) ws_now_ms()));
	gw_metrics_wake(reason);
	if (s->qtail && !s->qtail->binary)
		s->qtail->wake = true;
}

/* ---------------------------------------------------------------- wslay callbacks */

static ssize_t
io_recv(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags, void *user)
{
	WsIo *io = user;
	ssize_t n;

	(void) flags;
	if (wslay_event_get_queued_msg_count(ctx) > PONGS_MAX)
	{
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);   /* a client that pings, never reads */
		return -1;
	}
	if (io->extra_off < io->extra_len)
	{
		n = (ssize_t) (io->extra_len - io->extra_off < len ? io->extra_len - io->extra_off : len);
		memcpy(buf, io->extra + io->extra_off, (size_t) n);
		io->extra_off += (size_t) n;
		return n;
	}
	if (io->drained)
	{
		/* the last read returned less than it asked for: the socket had nothing more, and the
		 * loop (level-triggered) reports it readable again when bytes arrive; wslay asks until
		 * it would block, so this saves a recv that fails with EAGAIN after every message */
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
		return -1;
	}
	n = recv(io->fd, buf, len, 0);
	if (n > 0)
	{
		io->last_rx_us = gw_loop_now_us();
		io->ping_out = false;
		io->drained = (size_t) n < len;
		return n;
	}
	wslay_event_set_error(ctx, n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
						  ? WSLAY_ERR_WOULDBLOCK : WSLAY_ERR_CALLBACK_FAILURE);
	return -1;
}

/*
 * wslay hands a frame's header and its payload in two calls, the header with WSLAY_MSG_MORE.
 * The header is kept here and leaves with the payload in one sendmsg: one system call and one
 * segment per frame (see TCP_NODELAY at the upgrade).  wslay counts the header as sent; bytes
 * of it the socket did not take stay here and go first in the next call, which is always the
 * same frame's payload (wslay finishes a frame before it starts the next).
 */
static ssize_t
io_send(wslay_event_context_ptr ctx, const uint8_t *data, size_t len, int flags, void *user)
{
	WsIo *io = user;
	struct iovec iov[2];
	struct msghdr mh;
	ssize_t n;
	int k = 0;

	if ((flags & WSLAY_MSG_MORE) && io->hdr_len == 0 && len <= sizeof(io->hdr))
	{
		memcpy(io->hdr, data, len);
		io->hdr_len = (uint8_t) len;
		return (ssize_t) len;
	}
	if (io->hdr_len > 0)
	{
		iov[k].iov_base = io->hdr;
		iov[k++].iov_len = io->hdr_len;
	}
	iov[k].iov_base = (void *) data;
	iov[k++].iov_len = len;
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = iov;
	mh.msg_iovlen = (size_t) k;
	n = sendmsg(io->fd, &mh, MSG_NOSIGNAL);
	if (n >= 0)
	{
		size_t h = io->hdr_len;

		if ((size_t) n < h)
		{
			memmove(io->hdr, io->hdr + n, h - (size_t) n);
			io->hdr_len = (uint8_t) (h - (size_t) n);
			n = 0;
		}
		else
		{
			io->hdr_len = 0;
			n -= (ssize_t) h;
		}
		if (n > 0)
			return n;
		errno = EAGAIN;         /* only header bytes left: the payload waits for writable */
	}
	wslay_event_set_error(ctx, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR
						  ? WSLAY_ERR_WOULDBLOCK : WSLAY_ERR_CALLBACK_FAILURE);
	return -1;
}

static void
io_frame_start(wslay_event_context_ptr ctx, const struct wslay_event_on_frame_recv_start_arg *a, void *user)
{
	WsIo *io = user;

	(void) ctx;
	io->in_data = a->opcode == WSLAY_CONTINUATION_FRAME || a->opcode == WSLAY_TEXT_FRAME ||
		a->opcode == WSLAY_BINARY_FRAME;
	io->fin = a->fin;
	if (io->in_data && a->opcode != WSLAY_CONTINUATION_FRAME)
		hd->message_start(io->s, a->opcode == WSLAY_BINARY_FRAME);
}

static void
io_frame_chunk(wslay_event_context_ptr ctx, const struct wslay_event_on_frame_recv_chunk_arg *a, void *user)
{
	WsIo *io = user;

	(void) ctx;
	if (io->in_data)
		hd->message_bytes(io->s, a->data, a->data_length);
}

static void
io_frame_end(wslay_event_context_ptr ctx, void *user)
{
	WsIo *io = user;

	(void) ctx;
	if (io->in_data && io->fin)
		hd->message_end(io->s);
	io->in_data = false;
}

static const struct wslay_event_callbacks callbacks = {
	io_recv, io_send, NULL, io_frame_start, io_frame_chunk, io_frame_end, NULL
};

/* ---------------------------------------------------------------- the socket in the loop */

static void io_ready(int fd, uint32_t events, void *arg);

static void
io_watch(WsIo *io)
{
	uint32_t ev = 0;

	if (wslay_event_want_read(io->ctx) && wslay_event_get_queued_msg_count(io->ctx) <= PONGS_MAX)
		ev |= EPOLLIN;
	if (wslay_event_want_write(io->ctx) || io->s->qhead ||
		(io->s->st == WS_CLOSING && !io->close_queued) || io->dead)
		ev |= EPOLLOUT;         /* dead: io_ready ends it in the loop's next turn */
	if (ev != io->events && gw_loop_watch(io->fd, ev, io_ready, io) == 0)
		io->events = ev;
}

/* the socket is gone: ws.c forgets it, the library closes it */
static void
io_end(WsIo *io)
{
	Sock *s = io->s;

	gw_loop_unwatch(io->fd);
	gw_timer_cancel(&io->first);
	if (io->prev)
		io->prev->next = io->next;
	else
		ios = io->next;
	if (io->next)
		io->next->prev = io->prev;
	wslay_event_context_free(io->ctx);
	gw_http_upgrade_close(io->urh);
	free(io->extra);
	free(io);
	s->io = NULL;
	hd->closed(s);
}

/* hand our queue to wslay one message at a time, then a close frame when closing; write */
static bool
io_flush(WsIo *io)
{
	Sock *s = io->s;

	for (;;)
	{
		if (wslay_event_get_queued_msg_count(io->ctx) == 0 && s->qhead)
		{
			WsMsg *m = s->qhead;
			struct wslay_event_msg msg = {m->binary ? WSLAY_BINARY_FRAME : WSLAY_TEXT_FRAME, m->data, m->len};

			s->qhead = m->next;
			if (!s->qhead)
				s->qtail = NULL;
			s->qbytes -= m->len;
			if (wslay_event_queue_msg(io->ctx, &msg) != 0)
			{
				free(m);
				return false;
			}
			gw_metrics_bytes(GW_M_WS, false, m->len);
			free(m);
		}
		if (!s->qhead && s->st == WS_CLOSING && !io->close_queued)
		{
			io->close_queued = true;
			(void) wslay_event_queue_close(io->ctx, (uint16_t) s->close_code, (const uint8_t *) s->close_reason,
										   strlen(s->close_reason));
		}
		if (wslay_event_send(io->ctx) != 0)
			return false;
		if (wslay_event_get_queued_msg_count(io->ctx) > 0 || !s->qhead)
			break;
	}
	if (wslay_event_get_close_sent(io->ctx) && !io->close_sent_us)
		io->close_sent_us = gw_loop_now_us();
	return true;
}

/*
 * After a close we started (a violation, a refusal, a drain), the peer's remaining bytes are
 * read and dropped until it ends the stream (or CLOSE_WAIT_US passes, io_tick): closing a socket
 * with unread bytes sends a reset, which can destroy our close frame before the peer reads it.
 */
static void
io_linger(WsIo *io)
{
	uint8_t buf[4096];
	ssize_t n;

	while ((n = recv(io->fd, buf, sizeof(buf), 0)) > 0)
		;
	if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
		io_end(io);
}

static void
io_ready(int fd, uint32_t events, void *arg)
{
	WsIo *io = arg;

	(void) fd;
	if (io->linger)
	{
		io_linger(io);
		return;
	}
	/* wslay answers a violation it finds in a parsed frame (RFC 6455 §5.1 mask, §5.2 reserved
	 * bits and opcodes, §5.4 a continuation without a start) with its close frame queued and
	 * reading stopped; a frame its parser refuses (§5.5: a control frame over 125 bytes or
	 * fragmented; a length with the top bit set) ends the connection (§7.1.7), as does a socket
	 * error or the peer's end */
	io->in_ready = true;
	if (events & (EPOLLIN | EPOLLHUP | EPOLLERR))
	{
		io->drained = false;
		if (wslay_event_recv(io->ctx) == WSLAY_ERR_CALLBACK_FAILURE)
			io->dead = true;
	}
	if (!io->dead && !io_flush(io))
		io->dead = true;
	io->in_ready = false;
	/* both closes exchanged (RFC 6455 §7.1.1), the peer gone, or an error */
	if (io->dead || (wslay_event_get_close_received(io->ctx) && !wslay_event_want_write(io->ctx)))
	{
		io_end(io);
		return;
	}
	if (!wslay_event_want_read(io->ctx) && !wslay_event_want_write(io->ctx))
	{
		io->linger = true;
		shutdown(io->fd, SHUT_WR);
		if (gw_loop_watch(io->fd, EPOLLIN, io_ready, io) == 0)
			io->events = EPOLLIN;
		io_linger(io);
		return;
	}
	io_watch(io);
}

/*
 * Something was queued.  An open socket outside its own callback writes it now: a fanout
 * hands each socket its delta while it walks the answer (the first sockets do not wait for
 * the last to be queued), and a socket whose kernel buffer takes the frame needs no EPOLLOUT
 * watch switched on and off (two epoll_ctl calls) nor a loop turn.  What the socket cannot take
 * waits for writable as before.  Nothing is freed here: a write error marks the socket dead
 * and the loop's next turn ends it (io_ready), so a caller walking sockets is safe.
 */
void
ws_io_kick(Sock *s)
{
	WsIo *io = s->io;

	if (!io || io->dead || io->linger)
		return;
	if (!io->in_ready && s->st == WS_OPEN && !io_flush(io))
		io->dead = true;
	io_watch(io);
}

/* ---------------------------------------------------------------- liveness */

static void
io_tick(GwTimer *t)
{
	int64_t now = gw_loop_now_us();
	WsIo *next;

	for (WsIo *io = ios; io; io = next)
	{
		int64_t quiet = now - io->last_rx_us;

		next = io->next;
		if ((io->close_sent_us && now - io->close_sent_us > CLOSE_WAIT_US) ||
			quiet > (int64_t) gw_cfg.idle_timeout_s * 1000000)
		{
			io_end(io);         /* no answer to our close, or silent past --idle-timeout */
			continue;
		}
		if (quiet > (int64_t) gw_cfg.heartbeat_s * 1000000 && !io->ping_out && !io->close_queued &&
			!io->linger)
		{
			struct wslay_event_msg ping = {WSLAY_PING, NULL, 0};

			io->ping_out = wslay_event_queue_msg(io->ctx, &ping) == 0;
			io_watch(io);
		}
	}
	gw_timer_after(t, io_tick, 1000000);
}

/* ---------------------------------------------------------------- start and shutdown */

static void
io_first(GwTimer *t)
{
	WsIo *io = gw_container_of(t, WsIo, first);

	io_ready(io->fd, EPOLLIN, io);
}

void
gw_ws_upgraded(void *sock, int fd, const char *extra, size_t extra_len, void *urh)
{
	Sock *s = sock;
	WsIo *io = calloc(1, sizeof(WsIo));

	if (!io || wslay_event_context_server_init(&io->ctx, &callbacks, io) != 0 ||
		(extra_len && !(io->extra = malloc(extra_len))))
	{
		if (io && io->ctx)
			wslay_event_context_free(io->ctx);
		free(io);
		gw_http_upgrade_close(urh);
		hd->closed(s);
		return;
	}
	/* messages are assembled by ws.c, within --ws-max-message and the memory budget */
	wslay_event_config_set_no_buffering(io->ctx, 1);
	wslay_event_config_set_max_recv_msg_length(io->ctx, (uint64_t) gw_cfg.ws_max_message + 16);
	if (extra_len)
		memcpy(io->extra, extra, extra_len);
	io->extra_len = extra_len;
	io->s = s;
	io->fd = fd;
	io->urh = urh;
	/* Nagle would hold a delta's bytes until the client's TCP ack of the previous segment, which
	 * a client that just sent an ack frame (SPEC §8.2) delays by up to 40 ms (delayed ACK);
	 * frames are whole messages already, so nothing is gained by waiting */
	{
		int one = 1;

		(void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}
	io->last_rx_us = gw_loop_now_us();
	io->next = ios;
	if (ios)
		ios->prev = io;
	ios = io;
	s->io = io;
	if (!tick.armed)
		gw_timer_after(&tick, io_tick, 1000000);
	io_watch(io);
	hd->open(s);
	if (extra_len)
		gw_timer_after(&io->first, io_first, 0);   /* frames that came with the upgrade request */
}

void
ws_io_init(const WsIoHandlers *h)
{
	hd = h;
}

/* the process stops: every socket ends now */
void
ws_io_shutdown(void)
{
	while (ios)
		io_end(ios);
	gw_timer_cancel(&tick);
}
