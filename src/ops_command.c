/*
 * ops_command.c — a registered command (REMOTE.md §3), served through the ordinary push
 * pipeline (push.c):
 *
 *   1. the registration (operation.unknown), the partition's registry row and entry gate;
 *   2. the authorize function (false / NULL: operation.forbidden) and the actor's write scopes
 *      (a resolver failure is a request failure, not a stored rejection);
 *   3. the partition write lock and the serialized idempotency check under the tuple identity
 *          clientId       = JSON.stringify(["remote-command", actorId, request.clientId])
 *          clientCommitId = JSON.stringify([operationId, requestId])
 *      a stored outcome replays (applied -> "cached", rejected -> "rejected") without running
 *      the command again;
 *   4. the command function, which may read rows with syncular.operation_get_row and returns
 *      full-row mutations; a raise fails the request (nothing stored); an empty or malformed
 *      plan is operation.invalid_request;
 *   5. the mutations as one wire-2 PUSH_COMMIT through sync_push_commit: scope authorization,
 *      validators, references, commit log, idempotency record, reactions, realtime wake-up.
 *      A push rejection is stored there and answered "rejected".
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/resowner.h"

#include "operations.h"
#include "push_internal.h"

extern Datum syncular_encode_row(PG_FUNCTION_ARGS);
extern Datum syncular_decode_row(PG_FUNCTION_ARGS);

/* What syncular.operation_get_row may read while a command function runs (NULL otherwise). */
typedef struct CommandReads
{
	SyncSchema *schema;
	const char *partition;
	SyncAllowed *allowed;
} CommandReads;

static CommandReads *command_reads = NULL;

/* JSON.stringify of a string (escape_json agrees with it for valid UTF-8 without U+0000). */
static void
append_js_string(StringInfo b, const char *s)
{
	escape_json(b, s);
}

static void
load_command(const char *operation_id, Oid *authorize, Oid *command)
{
	if (!sync_storage_ops_command(operation_id, authorize, command))
		sync_raise("operation.unknown", "no command is registered under this operation id",
				   ops_details_id(operation_id));
}

static Datum
call3(Oid fn, const char *actor_id, const char *partition, Jsonb *params, bool *isnull)
{
	LOCAL_FCINFO(fcinfo, 3);
	FmgrInfo	flinfo;
	Datum		r;

	fmgr_info(fn, &flinfo);
	InitFunctionCallInfoData(*fcinfo, &flinfo, 3, InvalidOid, NULL, NULL);
	fcinfo->args[0].value = CStringGetTextDatum(actor_id);
	fcinfo->args[0].isnull = false;
	fcinfo->args[1].value = CStringGetTextDatum(partition);
	fcinfo->args[1].isnull = false;
	fcinfo->args[2].value = JsonbPGetDatum(params);
	fcinfo->args[2].isnull = false;
	r = FunctionCallInvoke(fcinfo);
	*isnull = fcinfo->isnull;
	return r;
}

static char *
jb_member_text(JsonbContainer *c, const char *key)
{
	JsonbValue *v = getKeyJsonValueFromContainer(c, key, strlen(key), NULL);

	if (v == NULL || v->type != jbvString || v->val.string.len == 0 ||
		memchr(v->val.string.val, '\0', v->val.string.len) != NULL)
		return NULL;
	return pnstrdup(v->val.string.val, v->val.string.len);
}

static void
plan_invalid(int i, const char *why)
{
	sync_raise("operation.invalid_request",
			   psprintf("the command's mutation %d is invalid: %s", i, why), NULL);
}

