/*
 * parse.h — the gateway's own parsing, pure (no I/O, no globals) so libFuzzer can drive it.
 */
#ifndef SYNCULAR_GATEWAY_PARSE_H
#define SYNCULAR_GATEWAY_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* SPEC §1.1: the part before ';' must be application/vnd.syncular.sync.v2 (case-insensitive) */
bool gw_content_type_ok(const char *ct);
/* SPEC §1.3: 1 when Accept-Encoding allows gzip (gzip or * with q > 0) */
bool gw_accepts_gzip(const char *ae);
/* RFC 9110 §12.5.3: identity;q=0, or *;q=0 without identity listed */
bool gw_refuses_identity(const char *ae);
/* Content-Encoding of a request body: 0 identity, 1 gzip, -1 unsupported */
int  gw_content_encoding(const char *ce);

typedef enum GwRoute
{
	GW_ROUTE_NONE = 0,      /* outside the mount or unknown: 404 */
	GW_ROUTE_SYNC,
	GW_ROUTE_HEALTHZ,
	GW_ROUTE_READYZ,
	GW_ROUTE_REALTIME,
	GW_ROUTE_SEGMENT,       /* /segments/{id} */
	GW_ROUTE_BLOB,          /* /blobs/{id} and /blobs/{id}/upload-grant */
	GW_ROUTE_METRICS,       /* /metrics (Prometheus text) */
	GW_ROUTE_OPERATIONS,    /* /operations (REMOTE.md §5) */
	GW_ROUTE_OPS_REALTIME,  /* /operations/realtime (REMOTE.md §6, WebSocket) */
} GwRoute;
GwRoute gw_route(const char *path, const char *mount);

/* §8.7: incremental scan of a socket round's request byte stream */
typedef enum GwScan
{
	GW_SCAN_MORE = 0,       /* need more bytes */
	GW_SCAN_DONE,           /* a complete message ends at s->end */
	GW_SCAN_BAD_HEADER,     /* not an SSP2 request header: connection-fatal */
	GW_SCAN_BAD_FRAME,      /* END with a length: no findable end */
	GW_SCAN_TOO_LARGE,      /* the message would exceed the limit */
} GwScan;
typedef struct GwRoundScan
{
	size_t pos;             /* next frame header offset once the header passed */
	size_t end;             /* total length when DONE */
	bool   header_ok;
} GwRoundScan;
GwScan gw_round_scan(GwRoundScan *s, const uint8_t *buf, size_t len, size_t max);

/* §8.1/§8.2/§8.6 client -> server control messages (JSON text frames) */
typedef enum GwCtlKind
{
	GW_CTL_IGNORE = 0,      /* unknown event/type: tolerated */
	GW_CTL_ACK,
	GW_CTL_PRESENCE,
	GW_CTL_BAD,             /* not JSON, or a known message of the wrong shape */
} GwCtlKind;
typedef struct GwControl
{
	GwCtlKind kind;
	int64_t   cursor;               /* ack */
	char      scope_key[256];       /* presence */
	char     *doc;                  /* presence: compact JSON object (malloc'd), NULL = leave */
	size_t    doc_len;
	const char *error;              /* GW_CTL_BAD: short reason */
} GwControl;
void gw_control_parse(const char *text, size_t len, GwControl *out);
void gw_control_free(GwControl *c);

#endif
