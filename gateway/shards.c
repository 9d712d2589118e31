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
#include <libwebsockets.h>
#include <stdlib.h>
#include <string.h>

static struct lws_context *ctx;
static lws_sorted_usec_list_t tick;
static bool busy, stopped, warned;

static void shards_tick(lws_sorted_usec_list_t *sul);

static void
schedule(void)
{
	if (!stopped)
		lws_sul_schedule(ctx, 0, &tick, shards_tick, (lws_usec_t) gw_cfg.shard_refresh_s * LWS_US_PER_SEC);
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
shards_tick(lws_sorted_usec_list_t *sul)
{
	GwJob *j;

	(void) sul;
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
gw_shards_init(struct lws_context *c)
{
	ctx = c;
	if (gw_cfg.router)
		lws_sul_schedule(ctx, 0, &tick, shards_tick, 1);
}

void
gw_shards_shutdown(void)
{
	stopped = true;
	if (ctx)
		lws_sul_cancel(&tick);
}
