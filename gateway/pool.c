/*
 * pool.c — a bounded pool of libpq connections in non-blocking mode, driven by the
 * gateway's event loop (no thread per connection or request).
 *
 * Each connection's socket is watched by the event loop (loop.c), level-triggered: readable
 * always, writable while libpq has bytes to send or PQconnectPoll waits for writable.
 * Connection establishment is asynchronous too (PQconnectStart / PQconnectPoll, watching the
 * new socket when libpq switches, which it does when one address of the host fails and it
 * tries the next).
 *
 * conns[0 .. pool-1] serve rounds, one job at a time each; conns[pool] holds LISTEN for the
 * commit wake-ups (SPEC §8.2) and presence (§8.6) and never runs rounds, so a notification is
 * never queued behind a long round.  A connection that dies fails its job (the requester
 * answers sync.internal_error, retryable) and is replaced after a short backoff.
 *
 * Commit wake-ups (docs/realtime.md "Commit wake-ups"): the listen connection first asks
 * syncular.commit_wakeup_mode() and LISTENs syncular_commit and syncular_presence (in ring mode
 * too: a session whose mode differs still reaches the gateway).  ring or both: one more
 * connection (the waiter) runs the loop of waiter.c, syncular.wait_commits from a position kept
 * across calls and reconnects; a backend inside a long statement receives no NOTIFY, hence the
 * separate connection.  The pool owns that connection and lends waiter.c its send and
 * readiness.
 *
 * In front of a syncular_router database the commits happen on the shards: the shard listeners
 * (one per distinct shard database, list kept by shards.c, with the --db credentials) ask each
 * shard its mode and LISTEN syncular_commit there or become that shard's waiter.  Rounds,
 * fanout calls and presence still go through --db (the router routes them by partition).
 */
#include "gateway.h"
#include "jobqueue.h"
#include "metrics.h"
#include "prepared.h"
#include "waiter.h"

#include <libpq-fe.h>
#include "loop.h"

#include <stdlib.h>
#include <string.h>

/* PC_PINNED: idle between the jobs of one requester's transaction (gw_pool_submit_pinned) */
typedef enum { PC_DOWN, PC_CONNECTING, PC_READY, PC_BUSY, PC_PINNED } PcState;

typedef struct PgConn
{
	int         idx;
	bool        listener;
	char       *conninfo;       /* shard listener: the shard's conninfo; NULL = --db */
	struct PgConn *snext;       /* shard listeners list */
	PcState     st;
	PGconn     *conn;
	int         fd;             /* the socket watched in the loop, -1: none */
	bool        flushing;       /* query bytes still to send */
	bool        conn_writing;   /* PQconnectPoll waits for writable */
	GwJob      *job;
	GwPrepared  prep;           /* the named statements of this connection's backend */
	bool        bootstrap;      /* job is a bootstrap round (counted in bootstraps_running) */
	void       *pinned_by;     /* the requester holding the connection (PC_PINNED) */
	PGresult   *res;
	int         backoff_ms;
	GwTimer     retry;
	bool        listened;       /* a LISTEN of this connection succeeded before */
	bool        waiter;         /* runs the syncular.wait_commits loop (waiter.c) */
	GwWaiter    w;              /* that loop's position and timer, kept across reconnects */
} PgConn;

static PgConn *conns;
static int     nconns;
/* the queues (jobqueue.c): rounds and the other jobs; background jobs, sent only when the first
 * is empty; bootstrap rounds */
static GwJobQueue jobs = {.orphans = true};
/* background jobs (the realtime ack writes, acks.c): sent only when no round, fanout or other
 * job waits, so bookkeeping never delays a round or a delta (SPEC §8.2) */
static GwJobQueue background;
/*
 * Bootstrap rounds (a request whose subscription has cursor -1 or a bootstrapState,
 * ssp_request_bootstraps): at most --bootstrap-connections of them run at once, so a burst of
 * bootstraps, each holding its connection for the pages it builds, leaves the other connections
 * to pushes, incremental pulls, fanouts and acks instead of queueing them behind itself.  They
 * are sent after the first queue, in their own order.
 */
