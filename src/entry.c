/*
 * entry.c — the one shape of a SQL entry point that answers an error instead of raising it
 * (syncular.handle_http, syncular.operations_http, syncular.operations_watch_rerun's reruns,
 * the segment downloads): the work runs in an internal subtransaction; an error rolls the
 * subtransaction back and is handed to the caller as its ErrorData, which the caller turns
 * into its answer (HTTP status and body, SPEC §10 error shape).  A cancel or a shutdown is
 * never an answer: it is re-thrown.  sync_entry_http is the whole shape of an HTTP entry point
 * (syncular.handle_http, syncular.operations_http): the content type check (415), the work, the
 * one answer row.
 */
#include "postgres.h"

#include "access/xact.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/resowner.h"

#include "engine.h"
#include "storage.h"

/*
 * Runs work(arg) in an internal subtransaction.  NULL when it returned (the subtransaction is
 * released and what work allocated in the caller's context survives), else the error, copied
 * into the caller's context, with the subtransaction rolled back.  Either way the caller's
 * memory context and resource owner are current on return.
 */
ErrorData *
sync_entry_run(SyncEntryWork work, void *arg)
{
	MemoryContext caller = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	ErrorData  *volatile edata = NULL;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(caller);
	PG_TRY();
	{
		work(arg);
		sync_subxact_release(caller, owner);
	}
	PG_CATCH();
	{
		edata = sync_subxact_rollback(caller, owner);
	}
	PG_END_TRY();
	if (edata != NULL && (edata->sqlerrcode == ERRCODE_QUERY_CANCELED ||
						  edata->sqlerrcode == ERRCODE_ADMIN_SHUTDOWN))
		ReThrowError(edata);
	return edata;
}

/*
 * The HTTP answer to an error sync_entry_run caught: a catalogue error is its status and JSON
 * body; anything else is logged ("syncular: <what> failed: ...") and answered 500
 * sync.internal_error, the cause staying in the server log.  Frees edata.
 */
bytea *
sync_entry_http_error(ErrorData *edata, const char *what, int *status)
{
	const SyncErrorInfo *e;
	char	   *details;
	bytea	   *body;

	e = sync_catalogue_error(edata, &details);
	if (e != NULL)
	{
		*status = e->http_status;
		body = (bytea *) cstring_to_text(sync_http_error_body(e, edata->message, details));
	}
	else
	{
		ereport(LOG,
				(errmsg("syncular: %s failed: %s", what, edata->message),
				 edata->detail ? errdetail_internal("%s", edata->detail) : 0,
				 errcode(edata->sqlerrcode)));
		*status = 500;
		body = (bytea *) cstring_to_text(sync_http_error_body(sync_error_info("sync.internal_error"),
															  "internal server error", NULL));
	}
	FreeErrorData(edata);
	return body;
}

/* ---------------------------------------------------------------- HTTP entry points */

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

/* The sync_entry_run work of sync_entry_http: the body of work(fcinfo). */
typedef struct HttpWork
{
	FunctionCallInfo fcinfo;
	SyncHttpWork work;
	bytea	   *body;
} HttpWork;

static void
http_work(void *arg)
{
	HttpWork   *h = (HttpWork *) arg;

	h->body = h->work(h->fcinfo);
}

/*
 * An HTTP entry point's one (status, content_type, body) row: 415 when argument 3 is not the
 * media type content_type; else work(fcinfo) under sync_entry_run, answered 200 content_type,
 * or, when it raised, on_error's body (which may set the status and the content type).
 */
void
sync_entry_http(FunctionCallInfo fcinfo, const char *content_type, SyncHttpWork work,
				SyncHttpError on_error)
{
	int			status = 200;
	const char *ctype = content_type;
	bytea	   *body;

	InitMaterializedSRF(fcinfo, 0);
	if (!sync_http_content_type_is(fcinfo, 3, content_type))
	{
		status = 415;
		ctype = "application/json";
		body = sync_http_unsupported_type_body();
	}
	else
	{
		HttpWork	h = {fcinfo, work, NULL};
		ErrorData  *edata = sync_entry_run(http_work, &h);

		body = edata ? on_error(edata, &status, &ctype) : h.body;
	}
	sync_http_put_answer(fcinfo, status, ctype, body);
}
