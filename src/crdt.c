/*
 * crdt.c — CRDT column merges (SPEC §5.10): the merger registry lookup, the push seam and the
 * SQL entry syncular.crdt_merge.
 *
 * merge(stored, incoming) for a column's crdtType is, in this order:
 *   1. the function registered for that type in syncular.sync_crdt_mergers (set_crdt_merger),
 *      called as fn(stored bytea, incoming bytea) RETURNS bytea in an internal subtransaction;
 *      a registration whose function no longer exists counts as no merger;
 *   2. for `yjs-doc` when nothing is registered: the built-in merger (src/codec/yjs.c);
 *   3. otherwise no merger: sync.crdt_merge_failed "no CRDT merger registered".
 * A merger that raises (other than a server failure, re-thrown: sync_is_server_failure's
 * serialization, resources, cancel, system or internal error), returns NULL, or a malformed
 * Yjs update gives sync.crdt_merge_failed "CRDT merger failed" (§5.10.6); the reason goes to
 * the server log.
 * In a push that is a durable rejection of the commit at the operation (push.c, §6.4).
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/regproc.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"

#include "engine.h"
#include "storage.h"
#include "yjs.h"

#define BUILTIN_YJS "yjs-doc"
#define MSG_NO_MERGER "no CRDT merger registered"
#define MSG_FAILED "CRDT merger failed"


typedef enum MergeOutcome
{
	MERGE_OK,
	MERGE_NO_MERGER,
	MERGE_FAILED
} MergeOutcome;

/*
 * The registered merger of crdt_type: InvalidOid when none.  *registered tells a registration
 * whose function was dropped (found = false, registered = true) from no registration.
 */
static Oid
registered_merger(const char *crdt_type, bool *registered)
{
	Oid			fn;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "syncular: SPI_connect failed");
	fn = sync_storage_crdt_merger(crdt_type, registered);
	SPI_finish();				/* the caller's context is current again */
	return fn;
}

/*
 * fn(stored, incoming) in an internal subtransaction; NULL with *reason when it raised or
 * returned NULL.
 */
static bytea *
call_merger(Oid fn, bytea *stored, bytea *incoming, char **reason)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	bytea	   *volatile result = NULL;
	ErrorData  *volatile edata = NULL;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		FmgrInfo	flinfo;
		LOCAL_FCINFO(fcinfo, 2);
		Datum		d;

		CommandCounterIncrement();
		PushCopiedSnapshot(GetTransactionSnapshot());
		UpdateActiveSnapshotCommandId();
		fmgr_info(fn, &flinfo);
		if (flinfo.fn_strict && stored == NULL)
			elog(ERROR, "a STRICT merger cannot merge into a NULL value");
		InitFunctionCallInfoData(*fcinfo, &flinfo, 2, InvalidOid, NULL, NULL);
		fcinfo->args[0].value = PointerGetDatum(stored);
		fcinfo->args[0].isnull = stored == NULL;
		fcinfo->args[1].value = PointerGetDatum(incoming);
		fcinfo->args[1].isnull = false;
		d = FunctionCallInvoke(fcinfo);
		if (!fcinfo->isnull)
		{
			MemoryContext inner = MemoryContextSwitchTo(cxt);

			result = DatumGetByteaPCopy(d);
			MemoryContextSwitchTo(inner);
		}
		PopActiveSnapshot();
		sync_subxact_release(cxt, owner);
	}
	PG_CATCH();
	{
		edata = sync_subxact_rollback(cxt, owner);
	}
	PG_END_TRY();
	if (edata != NULL)
	{
		if (sync_is_server_failure(edata->sqlerrcode))
			ReThrowError(edata);
		*reason = psprintf("merger %s raised SQLSTATE %s: %s", format_procedure(fn),
						   unpack_sql_state(edata->sqlerrcode), edata->message);
		FreeErrorData(edata);
		return NULL;
	}
	if (result == NULL)
		*reason = psprintf("merger %s returned NULL", format_procedure(fn));
	return result;
}

/* The built-in yjs-doc merger; NULL with *reason for a malformed update. */
static bytea *
builtin_yjs(const bytea *stored, const bytea *incoming, char **reason)
{
	MemoryContext work = AllocSetContextCreate(CurrentMemoryContext, "syncular yjs merge",
											   ALLOCSET_DEFAULT_SIZES);
	MemoryContext old;
	SspBuf		out;
	SspError	err;
	bytea	   *result = NULL;
	bool		ok;

	old = MemoryContextSwitchTo(work);
	ssp_buf_init(&out);
	ok = yjs_merge(stored ? (const uint8 *) VARDATA_ANY(stored) : NULL,
				   stored ? VARSIZE_ANY_EXHDR(stored) : 0,
				   (const uint8 *) VARDATA_ANY(incoming), VARSIZE_ANY_EXHDR(incoming), &out, &err);
	MemoryContextSwitchTo(old);
	if (ok)
	{
		if (out.len > MaxAllocSize - VARHDRSZ)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("merged Yjs update is too large (%zu bytes)", out.len)));
		result = palloc(VARHDRSZ + out.len);
		SET_VARSIZE(result, VARHDRSZ + out.len);
		memcpy(VARDATA(result), out.data, out.len);
	}
	else
		*reason = pstrdup(err.message);
	MemoryContextDelete(work);
	return result;
}

