/*
 * pgarray.h — one-dimensional array parameters in PostgreSQL's binary array format (pgarray.c),
 * for the statements that pass a batch as arrays: realtime_fanout_arrays (fanout.c), the ack
 * write (acks.c) and group commit's handle_http batch (groupcommit.c).  Binary, so that client bytes travel as they are: nothing is escaped and
 * nothing is parsed as an array literal.  An append that fails to allocate sets the buffer's oom
 * and makes later appends no-ops, so a builder appends without checking and tests
 * gw_array_finish once.
 */
#ifndef SYNCULAR_GATEWAY_PGARRAY_H
#define SYNCULAR_GATEWAY_PGARRAY_H

#include "ssp.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* element types (pg_type OIDs); the statement's cast ($n::bigint[], $n::text[]) must match */
#define GW_OID_INT8 20
#define GW_OID_TEXT 25
#define GW_OID_BYTEA 17

typedef struct GwArray
{
	SspBuf buf;         /* header, then each element as a length and its bytes */
	int    n;           /* elements appended */
} GwArray;

struct GwJob;

void gw_array_start(GwArray *a, uint32_t elemtype);
void gw_array_int8(GwArray *a, int64_t v);
/* len bytes of s (any bytes but NUL: a text value) */
void gw_array_text(GwArray *a, const char *s, size_t len);
/* len bytes, any (a bytea value) */
void gw_array_bytes(GwArray *a, const void *p, size_t len);
/* writes the element count; false when an append ran out of memory (free the array) */
bool gw_array_finish(GwArray *a);
/* a finished array as the job's next parameter, binary: the job takes the bytes, a is emptied */
void gw_array_param(struct GwJob *j, GwArray *a);
void gw_array_free(GwArray *a);

#endif
