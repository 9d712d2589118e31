/*
 * fence.c — the RFC 0007 writer fence (shared/reference/barrier-rfc0007.md, "Writer fence"): the
 * BEFORE INSERT row trigger of syncular.sync_commits (trigger sync_commits_writer_fence, function
 * syncular.syncular_writer_fence, 00_catalog.sql).
 *
 * It refuses a commit whose writer_version is NULL or below the partition's
 * sync_writer_fence.required_writer_version.  Every appended commit fires it, so it reads the
 * fence row (sync_storage_writer_fence_read, storage_meta.c) with one probe of the table's
 * primary key in a fresh snapshot (what a statement of
 * a volatile function would see) instead of running a PL/pgSQL body and an SQL statement.  The
 * refusal is the catalogue form: SQLSTATE P0001, message = the code, DETAIL
 * {"code": "sync.storage.writer_fence_rejected", "details": {"partition", "writerVersion",
 * "requiredWriterVersion"}} in jsonb's text form (the engine recognizes it as its own error).
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/rel.h"

#include "storage.h"

PG_FUNCTION_INFO_V1(syncular_writer_fence);

Datum
syncular_writer_fence(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	TupleDesc	desc;
	Datum		partition;
	Datum		writer;
	bool		partition_null;
	bool		writer_null;
	int32		required;

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_BEFORE(td->tg_event) ||
		!TRIGGER_FIRED_FOR_ROW(td->tg_event) || !TRIGGER_FIRED_BY_INSERT(td->tg_event))
		elog(ERROR, "syncular_writer_fence: must be fired BEFORE INSERT FOR EACH ROW");
	desc = RelationGetDescr(td->tg_relation);
	partition = heap_getattr(td->tg_trigtuple, SPI_fnumber(desc, "partition"), desc,
							 &partition_null);
	writer = heap_getattr(td->tg_trigtuple, SPI_fnumber(desc, "writer_version"), desc,
						  &writer_null);
	if (!partition_null && sync_storage_writer_fence_read(partition, &required) &&
		(writer_null || DatumGetInt64(writer) < (int64) required))
	{
		StringInfoData d;

		initStringInfo(&d);
		appendStringInfoString(&d, "{\"code\": \"sync.storage.writer_fence_rejected\", "
							   "\"details\": {\"partition\": ");
		escape_json(&d, TextDatumGetCString(partition));
		if (writer_null)
			appendStringInfoString(&d, ", \"writerVersion\": null");
		else
			appendStringInfo(&d, ", \"writerVersion\": " INT64_FORMAT, DatumGetInt64(writer));
		appendStringInfo(&d, ", \"requiredWriterVersion\": %d}}", required);
		ereport(ERROR,
				(errcode(ERRCODE_RAISE_EXCEPTION),
				 errmsg("sync.storage.writer_fence_rejected"),
				 errdetail_internal("%s", d.data)));
	}
	return PointerGetDatum(td->tg_trigtuple);
}
