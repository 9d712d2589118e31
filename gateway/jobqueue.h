/*
 * jobqueue.h — a FIFO of pool jobs (jobqueue.c), for pool.c's queues: rounds and other jobs,
 * bootstrap rounds, background jobs.  Only the list: which job goes to which connection is the
 * pool's (pool.c pick_conn).
 */
#ifndef SYNCULAR_GATEWAY_JOBQUEUE_H
#define SYNCULAR_GATEWAY_JOBQUEUE_H

#include "gateway.h"

typedef struct GwJobQueue
{
	GwJob      *head, *tail;
	int         len;
	bool        orphans;        /* drop a job whose requester went away while it waited */
} GwJobQueue;

void gw_jq_push(GwJobQueue *q, GwJob *job);                 /* at the end */
void gw_jq_push_front(GwJobQueue *q, GwJob *job);           /* back at the front */
/* the job *link points to (prev: the job before it, NULL at the head) taken out of q */
GwJob *gw_jq_unlink(GwJobQueue *q, GwJob **link, GwJob *prev);
/* every waiting job answered without a database (err says why), q emptied */
void gw_jq_fail(GwJobQueue *q, const char *err);

#endif