static GwJobQueue bootstraps = {.orphans = true};
static int bootstraps_running;
static GwNotifyFn notify_fn;
static GwListenUpFn listen_up_fn;
static bool    shutting_down;
static PgConn *shards;
static PgConn *dbwaiter;        /* the --db waiter (ring mode, not in router mode) */
static int     connects;        /* round connections established since start */
static unsigned long long preferred[2];  /* jobs with a preference sent elsewhere [0], on it [1] */

static void pc_connect(PgConn *pc);
static void pc_connecting(PgConn *pc);
static void listen_start(PgConn *pc);
static void pc_close(PgConn *pc);
static void pc_dispatch(void);

/* ---- libpq's socket in the event loop ---- */

static void pc_io(int fd, uint32_t events, void *arg);

static void
pc_detach(PgConn *pc)
{
	gw_loop_unwatch(pc->fd);
	pc->fd = -1;
}

/* watch libpq's current socket: readable, and writable while there is something to send */
static bool
pc_watch(PgConn *pc)
{
	int fd = PQsocket(pc->conn);
	bool out = (pc->st == PC_CONNECTING && pc->conn_writing) || pc->flushing;

	if (fd < 0)
		return false;
	if (pc->fd >= 0 && pc->fd != fd)
		pc_detach(pc);
	if (gw_loop_watch(fd, EPOLLIN | (out ? EPOLLOUT : 0), pc_io, pc) != 0)
		return false;
	pc->fd = fd;
	return true;
}

/* ---- failure and reconnect ---- */

static void
retry_cb(GwTimer *t)
{
	PgConn *pc = gw_container_of(t, PgConn, retry);

	if (!shutting_down)
		pc_connect(pc);
}

/* pc has no job any more (it completed, or the connection failed) */
static void
pc_job_ended(PgConn *pc)
{
	pc->job = NULL;
	bootstraps_running -= pc->bootstrap;
	pc->bootstrap = false;
}

/* no round connection is up or coming up: answer the waiting jobs now instead of letting
 * clients wait for a database that is gone (they retry; SPEC §10 retryable internal_error) */
static void
fail_queue_without_db(void)
{
	for (int i = 0; i < nconns; i++)
		if (!conns[i].listener && conns[i].st != PC_DOWN)
			return;
	gw_jq_fail(&jobs, "no database connection");
	gw_jq_fail(&bootstraps, "no database connection");
	gw_jq_fail(&background, "no database connection");
}

static void
pc_fail(PgConn *pc, const char *why)
{
	GwJob *j = pc->job;

	if (pc->conn && !shutting_down)
	{
		if (pc->conninfo)
			gw_log("shard listen connection (%s) lost: %s", pc->conninfo, why ? why : PQerrorMessage(pc->conn));
		else if (pc == dbwaiter)
			gw_log("commit waiter connection lost: %s", why ? why : PQerrorMessage(pc->conn));
		else
			gw_log("database connection %d%s lost: %s", pc->idx, pc->listener ? " (listen)" : "",
				   why ? why : PQerrorMessage(pc->conn));
	}
	pc_job_ended(pc);
	if (pc->res)
		PQclear(pc->res);
	pc->res = NULL;
	gw_waiter_cancel(&pc->w);
	pc_detach(pc);
	if (pc->conn)
		PQfinish(pc->conn);
	pc->conn = NULL;
	pc->st = PC_DOWN;
	pc->pinned_by = NULL;
	pc->flushing = false;
	if (j)
		gw_job_finish(j, NULL, "database connection lost during the round");
	if (!shutting_down)
	{
		pc->backoff_ms = pc->backoff_ms ? (pc->backoff_ms * 2 > 5000 ? 5000 : pc->backoff_ms * 2) : 200;
		gw_timer_after(&pc->retry, retry_cb, (int64_t) pc->backoff_ms * 1000);
	}
	fail_queue_without_db();
	pc_dispatch();
}

/* a shard's conninfo over the --db one: the shard names host, port and dbname, --db the
 * credentials and other settings (the router lists shards without user or password) */
