/*
 * errors.c — the Syncular error catalogue (shared/reference/errors.md §3, §4) and how this
 * extension raises a catalogue code as a PostgreSQL error.
 *
 * Every refusal carries three things: a stable catalogue code (`sync.*`, `sync.storage.*`), a
 * SQLSTATE chosen per code below, and `errdetail` holding JSON {"code": ..., "details": ...}.
 * Protocol outcomes (conflicts, rejections, revocations) are encoded in responses and never
 * raised; see DESIGN.md decision 6.
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"

#include "engine.h"

#define SS(c) MAKE_SQLSTATE(c[0], c[1], c[2], c[3], c[4])

/*
 * The wire catalogue (errors.md §3) plus host storage codes (errors.md §4, never on the wire;
 * http_status 0).  SQLSTATEs: invalid input 22023, privilege 42501, missing object 42704 /
 * 42P01, not-ready state 55000, limits 54000, auth 28000, internal XX000.
 */
static const SyncErrorInfo catalogue[] = {
	{"sync.auth_required", "auth-required", true, "refreshAuth", 401, 0},
	{"sync.auth_lease_required", "auth-required", true, "refreshAuth", 401, 0},
	{"sync.auth_lease_revoked", "auth-required", true, "refreshAuth", 401, 0},
	{"sync.forbidden", "forbidden", false, "checkPermissions", 403, 0},
	{"sync.invalid_request", "invalid-request", false, "fixRequest", 400, 0},
	{"sync.invalid_client_id", "invalid-request", false, "resetClientId", 400, 0},
	{"sync.invalid_subscription", "invalid-request", false, "fixRequest", 400, 0},
	{"sync.empty_commit", "invalid-request", false, "fixRequest", 400, 0},
	{"sync.unknown_table", "schema-mismatch", false, "regenerateClient", 400, 0},
	{"sync.row_missing", "not-found", false, "forceResync", 404, 0},
	{"sync.row_deleted", "not-found", false, "fixRequest", 404, 0},
	{"sync.version_conflict", "conflict", false, "resolveConflict", 409, 0},
	{"sync.constraint_violation", "invalid-request", false, "fixRequest", 400, 0},
	{"sync.reference_violation", "invalid-request", false, "fixRequest", 400, 0},
	{"sync.missing_scopes", "internal", false, "inspectServer", 500, 0},
	{"sync.crdt_merge_failed", "internal", false, "inspectServer", 500, 0},
	{"sync.idempotency_cache_miss", "internal", true, "retryLater", 500, 0},
	{"sync.internal_error", "internal", true, "retryLater", 500, 0},
	{"sync.schema_not_ready", "internal", true, "retryLater", 503, 0},
	{"sync.too_many_operations", "invalid-request", false, "splitBatch", 400, 0},
	{"sync.not_found", "not-found", false, "forceResync", 404, 0},
	{"sync.segment_expired", "not-found", true, "retryLater", 404, 0},
	{"sync.cursor_expired", "reset-required", false, "rebootstrap", 400, 0},
	{"sync.scope_revoked", "scope-revoked", false, "checkPermissions", 403, 0},
	{"sync.rate_limited", "rate-limited", true, "retryLater", 429, 0},
	{"sync.schema_mismatch", "schema-mismatch", false, "regenerateClient", 400, 0},
	{"sync.client_schema_unsupported", "schema-mismatch", false, "upgradeClient", 400, 0},
	{"sync.websocket_connection_limit", "rate-limited", true, "retryLater", 429, 0},
	/* remote operations (REMOTE.md §7), answered inside an encoded operations response */
	{"operation.unknown", "not-found", false, "regenerateClient", 404, 0},
	{"operation.forbidden", "forbidden", false, "checkPermissions", 403, 0},
	{"operation.invalid_request", "invalid-request", false, "fixRequest", 400, 0},
	{"operation.result_too_large", "invalid-request", false, "fixRequest", 400, 0},
	{"operation.storage_unsupported", "internal", false, "inspectServer", 500, 0},
	{"operation.query_failed", "internal", false, "inspectServer", 500, 0},
	{"operation.execution_failed", "internal", false, "inspectServer", 500, 0},
	{"blob.not_found", "not-found", false, "fixRequest", 404, 0},
	{"blob.forbidden", "forbidden", false, "checkPermissions", 403, 0},
	{"blob.hash_mismatch", "invalid-request", false, "fixRequest", 400, 0},
	{"blob.too_large", "invalid-request", false, "fixRequest", 413, 0},
	/* host storage codes (errors.md §4 and this project's own) */
	{"sync.storage.scan_requires_scope", "internal", false, "inspectServer", 0, 0},
	{"sync.storage.invalid_limit", "invalid-request", false, "fixRequest", 0, 0},
	{"sync.storage.prune_epoch_mismatch", "internal", true, "retryLater", 0, 0},
	{"sync.storage.partition_unregistered", "not-found", false, "inspectServer", 0, 0},
	{"sync.storage.invalid_prune_cursor", "invalid-request", false, "fixRequest", 0, 0},
	{"sync.storage.schema_migration_pending", "internal", true, "retryLater", 0, 0},
	{"sync.storage.schema_migration_conflict", "internal", true, "retryLater", 0, 0},
	{"sync.storage.schema_changed", "internal", true, "retryLater", 0, 0},
	{"sync.storage.checkpoint_incomplete", "internal", true, "retryLater", 0, 0},
	{"sync.storage.checkpoint_not_declared", "not-found", false, "inspectServer", 0, 0},
	{"sync.storage.checkpoint_fence_missing", "internal", false, "inspectServer", 0, 0},
	{"sync.storage.invalid_checkpoints", "invalid-request", false, "fixRequest", 0, 0},
	{"sync.storage.stored_layout_mismatch", "internal", false, "inspectServer", 0, 0},
	{"sync.storage.physical_layout_mismatch", "internal", false, "inspectServer", 0, 0},
	{"sync.storage.writer_fence_rejected", "internal", true, "retryLater", 0, 0},
	{"sync.storage.schema_invalid", "invalid-request", false, "fixRequest", 0, 0},
	{"sync.storage.schema_newer", "internal", false, "inspectServer", 0, 0},
	{"sync.storage.schema_not_append_only", "invalid-request", false, "fixRequest", 0, 0},
	{"sync.storage.schema_not_registered", "internal", false, "inspectServer", 0, 0},
	{"sync.storage.hook_signature", "invalid-request", false, "fixRequest", 0, 0},
	{"sync.storage.hook_code_reserved", "invalid-request", false, "fixRequest", 0, 0},
	{"sync.storage.invalid_reaction", "invalid-request", false, "fixRequest", 0, 0},
	{"sync.storage.wakeup_unavailable", "internal", false, "inspectServer", 0, 0},
	{"sync.storage.operation_invalid", "invalid-request", false, "fixRequest", 0, 0},
};

