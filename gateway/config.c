/*
 * config.c — command-line flags, each also an environment variable (flag wins).
 * `--help` prints every flag with its unit, default and variable.
 */
#include "gateway.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

GwConfig gw_cfg;

typedef enum { T_STR, T_INT, T_SIZE, T_HOSTPORT, T_FLAG, T_ONOFF } OptType;

typedef struct Opt
{
	const char *flag;     /* without leading -- */
	const char *env;
	OptType     type;
	void       *target;
	const char *def;      /* default as text, NULL = unset */
	const char *help;
} Opt;

static char listen_buf[300];

static const Opt opts[] = {
	{"db", "SYNCULAR_GATEWAY_DB", T_STR, &gw_cfg.db, NULL,
	 "libpq connection string of the database with the syncular extension (required)"},
	{"listen", "SYNCULAR_GATEWAY_LISTEN", T_HOSTPORT, listen_buf, "127.0.0.1:8787",
	 "address:port to listen on (HTTP/1.1 and WebSocket, no TLS: terminate TLS in front)"},
	{"mount", "SYNCULAR_GATEWAY_MOUNT", T_STR, &gw_cfg.mount, "/sync-api",
	 "path prefix of every route (SPEC 1.1 <mount>)"},
	{"pool", "SYNCULAR_GATEWAY_POOL", T_INT, &gw_cfg.pool, "8",
	 "database connections serving rounds, 1..256 (plus one for LISTEN, and one for syncular.wait_commits when the database uses the commit wake-up ring)"},
	{"max-body", "SYNCULAR_GATEWAY_MAX_BODY", T_SIZE, &gw_cfg.max_body, NULL,
	 "bytes: largest /sync request body, before and after gunzip (413 above); default: the database's "
	 "syncular.max_request_bytes, read at start and after each reconnect"},
	{"max-inflight-bytes", "SYNCULAR_GATEWAY_MAX_INFLIGHT_BYTES", T_SIZE, &gw_cfg.max_inflight_bytes, "268435456",
	 "bytes: memory budget of the whole process for request bodies being received, buffered or queued "
	 "(and /sync answers waiting to be written); a new body beyond it gets 503 sync.rate_limited before it is read; "
	 "at least 65536"},
	{"bootstrap-connections", "SYNCULAR_GATEWAY_BOOTSTRAP_CONNECTIONS", T_INT, &gw_cfg.bootstrap_connections, "0",
	 "pool connections that rounds asking for a bootstrap (HTTP or socket rounds) may hold at once (the others "
	 "stay free for pushes, incremental pulls, realtime fanouts and acks); 0 (the default): --pool less a "
	 "quarter of it, rounded down, keeping at least one free (8: 6, 3: 2, 2: 1; --pool 1: 1, none kept free); 0..--pool"},
	{"group-commit", "SYNCULAR_GATEWAY_GROUP_COMMIT", T_INT, &gw_cfg.group_commit, "16",
	 "most push rounds of one partition run together as one statement (one transaction, one partition lock wait, "
	 "one WAL flush; each round keeps its own commit and answer): a push round waits while another of its partition "
	 "is in the database, then runs with the others that waited; POST /sync rounds with JWT and socket rounds, not "
	 "in front of a syncular_router; 1: off; 1..1024"},
	{"max-queue", "SYNCULAR_GATEWAY_MAX_QUEUE", T_INT, &gw_cfg.max_queue, "1024",
	 "rounds waiting for a free connection before answering 429 sync.rate_limited"},
	{"jwt-secret", "SYNCULAR_GATEWAY_JWT_SECRET", T_STR, &gw_cfg.jwt_secret, NULL,
	 "HS256 secret: authenticate with a bearer JWT (Authorization: Bearer <token>)"},
	{"jwt-public-key", "SYNCULAR_GATEWAY_JWT_PUBLIC_KEY", T_STR, &gw_cfg.jwt_public_key, NULL,
	 "PEM file with an RS256 or ES256 public key: authenticate with a bearer JWT"},
	{"jwt-leeway", "SYNCULAR_GATEWAY_JWT_LEEWAY", T_INT, &gw_cfg.jwt_leeway_s, "0",
	 "seconds of clock skew allowed when checking a JWT's exp and nbf (0-600)"},
	{"jwt-cache", "SYNCULAR_GATEWAY_JWT_CACHE", T_INT, &gw_cfg.jwt_cache, "4096",
	 "verified bearer tokens kept (up to 8 KiB each), so a client's next rounds with the same token skip the "
	 "signature check; exp and nbf are still checked on every request; 0: verify every request; 0..65536"},
	{"actor-claim", "SYNCULAR_GATEWAY_ACTOR_CLAIM", T_STR, &gw_cfg.actor_claim, "sub",
	 "JWT claim holding the actor id"},
	{"partition-claim", "SYNCULAR_GATEWAY_PARTITION_CLAIM", T_STR, &gw_cfg.partition_claim, NULL,
	 "JWT claim holding the partition (or use --partition)"},
	{"partition", "SYNCULAR_GATEWAY_PARTITION", T_STR, &gw_cfg.partition, NULL,
	 "fixed partition for every JWT-authenticated request"},
	{"auth-headers", "SYNCULAR_GATEWAY_AUTH_HEADERS", T_STR, &gw_cfg.auth_headers, "",
	 "comma-separated extra (non-standard) header names passed to the SQL authenticator"},
	{"auth", "SYNCULAR_GATEWAY_AUTH", T_STR, &gw_cfg.auth, "auto",
	 "auto: JWT when a key is given, else the SQL authenticator registered in the database (the gateway "
	 "refuses to start with neither); none: DEVELOPMENT ONLY, no authentication, every request is "
	 "--dev-actor in --partition"},
	{"dev-actor", "SYNCULAR_GATEWAY_DEV_ACTOR", T_STR, &gw_cfg.dev_actor, "dev",
	 "with --auth none: the actor id of every request"},
	{"ws-max-message", "SYNCULAR_GATEWAY_WS_MAX_MESSAGE", T_SIZE, &gw_cfg.ws_max_message, "4194304",
	 "bytes: largest inbound WebSocket message and socket-round request (close 1009 above)"},
	{"ws-max-buffer", "SYNCULAR_GATEWAY_WS_MAX_BUFFER", T_SIZE, &gw_cfg.ws_max_buffer, "8388608",
	 "bytes queued to one socket: beyond, deltas become catchup wake-ups and a socket that cannot take "
	 "control events is closed (1008)"},
	{"ws-max-unacked", "SYNCULAR_GATEWAY_WS_MAX_UNACKED", T_INT, &gw_cfg.ws_max_unacked, "64",
	 "deltas sent to a socket without a covering ack; then catchup-required instead (SPEC 8.2)"},
	{"ws-max-sockets", "SYNCULAR_GATEWAY_WS_MAX_SOCKETS", T_INT, &gw_cfg.ws_max_sockets, "10000",
	 "realtime sockets held by this gateway; beyond, close 4429 sync.websocket_connection_limit"},
	{"ws-max-watches", "SYNCULAR_GATEWAY_WS_MAX_WATCHES", T_INT, &gw_cfg.ws_max_watches, "1000",
	 "live query watches on one <mount>/operations/realtime socket; beyond, watch_error operation.invalid_request"},
	{"watch-batch", "SYNCULAR_GATEWAY_WATCH_BATCH", T_INT, &gw_cfg.watch_batch, "1000",
	 "watches of one partition in one syncular.operations_watch_rerun call (more: follow-up calls; 1-100000)"},
	{"fanout-batch", "SYNCULAR_GATEWAY_FANOUT_BATCH", T_INT, &gw_cfg.fanout_batch, "250",
	 "realtime sockets of one partition in one syncular.realtime_fanout_arrays call (more: that many calls at "
	 "once on the pool's connections, each socket's delta sent as soon as its call answers; 1-100000)"},
	{"ack-flush-ms", "SYNCULAR_GATEWAY_ACK_FLUSH_MS", T_INT, &gw_cfg.ack_flush_ms, "5",
	 "milliseconds between two writes of the realtime acks received meanwhile (SPEC 8.2): each socket's "
	 "highest ack, all in one statement, sent after every waiting round and fanout call (0-10000; 0: at "
	 "the next turn of the loop)"},
	{"gzip-min", "SYNCULAR_GATEWAY_GZIP_MIN", T_SIZE, &gw_cfg.gzip_min, "1024",
	 "bytes: /sync answers smaller than this are sent uncompressed even when the client accepts gzip (unless it refuses identity)"},
	{"gzip-level", "SYNCULAR_GATEWAY_GZIP_LEVEL", T_INT, &gw_cfg.gzip_level, "1",
	 "compression level (1-12, libdeflate) of gzip /sync answers: 1 is the cheapest, 6 about zlib's default"},
	{"gzip-threads", "SYNCULAR_GATEWAY_GZIP_THREADS", T_INT, &gw_cfg.gzip_threads, "1",
	 "threads that compress /sync answers beside the event loop (0-64; 0: the event loop compresses, "
	 "stalling every other socket meanwhile)"},
	{"gzip-thread-min", "SYNCULAR_GATEWAY_GZIP_THREAD_MIN", T_SIZE, &gw_cfg.gzip_thread_min, "65536",
	 "bytes: /sync answers at least this large are compressed by the --gzip-threads threads, smaller ones "
	 "on the event loop (64 KiB at level 1: about 0.1 ms, less than handing it to a thread)"},
	{"gzip-queue", "SYNCULAR_GATEWAY_GZIP_QUEUE", T_SIZE, &gw_cfg.gzip_queue, "33554432",
	 "bytes of /sync answers (uncompressed) waiting for or in compression; beyond, an answer is sent "
	 "uncompressed (unless its client refuses identity)"},
	{"heartbeat", "SYNCULAR_GATEWAY_HEARTBEAT", T_INT, &gw_cfg.heartbeat_s, "30",
	 "seconds between heartbeat control events (SPEC 8.5)"},
	{"idle-timeout", "SYNCULAR_GATEWAY_IDLE_TIMEOUT", T_INT, &gw_cfg.idle_timeout_s, "90",
	 "seconds without a valid WebSocket frame or pong before a socket is dropped (> --heartbeat; a WebSocket ping goes out after --heartbeat idle seconds)"},
	{"presence-max", "SYNCULAR_GATEWAY_PRESENCE_MAX", T_SIZE, &gw_cfg.presence_max, "4096",
	 "bytes: largest presence metadata of one publish (SPEC 8.6; 2-7000)"},
	{"drain", "SYNCULAR_GATEWAY_DRAIN", T_INT, &gw_cfg.drain_s, "10",
	 "seconds SIGTERM waits for in-flight rounds before exiting"},
	{"shard-refresh", "SYNCULAR_GATEWAY_SHARD_REFRESH", T_INT, &gw_cfg.shard_refresh_s, "30",
	 "seconds between re-reads of the shard list when --db is a syncular_router database (one commit "
	 "wake-up connection per shard: LISTEN or syncular.wait_commits; 1-86400)"},
	{"metrics", "SYNCULAR_GATEWAY_METRICS", T_ONOFF, &gw_cfg.metrics_on, "on",
	 "on or off: serve GET <mount>/metrics (Prometheus text, unauthenticated like /healthz; off answers 404)"},
	{"metrics-interval", "SYNCULAR_GATEWAY_METRICS_INTERVAL", T_INT, &gw_cfg.metrics_interval_s, "10",
	 "seconds: the statistics views are queried at most once per interval; scrapes in between get the cached figures"},
	{"verbose", "SYNCULAR_GATEWAY_VERBOSE", T_FLAG, &gw_cfg.verbose, "0",
	 "log each request, realtime fanout and socket close to stderr: --verbose, or --verbose 1 / 0 (also =1, on, off)"},
};
#define NOPTS (sizeof(opts) / sizeof(opts[0]))

