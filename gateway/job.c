/*
 * job.c — one statement for the pool (pool.c): its SQL, parameters and callback.  Parameters
 * are copied or handed over, so a job outlives the request that made it (a client that goes
 * away leaves a queued job that the pool drops or runs and ignores).  Bytes a job holds for a
 * request body count against the process's memory budget (budget.c) until the job is freed.
 */
#include "gateway.h"

#include <stdlib.h>
#include <string.h>

GwJob *
gw_job_new(const char *sql, GwJobDone done, void *user)
{
	GwJob *j = calloc(1, sizeof(GwJob));

	if (!j)
		return NULL;
	j->sql = sql;
	j->done = done;
	j->user = user;
	j->result_format = 1;
	j->prefer = -1;
	return j;
}

static void
set_param(GwJob *job, const void *val, void *owned, int len, int binary)
{
	int i = job->nparams++;

	job->owned[i] = owned;
	job->values[i] = val;
	job->lengths[i] = len;
	job->formats[i] = binary;
}

void
gw_job_param(GwJob *job, const void *val, int len, int binary, bool copy)
{
	void *c = NULL;

	if (val && copy)
	{
		if ((c = malloc(len > 0 ? (size_t) len + 1 : 1)))
		{
			memcpy(c, val, (size_t) len);
			((char *) c)[len] = '\0';
		}
		val = c;
	}
	set_param(job, val, c, len, binary);
}

void
gw_job_param_take(GwJob *job, void *val, int len, int binary, size_t budget)
{
	set_param(job, val, val, len, binary);
	job->budget += budget;
}

void
gw_job_free(GwJob *j)
{
	for (int i = 0; i < j->nparams; i++)
		free(j->owned[i]);
	gw_budget_give(j->budget);
	free(j);
}

bool
gw_job_finish(GwJob *j, struct pg_result *res, const char *err)
{
	bool taken;

	if (j->done)
		j->done(j, res, err);
	taken = j->res_taken && res;
	gw_job_free(j);
	return taken;
}

void
gw_job_take_result(GwJob *j)
{
	j->res_taken = true;
}
