/*
 * hooks.c — the write-path hooks of a push commit (push-and-pull.md §2.7, §2.8;
 * barrier-rfc0007.md §8; docs/hooks.md "Engine calling convention"):
 *
 *   sync_validate_row     §6.7 per-table row validator, before each row write
 *   sync_validate_commit  §6.8 whole-commit validator, after the ops and the reference pass
 *   sync_plan_reactions   §6.9 reaction planner, its records enqueued (hook_records.c), after commit_seq
 *   sync_validate_captured_row  the row validator on a row written by ordinary SQL, when
 *                         syncular.capture_validators is on (capture_row.c, capture_log.c)
 *
 * Hooks are SQL functions called by OID through fmgr (so SET search_path / SECURITY DEFINER
 * apply), inside the push transaction, under a fresh snapshot so that their SQL sees the rows
 * this commit has already written (the authoritative read of barrier-rfc0007.md §8.3).
 * A validator runs in its own internal subtransaction; its error is classified:
 *   - SQLSTATE class 40, 53, 57, 58, XX: a server failure, re-thrown (push.c answers
 *     sync.internal_error, or lets a cancel through);
 *   - otherwise the rejection rule (hook_records.c sync_hook_rejection) decides: a well-formed
 *     SY001 rejection gives the host's code, message and details; anything else gives
 *     sync.constraint_violation with a fixed message (the error text goes to the server log only).
 * The planner is not caught: any error aborts the commit as a server failure (push.c).
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/elog.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"

#include "engine.h"
#include "hook_records.h"
#include "storage.h"
#include "rowjson.h"
#include "rules.h"

/* ---------------------------------------------------------------- row validator lookup */

/* Per table: the registered validator (InvalidOid = none), cached per schema generation. */
static Oid *rv_fn = NULL;
static bool *rv_known = NULL;
static int	rv_n = 0;
static uint64 rv_generation = 0;

static Oid
row_validator_of(SyncSchema *schema, int ti)
{
	Oid			fn;

	if (rv_fn == NULL || rv_generation != schema->generation || rv_n != schema->ntables)
	{
		if (rv_fn)
			pfree(rv_fn);
		if (rv_known)
			pfree(rv_known);
		rv_fn = MemoryContextAllocZero(TopMemoryContext, sizeof(Oid) * Max(schema->ntables, 1));
		rv_known = MemoryContextAllocZero(TopMemoryContext,
										  sizeof(bool) * Max(schema->ntables, 1));
		rv_n = schema->ntables;
		rv_generation = schema->generation;
	}
	if (rv_known[ti])
		return rv_fn[ti];

	fn = sync_storage_row_validator(schema->tables[ti].name);
	rv_fn[ti] = fn;
	rv_known[ti] = true;
	return fn;
}

/* ---------------------------------------------------------------- rows as JSON */

/*
 * One value with the decode_row mapping (rowjson.h).  The one difference: a string holding
 * U+0000 (which jsonb cannot hold; decode_row raises) is shown to a hook as null, so that a
 * stored or pushed value can never make a hook call fail.
 */
static void
push_hook_value(JsonbParseState **ps, JsonbIteratorToken tok, const SyncTable *t, int c,
				const SspValue *v)
{
	if (!v->present || v->is_null ||
		(t->columns[c].type == SSP_COL_STRING && memchr(v->str.ptr, '\0', v->str.len) != NULL))
	{
		JsonbValue	jv;

		jv.type = jbvNull;
		pushJsonbValue(ps, tok, &jv);
		return;
	}
	sync_push_value(ps, tok, t->name, &t->codec_columns[c], v);
}

/* Push a row as an object {column: value} (after a key, in an array, or at top level). */
static JsonbValue *
push_row(JsonbParseState **ps, const SyncTable *t, const SspValue *vals)
{
	pushJsonbValue(ps, WJB_BEGIN_OBJECT, NULL);
	for (int c = 0; c < t->ncolumns; c++)
	{
		sync_push_key(ps, t->columns[c].name);
		push_hook_value(ps, WJB_VALUE, t, c, &vals[c]);
	}
	return pushJsonbValue(ps, WJB_END_OBJECT, NULL);
}

static Jsonb *
row_jsonb(const SyncTable *t, const SspValue *vals)
{
	JsonbParseState *ps = NULL;

	return JsonbValueToJsonb(push_row(&ps, t, vals));
}

