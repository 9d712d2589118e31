/*
 * metrics.c — GET <mount>/metrics: the gateway's own counters plus the extension's statistics
 * views (docs/operations.md "Metrics for Prometheus"), in the Prometheus text exposition format.
 *
 * The database part is one query through the pool, at most once per --metrics-interval; its
 * answer is rendered to text once and cached, so scrapes within the interval cost no query.
 * A role that may not read the views (sync.forbidden / permission denied, SQLSTATE 42501) gets
 * syncular_stats_readable 0 instead of an error; without shared_preload_libraries only
 * syncular_stats_preloaded 0 is exported for the database.
 */
#include "metrics.h"
#include "prepared.h"
#include "strbuf.h"
#include "waiter.h"
#include "loop.h"
#include "parse.h"

#include <jansson.h>
#include <libpq-fe.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------- the gateway's figures */

#define MAX_HTTP_KEYS 64
#define MAX_WAKE_REASONS 16

typedef struct { int route, status; uint64_t n; } HttpKey;

static HttpKey  http_keys[MAX_HTTP_KEYS];
static int      n_http_keys;
static uint64_t http_other;                 /* (route, status) pairs past the table */
static uint64_t bytes_io[2][2];             /* [transport][in] */
static uint64_t deltas;
static char     wake_reason[MAX_WAKE_REASONS][48];
static uint64_t wake_n[MAX_WAKE_REASONS + 1];   /* the last slot: "other" */
static int      n_wake;
static GwGaugeFn sockets_fn;         /* the open realtime sockets (ws.c registers it) */
static GwGaugeFn watches_fn;         /* the live query watches (ws.c registers watches.c's count) */
static uint64_t watch_calls;
static uint64_t acks_received, ack_writes, acks_written;
static uint64_t jwt_hits, jwt_misses;
static uint64_t gc_batches, gc_rounds, gc_fallbacks;
static GwGaugeFn gc_waiting_fn;      /* push rounds waiting for their partition (main.c registers it) */

/* commit-to-delta latency, seconds (upper bounds, inclusive), then +Inf */
static const double lat_le[] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
#define NLAT (sizeof(lat_le) / sizeof(lat_le[0]))
static uint64_t lat_n[NLAT + 1];
static double   lat_sum;

void
gw_metrics_set_sockets(GwGaugeFn fn)
{
	sockets_fn = fn;
}

void
gw_metrics_set_watches(GwGaugeFn fn)
{
	watches_fn = fn;
}

void
gw_metrics_watch_call(void)
{
	watch_calls++;
}

void
gw_metrics_ack_received(void)
{
	acks_received++;
}

void
gw_metrics_jwt_cache(bool hit)
{
	if (hit)
		jwt_hits++;
	else
		jwt_misses++;
}

void
gw_metrics_ack_write(int n)
{
	ack_writes++;
	acks_written += (uint64_t) n;
}

void
gw_metrics_group_commit(int n)
{
	gc_batches++;
	gc_rounds += (uint64_t) n;
}

void
gw_metrics_group_commit_fallback(void)
{
	gc_fallbacks++;
}

void
gw_metrics_set_group_commit_waiting(GwGaugeFn fn)
{
	gc_waiting_fn = fn;
}

int64_t
gw_metrics_now_us(void)
{
	return gw_loop_now_us();
}

void
gw_metrics_http(int route, int status)
{
	for (int i = 0; i < n_http_keys; i++)
		if (http_keys[i].route == route && http_keys[i].status == status)
		{
			http_keys[i].n++;
			return;
		}
	if (n_http_keys == MAX_HTTP_KEYS)
	{
		http_other++;
		return;
	}
	http_keys[n_http_keys++] = (HttpKey) {route, status, 1};
}

void
gw_metrics_bytes(int transport, bool in, size_t n)
{
	bytes_io[transport ? 1 : 0][in ? 1 : 0] += n;
}

void
gw_metrics_notify(int64_t at[2], bool busy)
{
	if (!busy)
		at[0] = gw_metrics_now_us();
	else if (at[1] == 0)
		at[1] = gw_metrics_now_us();    /* the follow-up call serves the oldest waiting one */
}