/* SQLSTATE for a code: specific codes first, then by category. */
static int
sqlstate_for(const SyncErrorInfo *e)
{
	const char *c = e->code;

	if (strcmp(c, "sync.unknown_table") == 0)
		return ERRCODE_UNDEFINED_TABLE;
	if (strcmp(c, "operation.result_too_large") == 0)
		return ERRCODE_PROGRAM_LIMIT_EXCEEDED;
	if (strcmp(c, "operation.query_failed") == 0 || strcmp(c, "operation.execution_failed") == 0)
		return ERRCODE_EXTERNAL_ROUTINE_EXCEPTION;
	if (strcmp(c, "operation.storage_unsupported") == 0)
		return ERRCODE_FEATURE_NOT_SUPPORTED;
	if (strcmp(c, "sync.too_many_operations") == 0)
		return ERRCODE_PROGRAM_LIMIT_EXCEEDED;
	if (strcmp(c, "sync.schema_not_ready") == 0 ||
		strcmp(c, "sync.storage.checkpoint_incomplete") == 0 ||
		strcmp(c, "sync.storage.checkpoint_fence_missing") == 0 ||
		strcmp(c, "sync.storage.stored_layout_mismatch") == 0 ||
		strcmp(c, "sync.storage.physical_layout_mismatch") == 0 ||
		strcmp(c, "sync.storage.schema_newer") == 0 ||
		strcmp(c, "sync.storage.schema_migration_pending") == 0 ||
		strcmp(c, "sync.storage.schema_not_registered") == 0 ||
		strcmp(c, "sync.storage.prune_epoch_mismatch") == 0 ||
		strcmp(c, "sync.storage.wakeup_unavailable") == 0)
		return ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE;
	if (strcmp(c, "sync.storage.writer_fence_rejected") == 0)
		return ERRCODE_RAISE_EXCEPTION;
	if (strcmp(e->category, "invalid-request") == 0 ||
		strcmp(e->category, "schema-mismatch") == 0)
		return ERRCODE_INVALID_PARAMETER_VALUE;
	if (strcmp(e->category, "forbidden") == 0 || strcmp(e->category, "scope-revoked") == 0)
		return ERRCODE_INSUFFICIENT_PRIVILEGE;
	if (strcmp(e->category, "not-found") == 0)
		return ERRCODE_UNDEFINED_OBJECT;
	if (strcmp(e->category, "auth-required") == 0)
		return ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION;
	if (strcmp(e->category, "rate-limited") == 0)
		return ERRCODE_CONFIGURATION_LIMIT_EXCEEDED;
	if (strcmp(e->category, "conflict") == 0 || strcmp(e->category, "reset-required") == 0)
		return ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE;
	return ERRCODE_INTERNAL_ERROR;
}