static PGconn *
connect_shard(const char *shard)
{
	PQconninfoOption *base = PQconninfoParse(gw_cfg.db, NULL);
	PQconninfoOption *over = PQconninfoParse(shard, NULL);
	const char *keys[64], *vals[64];
	int n = 0;
	PGconn *c = NULL;

	if (base && over)
	{
		for (PQconninfoOption *o = over; o->keyword && n < 62; o++)
		{
			const char *v = o->val;
			bool addr = strcmp(o->keyword, "host") == 0 || strcmp(o->keyword, "hostaddr") == 0 ||
				strcmp(o->keyword, "port") == 0 || strcmp(o->keyword, "dbname") == 0 ||
				strcmp(o->keyword, "service") == 0;

			if (!v && !addr)
				for (PQconninfoOption *b = base; b->keyword; b++)
					if (strcmp(b->keyword, o->keyword) == 0)
						v = b->val;
			if (!v && strcmp(o->keyword, "application_name") == 0)
				v = "syncular-gateway";
			if (v)
			{
				keys[n] = o->keyword;
				vals[n++] = v;
			}
		}
		keys[n] = vals[n] = NULL;
		c = PQconnectStartParams(keys, vals, 0);
	}
	if (base)
		PQconninfoFree(base);
	if (over)
		PQconninfoFree(over);
	return c;
}

static void
pc_connect(PgConn *pc)
{
	/* application_name marks the gateway's sessions in pg_stat_activity unless --db sets one */
	static const char *const keys[] = {"application_name", "dbname", NULL};
	const char *vals[] = {"syncular-gateway", gw_cfg.db, NULL};

	gw_prepared_reset(&pc->prep);   /* a new backend: nothing prepared there */
	pc->conn = pc->conninfo ? connect_shard(pc->conninfo) : PQconnectStartParams(keys, vals, 1);
	if (!pc->conn || PQstatus(pc->conn) == CONNECTION_BAD)
	{
		pc_fail(pc, pc->conn ? PQerrorMessage(pc->conn) : "out of memory or a bad shard connection string");
		return;
	}
	pc->st = PC_CONNECTING;
	pc->conn_writing = true;   /* PQconnectPoll starts as if writable */
	if (!pc_watch(pc))
		pc_fail(pc, "cannot watch the database socket");
}

/* ---- query execution ---- */

static void
pc_flush(PgConn *pc)
{
	int r = PQflush(pc->conn);

	if (r < 0)
		pc_fail(pc, NULL);
	else if (pc->flushing != (r == 1))
	{
		pc->flushing = (r == 1);
		if (!pc_watch(pc))
			pc_fail(pc, "cannot watch the database socket");
	}
}

static bool
pc_send(PgConn *pc, GwJob *j)
{
	if (gw_prepared_send(&pc->prep, pc->conn, j) < 0)
		return false;
	pc->job = j;
	pc->bootstrap = j->bootstrap;
	bootstraps_running += j->bootstrap;
	j->conn = pc->idx;
	pc->st = PC_BUSY;
	pc_flush(pc);
	return true;
}

/*
 * The connection for j: its preferred one when that is ready, whose backend has j's caches warm
 * (a fanout call's registrations parsed, fanout.c), else the last ready one, so that jobs
 * without a preference leave the low slots the fanout calls prefer to them.  A prefer_only job
 * waits while its connection is up but busy (NULL).  NULL: none ready.
 */
static PgConn *
pick_conn(const GwJob *j)
{
	if (j->prefer >= 0)
	{
		PgConn *pc = &conns[j->prefer % gw_cfg.pool];

		if (pc->st == PC_READY)
			return pc;
		if (j->prefer_only && pc->st != PC_DOWN && pc->st != PC_CONNECTING)
			return NULL;
	}
	for (int i = gw_cfg.pool - 1; i >= 0; i--)
		if (conns[i].st == PC_READY)
			return &conns[i];
	return NULL;
}

static bool
any_ready(void)
{
	for (int i = 0; i < gw_cfg.pool; i++)
		if (conns[i].st == PC_READY)
			return true;
	return false;
}

/*
 * The jobs of q on the ready connections, in order (a prefer_only job whose connection is busy
 * is passed over and keeps its place); capped: while bootstraps_running allows.
 */
static void
queue_send(GwJobQueue *q, bool capped)
{
	GwJob **link = &q->head;
	GwJob *prev = NULL;

	while (*link && any_ready())
	{
		GwJob *j = *link;
		PgConn *pc;

		if (capped && bootstraps_running >= gw_cfg.bootstrap_connections)
			return;
		if (q->orphans && !j->user && j->done)
		{
			gw_job_free(gw_jq_unlink(q, link, prev));  /* the requester went away while it waited */
			continue;
		}
		if (!(pc = pick_conn(j)))
		{
			if (!j->prefer_only)
				return;
			prev = j;
			link = &j->next;
			continue;
		}
		gw_jq_unlink(q, link, prev);
		if (j->prefer >= 0)
			preferred[pc->idx == j->prefer % gw_cfg.pool]++;
		if (!pc_send(pc, j))
		{
			gw_jq_push_front(q, j);   /* the connection is unusable; the job back first */
			pc_fail(pc, NULL);
			return;
		}
	}
}

