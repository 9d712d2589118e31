/*
 * entry.c — the one shape of a SQL entry point that answers an error instead of raising it
 * (syncular.handle_http, syncular.operations_http, syncular.operations_watch_rerun's reruns,
 * the segment downloads): the work runs in an internal subtransaction; an error rolls the
 * subtransaction back and is handed to the caller as its ErrorData, which the caller turns
 * into its answer (HTTP status and body, SPEC §10 error shape).  A cancel or a shutdown is
 * never an answer: it is re-thrown.
 */
#include "postgres.h"

#include "access/xact.h"
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
