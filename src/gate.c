/*
 * gate.c — the RFC 0007 serve gate (shared/reference/barrier-rfc0007.md §4): the one definition
 * of its rule, used by the engine in every round and by the SQL functions syncular.serve_gate()
 * (the operator's report) and syncular._serve_gate_check() (the engine's form).
 *
 * One read (sync_storage_gate_read, storage_meta.c: one statement, one snapshot) of the stored schema version,
 * the partition's log epoch and every pending checkpoint; then the refusal order of §4.2:
 * schema (stored > running) → checkpoint (the first pending one, in (partition, name) COLLATE
 * "C" order, the caller did not declare) → epoch (a member of an earlier read's token differs).
 * Declarations of the engine and of _serve_gate_check come from the session's
 * `syncular.checkpoints` setting, validated by syncular._checkpoint_declarations and kept per
 * setting value, so a round reads no declaration unless the setting changed.
 *
 * Where the engine evaluates it:
 *   entry  after the partition is touched, before any planning, in a fresh snapshot; it keeps
 *          the gate token (stored schema version + the partition's log epoch) in the round;
 *   push   inside each push commit, right after the partition lock, in a fresh snapshot (a
 *          schema bump committed while the push waited for the lock must be seen);
 *   pull   inside the ONE snapshot round.c pushes for every pull read, before any subscription
 *          is served: the gate and the pull data agree by construction, so a pull never serves
 *          a mixed result and no read-verify pass is needed (DESIGN.md decisions 5 and 13).
 * The push and pull checks also compare the token with the one kept at entry: a round that
 * spans several snapshots (the procedure form, which commits between pushed commits, or any
 * READ COMMITTED round) and sees a schema bump or a log-epoch rotation committed meanwhile is
 * refused with kind `epoch`, details {"logEpochChanged":true} (schema and checkpoint refusals take
 * precedence, §4.2).  Every refusal raises sync.schema_not_ready (SQLSTATE 55000, HTTP 503).
 *
 * Segment expiry after a checkpoint (§9.1) is vacuous here by construction: this server never
 * publishes, hands out or serves stored segments.  Bootstrap pages travel inline (SEGMENT_INLINE
 * with SSG2 bytes built in the pull's snapshot); no SEGMENT_REF is ever written and there is no
 * segment download endpoint, so no segment can predate a checkpoint and `sync.segment_expired`
 * is never answered.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "common/jsonapi.h"
#include "mb/pg_wchar.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/numeric.h"

#include "engine.h"
#include "storage.h"

#define NOT_READY "server schema is not ready for this request"

/* Checkpoint declarations (partition, name), matched on both (§3.1). */
typedef struct GateDecls
{
	int			n;
	char	  **partition;
	char	  **name;
} GateDecls;

/* One gate read (storage_meta.c). */
typedef SyncGateRead GateRead;

/*
 * An earlier read's token: the members a caller gave (storedSchemaVersion, logEpoch).  A member
 * whose JSON type can never equal the current value (a string version, a numeric epoch) is kept
 * as `bad` and always differs; epoch NULL with has_epoch = JSON null.
 */
typedef struct GateToken
{
	bool		has_stored;
	bool		stored_bad;
	Numeric		stored;
	bool		has_epoch;
	bool		epoch_bad;
	char	   *epoch;
} GateToken;

static SPIPlanPtr decl_plan = NULL;

/* the declarations of the last syncular.checkpoints value seen (TopMemoryContext) */
static char *decls_setting = NULL;
static GateDecls decls_cached;

static SPIPlanPtr
keep(const char *sql, int nargs, Oid *types)
{
	return sync_storage_keep_plan(sql, nargs, types, CURSOR_OPT_GENERIC_PLAN);
}

/*
 * §4.2 serveGateRefusal: NULL when ready, else the refusal's kind with *details (JSON text in
 * jsonb's key order, as the refusal's DETAIL has always carried it).
 */
static const char *
gate_refusal(int32 running, const GateRead *g, const GateDecls *d, char **details)
{
	StringInfoData b;

	*details = NULL;
	initStringInfo(&b);
	if (g->stored > running)
	{
		appendStringInfo(&b, "{\"storedSchemaVersion\": " INT64_FORMAT
						 ", \"runningSchemaVersion\": %d}", g->stored, running);
		*details = b.data;
		return "schema";
	}
	for (int i = 0; i < g->npending; i++)
	{
		bool		declared = false;

		for (int j = 0; j < d->n && !declared; j++)
			declared = strcmp(d->partition[j], g->pending_partition[i]) == 0 &&
				strcmp(d->name[j], g->pending_name[i]) == 0;
		if (declared)
			continue;
		appendStringInfoString(&b, "{\"partition\": ");
		escape_json(&b, g->pending_partition[i]);
		appendStringInfoString(&b, ", \"projection\": ");
		escape_json(&b, g->pending_name[i]);
		appendStringInfoChar(&b, '}');
		*details = b.data;
		return "checkpoint";
	}
	return NULL;
}

