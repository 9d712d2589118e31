/*
 * gateway.h — shared types of syncular-gateway, the stateless HTTP/WebSocket front of the
 * syncular extension (SPEC §1.1 routes, §8 realtime).  One concern per file:
 *   config.c   flags and environment variables
 *   parse.c    pure request/frame/control-event parsing (fuzzed, no I/O)
 *   errors.c   catalogue JSON bodies (SPEC §10.1)
 *   gzip.c     Content-Encoding: gzip request bodies inflated (SPEC §1.3)
 *   compress.c gzip of /sync answers on worker threads, off the event loop (SPEC §1.3)
 *   auth.c     host authentication: JWT, or the SQL authenticator (SPEC §1.1)
 *   loop.c     the event loop: descriptors with callbacks, timers (a leaf; loop.h)
 *   pool.c     libpq connections in non-blocking mode inside the event loop
 *   prepared.c named statements on those connections, prepared on first use (prepared.h)
 *   waiter.c   the commit wake-up ring's wait_commits loop on a pool connection (waiter.h)
 *   jobqueue.c the pool's job FIFOs (jobqueue.h)
 *   job.c      one statement for the pool: SQL, parameters, callback
 *   groupcommit.c push rounds of one partition that wait for each other, run as one statement
 *   budget.c   the process's memory budget for request bodies (--max-inflight-bytes)
 *   limits.c   --max-body following the database's syncular.max_request_bytes
 *   http.c     the HTTP layer (libmicrohttpd): requests, framing checks, answers
 *   routes.c   the HTTP routes of SPEC §1.1 (/sync, /healthz, /readyz, /metrics, dispatch)
 *   blobs.c    the blob routes (SPEC §5.9): pinned-transaction upload and cursor download
 *   segments.c GET <mount>/segments/{id}: direct (§5.5) and signed-URL (§5.4) downloads
 *   operations.c POST <mount>/operations: remote operations (REMOTE.md revision 1 §5)
 *   watches.c  live query watches on <mount>/operations/realtime (§6), transport-independent
 *   ws.c       the realtime channel (SPEC §8): upgrade, authentication, control, socket rounds
 *   wswatch.c  the <mount>/operations/realtime socket: ws.c's upgrade handed to watches.c
 *   wsio.c     WebSocket framing of upgraded sockets (wslay): reads, the outbound queue, closes
 *   acks.c     realtime acks coalesced per socket, written in one background statement
 *   pgarray.c  array parameters in PostgreSQL's binary format (fanout.c, acks.c, groupcommit.c)
 *   metrics.c  counters and GET /metrics (Prometheus text)
 *   log.c      gw_log (a leaf)
 *   strbuf.c   a growing string for texts built piece by piece (a leaf; strbuf.h)
 *   main.c     startup checks, signals, the event loop, drain
 */
#ifndef SYNCULAR_GATEWAY_H
#define SYNCULAR_GATEWAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pg_result;
struct pg_conn;

/* ---------------- http.c: one HTTP request and its answer ---------------- */
typedef struct GwReq GwReq;
const char *gw_req_header(GwReq *r, const char *name);   /* NULL: absent (first of several) */
const char *gw_req_arg(GwReq *r, const char *name);      /* a query argument, NULL: absent */
bool        gw_req_method_is(GwReq *r, const char *method);
typedef void (*GwKvFn) (void *cls, const char *key, const char *value);
void        gw_req_headers(GwReq *r, GwKvFn fn, void *cls);
void        gw_req_args(GwReq *r, GwKvFn fn, void *cls);
/* hdrs: NULL or "name", "value", ..., NULL (copied); body: malloc'd, taken (may be NULL) */
void        gw_req_answer(GwReq *r, int status, const char *type, uint8_t *body, size_t len,
						  const char *const *hdrs);
/* the same with a body that is not malloc'd: free_fn(free_cls) frees it after it was sent (or
 * with the request) */
void        gw_req_answer_owned(GwReq *r, int status, const char *type, const uint8_t *body, size_t len,
								const char *const *hdrs, void (*free_fn) (void *), void *free_cls);
/* an answer of total bytes produced by read (cls): up to max bytes at pos into buf; returns the
 * count, 0 when the next bytes are not there yet (the request waits until gw_req_wake), -1
 * when the stream broke (the connection closes) */
typedef long (*GwReadFn) (void *cls, uint64_t pos, char *buf, size_t max);
void        gw_req_stream(GwReq *r, int status, const char *type, uint64_t total, GwReadFn read,
						  void *cls, const char *const *hdrs);
