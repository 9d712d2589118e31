/*
 * metrics.h — the gateway's own counters and the cached scrape of the extension's statistics
 * views, rendered as Prometheus text for GET <mount>/metrics (docs/gateway.md, "Metrics").
 * Every counting function is one call at the place the event happens; none does I/O.
 */
#ifndef SYNCULAR_GATEWAY_METRICS_H
#define SYNCULAR_GATEWAY_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gateway.h"

enum { GW_M_HTTP = 0, GW_M_WS = 1 };

int64_t gw_metrics_now_us(void);            /* monotonic clock */

/* the gauge of open realtime sockets, read at each scrape (the realtime layer registers it) */
typedef int (*GwGaugeFn) (void);
void gw_metrics_set_sockets(GwGaugeFn fn);
/* the gauge of live query watches (REMOTE.md §6), likewise */
void gw_metrics_set_watches(GwGaugeFn fn);
/* a syncular.operations_watch_rerun call was sent (watches.c) */
void gw_metrics_watch_call(void);

/* an HTTP response was started for a route (GwRoute) with a status */
void gw_metrics_http(int route, int status);
/* payload bytes read (in) or written (!in) on HTTP or WebSocket connections */
void gw_metrics_bytes(int transport, bool in, size_t n);
/* a commit wake-up (NOTIFY or a wait_commits row) arrived for a partition: at[0] is the arrival served by the running (or next)
 * fanout call, at[1] the first one coalesced while a call runs (busy) */
void gw_metrics_notify(int64_t at[2], bool busy);
/* the coalesced follow-up call starts: it serves at[1] */
void gw_metrics_notify_next(int64_t at[2]);
/* a delta was queued to a socket; notify_us: arrival of the wake-up it answers (0: unknown) */
void gw_metrics_delta(int64_t notify_us);
/* an ack message arrived on a realtime socket; a statement writing n coalesced acks was sent */
void gw_metrics_ack_received(void);
void gw_metrics_ack_write(int n);
/* a bearer token looked up in the verified-token cache (jwtcache.c): found or not */
void gw_metrics_jwt_cache(bool hit);
/* groupcommit.c: a statement of n push rounds sent; a batch rolled back and rerun round by round */
void gw_metrics_group_commit(int n);
void gw_metrics_group_commit_fallback(void);
void gw_metrics_set_group_commit_waiting(GwGaugeFn fn);
/* a sync wake-up was queued to a socket (SPEC §8.3), with its reason */
void gw_metrics_wake(const char *reason);

/* ---- the database part, scraped at most once per --metrics-interval ---- */
typedef void (*GwMetricsReady) (void);
/* true: the cache is fresh or a scrape runs; false: a scrape was started now (ready is called
 * when it ends, also when it could not be queued) */
bool  gw_metrics_scrape(GwMetricsReady ready);
bool  gw_metrics_scrape_running(void);
/* the whole exposition, malloc'd (NULL when out of memory) */
char *gw_metrics_render(size_t *len);

#endif
