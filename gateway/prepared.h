/*
 * prepared.h — named statements on the pool's connections (prepared.c).  A job marked prepare
 * (the rounds, group commits, fanout calls and acks: the statements every request runs) is
 * parsed and planned once per connection instead of once per call.
 */
#ifndef GW_PREPARED_H
#define GW_PREPARED_H

#include "gateway.h"

#include <stdint.h>

/* one connection's statements: a bit per slot of the process-wide list of statement texts */
typedef struct GwPrepared
{
	uint32_t    ok;             /* prepared on this connection */
	uint32_t    failed;         /* the prepare failed here: sent unnamed from now on */
	int         pending;        /* the slot whose Prepare is in flight, -1: none */
	int         sent;           /* the slot the job in flight was sent by, -1: unnamed */
} GwPrepared;

/* a new connection (a new backend: nothing prepared) */
void gw_prepared_reset(GwPrepared *ps);
/*
 * Send j on conn: its named statement when prepared, else its Prepare when j is marked prepare
 * and a slot is free (then the caller waits for that result and calls again), else the query
 * unnamed.  1: a Prepare was sent; 0: the query was sent; -1: libpq refused (PQerrorMessage).
 */
int  gw_prepared_send(GwPrepared *ps, struct pg_conn *conn, const GwJob *j);
/*
 * The statement sent by gw_prepared_send completed with res: true when j must be sent again
 * (its Prepare completed, or its named statement was gone or its cached plan refused before
 * it ran: then it goes unnamed on this connection).
 */
bool gw_prepared_again(GwPrepared *ps, const struct pg_result *res);
/* named executions refused before they ran and sent again unnamed, since start */
unsigned long long gw_prepared_fallbacks(void);

#endif