static void
usage(FILE *f)
{
	fprintf(f, "usage: syncular-gateway --db CONNINFO [options]\n\n"
			"Serves the Syncular sync protocol (SSP2) over HTTP and WebSocket in front of a\n"
			"PostgreSQL database with the syncular extension " GW_EXTVERSION ".\n\n");
	for (size_t i = 0; i < NOPTS; i++)
	{
		fprintf(f, "  --%s%s\n      %s\n      env %s", opts[i].flag,
				opts[i].type == T_FLAG ? " [1|0]" : " VALUE", opts[i].help, opts[i].env);
		if (opts[i].def && opts[i].def[0])
			fprintf(f, ", default %s", opts[i].def);
		fputc('\n', f);
	}
	fprintf(f, "  --version\n      print the version (the syncular extension version it serves) and exit\n");
	fprintf(f, "  --help\n      this text\n\nAuthentication: JWT when --jwt-secret or --jwt-public-key "
			"is given, else the SQL\nauthenticator registered with syncular.set_authenticator(); with "
			"neither the gateway\ndoes not start (--auth none: development only).\n");
}

/* the values a flag takes: --verbose alone, or --verbose 1 / 0 / on / off / true / false */
static bool
is_flag_value(const char *v)
{
	return strcmp(v, "1") == 0 || strcmp(v, "0") == 0 || strcmp(v, "on") == 0 ||
		strcmp(v, "off") == 0 || strcmp(v, "true") == 0 || strcmp(v, "false") == 0;
}