unsigned long long
gw_pool_preferred(bool placed)
{
	return preferred[placed];
}

static void
pc_dispatch(void)
{
	queue_send(&jobs, false);
	queue_send(&bootstraps, true);
	if (!jobs.head)
		queue_send(&background, false);
}

void
gw_pool_submit_background(GwJob *job)
{
	gw_jq_push(&background, job);
	pc_dispatch();
}

bool
gw_pool_submit(GwJob *job)
{
	if (jobs.len + bootstraps.len >= gw_cfg.max_queue)
	{
		gw_job_free(job);
		return false;
	}
	gw_jq_push(job->bootstrap ? &bootstraps : &jobs, job);
	pc_dispatch();
	return true;
}

static void
pc_ready(PgConn *pc)
{
	pc->st = PC_READY;
	pc->backoff_ms = 0;
	if (PQsetnonblocking(pc->conn, 1) != 0)
	{
		pc_fail(pc, NULL);
		return;
	}
	if (pc->listener)
	{
		listen_start(pc);
		return;
	}
	connects++;
	pc_dispatch();
}

int
gw_pool_connects(void)
{
	return connects;
}

static void
pc_connecting(PgConn *pc)
{
	PostgresPollingStatusType r = PQconnectPoll(pc->conn);

	pc->conn_writing = (r == PGRES_POLLING_WRITING);
	switch (r)
	{
		case PGRES_POLLING_FAILED:
			pc_fail(pc, NULL);
			return;
		case PGRES_POLLING_OK:
			pc->st = PC_READY;
			if (!pc_watch(pc))
				pc_fail(pc, "cannot watch the database socket");
			else
				pc_ready(pc);
			return;
		default:                /* reading or writing */
			if (!pc_watch(pc))
				pc_fail(pc, "cannot watch the database socket");
			return;
	}
}

static void
pc_notifies(PgConn *pc)
{
	PGnotify *n;

	while ((n = PQnotifies(pc->conn)) != NULL)
	{
		if (notify_fn)
			notify_fn(n->relname, n->extra);
		PQfreemem(n);
	}
}

/*
 * A connection going back to the pool must not carry a transaction: a requester that went away
 * (or released) in the middle of one leaves it open or aborted.  Sends ROLLBACK and returns
 * true when it did (the connection is busy with it), false when the session is idle.
 */
static bool
pc_unpin(PgConn *pc)
{
	GwJob *j;

	if (!pc->conn || PQtransactionStatus(pc->conn) == PQTRANS_IDLE)
		return false;
	if (!(j = gw_job_new("ROLLBACK", NULL, NULL)) || !pc_send(pc, j))
	{
		if (j)
			gw_job_free(j);
		pc_fail(pc, "cannot roll back an abandoned transaction");
	}
	return true;
}