/* merge(stored, incoming) for crdt_type: *merged on MERGE_OK, else *reason (for the log). */
static MergeOutcome
crdt_merge(const char *crdt_type, bytea *stored, bytea *incoming, bytea **merged, char **reason)
{
	bool		registered;
	Oid			fn = registered_merger(crdt_type, &registered);

	*merged = NULL;
	*reason = NULL;
	if (OidIsValid(fn))
		*merged = call_merger(fn, stored, incoming, reason);
	else if (!registered && strcmp(crdt_type, BUILTIN_YJS) == 0)
		*merged = builtin_yjs(stored, incoming, reason);
	else
	{
		*reason = registered ? "its registered function no longer exists" : "none registered";
		return MERGE_NO_MERGER;
	}
	return *merged != NULL ? MERGE_OK : MERGE_FAILED;
}

static bytea *
bytea_of(const SspBytes *b)
{
	bytea	   *v = palloc(VARHDRSZ + b->len);

	SET_VARSIZE(v, VARHDRSZ + b->len);
	if (b->len > 0)
		memcpy(VARDATA(v), b->ptr, b->len);
	return v;
}

/*
 * Push seam (engine.h): §5.10.3 rule 2, a present crdt column's new value is
 * merge(stored, incoming), stored NULL for an insert or a NULL column.
 */
bool
sync_crdt_merge(SyncRound *round, const SyncTable *table, int column, const SspValue *stored,
				const SspValue *incoming, SspValue *merged, SyncOpReject *reject)
{
	const char *crdt_type = table->columns[column].crdt_type;
	bytea	   *out;
	char	   *reason;
	MergeOutcome outcome;

	outcome = crdt_merge(crdt_type ? crdt_type : "",
						 stored->is_null ? NULL : bytea_of(&stored->bytes),
						 bytea_of(&incoming->bytes), &out, &reason);
	if (outcome != MERGE_OK)
	{
		/* the reason may quote client bytes or the merger's text: server log only */
		ereport(LOG,
				(errmsg("syncular: CRDT merge of %s.%s (crdtType \"%s\") failed: %s",
						table->name, table->columns[column].name, crdt_type ? crdt_type : "",
						reason)));
		reject->code = "sync.crdt_merge_failed";
		reject->message = outcome == MERGE_NO_MERGER ? MSG_NO_MERGER : MSG_FAILED;
		reject->retryable = false;
		reject->details_json = NULL;
		return false;
	}
	*merged = *incoming;
	merged->present = true;
	merged->is_null = false;
	merged->bytes.ptr = (const uint8 *) VARDATA(out);
	merged->bytes.len = VARSIZE(out) - VARHDRSZ;
	return true;
}

PG_FUNCTION_INFO_V1(syncular_crdt_merge);

/*
 * syncular.crdt_merge(crdt_type text, stored bytea, incoming bytea) RETURNS bytea: the merge a
 * push applies, callable from SQL (tests, backfills).  Raises sync.crdt_merge_failed.
 */
Datum
syncular_crdt_merge(PG_FUNCTION_ARGS)
{
	bytea	   *out;
	char	   *crdt_type;
	char	   *reason;
	MergeOutcome outcome;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(2))
		sync_raise("sync.invalid_request", "crdt_type and incoming must not be NULL", NULL);
	crdt_type = text_to_cstring(PG_GETARG_TEXT_PP(0));
	outcome = crdt_merge(crdt_type, PG_ARGISNULL(1) ? NULL : PG_GETARG_BYTEA_PP(1),
						 PG_GETARG_BYTEA_PP(2), &out, &reason);
	if (outcome != MERGE_OK)
	{
		StringInfoData d;

		/* the caller owns both values: the reason goes into the details */
		initStringInfo(&d);
		appendStringInfoString(&d, "{\"crdtType\": ");
		escape_json(&d, crdt_type);
		appendStringInfoString(&d, ", \"reason\": ");
		escape_json(&d, reason);
		appendStringInfoChar(&d, '}');
		sync_raise("sync.crdt_merge_failed",
				   outcome == MERGE_NO_MERGER ? MSG_NO_MERGER : MSG_FAILED, d.data);
	}
	PG_RETURN_BYTEA_P(out);
}