void
gw_metrics_notify_next(int64_t at[2])
{
	if (at[1])
		at[0] = at[1];
	at[1] = 0;
}

void
gw_metrics_delta(int64_t notify_us)
{
	double sec;
	size_t b = 0;

	deltas++;
	if (notify_us <= 0)
		return;
	sec = (double) (gw_metrics_now_us() - notify_us) / 1e6;
	while (b < NLAT && sec > lat_le[b])
		b++;
	lat_n[b]++;
	lat_sum += sec;
}

void
gw_metrics_wake(const char *reason)
{
	int i;

	for (i = 0; i < n_wake; i++)
		if (strcmp(wake_reason[i], reason) == 0)
			break;
	if (i == n_wake)
	{
		/* reasons are a small fixed set (§8.3); a label per unexpected text would grow unbounded */
		if (n_wake == MAX_WAKE_REASONS || strlen(reason) >= sizeof(wake_reason[0]))
		{
			wake_n[MAX_WAKE_REASONS]++;
			return;
		}
		snprintf(wake_reason[n_wake++], sizeof(wake_reason[0]), "%s", reason);
	}
	wake_n[i]++;
}

/* ---------------------------------------------------------------- text buffer */

/* a label value: backslash, double quote and newline escaped (exposition format) */
static void
buf_label_value(GwStr *b, const char *v)
{
	for (; *v; v++)
		if (*v == '\\' || *v == '"')
		{
			gw_str_add(b, "\\", 1);
			gw_str_add(b, v, 1);
		}
		else if (*v == '\n')
			gw_str_add(b, "\\n", 2);
		else
			gw_str_add(b, v, 1);
}

