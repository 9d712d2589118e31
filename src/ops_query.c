/*
 * ops_query.c — a registered query (REMOTE.md §2): load the registration, bind the request's
 * params by name to their positional parameters, authorize (scoped: every covered value
 * against the resolver's allowed scopes, fail closed; privileged: the authorize function), run
 * the partition-bound SQL (ops_bind.c) with at most maxRows + 1 rows, and read the partition's
 * maxCommitSeq in the same snapshot.  Result columns are normalized to their declared types.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"

#include "operations.h"
#include "storage.h"

typedef struct QueryReg
{
	char	   *bound_sql;
	int			nparams;
	char	  **pnames;
	OpsType    *ptypes;
	int			ncols;
	char	  **cnames;
	OpsType    *ctypes;
	bool	   *cnullable;
	bool		privileged;
	Oid			authorize;
	int			max_rows;
	Jsonb	   *coverage;
	Jsonb	   *syql;			/* SYQL statement variants (ops_syql.c), NULL for one statement */
} QueryReg;

static bool
jb_bool_default(JsonbContainer *c, const char *key, bool dflt)
{
	JsonbValue *v = getKeyJsonValueFromContainer(c, key, strlen(key), NULL);

	return (v && v->type == jbvBool) ? v->val.boolean : dflt;
}

/* The registration; raises operation.unknown when the id is not a registered query. */
static QueryReg *
load_query(const char *operation_id)
{
	QueryReg   *q = palloc0(sizeof(QueryReg));
	SyncOpsQueryRow row;
	Jsonb	   *params;
	Jsonb	   *cols;

	if (!sync_storage_ops_query(operation_id, &row))
		sync_raise("operation.unknown", "no query is registered under this operation id",
				   ops_details_id(operation_id));
	q->bound_sql = row.bound_sql;
	params = row.params;
	cols = row.columns;
	q->privileged = row.privileged;
	q->authorize = row.authorize;
	q->max_rows = row.max_rows;
	q->coverage = row.coverage;
	q->syql = row.syql;

	q->nparams = JsonContainerSize(&params->root);
	q->pnames = palloc0(sizeof(char *) * Max(q->nparams, 1));
	q->ptypes = palloc0(sizeof(OpsType) * Max(q->nparams, 1));
	for (int i = 0; i < q->nparams; i++)
	{
		JsonbValue *e = getIthJsonbValueFromContainer(&params->root, i);

		q->pnames[i] = ops_jstr(e->val.binary.data, "name");
		q->ptypes[i] = ops_type_from_name(ops_jstr(e->val.binary.data, "type"));
	}
	q->ncols = JsonContainerSize(&cols->root);
	q->cnames = palloc0(sizeof(char *) * Max(q->ncols, 1));
	q->ctypes = palloc0(sizeof(OpsType) * Max(q->ncols, 1));
	q->cnullable = palloc0(sizeof(bool) * Max(q->ncols, 1));
	for (int i = 0; i < q->ncols; i++)
	{
		JsonbValue *e = getIthJsonbValueFromContainer(&cols->root, i);

		q->cnames[i] = ops_jstr(e->val.binary.data, "name");
		q->ctypes[i] = ops_type_from_name(ops_jstr(e->val.binary.data, "type"));
		q->cnullable[i] = jb_bool_default(e->val.binary.data, "nullable", true);
	}
	return q;
}

/* Request params by name, in positional order; every declared one present, nothing else. */
static const SspOpValue **
bind_params(const QueryReg *q, const SspOpValue *params)
{
	const SspOpValue **by_pos = palloc0(sizeof(SspOpValue *) * Max(q->nparams, 1));

	if (params == NULL || params->kind == SSP_OP_NULL)
	{
		if (q->nparams > 0)
			sync_raise("operation.invalid_request", "the query needs params", NULL);
		return by_pos;
	}
	if (params->kind != SSP_OP_OBJECT)
		sync_raise("operation.invalid_request", "params must be an object", NULL);
	for (uint32 k = 0; k < params->count; k++)
	{
		int			i;

		for (i = 0; i < q->nparams; i++)
			if (strlen(q->pnames[i]) == params->keys[k].len &&
				memcmp(q->pnames[i], params->keys[k].ptr, params->keys[k].len) == 0)
				break;
		if (i == q->nparams)
			sync_raise("operation.invalid_request", "params carries a name the query does not declare",
					   NULL);
		by_pos[i] = &params->items[k];
	}
	for (int i = 0; i < q->nparams; i++)
		if (by_pos[i] == NULL)
			sync_raise("operation.invalid_request",
					   psprintf("param \"%s\" is missing", q->pnames[i]), NULL);
	return by_pos;
}

