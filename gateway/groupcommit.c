/*
 * groupcommit.c — group commit per partition for push rounds (docs/gateway.md "Group commit").
 *
 * A round that pushes takes its partition's lock and holds it until its transaction's WAL
 * flush (SPEC §6.8: commit_seq dense and visible in order), so concurrent pushes of one
 * partition run one after the other in the database, each paying its own flush, each holding a
 * pool connection while it waits.  Here at most one push round (or batch) per partition is in
 * the database; the push rounds of that partition that arrive meanwhile wait in this file and
 * then run together as one statement, one syncular.handle_http call per round in arrival order
 * (the handle_http of every round as it is, in one transaction: one lock wait, one flush).
 * Each round still gets its own commit, commit_seq and answer; an answer is sent once the
 * batch's transaction has committed, as a single round's is.
 *
 * A batch that fails as a whole (a statement error outside the catalogue, which handle_http
 * does not catch: its transaction is rolled back, nothing of any round stays) is run again
 * round by round, first in the partition's line, so that one bad round cannot fail the others.  A dead connection fails every
 * round of the batch (sync.internal_error, retryable), as it fails a single round.
 *
 * Only rounds whose partition is known before the database answers are grouped (POST /sync with
 * JWT, socket rounds: the callers decide), never rounds that bootstrap (the pool's bootstrap
 * lane), nor in front of a syncular_router (its remote calls commit one by one on the shards).  Calls only pool.c,
 * job.c, pgarray.c and metrics.c.
 */
#include "gateway.h"
#include "jobqueue.h"
#include "metrics.h"
#include "pgarray.h"

#include <libpq-fe.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GC_BUCKETS 1024
#define GC_MAX_ARGS 4           /* handle_http(body, partition, actor[, content type]) */

/* one partition (and call shape) with a round or batch in the database */
typedef struct GcPart
{
	char       *partition;
	int         nargs;          /* the rounds' handle_http argument count: 3 or 4 */
	GwJobQueue  waiting;        /* rounds waiting for the partition's statement */
	struct GcPart *hnext;
} GcPart;

/* the statement in the database for a partition: its rounds, in order */
typedef struct GcBatch
{
	GcPart     *part;
	int         n;
	GwJob      *rounds[];
} GcBatch;

static GcPart *buckets[GC_BUCKETS];
static int     waiting_total;
static char    batch_sql[2][512];   /* for 3 and 4 arguments */

static unsigned
hash_key(const char *s, int nargs)
{
	unsigned h = 2166136261u ^ (unsigned) nargs;

	for (; *s; s++)
		h = (h ^ (unsigned char) *s) * 16777619u;
	return h % GC_BUCKETS;
}

static GcPart **
find(const char *partition, int nargs)
{
	GcPart **p = &buckets[hash_key(partition, nargs)];

	while (*p && ((*p)->nargs != nargs || strcmp((*p)->partition, partition) != 0))
		p = &(*p)->hnext;
	return p;
}

static const char *
sql_for(int nargs)
{
	char *s = batch_sql[nargs - 3];

	if (!s[0])
		snprintf(s, sizeof batch_sql[0],
				 "SELECT h.status, h.content_type, h.body FROM unnest($1::bytea[], $2::text[], $3::text[]%s) "
				 "WITH ORDINALITY AS u(body, part, actor%s, n), "
				 "LATERAL syncular.handle_http(u.body, u.part, u.actor%s) AS h ORDER BY u.n",
				 nargs == 4 ? ", $4::text[]" : "", nargs == 4 ? ", ctype" : "", nargs == 4 ? ", u.ctype" : "");
	return s;
}

static void start_next(GcPart *part);

/* the partition's round or batch is over: the next batch, or the entry goes */
static void
part_done(GcPart *part)
{
	if (part->waiting.head)
	{
		start_next(part);
		return;
	}
	*find(part->partition, part->nargs) = part->hnext;
	free(part->partition);
	free(part);
}

/* r waits first again */
static void
requeue_front(GcPart *part, GwJob *r)
{
	gw_jq_push_front(&part->waiting, r);
	waiting_total++;
}

/* the first waiting round of part, taken out */
static GwJob *
take_first(GcPart *part)
{
	waiting_total--;
	return gw_jq_unlink(&part->waiting, &part->waiting.head, NULL);
}

/* one round's answer out of the batch's rows: a result of its own (the batch's is cleared) */
static void
finish_row(GwJob *job, const PGresult *res, int row)
{
	PGresult *r = PQcopyResult(res, PG_COPYRES_ATTRS);
	bool ok = r != NULL;

	for (int c = 0; ok && c < PQnfields(res); c++)
		ok = PQsetvalue(r, 0, c, PQgetisnull(res, row, c) ? NULL : PQgetvalue(res, row, c),
						PQgetisnull(res, row, c) ? -1 : PQgetlength(res, row, c));
	if (!ok)
	{
		if (r)
			PQclear(r);
		gw_job_finish(job, NULL, "out of memory");
		return;
	}
	if (!gw_job_finish(job, r, NULL))
		PQclear(r);
}