/* One mutation as a push operation (REMOTE.md §3: full-row upserts or deletes). */
static void
mutation_to_op(SyncSchema *schema, JsonbContainer *m, int i, SspPushOp *op)
{
	char	   *kind = jb_member_text(m, "op");
	char	   *table = jb_member_text(m, "table");
	SyncTable  *t;
	char	   *row_id;

	if (kind == NULL || table == NULL)
		plan_invalid(i, "a mutation is {\"op\": \"upsert\" | \"delete\", \"table\", ...}");
	t = sync_schema_table(schema, table);
	if (t == NULL)
		plan_invalid(i, psprintf("table \"%s\" is not a synced table", table));
	memset(op, 0, sizeof(*op));
	op->table.ptr = table;
	op->table.len = (uint32) strlen(table);
	if (strcmp(kind, "delete") == 0)
	{
		row_id = jb_member_text(m, "rowId");
		if (row_id == NULL)
			plan_invalid(i, "a delete needs a non-empty rowId");
		op->op = SSP_OP_DELETE;
	}
	else if (strcmp(kind, "upsert") == 0)
	{
		JsonbValue *row = getKeyJsonValueFromContainer(m, "row", 3, NULL);
		const char *pk = t->columns[t->pk_index].name;
		JsonbValue *pkv;
		Jsonb	   *rowj;
		bytea	   *payload;

		if (row == NULL || row->type != jbvBinary || !JsonContainerIsObject(row->val.binary.data))
			plan_invalid(i, "an upsert needs a row object");
		for (int c = 0; c < t->ncolumns; c++)
			if (getKeyJsonValueFromContainer(row->val.binary.data, t->columns[c].name,
											 strlen(t->columns[c].name), NULL) == NULL)
				plan_invalid(i, psprintf("an upsert is a full row: column \"%s\" is missing",
										 t->columns[c].name));
		pkv = getKeyJsonValueFromContainer(row->val.binary.data, pk, strlen(pk), NULL);
		if (pkv->type == jbvString)
			row_id = pnstrdup(pkv->val.string.val, pkv->val.string.len);
		else if (pkv->type == jbvNumeric)
			row_id = DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(pkv->val.numeric)));
		else
			plan_invalid(i, "the primary key must be a string or an integer");
		rowj = JsonbValueToJsonb(row);
		/* the row codec raises for a value its column cannot hold (the caller names it) */
		payload = DatumGetByteaPP(DirectFunctionCall2(syncular_encode_row, CStringGetTextDatum(table),
													  JsonbPGetDatum(rowj)));
		op->op = SSP_OP_UPSERT;
		op->has_payload = true;
		op->payload.ptr = (const uint8 *) VARDATA_ANY(payload);
		op->payload.len = VARSIZE_ANY_EXHDR(payload);
	}
	else
		plan_invalid(i, "op must be \"upsert\" or \"delete\"");
	op->row_id.ptr = row_id;
	op->row_id.len = (uint32) strlen(row_id);
}

/* The command's result as a commit; any failure of the plan is operation.invalid_request. */
static void
plan_commit(SyncSchema *schema, Jsonb *plan, const char *client_commit_id, SspPushCommit *commit)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	int			n;

	if (plan == NULL || !JB_ROOT_IS_ARRAY(plan) || JB_ROOT_IS_SCALAR(plan))
		sync_raise("operation.invalid_request", "the command must return a JSON array of mutations", NULL);
	n = JB_ROOT_COUNT(plan);
	if (n == 0)
		sync_raise("operation.invalid_request", "the command returned an empty mutation list", NULL);
	if (n > sync_max_operations_per_request)
		sync_raise("operation.invalid_request", "the command returned more mutations than syncular.max_operations_per_request",
				   psprintf("{\"maxOperations\": %d, \"operations\": %d}", sync_max_operations_per_request, n));
	commit->client_commit_id.ptr = client_commit_id;
	commit->client_commit_id.len = (uint32) strlen(client_commit_id);
	commit->nops = (uint32) n;
	commit->ops = palloc0(sizeof(SspPushOp) * n);

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		for (int i = 0; i < n; i++)
		{
			JsonbValue *m = getIthJsonbValueFromContainer(&plan->root, i);

			if (m->type != jbvBinary || !JsonContainerIsObject(m->val.binary.data))
				plan_invalid(i, "a mutation must be an object");
			mutation_to_op(schema, m->val.binary.data, i, &commit->ops[i]);
		}
		sync_subxact_release(cxt, owner);
	}
	PG_CATCH();
	{
		ErrorData  *edata = sync_subxact_rollback(cxt, owner);

		if (edata->sqlerrcode == ERRCODE_QUERY_CANCELED || edata->sqlerrcode == ERRCODE_ADMIN_SHUTDOWN)
			ReThrowError(edata);
		sync_raise("operation.invalid_request", edata->message, NULL);
	}
	PG_END_TRY();
}