/* §4.2 serveGateTokenChanged: a member of the earlier token differs from this read. */
static bool
token_changed(const GateToken *t, const GateRead *g)
{
	if (t->has_stored &&
		(t->stored_bad ||
		 !DatumGetBool(DirectFunctionCall2(numeric_eq, NumericGetDatum(t->stored),
										   NumericGetDatum(int64_to_numeric(g->stored))))))
		return true;
	if (t->has_epoch &&
		(t->epoch_bad || (t->epoch == NULL) != (g->epoch == NULL) ||
		 (t->epoch != NULL && strcmp(t->epoch, g->epoch) != 0)))
		return true;
	return false;
}

/* Read, then refuse in the §4.2 order (raises sync.schema_not_ready); token may be NULL. */
static void
gate_check(const char *partition, int32 running, const GateDecls *d, const GateToken *token,
		   bool read_only, GateRead *g)
{
	char	   *details;

	sync_storage_gate_read(partition, running, read_only, g);
	if (gate_refusal(running, g, d, &details) != NULL)
		sync_raise("sync.schema_not_ready", NOT_READY, details);
	if (token != NULL && token_changed(token, g))
		sync_raise("sync.schema_not_ready", NOT_READY, "{\"logEpochChanged\": true}");
}

/* ---------------------------------------------------------------- declarations */

/*
 * Declarations of a jsonb value (NULL: none), validated by syncular._checkpoint_declarations
 * (sync.storage.invalid_checkpoints), allocated in cxt.  The caller is connected to SPI.
 */
static void
decls_from_jsonb(Datum checkpoints, bool isnull, GateDecls *d, MemoryContext cxt)
{
	MemoryContext caller = CurrentMemoryContext;
	char		nulls[1] = {isnull ? 'n' : ' '};
	int			rc;

	memset(d, 0, sizeof(*d));
	if (decl_plan == NULL)
		decl_plan = keep("SELECT d.partition, d.name FROM syncular._checkpoint_declarations($1) d",
						 1, (Oid[]) {JSONBOID});
	rc = SPI_execute_plan(decl_plan, &checkpoints, nulls, true, 0);
	MemoryContextSwitchTo(caller);	/* SPI returns in its procedure context */
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "syncular: reading checkpoint declarations failed");
	d->n = (int) SPI_processed;
	d->partition = MemoryContextAlloc(cxt, sizeof(char *) * Max(d->n, 1));
	d->name = MemoryContextAlloc(cxt, sizeof(char *) * Max(d->n, 1));
	for (int i = 0; i < d->n; i++)
	{
		d->partition[i] = MemoryContextStrdup(cxt, SPI_getvalue(SPI_tuptable->vals[i],
																SPI_tuptable->tupdesc, 1));
		d->name[i] = MemoryContextStrdup(cxt, SPI_getvalue(SPI_tuptable->vals[i],
														   SPI_tuptable->tupdesc, 2));
	}
	SPI_freetuptable(SPI_tuptable);
}

/*
 * The session's declarations (`syncular.checkpoints`; unset or blank = none).  Parsed when the
 * setting's value differs from the last one seen; text that is not JSON raises
 * sync.storage.invalid_checkpoints with details {"reason": "not_json"}.
 */
static const GateDecls *
session_decls(void)
{
	const char *raw = sync_declared_checkpoints ? sync_declared_checkpoints : "";
	JsonLexContext *lex;
	GateDecls	d;
	char	   *trimmed;
	bool		blank = true;

	if (decls_setting != NULL && strcmp(decls_setting, raw) == 0)
		return &decls_cached;
	for (const char *p = raw; *p; p++)
		if (*p != ' ')			/* btrim's blank: spaces only */
			blank = false;
	memset(&d, 0, sizeof(d));
	if (!blank)
	{
		trimmed = pstrdup(raw);
		lex = makeJsonLexContextCstringLen(trimmed, strlen(trimmed), GetDatabaseEncoding(), true);
		if (pg_parse_json(lex, &nullSemAction) != JSON_SUCCESS)
			sync_raise("sync.storage.invalid_checkpoints",
					   "the syncular.checkpoints setting is not valid JSON",
					   "{\"reason\": \"not_json\"}");
		decls_from_jsonb(DirectFunctionCall1(jsonb_in, CStringGetDatum(trimmed)), false, &d,
						 TopMemoryContext);
	}
	if (decls_setting != NULL)
	{
		for (int i = 0; i < decls_cached.n; i++)
		{
			pfree(decls_cached.partition[i]);
			pfree(decls_cached.name[i]);
		}
		if (decls_cached.partition)
			pfree(decls_cached.partition);
		if (decls_cached.name)
			pfree(decls_cached.name);
		pfree(decls_setting);
	}
	decls_cached = d;
	decls_setting = MemoryContextStrdup(TopMemoryContext, raw);
	return &decls_cached;
}