/* Scoped (§2.1): every covered value must be allowed to the actor; any doubt refuses. */
static void
authorize_scoped(const QueryReg *q, const SspOpValue **by_pos, SyncRound *round)
{
	SyncAllowed *allowed = sync_scopes_resolve(round);
	int			n = JsonContainerSize(&q->coverage->root);

	if (allowed == NULL || allowed->failed || n == 0)
		sync_raise("operation.forbidden", "scope resolution failed; the query is refused", NULL);
	for (int c = 0; c < n; c++)
	{
		JsonbValue *e = getIthJsonbValueFromContainer(&q->coverage->root, c);
		char	   *var = ops_jstr(e->val.binary.data, "variable");
		char	   *param = ops_jstr(e->val.binary.data, "param");
		char	   *value = NULL;

		for (int i = 0; i < q->nparams; i++)
			if (param != NULL && strcmp(q->pnames[i], param) == 0 && by_pos[i] != NULL)
				value = ops_scope_text(by_pos[i]);
		if (var == NULL || value == NULL || !sync_scopes_allows(allowed, var, value))
			sync_raise("operation.forbidden", "the actor may not read this scope",
					   psprintf("{\"variable\": \"%s\"}", var ? var : "?"));
	}
}

static void
authorize_privileged(const QueryReg *q, const char *partition, const char *actor_id,
					 const SspOpValue *params)
{
	Jsonb	   *pj = params ? ops_value_to_jsonb(params) : NULL;
	LOCAL_FCINFO(fcinfo, 3);
	FmgrInfo	flinfo;
	Datum		r;

	if (params != NULL && pj == NULL)
		sync_raise("operation.invalid_request", "params cannot be given to the authorize function",
				   NULL);
	fmgr_info(q->authorize, &flinfo);
	InitFunctionCallInfoData(*fcinfo, &flinfo, 3, InvalidOid, NULL, NULL);
	fcinfo->args[0].value = CStringGetTextDatum(actor_id);
	fcinfo->args[0].isnull = false;
	fcinfo->args[1].value = CStringGetTextDatum(partition);
	fcinfo->args[1].isnull = false;
	fcinfo->args[2].value = pj ? JsonbPGetDatum(pj) : (Datum) 0;
	fcinfo->args[2].isnull = (pj == NULL);
	r = FunctionCallInvoke(fcinfo);
	if (fcinfo->isnull || !DatumGetBool(r))
		sync_raise("operation.forbidden", "the authorize function denied the query", NULL);
}

/*
 * Kept plans of bound queries, per backend: the parameter types and the bound SQL text are the
 * key (a new registration is a new key; DDL on the app tables is the plan cache's own
 * invalidation).  A small ring: an
 * evicted plan is freed and prepared again on its next use.
 */
#define PLAN_CACHE_SIZE 64

typedef struct PlanSlot
{
	char	   *sql;			/* parameter types + bound SQL, TopMemoryContext */
	SPIPlanPtr	plan;
} PlanSlot;

static PlanSlot plan_cache[PLAN_CACHE_SIZE];
static int	plan_next;

static SPIPlanPtr
bound_plan(const QueryReg *q, Oid *types)
{
	MemoryContext caller = CurrentMemoryContext;
	StringInfoData key;
	PlanSlot   *slot;
	SPIPlanPtr	plan;

	/* the parameter types are part of the key: the same text may be registered with others */
	initStringInfo(&key);
	for (int i = 0; i <= q->nparams; i++)
		appendStringInfo(&key, "%u,", types[i]);
	appendStringInfoChar(&key, '\n');
	appendStringInfoString(&key, q->bound_sql);
	for (int i = 0; i < PLAN_CACHE_SIZE; i++)
		if (plan_cache[i].sql != NULL && strcmp(plan_cache[i].sql, key.data) == 0)
			return plan_cache[i].plan;
	plan = SPI_prepare(q->bound_sql, q->nparams + 1, types);
	MemoryContextSwitchTo(caller);	/* SPI returns in its procedure context */
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
	if (SPI_keepplan(plan) != 0)
		elog(ERROR, "SPI_keepplan failed");
	slot = &plan_cache[plan_next];
	plan_next = (plan_next + 1) % PLAN_CACHE_SIZE;
	if (slot->sql != NULL)
	{
		SPI_freeplan(slot->plan);
		pfree(slot->sql);
	}
	slot->sql = MemoryContextStrdup(TopMemoryContext, key.data);
	slot->plan = plan;
	return plan;
}