static void
pc_readable(PgConn *pc)
{
	if (!PQconsumeInput(pc->conn))
	{
		pc_fail(pc, NULL);
		return;
	}
	if (pc->st == PC_BUSY)
	{
		while (!PQisBusy(pc->conn))
		{
			PGresult *r = PQgetResult(pc->conn);
			GwJob *j;

			if (r)
			{
				if (pc->res)
					PQclear(pc->res);
				pc->res = r;
				continue;
			}
			/* the statement is complete: its Prepare, or a named statement to send unnamed */
			j = pc->job;
			if (j && gw_prepared_again(&pc->prep, pc->res))
			{
				PQclear(pc->res);
				pc->res = NULL;
				pc_job_ended(pc);
				if (!pc_send(pc, j))
				{
					pc->job = j;    /* pc_fail answers it */
					pc_fail(pc, NULL);
					return;
				}
				if (pc->st != PC_BUSY)
					return;     /* its flush failed: pc_fail answered it */
				continue;
			}
			pc_job_ended(pc);
			pc->st = PC_READY;
			pc->pinned_by = NULL;
			if (j && j->hold && j->user)
			{
				pc->st = PC_PINNED;     /* the requester's next job comes with submit_pinned */
				pc->pinned_by = j->user;
			}
			if (j)
			{
				if (gw_job_finish(j, pc->res, NULL))
					pc->res = NULL;     /* the answer's body still points into it */
			}
			else if (pc->listener && pc->res && PQresultStatus(pc->res) != PGRES_COMMAND_OK)
				gw_log("LISTEN failed: %s", PQresultErrorMessage(pc->res));
			else if (pc->listener)
			{
				/* listening again after a lost connection: commits of the gap were not
				 * notified here, so every socket is told to catch up (SPEC §8.3) */
				if (pc->listened && notify_fn)
					notify_fn("syncular_commit", NULL);
				pc->listened = true;
			}
			if (pc->res)
				PQclear(pc->res);
			pc->res = NULL;
			break;
		}
	}
	if (pc->conn && PQstatus(pc->conn) == CONNECTION_BAD)
	{
		pc_fail(pc, NULL);
		return;
	}
	if (pc->conn && pc->listener)
		pc_notifies(pc);
	if (pc->st == PC_READY && !pc->listener && !pc_unpin(pc))
		pc_dispatch();
}

static void
pc_io(int fd, uint32_t events, void *arg)
{
	PgConn *pc = arg;

	(void) fd;
	if (!pc->conn)
		return;
	if (pc->st == PC_CONNECTING)
	{
		pc_connecting(pc);      /* PQconnectPoll reads a failure (EPOLLERR/HUP) itself */
		return;
	}
	if ((events & EPOLLOUT) && pc->flushing)
	{
		pc_flush(pc);
		if (!pc->conn)
			return;
	}
	if (events & (EPOLLIN | EPOLLERR | EPOLLHUP))
		pc_readable(pc);
}

int
gw_pool_init(void)
{
	nconns = gw_cfg.pool + 1;
	conns = calloc((size_t) nconns, sizeof(PgConn));
	if (!conns)
		return -1;
	for (int i = 0; i < nconns; i++)
	{
		conns[i].idx = i;
		conns[i].listener = (i == gw_cfg.pool);
		conns[i].fd = -1;
		pc_connect(&conns[i]);
	}
	return 0;
}

void
gw_pool_shutdown(void)
{
	shutting_down = true;
	gw_pool_set_shards(NULL, 0);
	if (dbwaiter)
		pc_close(dbwaiter);
	dbwaiter = NULL;
	for (int i = 0; i < nconns; i++)
	{
		gw_timer_cancel(&conns[i].retry);
		if (conns[i].conn)
			pc_fail(&conns[i], NULL);
	}
	gw_jq_fail(&jobs, "gateway shutting down");
	gw_jq_fail(&bootstraps, "gateway shutting down");
	gw_jq_fail(&background, "gateway shutting down");
}

int
gw_pool_live(void)
{
	int n = 0;

	for (int i = 0; i < gw_cfg.pool; i++)
		n += (conns[i].st == PC_READY || conns[i].st == PC_BUSY || conns[i].st == PC_PINNED);
	return n;
}

int
gw_pool_busy(void)
{
	int n = jobs.len + bootstraps.len;

	for (int i = 0; i < gw_cfg.pool; i++)
		n += (conns[i].st == PC_BUSY || conns[i].st == PC_PINNED);
	return n;
}

int
gw_pool_in_use(void)
{
	int n = 0;

	for (int i = 0; i < gw_cfg.pool; i++)
		n += (conns[i].st == PC_BUSY || conns[i].st == PC_PINNED);
	return n;
}

/*
 * Pinned transactions (blob routes): a job submitted with hold = true keeps its connection for
 * job->user once it completes (job->conn names it), so BEGIN ... COMMIT can run as a series of
 * jobs on one session.  false: the connection is gone (died or not pinned by this requester);
 * the job is freed without a callback.
 */
bool
gw_pool_submit_pinned(int conn, GwJob *job)
{
	PgConn *pc = (conn >= 0 && conn < gw_cfg.pool) ? &conns[conn] : NULL;

	if (!pc || pc->st != PC_PINNED || pc->pinned_by != job->user || !pc->conn)
	{
		gw_job_free(job);
		return false;
	}
	pc->pinned_by = NULL;
	if (!pc_send(pc, job))
	{
		job->done = NULL;
		pc->job = NULL;
		gw_job_free(job);
		pc_fail(pc, NULL);
		return false;
	}
	return true;
}