/* The success object from an outcome (stored or fresh). */
static void
command_response(const OpsRequest *req, const char *status, const CommitOutcome *o, SspOpValue *out)
{
	OpsObject	res;
	SspOpValue *v;
	SspOpValue *items = palloc0(sizeof(SspOpValue) * Max(o->nrecords, 1));

	for (int i = 0; i < o->nrecords; i++)
	{
		const OpRecord *r = &o->records[i];
		OpsObject	rec;

		ops_obj_init(&rec);
		v = ops_obj_add(&rec, "opIndex");
		v->kind = SSP_OP_NUMBER;
		v->num = r->op_index;
		ops_set_string(ops_obj_add(&rec, "status"),
					   r->status == SSP_RESULT_APPLIED ? "applied" :
					   r->status == SSP_RESULT_CONFLICT ? "conflict" : "error");
		if (r->code)
			ops_set_string(ops_obj_add(&rec, "code"), r->code);
		if (r->message)
			ops_set_string(ops_obj_add(&rec, "message"), r->message);
		if (r->status != SSP_RESULT_APPLIED)
		{
			v = ops_obj_add(&rec, "retryable");
			v->kind = SSP_OP_BOOLEAN;
			v->b = r->retryable;
		}
		ops_obj_done(&rec, &items[i]);
	}
	ops_obj_init_message(&res, "command");
	ops_set_string(ops_obj_add(&res, "operationId"), req->operation_id);
	ops_set_string(ops_obj_add(&res, "requestId"), req->request_id);
	ops_set_string(ops_obj_add(&res, "status"), status);
	if (o->has_seq)
	{
		v = ops_obj_add(&res, "commitSeq");
		v->kind = SSP_OP_NUMBER;
		v->num = (double) o->commit_seq;
	}
	v = ops_obj_add(&res, "results");
	v->kind = SSP_OP_ARRAY;
	v->count = (uint32) o->nrecords;
	v->items = items;
	ops_obj_done(&res, out);
}

static Jsonb *
run_command(Oid command, SyncRound *round, Jsonb *params)
{
	CommandReads reads = {round->schema, round->partition, round->allowed};
	Jsonb	   *volatile plan = NULL;
	bool		isnull;

	command_reads = &reads;
	PG_TRY();
	{
		Datum		r = call3(command, round->actor_id, round->partition, params, &isnull);

		if (!isnull)
			plan = DatumGetJsonbPCopy(r);
	}
	PG_FINALLY();
	{
		command_reads = NULL;
	}
	PG_END_TRY();
	return plan;
}

