/*
 * sql_api.c — the SQL entry points of the engine (thin PG_FUNCTION_INFO_V1 wrappers).
 *
 *   syncular.handle(request bytea, partition text, actor_id text) RETURNS bytea
 *   syncular.handle_http(request, partition, actor_id, content_type)
 *       RETURNS TABLE(status int, content_type text, body bytea)
 *   CALL syncular.sync(request, partition, actor_id, INOUT response bytea)
 *
 * Declarations and their documentation: src/sql/30_engine.sql.
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/htup_details.h"
#include "access/xact.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/memutils.h"
#include "utils/resowner.h"

#include "engine.h"
#include "stats.h"
#include "storage.h"

#define SYNC_CONTENT_TYPE "application/vnd.syncular.sync.v2"

static void
args_or_raise(FunctionCallInfo fcinfo)
{
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		sync_raise("sync.invalid_request", "request, partition and actor_id must not be NULL",
				   NULL);
	/* syncular.max_request_bytes, before the argument is detoasted or copied */
	sync_check_request_bytes(toast_raw_datum_size(PG_GETARG_DATUM(0)) - VARHDRSZ);
}

/*
 * One round, counted (stats.c): a round that raises counts as refused under its catalogue code,
 * then the error goes on to the caller unchanged.
 */
static bytea *
serve(bytea *request, const char *partition, const char *actor_id, bool nonatomic)
{
	bytea	   *volatile result = NULL;

	sync_stats_round_begin();
	PG_TRY();
	{
		result = sync_round_serve(request, partition, actor_id, nonatomic);
	}
	PG_CATCH();
	{
		sync_stats_round_failed();
		PG_RE_THROW();
	}
	PG_END_TRY();
	sync_stats_round_done(VARSIZE(result) - VARHDRSZ);
	return result;
}

PG_FUNCTION_INFO_V1(syncular_handle);

Datum
syncular_handle(PG_FUNCTION_ARGS)
{
	bytea	   *result;

	args_or_raise(fcinfo);
	result = serve(PG_GETARG_BYTEA_PP(0),
							  text_to_cstring(PG_GETARG_TEXT_PP(1)),
							  text_to_cstring(PG_GETARG_TEXT_PP(2)),
							  false);
	PG_RETURN_BYTEA_P(result);
}

PG_FUNCTION_INFO_V1(syncular_sync);

/* CALL syncular.sync(request, partition, actor_id, INOUT response): the procedure form. */
Datum
syncular_sync(PG_FUNCTION_ARGS)
{
	bool		atomic = true;
	bytea	   *result;
	TupleDesc	desc;
	char	   *partition;
	char	   *actor;

	if (fcinfo->context && IsA(fcinfo->context, CallContext))
		atomic = castNode(CallContext, fcinfo->context)->atomic;
	args_or_raise(fcinfo);
	partition = text_to_cstring(PG_GETARG_TEXT_PP(1));
	actor = text_to_cstring(PG_GETARG_TEXT_PP(2));
	if (!atomic)
	{
		/* the arguments must survive the commits made inside the round */
		MemoryContext old = MemoryContextSwitchTo(PortalContext);
		bytea	   *req = PG_GETARG_BYTEA_P_COPY(0);

		partition = pstrdup(partition);
		actor = pstrdup(actor);
		MemoryContextSwitchTo(old);
		result = serve(req, partition, actor, true);
	}
	else
		result = serve(PG_GETARG_BYTEA_PP(0), partition, actor, false);

	if (get_call_result_type(fcinfo, NULL, &desc) == TYPEFUNC_COMPOSITE)
	{
		Datum		values[1];
		bool		nulls[1] = {false};

		desc = BlessTupleDesc(desc);
		values[0] = PointerGetDatum(result);
		PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
	}
	PG_RETURN_BYTEA_P(result);
}

/* ---------------------------------------------------------------- handle_http */


/*
 * Whether text argument `argno` is the media type `expected` (case-insensitive, parameters after
 * ';' and surrounding blanks ignored); false for a missing or NULL argument.
 */
bool
sync_http_content_type_is(FunctionCallInfo fcinfo, int argno, const char *expected)
{
	char	   *ct;
	char	   *semi;
	char	   *start;
	char	   *end;

	if (PG_NARGS() <= argno || PG_ARGISNULL(argno))
		return false;
	ct = text_to_cstring(PG_GETARG_TEXT_PP(argno));
	semi = strchr(ct, ';');
	if (semi)
		*semi = '\0';
	start = ct;
	while (*start == ' ' || *start == '\t')
		start++;
	end = start + strlen(start);
	while (end > start && (end[-1] == ' ' || end[-1] == '\t'))
		*--end = '\0';
	return pg_strcasecmp(start, expected) == 0;
}

/* The 415 answer's body of an HTTP entry point given another content type (JSON). */
bytea *
sync_http_unsupported_type_body(void)
{
	return (bytea *) cstring_to_text(sync_http_error_body(sync_error_info("sync.invalid_request"),
														  "unsupported content type", NULL));
}

/* The one (status, content_type, body) row an HTTP entry point answers. */
void
sync_http_put_answer(FunctionCallInfo fcinfo, int status, const char *ctype, bytea *body)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};

	values[0] = Int32GetDatum(status);
	values[1] = CStringGetTextDatum(ctype);
	values[2] = PointerGetDatum(body);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/* handle_http's work (sync_entry_run): the round, its body in *body. */
typedef struct HttpRound
{
	FunctionCallInfo fcinfo;
	bytea	   *body;
} HttpRound;

static void
http_round(void *arg)
{
	HttpRound  *h = (HttpRound *) arg;
	FunctionCallInfo fcinfo = h->fcinfo;

	args_or_raise(fcinfo);
	h->body = serve(PG_GETARG_BYTEA_PP(0), text_to_cstring(PG_GETARG_TEXT_PP(1)),
					text_to_cstring(PG_GETARG_TEXT_PP(2)), false);
}

PG_FUNCTION_INFO_V1(syncular_handle_http);

Datum
syncular_handle_http(PG_FUNCTION_ARGS)
{
	int			status = 200;
	const char *ctype = SYNC_CONTENT_TYPE;
	bytea	   *body;

	InitMaterializedSRF(fcinfo, 0);
	if (!sync_http_content_type_is(fcinfo, 3, SYNC_CONTENT_TYPE))
	{
		status = 415;
		ctype = "application/json";
		body = sync_http_unsupported_type_body();
	}
	else
	{
		HttpRound	h = {fcinfo, NULL};
		ErrorData  *edata = sync_entry_run(http_round, &h);

		body = h.body;
		if (edata != NULL)
		{
			ctype = "application/json";
			body = sync_entry_http_error(edata, "sync round", &status);
		}
	}

	sync_http_put_answer(fcinfo, status, ctype, body);
	return (Datum) 0;
}
