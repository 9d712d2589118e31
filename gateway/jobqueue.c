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
	/* the queue emptied before the callbacks run: one may submit a job (group commit's next
	 * group), which lands in the empty queue and is failed in the next pass */
	while (q->head)
	{
		GwJob *list = q->head;

		q->head = q->tail = NULL;
		q->len = 0;
		while (list)
		{
			GwJob *j = list;

			list = j->next;
			j->next = NULL;
			gw_job_finish(j, NULL, err);
		}
	}
}
