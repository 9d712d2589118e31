/*
 * storage_plan.c — the one way the storage layer prepares a statement it keeps for the
 * backend's life (SPI_prepare_cursor + SPI_keepplan; the plan cache re-plans it after DDL and
 * ANALYZE).  A leaf: every storage file calls it, it calls nothing of the extension.
 */
#include "postgres.h"

#include "executor/spi.h"
#include "utils/memutils.h"

#include "storage.h"

/*
 * Prepare and keep sql (nargs parameters of types).  cursor_opts: 0 leaves the choice between
 * custom and generic plans to the plan cache; CURSOR_OPT_GENERIC_PLAN plans generically from the
 * first call (key probes, whose best plan does not depend on the values).  The caller's memory
 * context is current again afterwards (SPI returns in its procedure context).  Raises when the
 * statement cannot be prepared or kept.
 */
SPIPlanPtr
sync_storage_keep_plan(const char *sql, int nargs, Oid *types, int cursor_opts)
{
	MemoryContext caller = CurrentMemoryContext;
	SPIPlanPtr	p = SPI_prepare_cursor(sql, nargs, types, cursor_opts);

	MemoryContextSwitchTo(caller);
	if (p == NULL)
		elog(ERROR, "syncular: SPI_prepare failed (%s): %s",
			 SPI_result_code_string(SPI_result), sql);
	if (SPI_keepplan(p) != 0)
		elog(ERROR, "syncular: SPI_keepplan failed");
	return p;
}