static void
push_null(JsonbParseState **ps)
{
	JsonbValue	v;

	v.type = jbvNull;
	pushJsonbValue(ps, WJB_VALUE, &v);
}

static void
push_int(JsonbParseState **ps, bool has, int64 i)
{
	if (!has)
	{
		push_null(ps);
		return;
	}
	sync_push_int(ps, WJB_VALUE, i);
}

/*
 * The `operations` argument of the commit validator and the planner (docs/hooks.md): one
 * object per evidence entry, in order, every key present (null when it does not apply).
 */
static Jsonb *
operations_jsonb(SyncSchema *schema, const SyncCommitState *cs)
{
	JsonbParseState *ps = NULL;
	JsonbValue *res;

	pushJsonbValue(&ps, WJB_BEGIN_ARRAY, NULL);
	for (int i = 0; i < cs->nops; i++)
	{
		const SyncOpEvidence *e = &cs->ops[i];
		const SyncTable *t = &schema->tables[e->table_index];

		pushJsonbValue(&ps, WJB_BEGIN_OBJECT, NULL);
		sync_push_key(&ps, "opIndex");
		push_int(&ps, true, e->op_index);
		sync_push_key(&ps, "op");
		sync_push_string(&ps, WJB_VALUE, e->op == SSP_OP_DELETE ? "delete" : "upsert");
		sync_push_key(&ps, "table");
		sync_push_string(&ps, WJB_VALUE, t->name);
		sync_push_key(&ps, "rowId");
		sync_push_string(&ps, WJB_VALUE, e->row_id);
		sync_push_key(&ps, "row");
		if (e->row)
			(void) push_row(&ps, t, e->row);
		else
			push_null(&ps);
		sync_push_key(&ps, "stored");
		if (e->stored)
			(void) push_row(&ps, t, e->stored);
		else
			push_null(&ps);
		sync_push_key(&ps, "storedServerVersion");
		push_int(&ps, e->has_stored_version, e->stored_version);
		sync_push_key(&ps, "nextServerVersion");
		push_int(&ps, e->has_next_version, e->next_version);
		pushJsonbValue(&ps, WJB_END_OBJECT, NULL);
	}
	res = pushJsonbValue(&ps, WJB_END_ARRAY, NULL);
	return JsonbValueToJsonb(res);
}

/* ---------------------------------------------------------------- calling a hook */

static inline Datum
text_arg(const char *s)
{
	return PointerGetDatum(cstring_to_text(s));
}

/*
 * Call fn(args) under a fresh snapshot (after a CommandCounterIncrement, so the rows this
 * commit wrote are visible even to a STABLE function).  Errors propagate.
 */
static Datum
call_hook(Oid fn, int nargs, Datum *args, bool *nulls, bool *isnull)
{
	FmgrInfo	flinfo;
	LOCAL_FCINFO(fcinfo, 7);
	Datum		result;

	Assert(nargs <= 7);
	CommandCounterIncrement();
	PushCopiedSnapshot(GetTransactionSnapshot());
	UpdateActiveSnapshotCommandId();
	fmgr_info(fn, &flinfo);
	InitFunctionCallInfoData(*fcinfo, &flinfo, nargs, DEFAULT_COLLATION_OID, NULL, NULL);
	for (int i = 0; i < nargs; i++)
	{
		fcinfo->args[i].value = args[i];
		fcinfo->args[i].isnull = nulls[i];
	}
	result = FunctionCallInvoke(fcinfo);
	*isnull = fcinfo->isnull;
	PopActiveSnapshot();
	return result;
}

/* The decoded rejection of a validator's error, or NULL (hook_records.c). */
static Jsonb *
decode_rejection(const ErrorData *edata)
{
	return sync_hook_rejection(unpack_sql_state(edata->sqlerrcode), edata->detail, edata->message);
}

static char *
jstr(Jsonb *j, const char *key)
{
	JsonbValue	v;

	if (getKeyJsonValueFromContainer(&j->root, key, strlen(key), &v) == NULL ||
		v.type != jbvString)
		return NULL;
	return pnstrdup(v.val.string.val, v.val.string.len);
}

