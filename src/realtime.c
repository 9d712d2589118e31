/*
 * realtime.c — the extension side of the realtime channel (SPEC §8), except the fanout
 * (fanout.c) and the acks (realtime_ack.c).  The contract with the gateway is docs/realtime.md.
 *
 *   syncular.realtime_connect(partition, actor_id, client_id) RETURNS jsonb       §8.1, §8.7
 *   syncular.presence_authorize(partition, actor_id, client_id, scope_keys text[]) §8.6.3
 *       RETURNS text[]
 *
 * A registration is computed like a pull plans its sections: the subscriptions the client's
 * most recent successful pull persisted (sync_clients.subscriptions, §8.1 "known
 * subscriptions"), the grant resolved once (sync_scopes_resolve), and each subscription's
 * effective scopes by sync_scopes_effective — the functions a pull uses, so a registration
 * never holds a scope the grant does not allow.  Revoked subscriptions are left out.
 */
#include "postgres.h"

#include <limits.h>

#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "engine.h"
#include "fanout_regs.h"
#include "realtime.h"
#include "storage.h"

int			sync_realtime_max_delta_bytes = 1024 * 1024;
int			sync_realtime_max_window_commits = 100;
int			sync_realtime_max_window_changes = 10000;
int			sync_realtime_grant_cache_ms = 0;