/* End a pin held by user (idle between jobs): ROLLBACK of an open transaction, then back to the
 * pool.  A pinned job in flight whose user was cleared is released when it completes. */
void
gw_pool_release(int conn, void *user)
{
	PgConn *pc = (conn >= 0 && conn < gw_cfg.pool) ? &conns[conn] : NULL;

	if (!pc || pc->st != PC_PINNED || pc->pinned_by != user)
		return;
	pc->pinned_by = NULL;
	pc->st = PC_READY;
	if (!pc_unpin(pc))
		pc_dispatch();
}

void
gw_pool_set_notify(GwNotifyFn fn)
{
	notify_fn = fn;
}

bool
gw_pool_notify(const char *channel, const char *payload)
{
	GwJob *j = gw_job_new("SELECT pg_notify($1, $2)", NULL, NULL);

	if (!j)
		return false;
	gw_job_param(j, channel, (int) strlen(channel), 0, true);
	gw_job_param(j, payload, (int) strlen(payload), 0, true);
	return gw_pool_submit(j);
}

/* ---- commit wake-ups: LISTEN or the ring waiter ---- */

static GwWaiter *waiter_of(PgConn *pc);
static void waiter_start(void);
static void waiter_stop(void);

/* a plain query on a listen connection; its completion is handled in pc_readable */
static void
send_listen(PgConn *pc, const char *sql)
{
	if (!PQsendQuery(pc->conn, sql))
	{
		pc_fail(pc, NULL);
		return;
	}
	pc->st = PC_BUSY;
	pc_flush(pc);
}

/* a listen connection's own statement (the mode, the waiter's calls): sent, or the job freed and
 * the connection failed (it reconnects); conn is the PgConn (waiter.c's send callback) */
static bool
send_or_fail(void *conn, GwJob *j)
{
	PgConn *pc = conn;

	if (pc_send(pc, j))
		return true;
	gw_job_free(j);
	pc_fail(pc, NULL);
	return false;
}

static void
mode_done(GwJob *job, PGresult *res, const char *err)
{
	PgConn *pc = job->user;
	const char *mode = "notify";
	bool ring;

	(void) err;
	if (!res)
		return;                 /* the connection died: pc_fail reconnects */
	if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1 && !PQgetisnull(res, 0, 0))
		mode = PQgetvalue(res, 0, 0);
	else
		gw_log("cannot ask syncular.commit_wakeup_mode()%s%s: %s; listening for NOTIFY syncular_commit "
			   "(grant EXECUTE on it and on syncular.wait_commits to the gateway role)",
			   pc->conninfo ? " on shard " : "", pc->conninfo ? pc->conninfo : "", PQresultErrorMessage(res));
	ring = strcmp(mode, "ring") == 0 || strcmp(mode, "both") == 0;
	if (pc->conninfo)
	{
		if (ring)
		{
			pc->waiter = true;
			gw_log("commit wake-ups of shard %s: the ring (syncular.wait_commits)", pc->conninfo);
			gw_waiter_next(waiter_of(pc));
		}
		else
		{
			send_listen(pc, "LISTEN syncular_commit");
			gw_log("listening for commits on shard %s", pc->conninfo);
		}
		return;
	}
	if (gw_cfg.verbose || ring)
		gw_log("commit wake-ups: %s", ring ? "the ring (syncular.wait_commits)" : "NOTIFY syncular_commit");
	/* LISTEN syncular_commit in ring mode too: sessions whose mode differs (a switch in progress,
	 * 'both') still reach this gateway; a wake-up that arrives twice costs one coalesced fanout */
	send_listen(pc, "LISTEN syncular_commit; LISTEN syncular_presence");
	if (pc->conn)
		if (listen_up_fn)
			listen_up_fn();
	if (ring)
		waiter_start();
	else
		waiter_stop();
}

