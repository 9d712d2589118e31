/*
 * wswatch.c — the live query watch socket `GET <mount>/operations/realtime` (REMOTE.md revision
 * 1 §6) on the realtime socket layer: ws.c upgrades and authenticates it like a realtime socket
 * (host authentication at the upgrade, no clientId in the URL: every watch message carries its
 * own) and hands it here instead of registering it with realtime_connect; the watch logic is
 * transport-independent in watches.c, which writes and closes through the two callbacks given
 * here (wsio.c's queue and close).  Calls go down only: ws.c -> wswatch.c -> watches.c, wsio.c.
 *
 * A client may send its watches at once, before host authentication (the SQL authenticator, a
 * database call) answered: those messages are kept, in order, within --ws-max-buffer bytes and
 * the process's memory budget (budget.c), and handed to watches.c when the socket opens; beyond,
 * the socket closes 1008 (over the buffer) or 1013 (the budget is in use, retry later).
 */
#include "ws.h"

#include <stdlib.h>
#include <string.h>

static bool
watch_send(void *t, const char *text, size_t len)
{
	return ws_send_text_len(t, text, len);     /* over --ws-max-buffer: closed 1008 */
}

static void
watch_close(void *t, int code, const char *reason)
{
	ws_close(t, code, reason);
}

static void
free_early(Sock *s)
{
	while (s->ops_early)
	{
		WsMsg *m = s->ops_early;

		s->ops_early = m->next;
		free(m);
	}
	gw_budget_give(s->ops_early_bytes);
	s->held -= s->ops_early_bytes;
	s->ops_early_bytes = 0;
}

/* a message that arrived before authentication finished: kept for ws_watch_open */
static void
keep_early(Sock *s)
{
	WsMsg *m, **tail;

	if (s->ops_early_bytes + s->rx_len > gw_cfg.ws_max_buffer)
	{
		ws_close(s, 1008, "too many messages before authentication finished");
		return;
	}
	if (!gw_budget_take(s->rx_len))
	{
		ws_close(s, 1013, "the gateway's memory budget is in use; retry later");
		return;
	}
	if (!(m = malloc(sizeof(WsMsg) + s->rx_len)))
	{
		gw_budget_give(s->rx_len);
		ws_close(s, 1011, "out of memory");
		return;
	}
	memset(m, 0, sizeof(WsMsg));
	m->len = s->rx_len;
	memcpy(m->data, s->rx, s->rx_len);
	for (tail = &s->ops_early; *tail; tail = &(*tail)->next)
		;
	*tail = m;
	s->ops_early_bytes += m->len;
	s->held += m->len;
}

void
ws_watch_open(Sock *s)
{
	if (gw_draining)
	{
		ws_close(s, 1001, "gateway shutting down");
		return;
	}
	if (!(s->watch = gw_watch_conn_new(s->who.partition, s->who.actor, watch_send, watch_close, s)))
	{
		ws_close(s, 4500, "sync.internal_error");
		return;
	}
	s->st = WS_OPEN;
	for (WsMsg *m = s->ops_early; m && s->st == WS_OPEN; m = m->next)
		gw_watch_receive(s->watch, m->data, m->len);
	free_early(s);
}

void
ws_watch_message(Sock *s)
{
	if (s->st == WS_AUTH || s->st == WS_CONNECTING)
		keep_early(s);
	else if (s->st == WS_OPEN && s->watch)
		gw_watch_receive(s->watch, s->rx, s->rx_len);
}

void
ws_watch_closed(Sock *s)
{
	gw_watch_conn_close(s->watch);  /* NULL: never opened */
	s->watch = NULL;
	free_early(s);
}
