/*
 * storage_acks.c — the realtime acks of many clients of one partition written by one statement
 * (SPEC §8.2; docs/realtime.md §3, syncular.realtime_ack_many).  The rules are
 * sync_storage_client_ack's (storage.c), applied to a whole batch at once: one plan execution
 * whatever the batch size, instead of one per client.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "storage.h"
#include "storage_partition.h"

/*
 * Per client of the batch, the highest of its acks that passes the single ack's checks (the
 * batch's log epoch is the partition's current one, the cursor within the log); then one UPDATE
 * of the records bound to that actor: cursor and activity time move to their maxima, nothing
 * else is written, no record is created.  The batch is sorted by client_id and joined by the
 * primary key (a nested loop over the sorted batch at any plausible batch size), so two
 * gateways acking the same clients lock their records in the same order.
 */
#define ACK_MANY_SQL \
	"UPDATE syncular.sync_clients c " \
	"   SET cursor = GREATEST(c.cursor, a.cursor), " \
	"       updated_at_ms = GREATEST(c.updated_at_ms, $6) " \
	"  FROM (SELECT u.client_id, u.actor_id, max(u.cursor) AS cursor " \
	"          FROM unnest($2::text[], $3::text[], $4::bigint[], $5::text[]) " \
	"               AS u(actor_id, client_id, cursor, log_epoch) " \
	"         WHERE u.log_epoch = (SELECT r.log_epoch FROM syncular.sync_partition_registry r " \
	"                               WHERE r.partition = $1) " \
	"           AND u.cursor <= " SYNC_NEWEST_SEQ_SQL \
	"         GROUP BY u.client_id, u.actor_id " \
	"         ORDER BY u.client_id) a " \
	" WHERE c.partition = $1 AND c.client_id = a.client_id AND c.actor_id = a.actor_id"

static SPIPlanPtr ack_many_plan = NULL;

/*
 * actors, clients, cursors, epochs: one-dimensional text[] / text[] / bigint[] / text[] of one
 * length without NULLs (the caller checks).  The caller is connected to SPI.  Returns the
 * number of client records updated.
 */
int64
sync_storage_client_ack_many(const char *partition, Datum actors, Datum clients, Datum cursors,
							 Datum epochs, int64 now_ms)
{
	MemoryContext caller = CurrentMemoryContext;
	Datum		v[6];
	int			rc;

	if (ack_many_plan == NULL)
	{
		Oid			types[6] = {TEXTOID, TEXTARRAYOID, TEXTARRAYOID, INT8ARRAYOID,
		TEXTARRAYOID, INT8OID};

		ack_many_plan = sync_storage_keep_plan(ACK_MANY_SQL, 6, types, CURSOR_OPT_GENERIC_PLAN);
	}
	v[0] = CStringGetTextDatum(partition);
	v[1] = actors;
	v[2] = clients;
	v[3] = cursors;
	v[4] = epochs;
	v[5] = Int64GetDatum(now_ms);
	rc = SPI_execute_plan(ack_many_plan, v, NULL, false, 0);
	MemoryContextSwitchTo(caller);
	if (rc != SPI_OK_UPDATE)
		elog(ERROR, "syncular: SPI_execute_plan failed: %s", SPI_result_code_string(rc));
	return (int64) SPI_processed;
}