void        gw_req_close_after(GwReq *r);    /* answer with Connection: close */
void        gw_req_pause_body(GwReq *r);     /* read no more body bytes until gw_req_wake */
void        gw_req_wake(GwReq *r);           /* an answer, stream bytes or body room are there */
bool        gw_req_has_answer(GwReq *r);

/* ---------------- config.c ---------------- */
typedef struct GwConfig
{
	const char *db;               /* libpq conninfo */
	const char *listen_host;      /* e.g. 127.0.0.1 */
	int         listen_port;
	const char *mount;            /* "/sync-api" (no trailing slash; "" allowed) */
	int         pool;             /* database connections for rounds */
	size_t      max_body;         /* bytes, request body after and before gunzip */
	bool        max_body_set;     /* --max-body given: not taken from syncular.max_request_bytes */
	size_t      max_inflight_bytes;   /* bytes: the process's memory budget for bodies */
	int         max_queue;        /* rounds waiting for a connection before 429 */
	int         bootstrap_connections;    /* pool connections bootstrap rounds may hold at once */
	int         group_commit;     /* push rounds of one partition in one statement at most; 1: off */
	/* auth */
	const char *jwt_secret;       /* HS256 */
	const char *jwt_public_key;   /* PEM file: RS256 / ES256 */
	const char *actor_claim;
	const char *partition_claim;
	const char *partition;        /* fixed partition with JWT */
	const char *auth_headers;     /* extra header names passed to the SQL authenticator */
	const char *auth;             /* "auto" (JWT key or SQL authenticator) or "none" (development) */
	bool        auth_none;        /* --auth none: every request is --dev-actor in --partition */
	const char *dev_actor;        /* the actor of every request with --auth none */
	int         jwt_leeway_s;     /* seconds of clock skew allowed on exp and nbf */
	int         jwt_cache;        /* slots of verified tokens kept (jwtcache.c); 0: none */
	/* realtime */
	size_t      ws_max_message;   /* bytes, one inbound message / outbound delta */
	size_t      ws_max_buffer;    /* bytes queued to one socket before deltas turn to wake-ups */
	int         ws_max_unacked;   /* deltas sent without a covering ack */
	int         ws_max_sockets;
	int         ws_max_watches;   /* live query watches on one operations socket (REMOTE.md 6) */
	int         watch_batch;      /* watches in one syncular.operations_watch_rerun call */
	int         ack_flush_ms;     /* milliseconds between two realtime ack writes (acks.c) */
	int         fanout_batch;     /* sockets per realtime_fanout call (fanout.c) */
	size_t      gzip_min;         /* bytes: smaller /sync answers are not compressed */
	int         gzip_level;       /* libdeflate level (1-12) of gzip /sync answers */
	int         gzip_threads;     /* compression threads; 0: on the event loop */
	size_t      gzip_thread_min;  /* bytes: smaller answers are compressed on the loop */
	size_t      gzip_queue;       /* bytes of answers waiting for or in compression */
	int         heartbeat_s;
	int         idle_timeout_s;
	size_t      presence_max;     /* bytes of one presence payload */
	int         drain_s;          /* SIGTERM: seconds to let rounds finish */
	int         shard_refresh_s;  /* router: seconds between shard list reads */
	bool        router;           /* --db holds syncular_router (found at startup) */
	int         metrics_on;       /* GET <mount>/metrics served */
	int         metrics_interval_s;   /* seconds between two queries of the statistics views */
	int         verbose;
} GwConfig;

extern GwConfig gw_cfg;
/* 0 ok; 1 exit 0 (--help, --version); 2 usage error (message printed) */
int gw_config_load(int argc, char **argv);

/* ---------------- errors.c ---------------- */
/* A catalogue JSON body (SPEC §10.1) for a code the gateway raises itself; *status gets the
 * catalogue HTTP status unless status_override > 0.  Returns malloc'd NUL-terminated JSON. */
char *gw_error_json(const char *code, const char *message, int status_override, int *status);

/* ---------------- gzip.c ---------------- */
/* 0 ok (out malloc'd), -1 bad gzip stream, -2 inflated size above limit, -3 no memory */
int gw_gunzip(const uint8_t *in, size_t inlen, size_t limit, uint8_t **out, size_t *outlen);

/* ---------------- compress.c ---------------- */
typedef struct GwZJob GwZJob;
/* on the loop: the gzip of an answer (out malloc'd, taken; NULL when out of memory) */
typedef void (*GwZDone) (void *owner, uint8_t *out, size_t outlen);
/* Compress in (inlen bytes, freed by release(release_cls) once read) off the loop (on it under
 * --gzip-thread-min); done(owner, ...) is called on the loop, never after gw_gzip_cancel.  *queued false: the queue is full
 * (--gzip-queue) and must is false; nothing was taken, answer uncompressed.  Returns the job
 * to cancel (NULL when done was already called: compressed on the loop). */
