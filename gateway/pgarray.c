/*
 * pgarray.c — one-dimensional array parameters in PostgreSQL's binary array format: what
 * array_recv reads (ndim, a has-nulls flag, the element type, then per dimension the size and
 * the lower bound, then each element as a 4-byte length and its bytes; all integers big-endian).
 * Used by fanout.c (syncular.realtime_fanout_arrays), acks.c (syncular.realtime_ack_many) and
 * groupcommit.c (a batch of handle_http calls);
 * docs/realtime.md §2 and §3.  Calls only job.c, to hand a finished array to a statement.
 */
#include "pgarray.h"
#include "gateway.h"

#include <arpa/inet.h>
#include <endian.h>
#include <string.h>

#define COUNT_OFFSET 12         /* where gw_array_finish writes the element count */

static void
put32(SspBuf *b, uint32_t v)
{
	v = htonl(v);
	ssp_buf_append(b, &v, 4);
}

void
gw_array_start(GwArray *a, uint32_t elemtype)
{
	ssp_buf_init(&a->buf);
	a->n = 0;
	put32(&a->buf, 1);          /* one dimension */
	put32(&a->buf, 0);          /* no NULL element */
	put32(&a->buf, elemtype);
	put32(&a->buf, 0);          /* the size, set by gw_array_finish */
	put32(&a->buf, 1);          /* the lower bound */
}

void
gw_array_int8(GwArray *a, int64_t v)
{
	uint64_t be = htobe64((uint64_t) v);

	put32(&a->buf, 8);
	ssp_buf_append(&a->buf, &be, 8);
	a->n++;
}

void
gw_array_bytes(GwArray *a, const void *p, size_t len)
{
	put32(&a->buf, (uint32_t) len);
	ssp_buf_append(&a->buf, p, len);
	a->n++;
}

void
gw_array_text(GwArray *a, const char *s, size_t len)
{
	gw_array_bytes(a, s, len);
}

bool
gw_array_finish(GwArray *a)
{
	uint32_t v = htonl((uint32_t) a->n);

	if (a->buf.oom)
		return false;
	memcpy(a->buf.data + COUNT_OFFSET, &v, 4);
	return true;
}

void
gw_array_param(GwJob *j, GwArray *a)
{
	gw_job_param_take(j, a->buf.data, (int) a->buf.len, 1, 0);
	ssp_buf_init(&a->buf);
	a->n = 0;
}

void
gw_array_free(GwArray *a)
{
	ssp_buf_free(&a->buf);
	a->n = 0;
}
