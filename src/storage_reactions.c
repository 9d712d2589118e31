/*
 * storage_reactions.c — the engine's one write of syncular.sync_reactions: the rows of a new
 * commit's reaction records (push-and-pull.md §2.8; SPEC §6.9), validated by hook_records.c.
 * The claim / lease / complete life cycle stays in SQL (src/sql/70_reactions.sql): it is an
 * operator's worker API, not the round path.  Needs an SPI connection; restores the caller's
 * memory context.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "storage.h"

/*
 * Insert one pending row per record, in record order, created and available at now_ms; a row
 * whose idempotency key exists already (the same commit enqueued before) is kept as it is, so a
 * reaction is enqueued at most once.  Returns the number of rows inserted.
 */
int64
sync_storage_reactions_insert(const char *partition, const char *client_id,
							  const char *client_commit_id, int64 commit_seq, int64 now_ms,
							  int n, const SyncReactionRecord *recs)
{
	static SPIPlanPtr plan = NULL;
	MemoryContext caller = CurrentMemoryContext;
	int64		inserted = 0;

	if (plan == NULL)
	{
		Oid			types[10] = {TEXTOID, TEXTOID, TEXTOID, INT4OID, JSONBOID, TEXTOID, TEXTOID,
		INT8OID, INT8OID, INT4OID};
		plan = sync_storage_keep_plan(
								"INSERT INTO syncular.sync_reactions AS r"
								" (partition, idempotency_key, type, version, payload, source_client_id,"
								"  source_client_commit_id, source_commit_seq, created_at_ms,"
								"  available_at_ms, status, attempts, max_attempts)"
								" VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9, 'pending', 0, $10)"
								" ON CONFLICT ON CONSTRAINT sync_reactions_pkey DO NOTHING",
								10, types, 0);
	}
	for (int i = 0; i < n; i++)
	{
		Datum		v[10];
		int			rc;

		v[0] = CStringGetTextDatum(partition);
		v[1] = CStringGetTextDatum(recs[i].idempotency_key);
		v[2] = CStringGetTextDatum(recs[i].type);
		v[3] = Int32GetDatum(recs[i].version);
		v[4] = JsonbPGetDatum(recs[i].payload);
		v[5] = CStringGetTextDatum(client_id);
		v[6] = CStringGetTextDatum(client_commit_id);
		v[7] = Int64GetDatum(commit_seq);
		v[8] = Int64GetDatum(now_ms);
		v[9] = Int32GetDatum(recs[i].max_attempts);
		rc = SPI_execute_plan(plan, v, NULL, false, 0);
		MemoryContextSwitchTo(caller);
		if (rc != SPI_OK_INSERT)
			elog(ERROR, "syncular: reaction insert failed: %s", SPI_result_code_string(rc));
		inserted += SPI_processed;
	}
	return inserted;
}