static int
set_opt(const Opt *o, const char *val)
{
	char *end;
	long long n;

	switch (o->type)
	{
		case T_STR:
			*(const char **) o->target = val;
			return 0;
		case T_FLAG:
			if (val == NULL || is_flag_value(val))
			{
				*(int *) o->target = val == NULL || strcmp(val, "1") == 0 || strcmp(val, "on") == 0 ||
					strcmp(val, "true") == 0;
				return 0;
			}
			break;
		case T_ONOFF:
			if (strcmp(val, "on") != 0 && strcmp(val, "off") != 0)
				break;
			*(int *) o->target = strcmp(val, "on") == 0;
			return 0;
		case T_HOSTPORT:
			if (strlen(val) >= sizeof(listen_buf))
				break;
			strcpy(listen_buf, val);
			return 0;
		case T_INT:
		case T_SIZE:
			errno = 0;
			n = strtoll(val, &end, 10);
			if (errno || end == val || *end || n < 0 || (o->type == T_INT && n > 1000000000))
				break;
			if (o->type == T_INT)
				*(int *) o->target = (int) n;
			else
				*(size_t *) o->target = (size_t) n;
			return 0;
	}
	fprintf(stderr, "syncular-gateway: bad value for --%s (%s): \"%s\"\n", o->flag, o->env, val);
	return 2;
}