GwZJob *gw_gzip_submit(const uint8_t *in, size_t inlen, void (*release) (void *), void *release_cls,
					   bool must, GwZDone done, void *owner, bool *queued);
void    gw_gzip_cancel(GwZJob *j);
int     gw_gzip_init(void);
void    gw_gzip_shutdown(void);
typedef struct GwGzipStats
{
	uint64_t    worker_answers, worker_in_bytes, worker_out_bytes, worker_ns;
	uint64_t    loop_answers, loop_in_bytes, loop_out_bytes, loop_ns;
	uint64_t    skipped;        /* answers sent uncompressed: the queue was full */
	uint64_t    cancelled;      /* dropped from the queue: the requester went away */
	size_t      queued_bytes;
} GwGzipStats;
void    gw_gzip_stats(GwGzipStats *out);

/* ---------------- job.c (the statements pool.c runs) ---------------- */
typedef struct GwJob GwJob;
/* res is NULL when the connection died or the query could not be sent: err says why.
 * The callback must not keep res (it is cleared after the call) unless it takes it with
 * gw_job_take_result. */
typedef void (*GwJobDone) (GwJob *job, struct pg_result *res, const char *err);

#define GW_MAX_PARAMS 8
struct GwJob
{
	const char *sql;
	int         nparams;
	const char *values[GW_MAX_PARAMS];
	int         lengths[GW_MAX_PARAMS];
	int         formats[GW_MAX_PARAMS];
	void       *owned[GW_MAX_PARAMS];   /* freed with the job */
	int         result_format;          /* 1 = binary */
	GwJobDone   done;
	size_t      budget;                 /* bytes of the memory budget released with the job */
	void       *user;                   /* NULL once the requester went away */
	bool        hold;                   /* keep the connection pinned for user afterwards */
	bool        bootstrap;              /* a round that asks for a bootstrap (pool.c's lane) */
	bool        res_taken;              /* done kept the result (gw_job_take_result) */
	int         conn;                   /* the connection that ran it (set by the pool) */
	int         prefer;                 /* a connection slot (any int >= 0, taken modulo --pool)
	                                     * whose backend has this job's caches warm, -1: any */
	bool        prefer_only;            /* wait for it while it is up (not a round: a registration) */
	bool        gc_solo;                /* groupcommit.c: its batch failed, it runs alone */
	bool        prepare;                /* a statement every request runs: named, planned once
	                                     * per connection (prepared.c) */
	GwJob      *next;
};

GwJob *gw_job_new(const char *sql, GwJobDone done, void *user);
/* copy=true: the job owns a copy of the value */
void   gw_job_param(GwJob *job, const void *val, int len, int binary, bool copy);
/* the job takes val (malloc'd) and the budget bytes held for it, and frees both */
void   gw_job_param_take(GwJob *job, void *val, int len, int binary, size_t budget);
void   gw_job_free(GwJob *job);
/* calls job->done, then frees the job; true when done took res (gw_job_take_result): the
 * caller must not clear it */
bool   gw_job_finish(GwJob *job, struct pg_result *res, const char *err);
/* in job->done: res is the callback's now, freed with PQclear when it is done with it */
void   gw_job_take_result(GwJob *job);
/* ---------------- groupcommit.c ---------------- */
/* a push round of a known partition (syncular.handle_http with 3 or 4 arguments, the body first,
 * binary); rounds of one partition that wait for each other run as one statement (--group-commit).
 * Anything else goes to the pool as it is.  false when the queue is full (job freed; answer 429) */