/*
 * sync_error_info — look a code up in the catalogue.
 * Returns NULL for a code outside it (host validator codes).  The returned entry is static.
 */
const SyncErrorInfo *
sync_error_info(const char *code)
{
	static SyncErrorInfo resolved[lengthof(catalogue)];
	static bool ready = false;

	if (!ready)
	{
		for (int i = 0; i < (int) lengthof(catalogue); i++)
		{
			resolved[i] = catalogue[i];
			resolved[i].sqlstate = sqlstate_for(&catalogue[i]);
		}
		ready = true;
	}
	if (code == NULL)
		return NULL;
	for (int i = 0; i < (int) lengthof(resolved); i++)
		if (strcmp(resolved[i].code, code) == 0)
			return &resolved[i];
	return NULL;
}

/*
 * sync_error_detail_json — the errdetail text: {"code": code, "details": details_json}.
 * details_json must be valid JSON text or NULL (then the member is omitted).
 */
char *
sync_error_detail_json(const char *code, const char *details_json)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfoString(&buf, "{\"code\": ");
	escape_json(&buf, code);
	if (details_json != NULL)
		appendStringInfo(&buf, ", \"details\": %s", details_json);
	appendStringInfoChar(&buf, '}');
	return buf.data;
}

/* sync_json_member — the details text {"<name>": "<value>"} (value JSON-escaped), palloc'd. */
char *
sync_json_member(const char *name, const char *value)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfoChar(&buf, '{');
	escape_json(&buf, name);
	appendStringInfoString(&buf, ": ");
	escape_json(&buf, value);
	appendStringInfoChar(&buf, '}');
	return buf.data;
}

/*
 * sync_raise — raise `code` as an ERROR (never returns).
 *   code:         catalogue code; an unknown code is raised with SQLSTATE 22023.
 *   message:      fixed human message (no database text, no client bytes).
 *   details_json: JSON text for the "details" member, or NULL.
 * SQLSTATE: per sqlstate_for() above.  DETAIL: {"code": ..., "details": ...}.
 */
void
sync_raise(const char *code, const char *message, const char *details_json)
{
	sync_raise_hint(code, message, details_json, NULL);
}

