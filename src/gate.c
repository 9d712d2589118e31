/*
 * gate.c — the RFC 0007 serve gate as the engine evaluates it
 * (shared/reference/barrier-rfc0007.md §4.4).
 *
 * The gate itself (one read of the stored schema version, the partition's log epoch and every
 * pending checkpoint, then the refusal order schema → checkpoint → epoch) lives in SQL,
 * syncular._serve_gate_check(partition, running_version, token) in src/sql/60_barrier.sql, so
 * the operator function syncular.serve_gate() and the engine share one definition.  Declarations
 * come from the session's `syncular.checkpoints` GUC.  Both functions are STABLE: their reads use
 * the snapshot of the statement that calls them, never a fresh one.
 *
 * Where the engine evaluates it:
 *   entry  after the partition is touched, before any planning, in a fresh snapshot; it records
 *          the gate token (stored schema version + the partition's log epoch) in the round;
 *   push   inside each push commit, right after the partition lock, in a fresh snapshot;
 *   pull   inside the ONE snapshot round.c pushes for every pull read, before any subscription
 *          is served: the gate and the pull data agree by construction, so a pull never serves
 *          a mixed result and no read-verify pass is needed (DESIGN.md decisions 5 and 13).
 * The push and pull checks also compare the token with the one recorded at entry: a round that
 * spans several snapshots (the procedure form, which commits between pushed commits, or any
 * READ COMMITTED round) and sees a schema bump or a log-epoch rotation committed meanwhile is
 * refused with kind `epoch`, details {"logEpochChanged":true} (schema and checkpoint refusals take
 * precedence, §4.2).  Every refusal raises sync.schema_not_ready (SQLSTATE 55000, HTTP 503).
 *
 * Segment expiry after a checkpoint (§9.1) is vacuous here by construction: this server never
 * publishes, hands out or serves stored segments.  Bootstrap pages travel inline (SEGMENT_INLINE
 * with SSG2 bytes built in the pull's snapshot); no SEGMENT_REF is ever written and there is no
 * segment download endpoint, so no segment can predate a checkpoint and `sync.segment_expired`
 * is never answered.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/memutils.h"

#include "engine.h"

static SPIPlanPtr gate_plan = NULL;

/*
 * Run syncular._serve_gate_check(partition, running_version, token) through SPI (the caller is
 * connected).  read_only = true evaluates the gate in the caller's active snapshot; false gives
 * the statement a fresh one.  `token` (JSON text or NULL) is compared with the gate's current
 * token.  Raises sync.schema_not_ready with the exact details of barrier-rfc0007.md §4.3 when the
 * gate refuses; otherwise returns the current token as JSON text, allocated in `cxt`.
 */
static char *
gate_check(SyncRound *round, const char *token, bool read_only, MemoryContext cxt)
{
	Datum		args[3];
	char		nulls[3] = {' ', ' ', ' '};
	char	   *result;

	if (gate_plan == NULL)
	{
		Oid			types[3] = {TEXTOID, INT4OID, TEXTOID};
		SPIPlanPtr	plan = SPI_prepare("SELECT syncular._serve_gate_check($1, $2, $3::jsonb)::text",
									   3, types);

		if (plan == NULL || SPI_keepplan(plan) != 0)
			elog(ERROR, "syncular: could not prepare the serve gate");
		gate_plan = plan;
	}
	args[0] = CStringGetTextDatum(round->partition);
	args[1] = Int32GetDatum(round->schema->version);
	if (token != NULL)
		args[2] = CStringGetTextDatum(token);
	else
	{
		args[2] = (Datum) 0;
		nulls[2] = 'n';
	}
	if (SPI_execute_plan(gate_plan, args, nulls, read_only, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "syncular: serve gate read failed");
	result = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	if (result == NULL)
		elog(ERROR, "syncular: serve gate returned no token");
	result = MemoryContextStrdup(cxt, result);
	SPI_freetuptable(SPI_tuptable);
	return result;
}

/*
 * sync_gate_check_entry — the entry gate: after the partition is touched and before any
 * planning (schema floor, epoch reset, scopes, pushes, pulls).  The epoch it checks against is
 * the one the round read when it touched the partition (round->log_epoch, the one the response
 * header carries); the token it returns is kept in round->gate_token (round's memory context)
 * for the push and pull checks.  Raises sync.schema_not_ready.
 */
void
sync_gate_check_entry(SyncRound *round)
{
	MemoryContext cxt = CurrentMemoryContext;
	StringInfoData t;

	initStringInfo(&t);
	appendStringInfoString(&t, "{\"logEpoch\": ");
	escape_json(&t, round->log_epoch);
	appendStringInfoChar(&t, '}');
	round->gate_token = gate_check(round, t.data, false, cxt);
	MemoryContextSwitchTo(cxt);
}

/*
 * sync_gate_check_push — the gate inside each push commit, right after the partition row lock
 * and before the locked idempotency re-check (§4.4 step 7).  A schema bump that committed
 * while this push waited for the lock makes the stored version newer than the schema this
 * round planned with: the commit is refused (nothing is persisted) instead of writing rows in
 * the old layout.  A log-epoch rotation committed since the entry gate refuses it too (kind
 * epoch): the commit was planned against the epoch the client sent.  Raises
 * sync.schema_not_ready.
 */
void
sync_gate_check_push(SyncRound *round)
{
	MemoryContext cxt = CurrentMemoryContext;

	(void) gate_check(round, round->gate_token, false, cxt);
	MemoryContextSwitchTo(cxt);
}

/*
 * sync_gate_check_pull — the gate in the pull's snapshot.  round.c calls it right after it
 * pushes the one snapshot every pull read uses and before any subscription is served; SPI runs
 * read-only, so the gate reads exactly what the pull reads.  Refusals: schema, checkpoint, then
 * epoch (the token differs from the entry's).  Raises sync.schema_not_ready.
 */
void
sync_gate_check_pull(SyncRound *round)
{
	MemoryContext cxt = CurrentMemoryContext;

	(void) gate_check(round, round->gate_token, true, cxt);
	MemoryContextSwitchTo(cxt);
}