/*
 * Run a validator in an internal subtransaction.  true when it returned; false with
 * *rejection (the decoded SY001 rejection, or NULL for any other error) when it raised.
 * Server failures are re-thrown.  `table` names the row validator's table in the server log
 * (NULL: the whole-commit validator).
 */
static bool
run_validator(Oid fn, int nargs, Datum *args, bool *nulls, const char *table, Jsonb **rejection)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	volatile bool ok = true;
	ErrorData  *volatile edata = NULL;

	*rejection = NULL;
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		bool		isnull;

		(void) call_hook(fn, nargs, args, nulls, &isnull);
		sync_subxact_release(cxt, owner);
	}
	PG_CATCH();
	{
		edata = sync_subxact_rollback(cxt, owner);
		ok = false;
	}
	PG_END_TRY();
	if (ok)
		return true;

	/* a server failure, not a fact about the commit (docs/hooks.md §3) */
	if (sync_is_server_failure(edata->sqlerrcode))
		ReThrowError(edata);
	*rejection = decode_rejection(edata);
	if (*rejection == NULL)
		ereport(LOG,
				(errmsg("syncular: %s%s%s failed (SQLSTATE %s): %s",
						table ? "row validator of table \"" : "whole-commit validator",
						table ? table : "", table ? "\"" : "",
						unpack_sql_state(edata->sqlerrcode), edata->message),
				 edata->detail ? errdetail_internal("%s", edata->detail) : 0));
	FreeErrorData(edata);
	return false;
}

/* Fill *reject from a decoded rejection (code, message, details; retryable false). */
static void
reject_from(Jsonb *rej, SyncOpReject *reject)
{
	JsonbValue	v;

	reject->code = jstr(rej, "code");
	reject->message = jstr(rej, "message");
	reject->retryable = false;
	reject->details_json = NULL;
	if (getKeyJsonValueFromContainer(&rej->root, "details", 7, &v) != NULL &&
		v.type == jbvBinary)
	{
		StringInfoData b;

		initStringInfo(&b);
		sync_jsonb_append_compact(&b, &v);
		reject->details_json = b.data;
	}
}

static void
reject_fixed(SyncOpReject *reject, int32 op_index, const char *message)
{
	reject->op_index = op_index;
	reject->code = "sync.constraint_violation";
	reject->message = message;
	reject->retryable = false;
	reject->details_json = NULL;
}

/* ---------------------------------------------------------------- the seams */

/* Whether table ti has a row validator (its SQL may write rows push.c has read ahead). */
bool
sync_has_row_validator(SyncSchema *schema, int ti)
{
	return OidIsValid(row_validator_of(schema, ti));
}

bool
sync_validate_row(SyncRound *round, SyncCommitState *state, const SyncOpEvidence *op,
				  SyncOpReject *reject)
{
	SyncSchema *schema = round->schema;
	const SyncTable *t = &schema->tables[op->table_index];
	Oid			fn = row_validator_of(schema, op->table_index);
	Datum		args[7];
	bool		nulls[7] = {false, false, false, false, false, false, false};
	Jsonb	   *rej;

	if (!OidIsValid(fn))
		return true;
	args[0] = text_arg(op->op == SSP_OP_DELETE ? "delete" : "upsert");
	args[1] = text_arg(t->name);
	args[2] = text_arg(op->row_id);
	if (op->row && op->op != SSP_OP_DELETE)
		args[3] = JsonbPGetDatum(row_jsonb(t, op->row));
	else
		nulls[3] = true;
	if (op->stored)
		args[4] = JsonbPGetDatum(row_jsonb(t, op->stored));
	else
		nulls[4] = true;
	args[5] = text_arg(round->actor_id);
	args[6] = text_arg(round->partition);

	if (run_validator(fn, 7, args, nulls, t->name, &rej))
		return true;
	if (rej == NULL)
	{
		reject_fixed(reject, op->op_index, "write validator failed");
		return false;
	}
	reject_from(rej, reject);
	reject->op_index = op->op_index;	/* a row validator's opIndex member is ignored */
	return false;
}

/* errcontext of a row validator run on a captured row: which table and row the error is about */
static void
captured_row_context(void *arg)
{
	const char *const *what = (const char *const *) arg;

	errcontext("row validator of synced table \"%s\" on rowId \"%s\" written by SQL "
			   "(syncular.capture_validators)", what[0], what[1]);
}