/*
 * sync_raise_hint — sync_raise with an errhint (the way out), or none when hint is NULL.
 * The error carries no CONTEXT: a catalogue error is the engine's answer to its caller, and the
 * PL/pgSQL frames of the extension it was raised under (ensure_schema -> _schema_invalid ->
 * _raise, ...) are internals that would print 6-9 lines at psql's default verbosity.  Dropping
 * the context stack here is safe: every longjmp target (PG_TRY, a PL/pgSQL exception block, the
 * main loop) restores its own.
 */
void
sync_raise_hint(const char *code, const char *message, const char *details_json, const char *hint)
{
	const SyncErrorInfo *e = sync_error_info(code);

	error_context_stack = NULL;
	ereport(ERROR,
			(errcode(e ? e->sqlstate : ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("%s", message),
			 errdetail("%s", sync_error_detail_json(code, details_json)),
			 hint ? errhint("%s", hint) : 0));
	pg_unreachable();
}

/*
 * sync_raise_no_schema — the refusal of a round, fan-out, realtime call or segment download in
 * a database where no app schema was registered yet: sync.schema_not_ready (55000, HTTP 503,
 * retryable as the catalogue says) with the cause, details {"reason": "no_schema"} and the way
 * out.
 */
void
sync_raise_no_schema(void)
{
	sync_raise_hint("sync.schema_not_ready", "no app schema is registered in this database",
					"{\"reason\": \"no_schema\"}", "Call syncular.ensure_schema first.");
}

PG_FUNCTION_INFO_V1(syncular_raise);

/*
 * syncular._raise(code text, message text, details jsonb DEFAULT NULL) RETURNS void
 * syncular._raise(code text, message text, details jsonb, hint text) RETURNS void
 * SQL entry to sync_raise for the plpgsql parts of the extension.  Always raises; the second
 * form adds an errhint (what the operator can do about it).
 */
/* A codec refusal (SspError) as an ERROR: its catalogue code; the codec's internal failure (an
 * allocation it could not make) as out_of_memory (53200). */
void
sync_raise_codec_error(const SspError *err)
{
	if (err->code && strcmp(err->code, SSP_ERR_INTERNAL) == 0)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("syncular codec: %s", err->message)));
	sync_raise(err->code ? err->code : SSP_ERR_INVALID_REQUEST, err->message, NULL);
}

Datum
syncular_raise(PG_FUNCTION_ARGS)
{
	char	   *code;
	char	   *message;
	char	   *details = NULL;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		sync_raise("sync.internal_error", "syncular._raise needs a code and a message", NULL);
	code = text_to_cstring(PG_GETARG_TEXT_PP(0));
	message = text_to_cstring(PG_GETARG_TEXT_PP(1));
	if (PG_NARGS() > 2 && !PG_ARGISNULL(2))
		details = JsonbToCString(NULL, &PG_GETARG_JSONB_P(2)->root, VARSIZE(PG_GETARG_JSONB_P(2)));
	sync_raise_hint(code, message, details,
					PG_NARGS() < 4 || PG_ARGISNULL(3) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(3)));
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(syncular_error_catalog);

/*
 * syncular.error_catalog() RETURNS TABLE(code, category, retryable, recommended_action,
 * http_status, sqlstate): the catalogue as this extension uses it (errors.md §3, §4).
 * http_status is NULL for host storage codes, which never travel on the wire.
 */
