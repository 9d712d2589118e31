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


/* handle_http's work (sync_entry_http): args, then the round. */
static bytea *
http_round(FunctionCallInfo fcinfo)
{
	args_or_raise(fcinfo);
	return serve(PG_GETARG_BYTEA_PP(0), text_to_cstring(PG_GETARG_TEXT_PP(1)),
				 text_to_cstring(PG_GETARG_TEXT_PP(2)), false);
}

/* handle_http's answer to a caught error: JSON, the catalogue's status or 500. */
static bytea *
http_round_error(ErrorData *edata, int *status, const char **ctype)
{
	*ctype = "application/json";
	return sync_entry_http_error(edata, "sync round", status);
}

PG_FUNCTION_INFO_V1(syncular_handle_http);

Datum
syncular_handle_http(PG_FUNCTION_ARGS)
{
	sync_entry_http(fcinfo, SYNC_CONTENT_TYPE, http_round, http_round_error);
	return (Datum) 0;
}