/* The SQL in a subtransaction: any failure of it is operation.query_failed (logged). */
static SPITupleTable *
execute_bound(const QueryReg *q, Datum *values, char *nulls, Oid *types, uint64 *nrows)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	SPITupleTable *volatile tt = NULL;
	volatile uint64 n = 0;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		SPIPlanPtr	plan = bound_plan(q, types);

		if (SPI_execute_plan(plan, values, nulls, true, (long) q->max_rows + 1) != SPI_OK_SELECT)
			elog(ERROR, "the registered query did not run as a SELECT");
		tt = SPI_tuptable;
		n = SPI_processed;
		sync_subxact_release(cxt, owner);
	}
	PG_CATCH();
	{
		ErrorData  *edata = sync_subxact_rollback(cxt, owner);

		if (edata->sqlerrcode == ERRCODE_QUERY_CANCELED || edata->sqlerrcode == ERRCODE_ADMIN_SHUTDOWN)
			ReThrowError(edata);
		ereport(LOG, (errmsg("syncular: registered query failed: %s", edata->message)));
		sync_raise("operation.query_failed", "the registered query failed", NULL);
	}
	PG_END_TRY();
	*nrows = n;
	return tt;
}

static void
query_failed_column(const char *column, const char *why)
{
	sync_raise("operation.query_failed", psprintf("result column \"%s\" %s", column, why), NULL);
}

/* The statement's parameters of a registered (not SYQL) query: its params, then the partition. */
static void
bind_registered(const QueryReg *q, const SspOpValue **by_pos, const char *partition,
				Datum **values, char **nulls, Oid **types)
{
	*values = palloc0(sizeof(Datum) * (q->nparams + 1));
	*nulls = palloc0(q->nparams + 1);
	*types = palloc0(sizeof(Oid) * (q->nparams + 1));
	for (int i = 0; i < q->nparams; i++)
	{
		bool		isnull;

		if (!ops_value_to_datum(by_pos[i], q->ptypes[i], &(*values)[i], &isnull))
			sync_raise("operation.invalid_request",
					   psprintf("param \"%s\" is not a value of its declared type", q->pnames[i]), NULL);
		(*nulls)[i] = isnull ? 'n' : ' ';
		(*types)[i] = ops_type_oid(q->ptypes[i]);
	}
	(*values)[q->nparams] = CStringGetTextDatum(partition);
	(*nulls)[q->nparams] = ' ';
	(*types)[q->nparams] = TEXTOID;
}

/* The round the authorization of a scoped query reads (the actor's scopes in the partition). */
static SyncRound *
query_round(const OpsRequest *req, const char *partition, const char *actor_id)
{
	SyncRound  *round = palloc0(sizeof(SyncRound));

	round->schema = sync_schema_get();
	if (round->schema == NULL)
		sync_raise("operation.storage_unsupported", "no app schema is registered", NULL);
	round->partition = partition;
	round->actor_id = actor_id;
	round->client_id = req->client_id;
	round->now_ms = sync_now_ms();
	return round;
}