Datum
syncular_error_catalog(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	InitMaterializedSRF(fcinfo, 0);
	(void) sync_error_info(NULL);	/* resolve SQLSTATEs */
	for (int i = 0; i < (int) lengthof(catalogue); i++)
	{
		const SyncErrorInfo *e = sync_error_info(catalogue[i].code);
		Datum		values[6];
		bool		nulls[6] = {false, false, false, false, false, false};

		values[0] = CStringGetTextDatum(e->code);
		values[1] = CStringGetTextDatum(e->category);
		values[2] = BoolGetDatum(e->retryable);
		values[3] = CStringGetTextDatum(e->action);
		values[4] = Int32GetDatum(e->http_status);
		nulls[4] = (e->http_status == 0);
		values[5] = CStringGetTextDatum(unpack_sql_state(e->sqlstate));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/*
 * A required text argument of a SQL function (argument n, named `what` in the error): NULL or
 * empty raises sync.invalid_request (22023) with details {"argument": what}; `who` prefixes the
 * message ("blobs", "realtime").
 */
char *
sync_required_text_arg(FunctionCallInfo fcinfo, int n, const char *who, const char *what)
{
	char	   *s;

	if (PG_ARGISNULL(n))
		sync_raise("sync.invalid_request", psprintf("%s: an argument is NULL", who),
				   psprintf("{\"argument\": \"%s\"}", what));
	s = text_to_cstring(PG_GETARG_TEXT_PP(n));
	if (s[0] == '\0')
		sync_raise("sync.invalid_request", psprintf("%s: an argument is empty", who),
				   psprintf("{\"argument\": \"%s\"}", what));
	return s;
}

/* ---------------------------------------------------------------- HTTP error bodies */

/* The JSON error body {code, category, retryable, recommendedAction, message, details?}. */
char *
sync_http_error_body(const SyncErrorInfo *e, const char *message, const char *details_json)
{
	StringInfoData b;

	initStringInfo(&b);
	appendStringInfoString(&b, "{\"code\":");
	escape_json(&b, e->code);
	appendStringInfoString(&b, ",\"category\":");
	escape_json(&b, e->category);
	appendStringInfo(&b, ",\"retryable\":%s,\"recommendedAction\":",
					 e->retryable ? "true" : "false");
	escape_json(&b, e->action);
	appendStringInfoString(&b, ",\"message\":");
	escape_json(&b, message);
	if (details_json != NULL)
		appendStringInfo(&b, ",\"details\":%s", details_json);
	appendStringInfoChar(&b, '}');
	return b.data;
}

/*
 * A raised catalogue error: DETAIL is exactly sync_error_detail_json's text
 * {"code": "<code>", "details": <json>} and the SQLSTATE is the catalogue's.  Returns the entry
 * (NULL for anything else) and the raw details text.
 */
const SyncErrorInfo *
sync_catalogue_error(const ErrorData *edata, char **details)
{
	const char *d = edata->detail;
	const char *p;
	const char *q;
	char	   *code;
	const SyncErrorInfo *e;
	size_t		len;

	*details = NULL;
	if (d == NULL || strncmp(d, "{\"code\": \"", 10) != 0)
		return NULL;
	p = d + 10;
	q = strchr(p, '"');
	if (q == NULL)
		return NULL;
	code = pnstrdup(p, q - p);
	e = sync_error_info(code);
	if (e == NULL || e->http_status == 0 || e->sqlstate != edata->sqlerrcode)
		return NULL;
	q++;
	len = strlen(q);
	if (strncmp(q, ", \"details\": ", 13) == 0 && len > 14 && q[len - 1] == '}')
		*details = pnstrdup(q + 13, len - 14);
	else if (strcmp(q, "}") != 0)
		return NULL;
	return e;
}

/*
 * Whether an error raised by a host function (a CRDT merger, a validator) is the server's
 * failure rather than the function's verdict: serialization and deadlock (class 40),
 * resources (53), operator intervention such as a cancel (57), system error (58), internal
 * error (XX).  Those are re-thrown and fail the round as retryable; anything else is the
 * function's refusal (SPEC §5.10.6, §6.4).
 */
bool
sync_is_server_failure(int sqlerrcode)
{
	int			cls = ERRCODE_TO_CATEGORY(sqlerrcode);

	return cls == ERRCODE_TRANSACTION_ROLLBACK ||	/* 40 */
		cls == ERRCODE_INSUFFICIENT_RESOURCES ||	/* 53 */
		cls == ERRCODE_OPERATOR_INTERVENTION ||	/* 57 */
		cls == ERRCODE_SYSTEM_ERROR ||	/* 58 */
		cls == ERRCODE_INTERNAL_ERROR;	/* XX */
}