/* a listen connection is up: ask the mode (the waiter goes straight to its loop) */
static void
listen_start(PgConn *pc)
{
	GwJob *j;

	if (pc == dbwaiter)
	{
		gw_waiter_next(waiter_of(pc));
		return;
	}
	pc->waiter = false;
	if (gw_cfg.router && !pc->conninfo)
	{
		/* a router database: commits happen on the shards, presence travels here */
		send_listen(pc, "LISTEN syncular_commit; LISTEN syncular_presence");
		if (pc->conn)
			if (listen_up_fn)
			listen_up_fn();
		return;
	}
	if (!(j = gw_job_new("SELECT syncular.commit_wakeup_mode()", mode_done, pc)))
	{
		pc_fail(pc, "out of memory");
		return;
	}
	j->result_format = 0;
	(void) send_or_fail(pc, j);
}

/* the waiter loop's connection, as waiter.c sees it */
static bool
waiter_ready(void *conn)
{
	PgConn *pc = conn;

	return !shutting_down && pc->conn && pc->st == PC_READY && pc->waiter;
}


static GwWaiter *
waiter_of(PgConn *pc)
{
	pc->w.conn = pc;
	pc->w.ready = waiter_ready;
	pc->w.send = send_or_fail;
	pc->w.shard = pc->conninfo;
	return &pc->w;
}

static void
waiter_start(void)
{
	if (dbwaiter || shutting_down || !(dbwaiter = calloc(1, sizeof(PgConn))))
		return;
	dbwaiter->idx = -1;
	dbwaiter->fd = -1;
	dbwaiter->listener = true;
	dbwaiter->waiter = true;
	pc_connect(dbwaiter);
}

static void
waiter_stop(void)
{
	if (dbwaiter)
		pc_close(dbwaiter);
	dbwaiter = NULL;
}

void
gw_pool_set_listen_up(GwListenUpFn fn)
{
	listen_up_fn = fn;
}

/*
 * A consumer of commit wake-ups came (a socket was upgraded): a waiter between two idle calls
 * calls now, from the position it kept, so every commit since reaches the fanout.
 */
void
gw_pool_wakeups_wanted(void)
{
	if (dbwaiter)
		gw_waiter_resume(&dbwaiter->w);
	for (PgConn *pc = shards; pc; pc = pc->snext)
		if (pc->waiter)
			gw_waiter_resume(&pc->w);
}

bool
gw_pool_waiting(void)
{
	if (dbwaiter)
		return true;
	for (PgConn *pc = shards; pc; pc = pc->snext)
		if (pc->waiter)
			return true;
	return false;
}

/* ---- shard listeners (router mode) ---- */

static void
pc_close(PgConn *pc)
{
	gw_timer_cancel(&pc->retry);
	gw_waiter_cancel(&pc->w);
	if (pc->job)
		gw_job_free(pc->job);      /* a wait_commits or mode call: its callback needs pc */
	if (pc->res)
		PQclear(pc->res);
	pc_detach(pc);
	if (pc->conn)
		PQfinish(pc->conn);
	free(pc->conninfo);
	free(pc);
}

void
gw_pool_set_shards(char **conninfos, int n)
{
	PgConn **pp = &shards;

	/* close the listeners of shards no longer listed */
	while (*pp)
	{
		PgConn *pc = *pp;
		bool keep = false;

		for (int i = 0; i < n && !keep; i++)
			keep = strcmp(conninfos[i], pc->conninfo) == 0;
		if (keep)
		{
			pp = &pc->snext;
			continue;
		}
		*pp = pc->snext;
		gw_log("no longer listening on shard %s", pc->conninfo);
		pc_close(pc);
	}
	/* open one for each new one */
	for (int i = 0; i < n && !shutting_down; i++)
	{
		PgConn *pc;
		bool have = false;

		for (pc = shards; pc && !have; pc = pc->snext)
			have = strcmp(conninfos[i], pc->conninfo) == 0;
		if (have || !(pc = calloc(1, sizeof(PgConn))))
			continue;
		if (!(pc->conninfo = strdup(conninfos[i])))
		{
			free(pc);
			continue;
		}
		pc->idx = -1;
		pc->fd = -1;
		pc->listener = true;
		pc->snext = shards;
		shards = pc;
		pc_connect(pc);
	}
}

int
gw_pool_shards_live(void)
{
	int n = 0;

	for (PgConn *pc = shards; pc; pc = pc->snext)
		n += (pc->st == PC_READY || pc->st == PC_BUSY);
	return n;
}

int
gw_pool_bootstraps_running(void)
{
	return bootstraps_running;
}

int
gw_pool_bootstraps_waiting(void)
{
	return bootstraps.len;
}