static int
split_listen(void)
{
	char *colon = strrchr(listen_buf, ':');
	char *end;
	long port;

	if (!colon)
		goto bad;
	*colon = '\0';
	port = strtol(colon + 1, &end, 10);
	if (*end || end == colon + 1 || port < 1 || port > 65535 || !listen_buf[0])
		goto bad;
	gw_cfg.listen_host = listen_buf;
	gw_cfg.listen_port = (int) port;
	return 0;
bad:
	fprintf(stderr, "syncular-gateway: --listen wants address:port, e.g. 127.0.0.1:8787\n");
	return 2;
}

/*
 * The ranges of the numeric settings (the parser already refuses a negative number and an int
 * above 10^9).  A value outside is refused at start with the flag, its variable, the range and
 * the value given, wherever it came from (a flag, the environment, /etc/default).
 */
typedef struct Range
{
	const char *flag;
	long long   min;
	long long   max;          /* LLONG_MAX: no upper bound of its own */
	const char *unit;
} Range;

static const Range ranges[] = {
	{"pool", 1, 256, ""},
	{"group-commit", 1, 1024, " (1: off)"},
	{"max-inflight-bytes", 65536, LLONG_MAX, " bytes"},
	{"jwt-leeway", 0, 600, " seconds"},
	{"jwt-cache", 0, 65536, " tokens"},
	{"ws-max-message", 64, LLONG_MAX, " bytes"},
	{"ws-max-unacked", 1, LLONG_MAX, " deltas"},
	{"ws-max-watches", 1, LLONG_MAX, " watches"},
	{"watch-batch", 1, 100000, " watches"},
	{"fanout-batch", 1, 100000, " sockets"},
	{"ack-flush-ms", 0, 10000, " milliseconds"},
	{"gzip-level", 1, 12, ""},
	{"gzip-threads", 0, 64, " threads"},
	{"heartbeat", 1, LLONG_MAX, " seconds"},
	{"presence-max", 2, 7000, " bytes (NOTIFY payload limit)"},
	{"shard-refresh", 1, 86400, " seconds"},
};

