/*
 * waiter.h — the commit wake-up ring's waiter loop (waiter.c): syncular.wait_commits called
 * again and again on one connection of the pool, its answers handed to the fanout.
 */
#ifndef GW_WAITER_H
#define GW_WAITER_H

#include "gateway.h"
#include "loop.h"

/* one waiter: the --db one, or one per shard in front of a router; the pool owns the connection */
typedef struct GwWaiter
{
	void       *conn;           /* the pool's connection running the loop */
	bool        (*ready) (void *conn);           /* up, idle, and still this waiter's */
	bool        (*send) (void *conn, GwJob *j);  /* false: the connection failed (j freed) */
	const char *shard;          /* the log's name for it: a shard's conninfo, NULL for --db */
	bool        have_pos;       /* pos holds the ring position to continue from */
	bool        warned;         /* a failure was logged (until a call succeeds) */
	bool        idle;           /* the next call waits for retry: nothing consumes wake-ups */
	char        pos[24];
	GwTimer     retry;
} GwWaiter;

/* the next call, from the kept position (none yet: the ring's head) */
void gw_waiter_next(GwWaiter *w);
/* a consumer came: a waiter between two idle calls calls now */
void gw_waiter_resume(GwWaiter *w);
/* its connection is closed or failed: no timer stays armed (the position stays) */
void gw_waiter_cancel(GwWaiter *w);
/* where the wake-ups go: fn(partition, commit_seq), fn(NULL, 0) when some were lost */
void gw_waiter_set_commit(GwCommitFn fn);
/*
 * does anything consume wake-ups now (realtime sockets, watches)?  While it answers false a
 * waiter waits IDLE_WAIT_US after each answer, and gw_waiter_resume ends that wait
 */
void gw_waiter_set_demand(GwDemandFn fn);
unsigned long long gw_waiter_calls(void);   /* syncular.wait_commits calls sent */
unsigned long long gw_waiter_lost(void);    /* "lost" answers while a consumer was there */

#endif