void
sync_realtime_define_gucs(void)
{
	DefineCustomIntVariable("syncular.realtime_max_delta_bytes",
							"Largest realtime delta message realtime_fanout builds.",
							"A delta (a complete SSP2 response) above this size is answered with the "
							"delta-too-large wake-up instead (SPEC §8.2 flow control, §8.3).",
							&sync_realtime_max_delta_bytes,
							1024 * 1024, 64, MaxAllocSize / 2,
							PGC_SUSET, GUC_UNIT_BYTE,
							NULL, NULL, NULL);
	DefineCustomIntVariable("syncular.realtime_max_window_commits",
							"Most commits one realtime delta may bridge.",
							"A connection whose cursor is further behind the notified commit is "
							"answered with the catchup-required wake-up (SPEC §8.2, §8.3).",
							&sync_realtime_max_window_commits,
							100, 1, 1000000,
							PGC_SUSET, 0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("syncular.realtime_max_window_changes",
							"Most changes realtime_fanout reads from the log per call.",
							"Whole commits, newest first; connections whose window reaches further "
							"back are answered with the catchup-required wake-up.  Bounds the "
							"memory of one call.",
							&sync_realtime_max_window_changes,
							10000, 1, 100000000,
							PGC_SUSET, 0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("syncular.realtime_grant_cache_ms",
							"How long realtime_fanout may reuse a socket's resolved grant.",
							"0 (the default) calls the scope resolver on every fanout call for each "
							"socket that would receive a delta; a positive value reuses a grant "
							"resolved by this backend within that many milliseconds, so a revoked "
							"grant can reach deltas that much later.",
							&sync_realtime_grant_cache_ms,
							0, 0, 3600000,
							PGC_SUSET, GUC_UNIT_MS,
							NULL, NULL, NULL);
	DefineCustomIntVariable("syncular.realtime_registration_cache_kb",
							"Memory each backend may keep parsed realtime registrations in.",
							"realtime_fanout_arrays keeps the parse of each registration text it "
							"was given, per compiled schema, and reuses it when a later call "
							"passes the same text (src/fanout_regs.c); past half of this the "
							"older half is dropped.  0 parses every registration in every call.",
							&sync_realtime_registration_cache_kb,
							16384, 0, INT_MAX / 1024,
							PGC_SUSET, GUC_UNIT_KB,
							NULL, NULL, NULL);
}

/* ---------------------------------------------------------------- arguments */


/* ---------------------------------------------------------------- the registration */

typedef struct Registration
{
	SyncSchema *schema;
	char	   *epoch;			/* NULL only on a standby that never saw the partition */
	bool		known;			/* the client has a record */
	int			wire_version;
	int64		cursor;
	int64		latest;
	bool		requires_sync;
	int			nactive;
	StringInfoData subs;		/* JSON array of the active subscriptions */
	int			nkeys;
	char	  **keys;			/* scope keys, sorted (UTF-16), distinct */
} Registration;

static void
append_requested(StringInfo b, const SspScopeMap *m)
{
	appendStringInfoChar(b, '{');
	for (uint32 i = 0; i < m->n; i++)
	{
		if (i > 0)
			appendStringInfoChar(b, ',');
		escape_json(b, m->entries[i].key.ptr);
		appendStringInfoString(b, ":[");
		for (uint32 k = 0; k < m->entries[i].nvalues; k++)
		{
			if (k > 0)
				appendStringInfoChar(b, ',');
			escape_json(b, m->entries[i].values[k].ptr);
		}
		appendStringInfoChar(b, ']');
	}
	appendStringInfoChar(b, '}');
}

/* §8.6: every effective value v of variable x gives prefix:v per pattern prefix:{x} of the table. */
static void
add_scope_keys(Registration *r, const SyncTable *t, const SyncEffective *e, int *cap)
{
	for (int i = 0; i < e->nvars; i++)
		for (int s = 0; s < t->nscopes; s++)
		{
			if (strcmp(t->scopes[s].variable, e->vars[i]) != 0)
				continue;
			for (int k = 0; k < e->nvalues[i]; k++)
			{
				if (r->nkeys == *cap)
				{
					*cap *= 2;
					r->keys = repalloc(r->keys, sizeof(char *) * *cap);
				}
				r->keys[r->nkeys++] = psprintf("%s:%s", t->scopes[s].prefix, e->values[i][k]);
			}
		}
}

/* One persisted subscription: its registration entry, or false when it is not active now. */
static bool
register_subscription(Registration *r, SyncRound *round, JsonbContainer *sub, int *cap)
{
	JsonbValue	id,
				table,
				scopes;
	SspScopeMap requested;
	SyncTable  *t;
	SyncEffective *e;

	if (!JsonContainerIsObject(sub) ||
		getKeyJsonValueFromContainer(sub, "id", 2, &id) == NULL || id.type != jbvString ||
		getKeyJsonValueFromContainer(sub, "table", 5, &table) == NULL ||
		table.type != jbvString ||
		getKeyJsonValueFromContainer(sub, "scopes", 6, &scopes) == NULL ||
		scopes.type != jbvBinary || !sync_realtime_scope_map(scopes.val.binary.data, &requested))
		return false;
	t = sync_schema_table(r->schema, pnstrdup(table.val.string.val, table.val.string.len));
	if (t == NULL)
		return false;
	/* the grant is resolved once per registration (memoized in round->allowed) */
	sync_scopes_resolve(round);
	e = sync_scopes_effective(round->allowed, t, &requested);
	if (e->revoked || e->nvars == 0)
		return false;

	if (r->nactive > 0)
		appendStringInfoChar(&r->subs, ',');
	appendStringInfoString(&r->subs, "{\"id\":");
	escape_json(&r->subs, pnstrdup(id.val.string.val, id.val.string.len));
	appendStringInfoString(&r->subs, ",\"table\":");
	escape_json(&r->subs, t->name);
	appendStringInfoString(&r->subs, ",\"scopes\":");
	append_requested(&r->subs, &requested);
	appendStringInfo(&r->subs, ",\"effective\":%s}", sync_effective_json(e));
	r->nactive++;
	add_scope_keys(r, t, e, cap);
	return true;
}

/*
 * Compute the registration of (partition, actor, client) now.  The caller is connected to SPI.
 * Raises sync.schema_not_ready, sync.invalid_client_id, sync.invalid_subscription.
 */
static void
registration_build(const char *partition, const char *actor, const char *client,
				   Registration *r)
{
	SyncRound	round;
	SyncClientRecord rec;
	bool		have;
	int64		horizon;
	int64		touched;
	int			cap = 8;
	int			nstored = 0;

	memset(r, 0, sizeof(*r));
	r->schema = sync_schema_get();
	if (r->schema == NULL)
		sync_raise_no_schema();
	if (strncmp(client, SYNC_RESERVED_CLIENT_PREFIX, strlen(SYNC_RESERVED_CLIENT_PREFIX)) == 0)
		sync_raise("sync.invalid_client_id", "this clientId namespace is reserved", NULL);
	r->epoch = sync_storage_partition_epoch(partition, sync_now_ms(), !RecoveryInProgress(),
											&touched);
	sync_storage_read_seqs(partition, &r->latest, &horizon);
	have = sync_storage_client_get(partition, client, &rec);

	r->cursor = -1;
	r->wire_version = 3;
	r->keys = palloc(sizeof(char *) * cap);
	initStringInfo(&r->subs);
	if (have)
	{
		Jsonb	   *subs = rec.subscriptions;

		r->known = true;
		if (strcmp(rec.actor_id, actor) != 0)
			sync_raise("sync.invalid_client_id", "the clientId is bound to another actor", NULL);
		r->cursor = rec.cursor;
		r->wire_version = rec.wire_version;
		if (JB_ROOT_IS_ARRAY(subs) && !JB_ROOT_IS_SCALAR(subs))
		{
			memset(&round, 0, sizeof(round));
			round.schema = r->schema;
			round.partition = partition;
			round.actor_id = actor;
			round.client_id = client;
			nstored = JB_ROOT_COUNT(subs);
			for (int i = 0; i < nstored; i++)
			{
				JsonbValue *v = getIthJsonbValueFromContainer(&subs->root, i);

				if (v == NULL || v->type != jbvBinary ||
					!register_subscription(r, &round, v->val.binary.data, &cap))
					r->requires_sync = true;	/* revoked now: the pull will say so */
			}
		}
	}
	r->nkeys = sync_sort_unique(r->keys, r->nkeys);
	/* §8.1: never pulled, nothing registered, or behind the log */
	if (!r->known || nstored == 0 || r->cursor < r->latest || r->epoch == NULL)
		r->requires_sync = true;
}

/* ---------------------------------------------------------------- realtime_connect */

/*
 * The answer's registration into this backend's cache of registrations (fanout_regs.c), keyed by
 * the text a gateway reads back ((answer -> 'registration')::text) and passes to each fanout call.
 */
static void
seed_registration(SyncSchema *schema, const char *partition, Jsonb *answer)
{
	JsonbValue	v;

	if (getKeyJsonValueFromContainer(&answer->root, "registration", strlen("registration"), &v) != NULL &&
		v.type == jbvBinary)
		sync_fanout_regs_seed(schema, v.val.binary.data, v.val.binary.len, partition);
}

PG_FUNCTION_INFO_V1(syncular_realtime_connect);

Datum
syncular_realtime_connect(PG_FUNCTION_ARGS)
{
	char	   *partition = sync_required_text_arg(fcinfo, 0, "realtime", "partition");
	char	   *actor = sync_required_text_arg(fcinfo, 1, "realtime", "actor_id");
	char	   *client = sync_required_text_arg(fcinfo, 2, "realtime", "client_id");
	MemoryContext caller = CurrentMemoryContext;
	Registration r;
	StringInfoData b;
	Datum		result;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "syncular realtime: SPI_connect failed");
	registration_build(partition, actor, client, &r);

	initStringInfo(&b);
	appendStringInfoString(&b, "{\"actorId\":");
	escape_json(&b, actor);
	appendStringInfoString(&b, ",\"clientId\":");
	escape_json(&b, client);
	appendStringInfo(&b, ",\"cursor\":" INT64_FORMAT ",\"latestCursor\":" INT64_FORMAT
					 ",\"requiresSync\":%s,\"logEpoch\":",
					 r.cursor, r.latest, r.requires_sync ? "true" : "false");
	if (r.epoch)
		escape_json(&b, r.epoch);
	else
		appendStringInfoString(&b, "null");
	appendStringInfo(&b, ",\"schemaVersion\":%d,\"wireVersion\":%d,\"scopeKeys\":[",
					 r.schema->version, r.wire_version);
	for (int i = 0; i < r.nkeys; i++)
	{
		if (i > 0)
			appendStringInfoChar(&b, ',');
		escape_json(&b, r.keys[i]);
	}
	appendStringInfo(&b, "],\"registration\":{\"v\":%d,\"partition\":", SYNC_REGISTRATION_VERSION);
	escape_json(&b, partition);
	appendStringInfoString(&b, ",\"actorId\":");
	escape_json(&b, actor);
	appendStringInfoString(&b, ",\"clientId\":");
	escape_json(&b, client);
	appendStringInfoString(&b, ",\"logEpoch\":");
	escape_json(&b, r.epoch ? r.epoch : "");
	appendStringInfo(&b, ",\"schemaVersion\":%d,\"wireVersion\":%d,\"subscriptions\":[%s]}}",
					 r.schema->version, r.wire_version, r.subs.data);

	MemoryContextSwitchTo(caller);
	result = DirectFunctionCall1(jsonb_in, CStringGetDatum(b.data));
	seed_registration(r.schema, partition, DatumGetJsonbP(result));
	SPI_finish();
	PG_RETURN_DATUM(result);
}

/* ---------------------------------------------------------------- presence_authorize */

PG_FUNCTION_INFO_V1(syncular_presence_authorize);

Datum
syncular_presence_authorize(PG_FUNCTION_ARGS)
{
	char	   *partition = sync_required_text_arg(fcinfo, 0, "realtime", "partition");
	char	   *actor = sync_required_text_arg(fcinfo, 1, "realtime", "actor_id");
	char	   *client = sync_required_text_arg(fcinfo, 2, "realtime", "client_id");
	MemoryContext caller = CurrentMemoryContext;
	ArrayType  *arr;
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	int			nout = 0;
	char	  **out;
	Datum	   *outd;
	Registration r;
	ArrayType  *result;

	if (PG_ARGISNULL(3))
		sync_raise("sync.invalid_request", "realtime: an argument is NULL",
				   "{\"argument\": \"scope_keys\"}");
	arr = PG_GETARG_ARRAYTYPE_P(3);
	if (ARR_NDIM(arr) > 1)
		sync_raise("sync.invalid_request", "realtime: scope_keys must be a one-dimensional array",
				   "{\"argument\": \"scope_keys\"}");
	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "syncular realtime: SPI_connect failed");
	registration_build(partition, actor, client, &r);

	MemoryContextSwitchTo(caller);
	out = palloc(sizeof(char *) * Max(n, 1));
	outd = palloc(sizeof(Datum) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		char	   *key;
		bool		dup = false;

		if (nulls[i])
			continue;
		key = TextDatumGetCString(elems[i]);
		if (bsearch(&key, r.keys, r.nkeys, sizeof(char *), sync_cmp_utf16) == NULL)
			continue;
		for (int k = 0; k < nout && !dup; k++)
			dup = strcmp(out[k], key) == 0;
		if (dup)
			continue;
		out[nout] = key;
		outd[nout++] = elems[i];
	}
	result = construct_array(outd, nout, TEXTOID, -1, false, TYPALIGN_INT);
	SPI_finish();
	PG_RETURN_ARRAYTYPE_P(result);
}