bool   gw_gc_submit(GwJob *job, const char *partition);
int    gw_gc_waiting(void);        /* push rounds waiting for their partition's statement */
/* ---------------- budget.c ---------------- */
bool   gw_budget_take(size_t n);   /* false: over --max-inflight-bytes, nothing taken */
void   gw_budget_force(size_t n);  /* counted even over the budget (answers already produced) */
void   gw_budget_give(size_t n);
size_t gw_budget_used(void);
/* Content-Length against --max-body and the budget: 0 admitted (*held taken), 413 or 503 */
int    gw_budget_admit_body(const char *content_length, size_t *held);
/* ---------------- pool.c ---------------- */
/* false when the queue is full (caller answers 429) */
bool   gw_pool_submit(GwJob *job);
/* a bookkeeping job (realtime acks): sent only when no other job waits; never refused */
void   gw_pool_submit_background(GwJob *job);
/* pinned transactions: see pool.c; false when the pinned connection is gone (job freed) */
bool   gw_pool_submit_pinned(int conn, GwJob *job);
void   gw_pool_release(int conn, void *user);
int    gw_pool_init(void);
void   gw_pool_shutdown(void);
int    gw_pool_live(void);          /* connections in the ready state */
int    gw_pool_busy(void);          /* jobs queued or running */
int    gw_pool_in_use(void);        /* round connections running a statement */
int    gw_pool_bootstraps_running(void);   /* bootstrap rounds on a connection now */
int    gw_pool_bootstraps_waiting(void);   /* bootstrap rounds queued for one */
unsigned long long gw_pool_preferred(bool placed);  /* jobs with a preference run on it (true) or elsewhere */
int    gw_pool_connects(void);      /* round connections established so far (reconnects count) */
/* the LISTEN connection: called with channel and payload of each notification, and with
 * ("syncular_commit", NULL) when a listen connection is back after a loss (commits of the gap
 * were not notified) */
typedef void (*GwNotifyFn) (const char *channel, const char *payload);
void   gw_pool_set_notify(GwNotifyFn fn);
/* ring mode (docs/realtime.md "Commit wake-ups", waiter.c): one wake-up from
 * syncular.wait_commits, or (NULL, 0) when wake-ups were lost and every partition must be
 * resynchronized */
typedef void (*GwCommitFn) (const char *partition, int64_t seq);
/* does anything consume commit wake-ups now (realtime sockets, live query watches)? */
typedef bool (*GwDemandFn) (void);
/* a consumer came (a WebSocket upgrade): a ring waiter between two idle calls calls now */
void   gw_pool_wakeups_wanted(void);
bool   gw_pool_waiting(void);
/* the LISTEN connection (presence's channel) is up again: called after its LISTEN was sent */
typedef void (*GwListenUpFn) (void);
void   gw_pool_set_listen_up(GwListenUpFn fn);       /* some commit wake-ups come from the ring */
/* send NOTIFY through the listen connection (presence); false when it is down */
bool   gw_pool_notify(const char *channel, const char *payload);
/* router: take commit wake-ups (LISTEN syncular_commit or the ring) from exactly these shard databases (libpq conninfos, merged
 * with the --db credentials); connections to shards no longer named are closed */
void   gw_pool_set_shards(char **conninfos, int n);
int    gw_pool_shards_live(void);   /* shard LISTEN connections up */

/* ---------------- shards.c ---------------- */
void   gw_shards_init(void);
void   gw_shards_shutdown(void);

/* ---------------- auth.c ---------------- */
typedef struct GwIdentity
{
	char actor[256];
	char partition[256];
} GwIdentity;

/* true when auth is done by JWT (synchronous); false: SQL authenticator */
bool gw_auth_is_jwt(void);
int  gw_auth_init(void);
/* JWT mode: 0 ok, else 401 with *why set */
int  gw_auth_jwt(GwReq *r, GwIdentity *id, const char **why);
/* SQL mode: headers and query of the request as JSON text (malloc'd) */
char *gw_auth_headers_json(GwReq *r);
char *gw_auth_query_json(GwReq *r);
bool gw_auth_identity(const char *json_text, GwIdentity *id);

/* 64-bit FNV-1a of len bytes (statement names in prepared.c, token slots in jwtcache.c) */
static inline uint64_t
gw_fnv1a64(const void *p, size_t len)
{
	const unsigned char *c = p;
	uint64_t	h = 14695981039346656037ULL;

	for (size_t i = 0; i < len; i++)
		h = (h ^ c[i]) * 1099511628211ULL;
	return h;
}

/*
 * RFC 7519 §4.1.4 / §4.1.5 with leeway seconds of clock skew (--jwt-leeway), times in seconds
 * since the epoch: the one date rule of auth.c's verification and of jwtcache.c's kept tokens.
 */
static inline bool
gw_jwt_expired(double now, double leeway, double exp)
{
	return now >= exp + leeway;
}

static inline bool
gw_jwt_not_yet_valid(double now, double leeway, double nbf)
{
	return now + leeway < nbf;
}

/* ---------------- jwtcache.c: verified bearer tokens (auth.c's JWT mode) ---------------- */
#define GW_JWT_CACHE_MAX_TOKEN 8192     /* bytes: longer tokens are verified every time */
/* entries: --jwt-cache slots (0: no cache); -1 when out of memory */
int  gw_jwt_cache_init(size_t entries);
/* true: token was accepted before and now (seconds since the epoch) is within its exp and nbf
 * widened by leeway seconds; *id is the identity it gave */