/* ---------------------------------------------------------------- the engine */

/*
 * sync_gate_check_entry — the entry gate: after the partition is touched and before any
 * planning (schema floor, epoch reset, scopes, pushes, pulls).  The epoch it checks against is
 * the one the round read when it touched the partition (round->log_epoch, the one the response
 * header carries); the read's stored version and epoch become the round's gate token.
 */
void
sync_gate_check_entry(SyncRound *round)
{
	GateToken	t = {0};
	GateRead	g;

	t.has_epoch = true;
	t.epoch = round->log_epoch;
	gate_check(round->partition, round->schema->version, session_decls(), &t, false, &g);
	round->gate_stored = g.stored;
	round->gate_epoch = g.epoch;
}

/* The round's token: both members of the entry read. */
static void
round_token(const SyncRound *round, GateToken *t)
{
	memset(t, 0, sizeof(*t));
	t->has_stored = true;
	t->stored = int64_to_numeric(round->gate_stored);
	t->has_epoch = true;
	t->epoch = round->gate_epoch;
}

/*
 * sync_gate_check_push — the gate inside each push commit, right after the partition lock
 * and before the locked idempotency re-check (§4.4 step 7).  A schema bump that committed
 * while this push waited for the lock makes the stored version newer than the schema this
 * round planned with: the commit is refused (nothing is persisted) instead of writing rows in
 * the old layout.  A log-epoch rotation committed since the entry gate refuses it too (kind
 * epoch): the commit was planned against the epoch the client sent.
 */
void
sync_gate_check_push(SyncRound *round)
{
	GateToken	t;
	GateRead	g;

	round_token(round, &t);
	gate_check(round->partition, round->schema->version, session_decls(), &t, false, &g);
}

/*
 * sync_gate_check_pull — the gate in the pull's snapshot.  round.c calls it right after it
 * pushes the one snapshot every pull read uses and before any subscription is served; the read
 * runs read-only, so the gate reads exactly what the pull reads.
 */
void
sync_gate_check_pull(SyncRound *round)
{
	GateToken	t;
	GateRead	g;

	round_token(round, &t);
	gate_check(round->partition, round->schema->version, session_decls(), &t, true, &g);
}

/*
 * sync_gate_check_write — the gate for a sync commit made by ordinary SQL (capture_log.c), right
 * after the partition lock as for a push commit (§4.4 step 7): a newer stored schema or a
 * pending checkpoint the session did not declare (syncular.checkpoints) refuses the statement.
 * There is no round, hence no token: the epoch kind never applies.
 */
void
sync_gate_check_write(const char *partition, int32 schema_version)
{
	GateRead	g;

	gate_check(partition, schema_version, session_decls(), NULL, false, &g);
}

/* ---------------------------------------------------------------- SQL functions */

/* running_version, or the compiled schema's version; raises schema_not_registered. */
static int32
running_version(FunctionCallInfo fcinfo, int argno)
{
	int32		version;

	if (!PG_ARGISNULL(argno))
		return PG_GETARG_INT32(argno);
	if (sync_storage_compiled_version(&version))
		return version;
	sync_raise("sync.storage.schema_not_registered",
			   "no compiled schema is registered; call syncular.ensure_schema first", NULL);
	return 0;					/* not reached */
}

static Datum
jsonb_of(const char *text)
{
	return DirectFunctionCall1(jsonb_in, CStringGetDatum(text));
}

PG_FUNCTION_INFO_V1(syncular_serve_gate);

/*
 * syncular.serve_gate(partition text, checkpoints jsonb, running_version integer) RETURNS jsonb
 * §4 readServeGate + serveGateRefusal as a report: {ready, storedSchemaVersion,
 * runningSchemaVersion, logEpoch, pending, refusal}.  Never raises for a not-ready state.
 * Reads in the calling statement's snapshot (STABLE).
 */
