/*
 * jobqueue.c — the pool's job FIFOs (jobqueue.h): append, put back, take out from anywhere
 * (a job that waits for its preferred connection keeps its place while later ones go, pool.c),
 * and answer all without a database.
 */
#include "jobqueue.h"

#include <stddef.h>

void
gw_jq_push(GwJobQueue *q, GwJob *job)
{
	job->next = NULL;
	if (q->tail)
		q->tail->next = job;
	else
		q->head = job;
	q->tail = job;
	q->len++;
}

void
gw_jq_push_front(GwJobQueue *q, GwJob *job)
{
	if (!(job->next = q->head))
		q->tail = job;
	q->head = job;
	q->len++;
}

GwJob *
gw_jq_unlink(GwJobQueue *q, GwJob **link, GwJob *prev)
{
	GwJob *j = *link;

	*link = j->next;
	if (q->tail == j)
		q->tail = prev;
	q->len--;
	j->next = NULL;
	return j;
}

void
gw_jq_fail(GwJobQueue *q, const char *err)
{
	while (q->head)
	{
		GwJob *j = q->head;

		q->head = j->next;
		gw_job_finish(j, NULL, err);
	}
	q->tail = NULL;
	q->len = 0;
}
