/*
 * storage_ops.c — the reads of remote-operation registrations (REMOTE.md §2, §3, §5):
 * sync_operation_commands (a command's authorize and command functions) and
 * sync_operation_queries (a query's bound statement, parameters, columns, mode, coverage and
 * SYQL variants; a watch's tables).  Registration itself is plpgsql (src/sql/); what a
 * registration means is decided by ops_command.c, ops_query.c and ops_watch.c.  Every function
 * needs an SPI connection and restores the caller's memory context, where its results are
 * allocated (copies: they outlive the statement).
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "storage.h"

/* A statement kept for the backend's life (the plan cache re-plans it after DDL). */
static SPIPlanPtr
keep_plan(SPIPlanPtr *plan, const char *sql, const char *what)
{
	Oid			argtypes[1] = {TEXTOID};

	if (*plan == NULL)
		*plan = sync_storage_keep_plan(sql, 1, argtypes, 0);
	return *plan;
}

/* The one registration row of operation_id (false: none), read-only; SPI_tuptable holds it. */
static bool
read_registration(SPIPlanPtr plan, const char *operation_id, const char *what)
{
	MemoryContext caller = CurrentMemoryContext;
	Datum		arg = CStringGetTextDatum(operation_id);
	int			rc = SPI_execute_plan(plan, &arg, NULL, true, 1);

	MemoryContextSwitchTo(caller);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "syncular: reading the %s failed", what);
	return SPI_processed == 1;
}

static Datum
col(int n, bool *isnull)
{
	return SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, n, isnull);
}

/* A command's functions; false when operation_id is not a registered command. */
bool
sync_storage_ops_command(const char *operation_id, Oid *authorize, Oid *command)
{
	static SPIPlanPtr plan = NULL;
	bool		isnull;

	keep_plan(&plan, "SELECT authorize::oid, command::oid FROM syncular.sync_operation_commands "
			  "WHERE operation_id = $1", "command registration");
	if (!read_registration(plan, operation_id, "command registration"))
		return false;
	*authorize = DatumGetObjectId(col(1, &isnull));
	*command = DatumGetObjectId(col(2, &isnull));
	return true;
}

/* A query's registration; false when operation_id is not a registered query. */
bool
sync_storage_ops_query(const char *operation_id, SyncOpsQueryRow *row)
{
	static SPIPlanPtr plan = NULL;
	bool		isnull;
	Datum		d;

	keep_plan(&plan, "SELECT bound_sql, params, columns, mode = 'privileged', "
			  "authorize::oid, max_rows, coverage, syql "
			  "FROM syncular.sync_operation_queries WHERE operation_id = $1",
			  "query registration");
	if (!read_registration(plan, operation_id, "query registration"))
		return false;
	row->bound_sql = TextDatumGetCString(col(1, &isnull));
	row->params = DatumGetJsonbPCopy(col(2, &isnull));
	row->columns = DatumGetJsonbPCopy(col(3, &isnull));
	row->privileged = DatumGetBool(col(4, &isnull));
	row->authorize = DatumGetObjectId(col(5, &isnull));
	if (isnull)
		row->authorize = InvalidOid;
	row->max_rows = DatumGetInt32(col(6, &isnull));
	row->coverage = DatumGetJsonbPCopy(col(7, &isnull));
	d = col(8, &isnull);
	row->syql = isnull ? NULL : DatumGetJsonbPCopy(d);
	return true;
}

/* What a watch rerun's filter needs of a query registration; false when there is none. */
bool
sync_storage_ops_watch(const char *operation_id, bool *privileged, Jsonb **tables,
					   Jsonb **coverage)
{
	static SPIPlanPtr plan = NULL;
	bool		isnull;

	keep_plan(&plan, "SELECT mode = 'privileged', to_jsonb(tables), coverage "
			  "FROM syncular.sync_operation_queries WHERE operation_id = $1",
			  "watch registration");
	if (!read_registration(plan, operation_id, "watch registration"))
		return false;
	*privileged = DatumGetBool(col(1, &isnull));
	*tables = DatumGetJsonbPCopy(col(2, &isnull));
	*coverage = DatumGetJsonbPCopy(col(3, &isnull));
	return true;
}
