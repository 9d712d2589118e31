/*
 * watches.h — live query watches (REMOTE.md revision 1 §6) on <mount>/operations/realtime,
 * independent of the WebSocket library: the transport hands in each complete inbound message
 * and the connection's end, and gets outbound messages and closes through two callbacks.
 * Database calls go through the pool (job.c / pool.c); commit wake-ups come in through
 * gw_watch_on_commit.  watches.c holds the design notes.
 */
#ifndef SYNCULAR_GATEWAY_WATCHES_H
#define SYNCULAR_GATEWAY_WATCHES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct GwWatchConn GwWatchConn;

/* one outbound text message (UTF-8 JSON); false when the transport is closing */
typedef bool (*GwWatchSendFn) (void *transport, const char *text, size_t len);
/* close the transport with a WebSocket close code and reason */
typedef void (*GwWatchCloseFn) (void *transport, int code, const char *reason);

/* an authenticated connection: actor and partition of host authentication (§1) */
GwWatchConn *gw_watch_conn_new(const char *partition, const char *actor, GwWatchSendFn send,
							   GwWatchCloseFn close, void *transport);
/* one complete inbound message (text or binary: the bytes of an encoded client message) */
void gw_watch_receive(GwWatchConn *c, const uint8_t *msg, size_t len);
/* the connection is gone: every watch is removed, results still running are dropped; frees c */
void gw_watch_conn_close(GwWatchConn *c);
/* a commit wake-up of a partition (NULL: wake-ups were lost, every watch may have changed) */
void gw_watch_on_commit(const char *partition, int64_t seq);
/* SIGTERM: close every watch connection 1001 */
void gw_watch_drain(void);
int  gw_watch_count(void);  /* active watches of this gateway */

#endif