Datum
syncular_serve_gate(PG_FUNCTION_ARGS)
{
	MemoryContext cxt = CurrentMemoryContext;
	char	   *partition = PG_ARGISNULL(0) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(0));
	GateDecls	d;
	GateRead	g;
	int32		running;
	const char *kind;
	char	   *details;
	StringInfoData b;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "syncular: SPI_connect failed");
	MemoryContextSwitchTo(cxt);	/* SPI_connect leaves its procedure context current */
	decls_from_jsonb(PG_ARGISNULL(1) ? (Datum) 0 : PG_GETARG_DATUM(1), PG_ARGISNULL(1), &d, cxt);
	running = running_version(fcinfo, 2);
	sync_storage_gate_read(partition, running, true, &g);
	kind = gate_refusal(running, &g, &d, &details);

	initStringInfo(&b);
	appendStringInfo(&b, "{\"ready\": %s, \"storedSchemaVersion\": " INT64_FORMAT
					 ", \"runningSchemaVersion\": %d, \"logEpoch\": ",
					 kind == NULL ? "true" : "false", g.stored, running);
	if (g.epoch != NULL)
		escape_json(&b, g.epoch);
	else
		appendStringInfoString(&b, "null");
	appendStringInfoString(&b, ", \"pending\": [");
	for (int i = 0; i < g.npending; i++)
	{
		appendStringInfoString(&b, i > 0 ? ", {\"partition\": " : "{\"partition\": ");
		escape_json(&b, g.pending_partition[i]);
		appendStringInfoString(&b, ", \"name\": ");
		escape_json(&b, g.pending_name[i]);
		appendStringInfoChar(&b, '}');
	}
	appendStringInfoString(&b, "], \"refusal\": ");
	if (kind == NULL)
		appendStringInfoString(&b, "null");
	else
		appendStringInfo(&b, "{\"kind\": \"%s\", \"code\": \"sync.schema_not_ready\", "
						 "\"message\": \"" NOT_READY "\", \"details\": %s}", kind, details);
	appendStringInfoChar(&b, '}');
	SPI_finish();
	PG_RETURN_DATUM(jsonb_of(b.data));
}

/* A token member of _serve_gate_check's argument (see GateToken). */
static void
token_from_jsonb(Jsonb *j, GateToken *t)
{
	JsonbValue	v;

	memset(t, 0, sizeof(*t));
	if (j == NULL || !JB_ROOT_IS_OBJECT(j))
		return;
	if (getKeyJsonValueFromContainer(&j->root, "storedSchemaVersion", 19, &v) != NULL)
	{
		t->has_stored = true;
		t->stored_bad = v.type != jbvNumeric;
		if (!t->stored_bad)
			t->stored = v.val.numeric;
	}
	if (getKeyJsonValueFromContainer(&j->root, "logEpoch", 8, &v) != NULL)
	{
		t->has_epoch = true;
		t->epoch_bad = v.type != jbvString && v.type != jbvNull;
		if (v.type == jbvString)
			t->epoch = pnstrdup(v.val.string.val, v.val.string.len);
	}
}

PG_FUNCTION_INFO_V1(syncular_serve_gate_check);

/*
 * syncular._serve_gate_check(partition text, running_version integer, token jsonb) RETURNS jsonb
 * The engine's gate as SQL: declarations from syncular.checkpoints, refusals raised, the
 * current token {storedSchemaVersion, logEpoch} returned.
 */
Datum
syncular_serve_gate_check(PG_FUNCTION_ARGS)
{
	MemoryContext cxt = CurrentMemoryContext;
	char	   *partition = PG_ARGISNULL(0) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(0));
	const GateDecls *d;
	GateToken	t;
	GateRead	g;
	int32		running;
	StringInfoData b;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "syncular: SPI_connect failed");
	MemoryContextSwitchTo(cxt);	/* SPI_connect leaves its procedure context current */
	d = session_decls();
	running = running_version(fcinfo, 1);
	token_from_jsonb(PG_ARGISNULL(2) ? NULL : PG_GETARG_JSONB_P(2), &t);
	gate_check(partition, running, d, &t, true, &g);
	initStringInfo(&b);
	appendStringInfo(&b, "{\"storedSchemaVersion\": " INT64_FORMAT ", \"logEpoch\": ", g.stored);
	if (g.epoch != NULL)
		escape_json(&b, g.epoch);
	else
		appendStringInfoString(&b, "null");
	appendStringInfoChar(&b, '}');
	SPI_finish();
	PG_RETURN_DATUM(jsonb_of(b.data));
}
