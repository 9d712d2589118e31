/*
 * shards.c — the shard list of a router database (docs/scaling.md).
 *
 * In front of a syncular_router database every commit happens on a shard, which wakes gateways
 * itself (NOTIFY syncular_commit or its ring, SPEC §8.2).  At startup and every --shard-refresh
 * seconds this reads syncular.shard_conninfos() through the pool and hands the list to pool.c,
 * which keeps one wake-up connection per distinct shard database (a moved shard is picked up at
 * the next read).
 * Fanout calls still go through the router, routed to the partition's shard.
 */
#include "gateway.h"

#include <libpq-fe.h>
#include "loop.h"
#include <stdlib.h>
#include <string.h>

static GwTimer tick;
static bool busy, stopped, warned;

static void shards_tick(GwTimer *t);

static void
schedule(void)
{
	if (!stopped)
		gw_timer_after(&tick, shards_tick, (int64_t) gw_cfg.shard_refresh_s * 1000000);
}

static void
shards_done(GwJob *job, PGresult *res, const char *err)
{
	int n;
	char **list;

	(void) job;
	busy = false;
	if (stopped)
		return;
	if (!res || PQresultStatus(res) != PGRES_TUPLES_OK)
	{
		/* keep the listeners we have; say why once per failure streak */
		if (!warned)
			gw_log("cannot read the shard list (syncular.shard_conninfos()): %s",
				   res ? PQresultErrorMessage(res) : err ? err : "?");
		warned = true;
		schedule();
		return;
	}
	warned = false;
	n = PQntuples(res);
	if ((list = calloc((size_t) n + 1, sizeof(char *))) != NULL)
	{
		int k = 0;

		for (int i = 0; i < n; i++)
			if (!PQgetisnull(res, i, 0))
				list[k++] = PQgetvalue(res, i, 0);
		gw_pool_set_shards(list, k);
		free(list);
	}
	schedule();
}

static void
shards_tick(GwTimer *t)
{
	GwJob *j;

	(void) t;
	if (stopped || busy)
		return;
	if (!(j = gw_job_new("SELECT syncular.shard_conninfos()", shards_done, &tick)))
	{
		schedule();
		return;
	}
	j->result_format = 0;
	busy = true;
	if (!gw_pool_submit(j))
	{
		busy = false;
		schedule();
	}
}

void
gw_shards_init(void)
{
	if (gw_cfg.router)
		gw_timer_after(&tick, shards_tick, 0);
}

void
gw_shards_shutdown(void)
{
	stopped = true;
	gw_timer_cancel(&tick);
}