static const Opt *
find_opt(const char *flag)
{
	for (size_t i = 0; i < NOPTS; i++)
		if (strcmp(opts[i].flag, flag) == 0)
			return &opts[i];
	return NULL;
}

static int
check_ranges(void)
{
	for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++)
	{
		const Range *r = &ranges[i];
		const Opt  *o = find_opt(r->flag);
		long long   v = o->type == T_INT ? *(int *) o->target : (long long) *(size_t *) o->target;

		if (v >= r->min && v <= r->max)
			continue;
		if (r->max == LLONG_MAX)
			fprintf(stderr, "syncular-gateway: --%s (%s) must be %lld or more%s, got %lld\n",
					o->flag, o->env, r->min, r->unit, v);
		else
			fprintf(stderr, "syncular-gateway: --%s (%s) must be %lld..%lld%s, got %lld\n",
					o->flag, o->env, r->min, r->max, r->unit, v);
		return 2;
	}
	return 0;
}

static int
check(void)
{
	size_t m;
	int rc;

	if (!gw_cfg.db || !gw_cfg.db[0])
	{
		fprintf(stderr, "syncular-gateway: --db (or SYNCULAR_GATEWAY_DB) is required; see --help\n");
		return 2;
	}
	m = strlen(gw_cfg.mount);
	if ((m > 0 && gw_cfg.mount[0] != '/') || (m > 0 && gw_cfg.mount[m - 1] == '/'))
	{
		fprintf(stderr, "syncular-gateway: --mount must start with / and not end with / (got \"%s\")\n",
				gw_cfg.mount);
		return 2;
	}
	if ((rc = check_ranges()) != 0)
		return rc;
	if (gw_cfg.bootstrap_connections > gw_cfg.pool)
	{
		fprintf(stderr, "syncular-gateway: --bootstrap-connections (%d) must be 0..--pool (%d)\n",
				gw_cfg.bootstrap_connections, gw_cfg.pool);
		return 2;
	}
	if (gw_cfg.idle_timeout_s <= gw_cfg.heartbeat_s)
	{
		fprintf(stderr, "syncular-gateway: --idle-timeout (%d) must be more than --heartbeat (%d) seconds\n",
				gw_cfg.idle_timeout_s, gw_cfg.heartbeat_s);
		return 2;
	}
	if (gw_cfg.bootstrap_connections == 0)  /* a quarter kept free, at least one (--pool 1: none) */
		gw_cfg.bootstrap_connections = gw_cfg.pool == 1 ? 1
			: gw_cfg.pool - (gw_cfg.pool / 4 > 1 ? gw_cfg.pool / 4 : 1);
	if (gw_cfg.max_body != 0 && gw_cfg.max_body < 64)
	{
		fprintf(stderr, "syncular-gateway: --max-body (SYNCULAR_GATEWAY_MAX_BODY) must be 0 (the database's) "
				"or at least 64 bytes, got %zu\n", gw_cfg.max_body);
		return 2;
	}
	gw_cfg.max_body_set = gw_cfg.max_body != 0;
	if (!gw_cfg.max_body_set)
		gw_cfg.max_body = 8 * 1024 * 1024;  /* the extension's default, until the database says */
	if (gw_cfg.jwt_secret && gw_cfg.jwt_public_key)
	{
		fprintf(stderr, "syncular-gateway: give --jwt-secret or --jwt-public-key, not both\n");
		return 2;
	}
	gw_cfg.auth_none = strcmp(gw_cfg.auth, "none") == 0;
	if (!gw_cfg.auth_none && strcmp(gw_cfg.auth, "auto") != 0)
	{
		fprintf(stderr, "syncular-gateway: --auth is auto or none (got \"%s\")\n", gw_cfg.auth);
		return 2;
	}
	if (gw_cfg.auth_none && (gw_cfg.jwt_secret || gw_cfg.jwt_public_key || !gw_cfg.partition ||
							 !gw_cfg.dev_actor[0]))
	{
		fprintf(stderr, "syncular-gateway: --auth none needs --partition and a --dev-actor, and no JWT key\n");
		return 2;
	}
	if ((gw_cfg.jwt_secret || gw_cfg.jwt_public_key) && !gw_cfg.partition && !gw_cfg.partition_claim)
	{
		fprintf(stderr, "syncular-gateway: JWT authentication needs --partition or --partition-claim\n");
		return 2;
	}
	return 0;
}