/*
 * The row validator of table ti on a row written by ordinary SQL (syncular.capture_validators;
 * docs/writing-with-sql.md "Rules"): the arguments a push gives it (§6.7: op, table, rowId, the
 * row, the stored row, actor, partition), under the same fresh snapshot.  Not in a
 * subtransaction: a statement has no per-operation result to carry a rejection, so the
 * validator's error (its SQLSTATE, message and DETAIL, e.g. an SY001 rejection) is the
 * statement's error, with a CONTEXT line naming the table and rowId.  SPI must be connected
 * (the validator lookup); the caller runs it as the extension owner.
 */
void
sync_validate_captured_row(SyncSchema *schema, int ti, bool is_delete, const char *row_id,
						   const SspValue *row, const SspValue *stored, const char *actor,
						   const char *partition)
{
	const SyncTable *t = &schema->tables[ti];
	Oid			fn = row_validator_of(schema, ti);
	Datum		args[7];
	bool		nulls[7] = {false, false, false, false, false, false, false};
	bool		isnull;
	const char *what[2] = {t->name, row_id};
	ErrorContextCallback ctx;

	if (!OidIsValid(fn))
		return;
	args[0] = text_arg(is_delete ? "delete" : "upsert");
	args[1] = text_arg(t->name);
	args[2] = text_arg(row_id);
	if (row && !is_delete)
		args[3] = JsonbPGetDatum(row_jsonb(t, row));
	else
		nulls[3] = true;
	if (stored)
		args[4] = JsonbPGetDatum(row_jsonb(t, stored));
	else
		nulls[4] = true;
	args[5] = text_arg(actor);
	args[6] = text_arg(partition);
	ctx.callback = captured_row_context;
	ctx.arg = (void *) what;
	ctx.previous = error_context_stack;
	error_context_stack = &ctx;
	(void) call_hook(fn, 7, args, nulls, &isnull);
	error_context_stack = ctx.previous;
}

bool
sync_validate_commit(SyncRound *round, SyncCommitState *state, SyncOpReject *reject)
{
	SyncSchema *schema = round->schema;
	Oid			fn = schema->commit_validator;
	Datum		args[5];
	bool		nulls[5] = {false, false, false, false, false};
	Jsonb	   *rej;
	JsonbValue	v;
	int64		idx = 0;

	if (!OidIsValid(fn))
		return true;
	args[0] = JsonbPGetDatum(operations_jsonb(schema, state));
	args[1] = text_arg(round->client_id);
	args[2] = text_arg(state->client_commit_id);
	args[3] = text_arg(round->actor_id);
	args[4] = text_arg(round->partition);

	if (run_validator(fn, 5, args, nulls, NULL, &rej))
		return true;
	if (rej == NULL)
	{
		reject_fixed(reject, 0, "whole-commit validator failed");
		return false;
	}
	if (getKeyJsonValueFromContainer(&rej->root, "opIndex", 7, &v) != NULL &&
		v.type == jbvNumeric)
		idx = DatumGetInt64(DirectFunctionCall1(numeric_int8, NumericGetDatum(v.val.numeric)));
	if (idx < 0 || idx >= (int64) state->commit->nops)
	{
		reject_fixed(reject, 0,
					 psprintf("commit validator rejection names unavailable opIndex " INT64_FORMAT,
							  idx));
		return false;
	}
	reject_from(rej, reject);
	reject->op_index = (int32) idx;
	return false;
}

void
sync_plan_reactions(SyncRound *round, SyncCommitState *state, int64 commit_seq)
{
	SyncSchema *schema = round->schema;
	Oid			fn = schema->reaction_planner;
	Datum		args[6];
	bool		nulls[6] = {false, false, false, false, false, false};
	Datum		records;
	bool		isnull;

	if (!OidIsValid(fn))
		return;
	args[0] = JsonbPGetDatum(operations_jsonb(schema, state));
	args[1] = text_arg(round->client_id);
	args[2] = text_arg(state->client_commit_id);
	args[3] = text_arg(round->actor_id);
	args[4] = text_arg(round->partition);
	records = call_hook(fn, 5, args, nulls, &isnull);
	if (isnull)
		return;					/* SQL NULL: nothing to enqueue */

	sync_reactions_enqueue(round->partition, round->client_id, state->client_commit_id, commit_seq,
						   DatumGetJsonbP(records), state->created_at_ms);
}