bool gw_jwt_cache_get(const char *token, double now, double leeway, GwIdentity *id);
/* keep an accepted token: exp HUGE_VAL / nbf -HUGE_VAL when the token has none */
void gw_jwt_cache_put(const char *token, double exp, double nbf, const GwIdentity *id);

/* ---------------- blobs.c (SPEC §5.9) ---------------- */
typedef struct GwBlob GwBlob;
/* a request on <mount>/blobs/...: NULL when out of memory */
GwBlob *gw_blob_start(GwReq *r, const char *uri);
int     gw_blob_body(GwBlob *b, const uint8_t *in, size_t len);   /* -1: close */
void    gw_blob_body_done(GwBlob *b);
void    gw_blob_free(GwBlob *b);
/* ---------------- segments.c (SPEC §5.4, §5.5) ---------------- */
typedef struct GwSeg GwSeg;
/* a request on <mount>/segments/{id}: NULL when out of memory */
GwSeg *gw_seg_start(GwReq *r, const char *uri, const char *mount);
void   gw_seg_free(GwSeg *g);

/* ---------------- operations.c (REMOTE.md §5) ---------------- */
typedef struct GwOps GwOps;
/* POST <mount>/operations: NULL when out of memory */
GwOps *gw_ops_start(GwReq *r, const char *uri);
int    gw_ops_body(GwOps *o, const uint8_t *in, size_t len);
void   gw_ops_body_done(GwOps *o);
void   gw_ops_free(GwOps *o);

/* ---------------- http.c / routes.c / ws.c ---------------- */
typedef struct GwRouteReq GwRouteReq;
/* what the HTTP layer hands requests to (wired by main.c: the layer calls no file above it) */
typedef struct GwHttpHandlers
{
	GwRouteReq *(*route_start) (GwReq *r, const char *url);
	void        (*route_body) (GwRouteReq *q, const uint8_t *in, size_t len);
	void        (*route_body_done) (GwRouteReq *q);
	void        (*route_free) (GwRouteReq *q);
	void        (*upgrade) (GwReq *r, const char *url);      /* GET with Upgrade */
	void        (*upgraded) (void *sock, int fd, const char *extra, size_t extra_len, void *handle);
	void        (*abandon) (void *sock);                     /* an upgrade never answered */
} GwHttpHandlers;
int  gw_http_start(const GwHttpHandlers *h);   /* listen on --listen:--port; -1 when it cannot */
int  gw_http_timeout_ms(int max_ms);
void gw_http_run(void);             /* let libmicrohttpd work (after every loop turn) */
void gw_http_stop(void);
int  gw_http_inflight(void);
/* routes.c: a request's head is complete (url: the path); its body arrives through
 * gw_route_body, its end with gw_route_body_done; freed with gw_route_free */
GwRouteReq *gw_route_start(GwReq *r, const char *url);
void gw_route_body(GwRouteReq *q, const uint8_t *in, size_t len);
void gw_route_body_done(GwRouteReq *q);
void gw_route_free(GwRouteReq *q);
/* ws.c: an upgrade on the realtime or the watch route (GET with Upgrade: websocket); answers it
 * (101 or a refusal) */
void gw_ws_upgrade(GwReq *r, const char *url);
/* http.c to ws.c: the socket of an accepted upgrade (extra: bytes already read after the head),
 * handle: what gw_http_upgrade_close needs */
void gw_ws_upgraded(void *sock, int fd, const char *extra, size_t extra_len, void *handle);
void gw_http_upgrade_answer(GwReq *r, const char *accept, void *sock);
void gw_http_upgrade_close(void *handle);
void gw_ws_init(void);
void gw_ws_abandon(void *sock);      /* an upgrade whose answer was never sent */
void gw_ws_shutdown(void);
void gw_ws_drain(void);
int  gw_ws_count(void);
/* acks.c: realtime acks pending or being written (the drain waits for them); write them now */
bool gw_acks_busy(void);
void gw_acks_flush_now(void);

/* ---------------- limits.c ---------------- */
/* --max-body, when not given, follows syncular.max_request_bytes: read now (conn is a
 * connected PGconn) and again after every pool reconnect */
void   gw_limits_startup(struct pg_conn *conn);
void   gw_limits_init(void);

/* ---------------- main.c ---------------- */
extern volatile int gw_draining;
/* ---------------- log.c ---------------- */
void gw_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