/* The result rows as values (REMOTE.md §4), each column checked against its declaration. */
static SspOpValue *
result_rows(const QueryReg *q, SPITupleTable *tt, uint64 nrows)
{
	SspOpValue *rows = palloc0(sizeof(SspOpValue) * Max(nrows, 1));

	for (uint64 r = 0; r < nrows; r++)
	{
		OpsObject	row;

		ops_obj_init(&row);
		for (int c = 0; c < q->ncols; c++)
		{
			int			fno = SPI_fnumber(tt->tupdesc, q->cnames[c]);
			bool		isnull;
			Datum		d;
			SspOpValue *v = ops_obj_add(&row, q->cnames[c]);

			if (fno <= 0)
				query_failed_column(q->cnames[c], "is missing from the result");
			d = SPI_getbinval(tt->vals[r], tt->tupdesc, fno, &isnull);
			if (isnull)
			{
				if (!q->cnullable[c])
					query_failed_column(q->cnames[c], "is null but declared non-nullable");
				v->kind = SSP_OP_NULL;
			}
			else if (!ops_datum_to_value(d, SPI_gettypeid(tt->tupdesc, fno), q->ctypes[c], v))
				query_failed_column(q->cnames[c], "holds a value that does not fit its declared type");
		}
		ops_obj_done(&row, &rows[r]);
	}
	return rows;
}

/* The "query" message (REMOTE.md §2): operationId, rows, maxCommitSeq. */
static void
query_message(const char *operation_id, SspOpValue *rows, uint64 nrows, int64 max_seq,
			  SspOpValue *out)
{
	OpsObject	res;
	SspOpValue *v;

	ops_obj_init_message(&res, "query");
	ops_set_string(ops_obj_add(&res, "operationId"), operation_id);
	v = ops_obj_add(&res, "rows");
	v->kind = SSP_OP_ARRAY;
	v->count = (uint32) nrows;
	v->items = rows;
	v = ops_obj_add(&res, "maxCommitSeq");
	v->kind = SSP_OP_NUMBER;
	v->num = (double) max_seq;
	ops_obj_done(&res, out);
}

void
ops_query_run(const OpsRequest *req, const char *partition, const char *actor_id, Snapshot snap,
			  SspOpValue *out)
{
	MemoryContext cxt = CurrentMemoryContext;
	QueryReg   *q;
	const SspOpValue **by_pos;
	Datum	   *values;
	char	   *nulls;
	Oid		   *types;
	SPITupleTable *tt;
	uint64		nrows;
	int64		max_seq = 0;
	int64		horizon = 0;
	SyncRound  *round;
	char	   *exec_sql;
	int			exec_n;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "syncular: SPI_connect failed");
	MemoryContextSwitchTo(cxt);	/* SPI_connect leaves its procedure context current */
	q = load_query(req->operation_id);
	if (q->syql != NULL)
	{
		/* SYQL inputs: optional ones may be absent; the covered ones are looked up by name */
		by_pos = palloc0(sizeof(SspOpValue *) * Max(q->nparams, 1));
		for (int i = 0; i < q->nparams; i++)
			by_pos[i] = ssp_op_member(req->params, q->pnames[i]);
	}
	else
		by_pos = bind_params(q, req->params);
	round = query_round(req, partition, actor_id);

	if (q->syql != NULL)
	{
		OpsSyqlChoice choice;

		ops_syql_select(q->syql, req->params, partition, &choice);
		values = choice.values;
		nulls = choice.nulls;
		types = choice.types;
		exec_sql = choice.bound_sql;
		exec_n = choice.nbinds;
	}
	else
	{
		bind_registered(q, by_pos, partition, &values, &nulls, &types);
		exec_sql = q->bound_sql;
		exec_n = q->nparams;
	}

	if (q->privileged)
		authorize_privileged(q, partition, actor_id, req->params);
	else
		authorize_scoped(q, by_pos, round);

	/* the statement run: the registered one, or the chosen SYQL variant (bound_plan's key) */
	q->bound_sql = exec_sql;
	q->nparams = exec_n;

	/* the rows and maxCommitSeq in one snapshot (§2) */
	PushActiveSnapshot(snap ? snap : GetTransactionSnapshot());
	tt = execute_bound(q, values, nulls, types, &nrows);
	if (nrows > (uint64) q->max_rows)
	{
		PopActiveSnapshot();
		sync_raise("operation.result_too_large", "the query result is larger than its maxRows",
				   psprintf("{\"maxRows\": %d}", q->max_rows));
	}
	sync_storage_read_seqs(partition, &max_seq, &horizon);
	PopActiveSnapshot();

	query_message(req->operation_id, result_rows(q, tt, nrows), nrows, max_seq, out);
	SPI_finish();				/* cxt, current at SPI_connect, is current again */
}