/* the statement of a batch (or of a round alone) is over: every round answered */
static void
batch_done(GwJob *job, PGresult *res, const char *err)
{
	GcBatch *b = job->user;
	GcPart *part = b->part;

	if (b->n == 1)
	{
		if (gw_job_finish(b->rounds[0], res, err))
			gw_job_take_result(job);    /* its answer points into res */
	}
	else if (res && PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == b->n)
		for (int i = 0; i < b->n; i++)
			finish_row(b->rounds[i], res, i);
	else if (res)
	{
		/* rolled back as a whole: each round again on its own (they wait for the lock in the
		 * database, as without group commit), so one that fails fails alone */
		gw_log("group commit of %d rounds failed, running them one by one: %s", b->n,
			   PQresultErrorMessage(res));
		gw_metrics_group_commit_fallback();
		for (int i = b->n - 1; i >= 0; i--)
		{
			b->rounds[i]->gc_solo = true;
			requeue_front(part, b->rounds[i]);
		}
	}
	else
		for (int i = 0; i < b->n; i++)
			gw_job_finish(b->rounds[i], NULL, err);
	free(b);
	part_done(part);
}

/* the batch's arrays: argument a of every round (the rounds' parameters stay theirs, for a
 * rerun one by one) */
static bool
batch_params(GwJob *j, GcBatch *b, int nargs)
{
	for (int a = 0; a < nargs; a++)
	{
		GwArray arr;

		gw_array_start(&arr, a == 0 ? GW_OID_BYTEA : GW_OID_TEXT);
		for (int i = 0; i < b->n; i++)
			gw_array_bytes(&arr, b->rounds[i]->values[a], (size_t) b->rounds[i]->lengths[a]);
		if (!gw_array_finish(&arr))
		{
			gw_array_free(&arr);
			return false;
		}
		gw_array_param(j, &arr);
	}
	return true;
}

/*
 * The statement for the rounds of b: a batch over arrays when there are several and memory for
 * the arrays' copies of their bodies; otherwise the first round's own statement (its parameters
 * lent, not copied), the others back to wait for its end.  The job's user is b, never cleared:
 * the pool never drops it as an orphan, so the partition is always released.
 */
static GwJob *
batch_job(GcBatch *b, int nargs)
{
	size_t bytes = 0;
	GwJob *j;

	for (int i = 0; i < b->n; i++)
		bytes += (size_t) b->rounds[i]->lengths[0];
	if (b->n > 1 && gw_budget_take(bytes))
	{
		if ((j = gw_job_new(sql_for(nargs), batch_done, b)))
		{
			j->prepare = true;
			j->budget = bytes;
			if (batch_params(j, b, nargs))
				return j;
			gw_job_free(j);
		}
		else
			gw_budget_give(bytes);
	}
	for (int i = b->n - 1; i >= 1; i--)
		requeue_front(b->part, b->rounds[i]);
	b->n = 1;
	if (!(j = gw_job_new(b->rounds[0]->sql, batch_done, b)))
		return NULL;
	j->prepare = b->rounds[0]->prepare;
	for (int a = 0; a < b->rounds[0]->nparams; a++)
		gw_job_param(j, b->rounds[0]->values[a], b->rounds[0]->lengths[a], b->rounds[0]->formats[a], false);
	return j;
}

/* the waiting rounds of part (up to --group-commit), those whose requester went away dropped */
static void
start_next(GcPart *part)
{
	int n = part->waiting.len < gw_cfg.group_commit ? part->waiting.len : gw_cfg.group_commit;
	GcBatch *b = malloc(sizeof(GcBatch) + (size_t) n * sizeof(GwJob *));
	GwJob *j;
	int k = 0;

	if (!b)
	{
		/* no memory for the group: its rounds fail (retryable), as a refused submit fails */
		while (part->waiting.head)
			gw_job_finish(take_first(part), NULL, "out of memory");
		part_done(part);
		return;
	}
	while (k < n && part->waiting.head && !(k > 0 && part->waiting.head->gc_solo))
	{
		GwJob *r = take_first(part);
		bool solo = r->gc_solo;

		if (!r->user && r->done)
			gw_job_free(r);     /* its requester went away while it waited (as the pool does) */
		else
			b->rounds[k++] = r;
		if (solo)
			break;              /* a round of a failed batch runs alone */
	}
	b->part = part;
	b->n = k;
	if (k == 0)
	{
		free(b);
		part_done(part);
		return;
	}
	j = batch_job(b, part->nargs);
	if (j && gw_pool_submit(j))
	{
		if (b->n > 1)
			gw_metrics_group_commit(b->n);
		return;
	}
	/* no memory, or the pool's queue is full (it freed j): these rounds fail, retryable */
	for (int i = 0; i < b->n; i++)
		gw_job_finish(b->rounds[i], NULL, "too many rounds waiting for the database");
	free(b);
	part_done(part);
}

bool
gw_gc_submit(GwJob *job, const char *partition)
{
	GcPart **p, *part;
	bool fresh;

	if (gw_cfg.group_commit <= 1 || gw_cfg.router || job->bootstrap || job->nparams < 3 ||
		job->nparams > GC_MAX_ARGS)
		return gw_pool_submit(job);
	if (waiting_total >= gw_cfg.max_queue)
	{
		gw_job_free(job);
		return false;
	}
	p = find(partition, job->nparams);
	if (!(fresh = !*p))
		part = *p;
	else if (!(part = calloc(1, sizeof(GcPart))) || !(part->partition = strdup(partition)))
	{
		free(part);
		return gw_pool_submit(job);
	}
	gw_jq_push(&part->waiting, job);
	waiting_total++;
	if (fresh)
	{
		part->nargs = job->nparams;
		*p = part;
		start_next(part);
	}
	return true;
}

int
gw_gc_waiting(void)
{
	return waiting_total;
}
