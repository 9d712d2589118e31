/*
 * fence.c — the RFC 0007 writer fence (shared/reference/barrier-rfc0007.md, "Writer fence"): the
 * BEFORE INSERT row trigger of syncular.sync_commits (trigger sync_commits_writer_fence, function
 * syncular.syncular_writer_fence, 00_catalog.sql).
 *
 * It refuses a commit whose writer_version is NULL or below the partition's
 * sync_writer_fence.required_writer_version.  Every appended commit fires it, so it reads the
 * fence row (sync_storage_writer_fence_check / _read, storage_meta.c) with one probe of the
 * table's primary key in a fresh snapshot (what a statement of a volatile function would see)
 * instead of running a PL/pgSQL body and an SQL statement; the engine's direct insert of a
 * commit row runs the same check without the trigger call (storage_rowdirect.c).  The
 * refusal is the catalogue form: SQLSTATE P0001, message = the code, DETAIL
 * {"code": "sync.storage.writer_fence_rejected", "details": {"partition", "writerVersion",
 * "requiredWriterVersion"}} in jsonb's text form (the engine recognizes it as its own error).
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
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

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_BEFORE(td->tg_event) ||
		!TRIGGER_FIRED_FOR_ROW(td->tg_event) || !TRIGGER_FIRED_BY_INSERT(td->tg_event))
		elog(ERROR, "syncular_writer_fence: must be fired BEFORE INSERT FOR EACH ROW");
	desc = RelationGetDescr(td->tg_relation);
	partition = heap_getattr(td->tg_trigtuple, SPI_fnumber(desc, "partition"), desc,
							 &partition_null);
	writer = heap_getattr(td->tg_trigtuple, SPI_fnumber(desc, "writer_version"), desc,
						  &writer_null);
	sync_storage_writer_fence_check(partition, partition_null, writer, writer_null);
	return PointerGetDatum(td->tg_trigtuple);
}