int
gw_config_load(int argc, char **argv)
{
	int rc;
	const Opt  *bare = NULL;	/* the previous argument: a flag without a value (--verbose 2) */

	/* defaults, then environment, then flags */
	for (size_t i = 0; i < NOPTS; i++)
	{
		const char *env = getenv(opts[i].env);

		if (opts[i].def && (rc = set_opt(&opts[i], opts[i].def)) != 0)
			return rc;
		if (env && (rc = set_opt(&opts[i], env)) != 0)
			return rc;
	}
	for (int a = 1; a < argc; a++)
	{
		const Opt  *after_flag = bare;
		const char *arg = argv[a];
		const char *val = NULL;
		const char *eq;
		size_t      nlen;
		size_t      i;

		if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0)
		{
			usage(stdout);
			return 1;
		}
		if (strcmp(arg, "--version") == 0)
		{
			/* the extension version it serves: the database's must equal it (docs/gateway.md) */
			printf("syncular-gateway %s\n", GW_EXTVERSION);
			return 1;
		}
		bare = NULL;
		if (strncmp(arg, "--", 2) != 0)
			goto unknown;
		arg += 2;
		eq = strchr(arg, '=');
		nlen = eq ? (size_t) (eq - arg) : strlen(arg);
		for (i = 0; i < NOPTS; i++)
			if (strlen(opts[i].flag) == nlen && strncmp(opts[i].flag, arg, nlen) == 0)
				break;
		if (i == NOPTS)
			goto unknown;
		if (eq)
			val = eq + 1;
		else if (opts[i].type == T_FLAG)
		{
			/* a flag takes an optional value as the next argument (--verbose 1) */
			if (a + 1 < argc && is_flag_value(argv[a + 1]))
				val = argv[++a];
			else
				bare = &opts[i];
		}
		else
		{
			if (a + 1 >= argc)
			{
				fprintf(stderr, "syncular-gateway: --%s needs a value\n", opts[i].flag);
				return 2;
			}
			val = argv[++a];
		}
		if ((rc = set_opt(&opts[i], val)) != 0)
			return rc;
		continue;
unknown:
		if (after_flag)
		{
			fprintf(stderr, "syncular-gateway: bad value for --%s (%s): \"%s\" (1, 0, on, off, true or false)\n",
					after_flag->flag, after_flag->env, argv[a]);
			return 2;
		}
		fprintf(stderr, "syncular-gateway: unknown argument \"%s\"; see --help\n", argv[a]);
		return 2;
	}
	if ((rc = split_listen()) != 0)
		return rc;
	return check();
}