void
ops_command_run(const OpsRequest *req, const char *partition, const char *actor_id, SspOpValue *out)
{
	MemoryContext cxt = CurrentMemoryContext;
	Oid			authorize;
	Oid			command;
	StringInfoData cid;
	StringInfoData ccid;
	SyncRound  *round;
	Jsonb	   *params;
	Jsonb	   *stored;
	CommitOutcome outcome;
	char	   *identity;
	bool		isnull;
	Datum		ok;
	int64		touched;
	bool		cached = false;

	if (RecoveryInProgress())
		sync_raise("sync.schema_not_ready", "server schema is not ready for this request",
				   "{\"hotStandby\": true}");
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "syncular: SPI_connect failed");
	MemoryContextSwitchTo(cxt);	/* SPI_connect leaves its procedure context current */
	load_command(req->operation_id, &authorize, &command);

	/* the tuple identity (REMOTE.md §3), exactly as JSON.stringify writes it */
	initStringInfo(&cid);
	appendStringInfoString(&cid, "[\"remote-command\",");
	append_js_string(&cid, actor_id);
	appendStringInfoChar(&cid, ',');
	append_js_string(&cid, req->client_id);
	appendStringInfoChar(&cid, ']');
	initStringInfo(&ccid);
	appendStringInfoChar(&ccid, '[');
	append_js_string(&ccid, req->operation_id);
	appendStringInfoChar(&ccid, ',');
	append_js_string(&ccid, req->request_id);
	appendStringInfoChar(&ccid, ']');
	if (cid.len > 4 * SYNC_MAX_ID_BYTES || ccid.len > 4 * SYNC_MAX_ID_BYTES)
		sync_raise("operation.invalid_request", "the command identity is too long", NULL);

	round = palloc0(sizeof(SyncRound));
	round->schema = sync_schema_get();
	if (round->schema == NULL)
		sync_raise("sync.schema_not_ready", "server schema is not ready for this request", NULL);
	round->partition = partition;
	round->actor_id = actor_id;
	round->client_id = cid.data;
	round->wire_version = 2;	/* full-row upserts, last write wins without a base version */
	round->now_ms = sync_now_ms();
	round->out = palloc0(sizeof(SspBuf));
	ssp_buf_init(round->out);
	round->log_epoch = sync_storage_partition_epoch(partition, round->now_ms, true, &touched);
	sync_gate_check_entry(round);

	params = ops_value_to_jsonb(req->params ? req->params : &(SspOpValue) {.kind = SSP_OP_NULL});
	if (params == NULL)
		sync_raise("operation.invalid_request", "params cannot be given to the command (U+0000)", NULL);
	ok = call3(authorize, actor_id, partition, params, &isnull);
	if (isnull || !DatumGetBool(ok))
		sync_raise("operation.forbidden", "the authorize function denied the command", NULL);
	round->allowed = sync_scopes_resolve(round);
	if (round->allowed == NULL || round->allowed->failed)
		sync_raise("operation.forbidden", "scope resolution failed; the command is refused", NULL);

	/* the partition lock, then the serialized idempotency check */
	sync_storage_lock_partition(partition);
	stored = sync_storage_push_result_get(partition, cid.data, ccid.data);
	if (stored != NULL)
		cached = true;
	else
	{
		SspPushCommit commit;
		Jsonb	   *plan = run_command(command, round, params);

		memset(&commit, 0, sizeof(commit));
		plan_commit(round->schema, plan, ccid.data, &commit);
		sync_push_commit(round, &commit);
		stored = sync_storage_push_result_get(partition, cid.data, ccid.data);
	}
	if (stored == NULL || !push_outcome_from_json(stored, &outcome, &identity))
		sync_raise("sync.idempotency_cache_miss", "the stored command outcome cannot be read", NULL);
	command_response(req, outcome.status == SSP_PUSH_REJECTED ? "rejected" : cached ? "cached" : "applied",
					 &outcome, out);
	SPI_finish();				/* cxt, current at SPI_connect, is current again */
}

/*
 * syncular.operation_get_row(tbl text, row_id text) RETURNS jsonb: the authoritative row of the
 * running command's partition (REMOTE.md §3 getRow), NULL when absent or when the actor's
 * resolved write scopes do not cover it.  Only callable while a command function runs.
 */
PG_FUNCTION_INFO_V1(syncular_operation_get_row);

Datum
syncular_operation_get_row(PG_FUNCTION_ARGS)
{
	CommandReads *reads = command_reads;
	MemoryContext cxt = CurrentMemoryContext;
	char	   *table;
	int			ti;
	SyncStoredRow row;
	SyncRowScopes scopes;
	bool		found;

	if (reads == NULL)
		sync_raise("operation.invalid_request", "syncular.operation_get_row is only callable inside a command",
				   NULL);
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		PG_RETURN_NULL();
	table = text_to_cstring(PG_GETARG_TEXT_PP(0));
	ti = sync_schema_table_index(reads->schema, table);
	if (ti < 0)
		sync_raise("operation.invalid_request", "operation_get_row names a table that is not synced", NULL);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "syncular: SPI_connect failed");
	MemoryContextSwitchTo(cxt);		/* the row outlives SPI_finish */
	found = sync_storage_row_get(reads->schema, ti, reads->partition,
								 text_to_cstring(PG_GETARG_TEXT_PP(1)), &row);
	if (found && row.found)
	{
		sync_row_scopes_from_jsonb(row.scopes, &scopes);
		found = sync_scopes_authorize_write(reads->allowed, &reads->schema->tables[ti], &scopes);
	}
	else
		found = false;
	if (!found)
	{
		SPI_finish();
		PG_RETURN_NULL();
	}
	SPI_finish();
	PG_RETURN_DATUM(DirectFunctionCall2(syncular_decode_row, CStringGetTextDatum(table),
										PointerGetDatum(row.payload)));
}