static void
family(GwStr *b, const char *name, const char *type, const char *help)
{
	gw_str_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* a counter family of one sample without labels */
static void
counter(GwStr *b, const char *name, const char *help, uint64_t v)
{
	family(b, name, "counter", help);
	gw_str_printf(b, "%s %llu\n", name, (unsigned long long) v);
}

/* ---------------------------------------------------------------- the database part */

/*
 * One statement (no parameters): docs/operations.md "Metrics for Prometheus" rows plus the table
 * and lag figures, as (family, type, sample, labels jsonb text, value), grouped by family as the
 * exposition format requires, histogram buckets in bound order.  The views' NOTICE without the
 * preloaded library would reach the gateway's log at every scrape: the first CTE raises
 * client_min_messages for this statement's transaction only, and the lateral references (kept by
 * OFFSET 0) make the views run after it.
 */
static const char *const scrape_sql =
"WITH q AS MATERIALIZED (SELECT set_config('client_min_messages', 'warning', true) AS c),\n"
" st AS MATERIALIZED (SELECT x.* FROM q, LATERAL (SELECT * FROM syncular.stats WHERE q.c IS NOT NULL OFFSET 0) x),\n"
" s AS (SELECT * FROM st WHERE preloaded AND datname IS NOT NULL),\n"
" pre AS (SELECT NOT EXISTS (SELECT FROM st WHERE NOT preloaded) AS yes),\n"
" t AS (SELECT x.* FROM q, LATERAL (SELECT * FROM syncular.stats_tables\n"
"                                   WHERE datname IS NOT NULL AND q.c IS NOT NULL OFFSET 0) x),\n"
" lag AS (SELECT coalesce(max(max_commits_behind), 0) AS worst, coalesce(sum(clients), 0) AS clients,\n"
"                coalesce(sum(clients_without_cursor), 0) AS without FROM syncular.partition_lag),\n"
" m(sample, labels, value, ord) AS (\n"
"  SELECT m.sample, jsonb_build_object('database', s.datname) || m.labels, m.value, 0\n"
"    FROM s, LATERAL (VALUES\n"
"    ('syncular_rounds_total', '{\"outcome\": \"ok\"}'::jsonb, s.rounds_ok::numeric),\n"
"    ('syncular_push_commits_total', '{\"status\": \"applied\"}', s.push_commits_applied),\n"
"    ('syncular_push_commits_total', '{\"status\": \"cached\"}', s.push_commits_cached),\n"
"    ('syncular_push_commits_total', '{\"status\": \"rejected\"}', s.push_commits_rejected),\n"
"    ('syncular_push_conflicts_total', '{}', s.push_conflicts),\n"
"    ('syncular_push_operations_total', '{}', s.push_operations),\n"
"    ('syncular_pull_sections_total', '{\"kind\": \"incremental\"}', s.pull_sections_incremental),\n"
"    ('syncular_pull_sections_total', '{\"kind\": \"bootstrap\"}', s.pull_sections_bootstrap),\n"
"    ('syncular_pull_sections_total', '{\"kind\": \"reset\"}', s.pull_sections_reset),\n"
"    ('syncular_pull_sections_total', '{\"kind\": \"revoked\"}', s.pull_sections_revoked),\n"
"    ('syncular_pull_commits_served_total', '{}', s.pull_commits_served),\n"
"    ('syncular_pull_changes_served_total', '{}', s.pull_changes_served),\n"
"    ('syncular_pull_rows_served_total', '{}', s.pull_rows_served),\n"
"    ('syncular_response_bytes_total', '{}', s.response_bytes),\n"
"    ('syncular_push_phase_seconds_sum', '{}', (s.push_time_sum_ms / 1000)::numeric),\n"
"    ('syncular_pull_phase_seconds_sum', '{}', (s.pull_time_sum_ms / 1000)::numeric),\n"
"    ('syncular_push_phase_seconds_count', '{}', (SELECT sum(x) FROM unnest(s.push_time_buckets) x)),\n"
"    ('syncular_pull_phase_seconds_count', '{}', (SELECT sum(x) FROM unnest(s.pull_time_buckets) x))\n"
"    ) m(sample, labels, value)\n"
"  UNION ALL\n"
"  SELECT 'syncular_rounds_refused_total', jsonb_build_object('database', s.datname, 'code', c.key),\n"
"         c.value::text::numeric, 0 FROM s, jsonb_each(s.rounds_refused_by_code) c\n"
"  UNION ALL\n"
"  SELECT 'syncular_push_rejections_total', jsonb_build_object('database', s.datname, 'code', c.key),\n"
"         c.value::text::numeric, 0 FROM s, jsonb_each(s.push_rejected_by_code) c\n"
"  UNION ALL\n"
"  SELECT h.metric || '_bucket', jsonb_build_object('database', s.datname, 'le',\n"
"           CASE WHEN b.le = 'Infinity' THEN '+Inf' ELSE (b.le / 1000)::text END),\n"
"         sum(b.n) OVER (PARTITION BY s.datname, h.metric ORDER BY b.i), b.i\n"
"    FROM s, LATERAL (VALUES ('syncular_push_phase_seconds', s.push_time_buckets),\n"
"                            ('syncular_pull_phase_seconds', s.pull_time_buckets)) h(metric, buckets),\n"
"         LATERAL unnest(s.time_buckets_ms, h.buckets) WITH ORDINALITY b(le, n, i)\n"
"  UNION ALL\n"
"  SELECT v.sample, jsonb_build_object('database', t.datname, 'table', t.table_name) || v.labels, v.value, 0\n"
"    FROM t, LATERAL (VALUES\n"
"    ('syncular_table_push_operations_total', '{}'::jsonb, t.push_operations::numeric),\n"
"    ('syncular_table_push_conflicts_total', '{}', t.push_conflicts),\n"
"    ('syncular_table_push_rejected_total', '{}', t.push_rejected),\n"
"    ('syncular_table_pull_sections_total', '{\"kind\": \"incremental\"}', t.pull_sections_incremental),\n"
"    ('syncular_table_pull_sections_total', '{\"kind\": \"bootstrap\"}', t.pull_sections_bootstrap),\n"
"    ('syncular_table_pull_sections_total', '{\"kind\": \"reset\"}', t.pull_sections_reset),\n"
"    ('syncular_table_pull_sections_total', '{\"kind\": \"revoked\"}', t.pull_sections_revoked),\n"
"    ('syncular_table_pull_changes_served_total', '{}', t.pull_changes_served),\n"
"    ('syncular_table_pull_rows_served_total', '{}', t.pull_rows_served)\n"
"    ) v(sample, labels, value)\n"
"  UNION ALL\n"
"  SELECT v.sample, jsonb_build_object('database', current_database()) || v.labels, v.value, 0\n"
"    FROM lag, LATERAL (VALUES\n"
"    ('syncular_partition_lag_max_commits', '{}'::jsonb, lag.worst::numeric),\n"
"    ('syncular_clients', '{\"cursor\": \"with\"}', lag.clients - lag.without),\n"
"    ('syncular_clients', '{\"cursor\": \"without\"}', lag.without),\n"
"    ('syncular_clients_behind_horizon', '{}',\n"
"     (SELECT count(*) FILTER (WHERE behind_horizon) FROM syncular.client_lag))\n"
"    ) v(sample, labels, value)),\n"
" r AS (SELECT 'syncular_stats_preloaded' AS sample, jsonb_build_object('database', current_database()) AS labels,\n"
"             pre.yes::int::numeric AS value, 0 AS ord FROM pre\n"
"       UNION ALL SELECT m.* FROM m, pre WHERE pre.yes)\n"
"SELECT f.family,\n"
"       CASE WHEN f.family LIKE '%\\_seconds' THEN 'histogram' WHEN f.family LIKE '%\\_total' THEN 'counter'\n"
"            ELSE 'gauge' END,\n"
"       r.sample, r.labels::text, r.value::text\n"
"  FROM r, LATERAL (SELECT CASE WHEN r.sample LIKE '%\\_seconds\\_%'\n"
"                          THEN regexp_replace(r.sample, '_(bucket|sum|count)$', '') ELSE r.sample END) f(family)\n"
" ORDER BY f.family, r.labels->>'database', r.labels->>'table', r.sample, r.ord, r.labels::text";

static int      interval_s = -1;
static int64_t  last_scrape_us;
static bool     running;
static GwMetricsReady ready_fn;
static char    *db_text;                    /* the rendered database part of the last scrape */
static int      readable = -1;              /* -1 unknown (no scrape answered yet) */
static uint64_t scrapes, scrape_errors;

static void
render_rows(GwStr *b, PGresult *res)
{
	const char *prev = "";

	for (int i = 0; i < PQntuples(res); i++)
	{
		const char *fam = PQgetvalue(res, i, 0);
		json_t *labels = json_loads(PQgetvalue(res, i, 3), 0, NULL);
		const char *k;
		json_t *v;
		bool first = true;

		if (strcmp(fam, prev) != 0)
			gw_str_printf(b, "# TYPE %s %s\n", fam, PQgetvalue(res, i, 1));
		prev = fam;
		gw_str_add(b, PQgetvalue(res, i, 2), (size_t) PQgetlength(res, i, 2));
		gw_str_add(b, "{", 1);
		json_object_foreach(labels, k, v)
		{
			gw_str_printf(b, "%s%s=\"", first ? "" : ",", k);
			buf_label_value(b, json_is_string(v) ? json_string_value(v) : "");
			gw_str_add(b, "\"", 1);
			first = false;
		}
		json_decref(labels);
		gw_str_add(b, "} ", 2);
		gw_str_add(b, PQgetvalue(res, i, 4), (size_t) PQgetlength(res, i, 4));
		gw_str_add(b, "\n", 1);
	}
}

static void
scrape_done(GwJob *job, PGresult *res, const char *err)
{
	(void) job;
	running = false;
	free(db_text);
	db_text = NULL;
	if (res && PQresultStatus(res) == PGRES_TUPLES_OK)
	{
		GwStr b = {0};

		render_rows(&b, res);
		readable = 1;
		db_text = b.oom ? NULL : b.p;
		if (b.oom)
			free(b.p);
	}
	else
	{
		const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

		if (state && strcmp(state, "42501") == 0)
			readable = 0;       /* not a failure: the role may not read the statistics */
		else
		{
			scrape_errors++;
			readable = -1;
			gw_log("metrics scrape failed: %s", res ? PQresultErrorMessage(res) : err ? err : "?");
		}
	}
	if (ready_fn)
		ready_fn();
}

bool
gw_metrics_scrape_running(void)
{
	return running;
}

bool
gw_metrics_scrape(GwMetricsReady ready)
{
	int64_t now = gw_metrics_now_us();
	GwJob *j;

	if (interval_s < 0)
		interval_s = gw_cfg.metrics_interval_s;
	if (running)
		return true;
	if (last_scrape_us && now - last_scrape_us < (int64_t) interval_s * 1000000)
		return true;
	/* the job's user is never cleared: the answer is cached for every later scrape */
	if (!(j = gw_job_new(scrape_sql, scrape_done, &running)))
		return true;
	j->result_format = 0;
	last_scrape_us = now;
	scrapes++;
	ready_fn = ready;
	running = true;
	if (!gw_pool_submit(j))
	{
		running = false;
		scrape_errors++;
		gw_log("metrics scrape skipped: the round queue is full");
		return true;
	}
	return false;
}

/* ---------------------------------------------------------------- exposition */

static const char *
route_name(int r)
{
	switch (r)
	{
		case GW_ROUTE_SYNC: return "sync";
		case GW_ROUTE_HEALTHZ: return "healthz";
		case GW_ROUTE_READYZ: return "readyz";
		case GW_ROUTE_REALTIME: return "realtime";
		case GW_ROUTE_SEGMENT: return "segments";
		case GW_ROUTE_BLOB: return "blobs";
		case GW_ROUTE_METRICS: return "metrics";
		case GW_ROUTE_OPERATIONS: return "operations";
		case GW_ROUTE_OPS_REALTIME: return "operations_realtime";
		default: return "other";
	}
}

/* compress.c's figures: where /sync answers were compressed (worker threads or the loop) */
static void
render_gzip(GwStr *b)
{
	GwGzipStats z;
	const char *what[4][2] = {
		{"syncular_gateway_gzip_answers_total", "gzip /sync answers, by where they were compressed (loop: under --gzip-thread-min)"},
		{"syncular_gateway_gzip_in_bytes_total", "bytes of /sync answers before gzip"},
		{"syncular_gateway_gzip_out_bytes_total", "bytes of /sync answers after gzip"},
		{"syncular_gateway_gzip_seconds_total", "time spent compressing /sync answers"}};

	gw_gzip_stats(&z);
	for (int f = 0; f < 4; f++)
	{
		double worker[4] = {z.worker_answers, z.worker_in_bytes, z.worker_out_bytes, z.worker_ns / 1e9};
		double loop[4] = {z.loop_answers, z.loop_in_bytes, z.loop_out_bytes, z.loop_ns / 1e9};

		family(b, what[f][0], "counter", what[f][1]);
		gw_str_printf(b, "%s{thread=\"worker\"} %.*f\n", what[f][0], f == 3 ? 6 : 0, worker[f]);
		gw_str_printf(b, "%s{thread=\"loop\"} %.*f\n", what[f][0], f == 3 ? 6 : 0, loop[f]);
	}
	counter(b, "syncular_gateway_gzip_skipped_total",
		   "/sync answers sent uncompressed to a client accepting gzip because --gzip-queue was full", z.skipped);
	counter(b, "syncular_gateway_gzip_cancelled_total",
		   "answers dropped from the compression queue because their client went away", z.cancelled);
	family(b, "syncular_gateway_gzip_queue_bytes", "gauge",
		   "bytes of /sync answers waiting for or in compression (limit --gzip-queue)");
	gw_str_printf(b, "syncular_gateway_gzip_queue_bytes %zu\n", z.queued_bytes);
}

static void
render_gateway(GwStr *b)
{
	static const char *const tname[2] = {"http", "websocket"};
	uint64_t cum = 0;

	family(b, "syncular_gateway_http_requests_total", "counter",
		   "HTTP responses by route and status (WebSocket upgrades not included)");
	for (int i = 0; i < n_http_keys; i++)
		gw_str_printf(b, "syncular_gateway_http_requests_total{route=\"%s\",status=\"%d\"} %llu\n",
				   route_name(http_keys[i].route), http_keys[i].status, (unsigned long long) http_keys[i].n);
	if (http_other)
		gw_str_printf(b, "syncular_gateway_http_requests_total{route=\"other\",status=\"other\"} %llu\n",
				   (unsigned long long) http_other);
	family(b, "syncular_gateway_sockets", "gauge", "open realtime WebSockets");
	gw_str_printf(b, "syncular_gateway_sockets %d\n", sockets_fn ? sockets_fn() : 0);
	family(b, "syncular_gateway_operation_watches", "gauge",
		   "live query watches on <mount>/operations/realtime sockets (REMOTE.md 6)");
	gw_str_printf(b, "syncular_gateway_operation_watches %d\n", watches_fn ? watches_fn() : 0);
	counter(b, "syncular_gateway_operation_watch_calls_total",
		   "syncular.operations_watch_rerun calls (one per partition and wake-up, for all its watches)", watch_calls);
	counter(b, "syncular_gateway_deltas_sent_total", "commit deltas queued to realtime sockets", deltas);
	counter(b, "syncular_gateway_acks_received_total",
		   "ack messages received on open realtime sockets (SPEC 8.2)", acks_received);
	counter(b, "syncular_gateway_ack_writes_total",
		   "statements writing realtime acks (one syncular.realtime_ack_many call per partition with new acks)", ack_writes);
	counter(b, "syncular_gateway_acks_written_total",
		   "socket acks written by those statements (each socket's highest ack since the previous write)", acks_written);
	counter(b, "syncular_gateway_jwt_cache_hits_total",
		   "bearer tokens found in the verified-token cache (--jwt-cache): no signature check", jwt_hits);
	counter(b, "syncular_gateway_jwt_cache_misses_total",
		   "bearer tokens verified in full (first seen, replaced in their slot, outside their dates, or invalid)", jwt_misses);
	counter(b, "syncular_gateway_group_commits_total",
		   "statements that ran several push rounds of one partition together (--group-commit)", gc_batches);
	counter(b, "syncular_gateway_group_commit_rounds_total", "push rounds that ran in those statements", gc_rounds);
	counter(b, "syncular_gateway_group_commit_fallbacks_total",
		   "group commits rolled back by a statement error and run again round by round", gc_fallbacks);
	family(b, "syncular_gateway_group_commit_waiting", "gauge",
		   "push rounds waiting while a statement of their partition is in the database");
	gw_str_printf(b, "syncular_gateway_group_commit_waiting %d\n", gc_waiting_fn ? gc_waiting_fn() : 0);
	counter(b, "syncular_gateway_commit_wakeups_lost_total",
		   "times the commit wake-up ring moved past this gateway's position while realtime sockets or "
		   "watches were open (every partition resynchronized)", gw_waiter_lost());
	counter(b, "syncular_gateway_commit_wakeup_calls_total",
		   "syncular.wait_commits calls (ring mode): one per answer while a WebSocket is open, at most "
		   "one per 250 ms while none is", gw_waiter_calls());
	counter(b, "syncular_gateway_prepared_fallbacks_total",
		   "named statements refused before they ran (gone, as behind a pooler that does not keep them, "
		   "or their result type changed) and sent again unnamed", gw_prepared_fallbacks());
	family(b, "syncular_gateway_commit_wakeups_ring", "gauge",
		   "1 when commit wake-ups come from the ring (syncular.wait_commits), 0 with NOTIFY");
	gw_str_printf(b, "syncular_gateway_commit_wakeups_ring %d\n", gw_pool_waiting() ? 1 : 0);
	family(b, "syncular_gateway_wakeups_sent_total", "counter", "sync wake-ups queued to realtime sockets, by reason");
	for (int i = 0; i <= n_wake; i++)
		if (i < n_wake || wake_n[MAX_WAKE_REASONS])
		{
			gw_str_printf(b, "syncular_gateway_wakeups_sent_total{reason=\"");
			buf_label_value(b, i < n_wake ? wake_reason[i] : "other");
			gw_str_printf(b, "\"} %llu\n", (unsigned long long) (i < n_wake ? wake_n[i] : wake_n[MAX_WAKE_REASONS]));
		}
	family(b, "syncular_gateway_commit_to_delta_seconds", "histogram",
		   "from a commit wake-up's arrival (NOTIFY or the ring) to its delta being queued to a socket");
	for (size_t i = 0; i <= NLAT; i++)
	{
		cum += lat_n[i];
		if (i < NLAT)
			gw_str_printf(b, "syncular_gateway_commit_to_delta_seconds_bucket{le=\"%g\"} %llu\n", lat_le[i],
					   (unsigned long long) cum);
		else
			gw_str_printf(b, "syncular_gateway_commit_to_delta_seconds_bucket{le=\"+Inf\"} %llu\n",
					   (unsigned long long) cum);
	}
	gw_str_printf(b, "syncular_gateway_commit_to_delta_seconds_sum %.6f\n", lat_sum);
	gw_str_printf(b, "syncular_gateway_commit_to_delta_seconds_count %llu\n", (unsigned long long) cum);
	family(b, "syncular_gateway_pool_connections", "gauge", "database connections serving rounds (--pool)");
	gw_str_printf(b, "syncular_gateway_pool_connections %d\n", gw_cfg.pool);
	family(b, "syncular_gateway_pool_connections_live", "gauge", "round connections that are connected");
	gw_str_printf(b, "syncular_gateway_pool_connections_live %d\n", gw_pool_live());
	family(b, "syncular_gateway_pool_connections_in_use", "gauge", "round connections running a statement");
	gw_str_printf(b, "syncular_gateway_pool_connections_in_use %d\n", gw_pool_in_use());
	family(b, "syncular_gateway_pool_bootstrap_rounds", "gauge",
		   "rounds asking for a bootstrap on a connection (at most --bootstrap-connections)");
	gw_str_printf(b, "syncular_gateway_pool_bootstrap_rounds %d\n", gw_pool_bootstraps_running());
	family(b, "syncular_gateway_pool_bootstrap_rounds_waiting", "gauge",
		   "rounds asking for a bootstrap queued for a connection");
	gw_str_printf(b, "syncular_gateway_pool_bootstrap_rounds_waiting %d\n", gw_pool_bootstraps_waiting());
	family(b, "syncular_gateway_pool_preferred_jobs_total", "counter",
		   "jobs with a preferred connection (realtime fanout calls and registrations) sent on it, or "
		   "elsewhere because it was busy");
	gw_str_printf(b, "syncular_gateway_pool_preferred_jobs_total{placed=\"preferred\"} %llu\n", gw_pool_preferred(true));
	gw_str_printf(b, "syncular_gateway_pool_preferred_jobs_total{placed=\"other\"} %llu\n", gw_pool_preferred(false));
	family(b, "syncular_gateway_inflight_bytes", "gauge", "bytes of the --max-inflight-bytes memory budget in use");
	gw_str_printf(b, "syncular_gateway_inflight_bytes %zu\n", gw_budget_used());
	family(b, "syncular_gateway_inflight_bytes_limit", "gauge", "--max-inflight-bytes");
	gw_str_printf(b, "syncular_gateway_inflight_bytes_limit %zu\n", gw_cfg.max_inflight_bytes);
	family(b, "syncular_gateway_received_bytes_total", "counter", "payload bytes read: HTTP bodies, WebSocket messages");
	for (int t = 0; t < 2; t++)
		gw_str_printf(b, "syncular_gateway_received_bytes_total{transport=\"%s\"} %llu\n", tname[t],
				   (unsigned long long) bytes_io[t][1]);
	family(b, "syncular_gateway_sent_bytes_total", "counter", "payload bytes written: HTTP bodies, WebSocket messages");
	for (int t = 0; t < 2; t++)
		gw_str_printf(b, "syncular_gateway_sent_bytes_total{transport=\"%s\"} %llu\n", tname[t],
				   (unsigned long long) bytes_io[t][0]);
	render_gzip(b);
	counter(b, "syncular_gateway_metrics_scrapes_total",
		   "queries of the database statistics (at most one per --metrics-interval)", scrapes);
	counter(b, "syncular_gateway_metrics_scrape_errors_total",
		   "statistics queries that failed or could not be queued", scrape_errors);
}

char *
gw_metrics_render(size_t *len)
{
	GwStr b = {0};

	render_gateway(&b);
	if (readable >= 0)
	{
		family(&b, "syncular_stats_readable", "gauge",
			   "1 when the gateway's role may read the statistics views (pg_read_all_stats)");
		gw_str_printf(&b, "syncular_stats_readable %d\n", readable);
	}
	if (readable == 1 && db_text)
		gw_str_add(&b, db_text, strlen(db_text));
	if (b.oom)
	{
		free(b.p);
		return NULL;
	}
	*len = b.len;
	return b.p;
}
