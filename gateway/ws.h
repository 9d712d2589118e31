/*
 * ws.h — the realtime sockets (SPEC §8), shared by ws.c (lifecycle, control messages, socket
 * rounds), wsio.c (RFC 6455 framing with wslay), fanout.c (commit wake-ups, §8.2/§8.3), presence.c (§8.6)
 * and wswatch.c (the live query watch sockets of REMOTE.md §6, whose logic is watches.c).
 */
#ifndef SYNCULAR_GATEWAY_WS_H
#define SYNCULAR_GATEWAY_WS_H

#include "gateway.h"
#include "metrics.h"
#include "parse.h"
#include "watches.h"

#include <jansson.h>

typedef struct WsMsg
{
	struct WsMsg *next;
	bool     binary;
	bool     wake;              /* a sync wake-up: coalescible while unsent (§8.3) */
	size_t   len;
	uint8_t  data[];
} WsMsg;

typedef enum { WS_AUTH, WS_CONNECTING, WS_OPEN, WS_CLOSING, WS_GONE, WS_REFUSED } WsState;

typedef struct WsPart WsPart;
typedef struct WsIo WsIo;

typedef struct Sock
{
	WsIo       *io;             /* the socket's framing (wsio.c), NULL once it closed */
	uint64_t    id;             /* the "conn" of realtime_fanout */
	WsState     st;
	int         refs;           /* pending database jobs holding this struct */
	GwIdentity  who;
	char        client[256];
	char       *headers_json, *query_json, *path;    /* SQL authenticator mode, until used */
	/* registration (realtime_connect) */
	char       *registration_text;  /* opaque JSON object, passed back to realtime_fanout */
	char        log_epoch[128];
	json_t     *scope_keys;     /* array of strings: the presence grant (§8.6.3) */
	int64_t     cursor;         /* delivered cursor */
	int64_t     head_needed;    /* §8.2: behind while cursor < this (raised by hello, wake-ups) */
	int64_t     last_delta_cursor;  /* next_cursor of the last delta sent */
	int         unacked;        /* deltas sent since the last covering ack */
	/* acks.c: the highest ack not yet written, while the socket is on the pending list */
	int64_t     ack_pending;
	char        ack_epoch[128]; /* the log epoch of the registration ack_pending was sent under */
	bool        ack_listed;
	struct Sock *ack_next;
	/* inbound message assembly */
	uint8_t    *rx;
	size_t      rx_len, rx_cap;
	bool        rx_binary;
	/* socket round (§8.7) */
	bool        round_busy;     /* request received, response not fully queued */
	bool        reregistering;  /* response queued, realtime_connect after it not answered yet */
	int64_t     round_missed;   /* highest seq fanned out while busy or reregistering (§8.7) */
	uint8_t    *round;
	size_t      round_len, round_cap;
	size_t      held;           /* bytes of the memory budget (budget.c): rx and round buffers */
	GwRoundScan scan;
	uint16_t    round_wire;
	/* outbound queue */
	WsMsg      *qhead, *qtail;
	size_t      qbytes;
	int         close_code;
	char        close_reason[124];
	/* <mount>/operations/realtime (REMOTE.md 6): the socket carries live query watches only */
	bool        ops;
	GwWatchConn *watch;         /* watches.c, once authenticated */
	WsMsg      *ops_early;      /* messages that arrived before authentication finished */
	size_t      ops_early_bytes;
	/* partition membership */
	WsPart     *part;
	struct Sock *pnext;
} Sock;

struct WsPart
{
	char       *name;
	Sock       *socks;
	int         nsocks;
	int         fanout_calls;   /* realtime_fanout calls of one wake-up still running (batches) */
	int64_t     pending_seq;    /* highest seq notified while a fanout ran */
	int64_t     seen_seq;       /* highest seq notified */
	int64_t     fanout_started_ms;
	int64_t     notify_us[2];   /* metrics.c: NOTIFY arrivals served by the running / next call */
	WsPart     *next;
};

/* wsio.c: the framing below ws.c, which it reports to through these (registered by ws.c) */
typedef struct WsIoHandlers
{
	void        (*open) (Sock *s);
	void        (*closed) (Sock *s);
	void        (*message_start) (Sock *s, bool binary);
	void        (*message_bytes) (Sock *s, const uint8_t *p, size_t len);
	void        (*message_end) (Sock *s);
} WsIoHandlers;
void ws_io_init(const WsIoHandlers *h);
void ws_io_kick(Sock *s);                /* something to write: when the socket is writable */
void ws_io_shutdown(void);
bool ws_send_text(Sock *s, const char *text);         /* false: the socket is being closed */
bool ws_send_text_len(Sock *s, const char *text, size_t len);
bool ws_send_binary(Sock *s, uint8_t tag, const uint8_t *p, size_t len, bool droppable);
void ws_close(Sock *s, int code, const char *reason);
void ws_send_wake(Sock *s, int64_t cursor, const char *reason);
void ws_send_event(Sock *s, const char *event, json_t *data);   /* {event, data}; data is taken */
int64_t ws_now_ms(void);
/* ws.c */
void ws_hold(Sock *s);
void ws_release(Sock *s);

/* wswatch.c: a <mount>/operations/realtime socket (s->ops) between ws.c and watches.c */
void ws_watch_open(Sock *s);        /* host authentication done: watches may come */
void ws_watch_message(Sock *s);     /* the assembled inbound message s->rx */
void ws_watch_closed(Sock *s);      /* the socket is gone: its watches and kept messages go */

/* fanout.c */
WsPart *fanout_join(Sock *s, const char *partition);
void    fanout_leave(Sock *s);
void    fanout_on_notify(const char *channel, const char *payload);
void    fanout_on_commit(const char *partition, int64_t seq);  /* NULL: wake-ups lost */
WsPart *fanout_parts(void);
int     fanout_prefer(const Sock *s);  /* the pool slot of s's fanout call (GwJob.prefer) */
bool    fanout_running(void);       /* a realtime_fanout call of some partition is running */

/* acks.c (SPEC §8.2): acks are coalesced per socket and written together, in the background */
/* a valid ack (0 .. 2^53-1) of an open socket; true when the socket was listed (the caller then
 * holds it: acks.c gives it back through the callback of acks_init once its ack is written) */
bool acks_note(Sock *s, int64_t cursor);
void acks_init(void (*release)(Sock *s));

/* presence.c */
void presence_init(void);
void presence_on_control(Sock *s, const GwControl *c);
void presence_on_registration(Sock *s, json_t *old_keys);   /* leave lost keys, snapshot new */
void presence_on_close(Sock *s);
void presence_on_notify(const char *payload);

#endif
