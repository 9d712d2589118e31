/*
 * gate.c — the RFC 0007 serve gate as the engine evaluates it
 * (shared/reference/barrier-rfc0007.md §4.4).
 *
 * The gate itself (one read of the stored schema version, the partition's log epoch and every
 * pending checkpoint, then the refusal order schema → checkpoint) lives in SQL,
 * syncular._serve_gate_check(partition, running_version) in src/sql/60_barrier.sql, so the
 * operator function syncular.serve_gate() and the engine share one definition.  Declarations
 * come from the session's `syncular.checkpoints` GUC.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"

#include "engine.h"

static SPIPlanPtr gate_plan = NULL;

/*
 * Run syncular._serve_gate_check(partition, running_version) through SPI (caller is connected).
 * Raises sync.schema_not_ready (SQLSTATE 55000, DETAIL {"code", "details"} with the exact
 * details of barrier-rfc0007.md §4.3) when the gate refuses.
 */
static void
gate_check(SyncRound *round)
{
	Datum		args[2];

	if (gate_plan == NULL)
	{
		Oid			types[2] = {TEXTOID, INT4OID};
		SPIPlanPtr	plan = SPI_prepare("SELECT syncular._serve_gate_check($1, $2)", 2, types);

		if (plan == NULL || SPI_keepplan(plan) != 0)
			elog(ERROR, "syncular: could not prepare the serve gate");
		gate_plan = plan;
	}
	args[0] = CStringGetTextDatum(round->partition);
	args[1] = Int32GetDatum(round->schema->version);
	if (SPI_execute_plan(gate_plan, args, NULL, false, 1) != SPI_OK_SELECT)
		elog(ERROR, "syncular: serve gate read failed");
}

/*
 * sync_gate_check_entry — the entry gate: after the partition is touched and before any
 * planning (schema floor, epoch reset, scopes, pushes, pulls).  Raises sync.schema_not_ready.
 */
void
sync_gate_check_entry(SyncRound *round)
{
	gate_check(round);
}

/*
 * sync_gate_check_push — the gate inside each push commit, right after the partition row lock
 * and before the locked idempotency re-check (§4.4 step 7).  A schema bump that committed
 * while this push waited for the lock makes the stored version newer than the schema this
 * round planned with: the commit is refused (its subtransaction rolls back, nothing is
 * persisted) instead of writing rows in the old layout.  Raises sync.schema_not_ready.
 */
void
sync_gate_check_push(SyncRound *round)
{
	gate_check(round);
}
