/*
 * realtime_ack.c — the client record's cursor from realtime acks (SPEC §8.2; docs/realtime.md §3):
 *
 *   syncular.realtime_ack(partition, actor_id, client_id, cursor, log_epoch) RETURNS boolean
 *   syncular.realtime_ack_many(partition, actor_ids, client_ids, cursors, log_epochs)
 *       RETURNS bigint
 *
 * The second is the first for a whole batch of one partition in one statement: a gateway
 * writes every pending ack of its sockets at once, so the database cost of acks does not grow
 * by a function call and a plan execution per socket.  Both only ever move an existing record's
 * cursor and activity time forward; the checks are the same (storage.c, storage_acks.c).
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "engine.h"
#include "realtime.h"
#include "storage.h"

static void
check_cursor(int64 cursor, int index)
{
	if (cursor < 0 || cursor > SSP_I64_SAFE_MAX)
		sync_raise("sync.invalid_request", "realtime: the ack cursor is out of range",
				   index < 0 ? psprintf("{\"cursor\": " INT64_FORMAT "}", cursor)
				   : psprintf("{\"index\": %d, \"cursor\": " INT64_FORMAT "}", index, cursor));
}

/* ---------------------------------------------------------------- realtime_ack */

/*
 * §8.2: one UPDATE of the existing record — cursor and activity time move to their maxima;
 * actor, wire version and subscriptions (a concurrent round's registration) are never written;
 * the record must belong to the actor and the partition's current log epoch must be the
 * session's, so a delayed ack from before a rotation cannot touch a newly registered client;
 * a cursor beyond the log is not recorded.  Never inserts.
 */
PG_FUNCTION_INFO_V1(syncular_realtime_ack);

Datum
syncular_realtime_ack(PG_FUNCTION_ARGS)
{
	char	   *partition = sync_required_text_arg(fcinfo, 0, "realtime", "partition");
	char	   *actor = sync_required_text_arg(fcinfo, 1, "realtime", "actor_id");
	char	   *client = sync_required_text_arg(fcinfo, 2, "realtime", "client_id");
	char	   *epoch = sync_required_text_arg(fcinfo, 4, "realtime", "log_epoch");
	int64		cursor;
	bool		updated;

	if (PG_ARGISNULL(3))
		sync_raise("sync.invalid_request", "realtime: an argument is NULL",
				   "{\"argument\": \"cursor\"}");
	cursor = PG_GETARG_INT64(3);
	check_cursor(cursor, -1);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "syncular realtime: SPI_connect failed");
	updated = sync_storage_client_ack(partition, actor, client, cursor, epoch, sync_now_ms());
	SPI_finish();
	PG_RETURN_BOOL(updated);
}

/* ---------------------------------------------------------------- realtime_ack_many */

/*
 * Argument n as a one-dimensional array without NULL elements (text elements non-empty), the
 * same checks realtime_ack makes of each argument, element by element; *len its length.
 */
static Datum
batch_arg(FunctionCallInfo fcinfo, int n, const char *name, Oid elemtype, Datum **elems,
		  int *len)
{
	ArrayType  *arr;
	bool	   *nulls;
	int16		typlen;
	bool		byval;
	char		align;

	if (PG_ARGISNULL(n))
		sync_raise("sync.invalid_request", "realtime: an argument is NULL",
				   psprintf("{\"argument\": \"%s\"}", name));
	arr = PG_GETARG_ARRAYTYPE_P(n);
	if (ARR_NDIM(arr) > 1)
		sync_raise("sync.invalid_request", "realtime: an ack batch argument must be a one-dimensional array",
				   psprintf("{\"argument\": \"%s\"}", name));
	get_typlenbyvalalign(elemtype, &typlen, &byval, &align);
	deconstruct_array(arr, elemtype, typlen, byval, align, elems, &nulls, len);
	for (int i = 0; i < *len; i++)
	{
		if (nulls[i])
			sync_raise("sync.invalid_request", "realtime: an ack batch element is NULL",
					   psprintf("{\"argument\": \"%s\", \"index\": %d}", name, i));
		if (elemtype == TEXTOID && VARSIZE_ANY_EXHDR(DatumGetPointer((*elems)[i])) == 0)
			sync_raise("sync.invalid_request", "realtime: an ack batch element is empty",
					   psprintf("{\"argument\": \"%s\", \"index\": %d}", name, i));
	}
	return PointerGetDatum(arr);
}

/*
 * §8.2 for a batch: element i of the four arrays is one socket's ack, exactly the arguments
 * of one realtime_ack call.  The whole batch is checked before anything is written (one bad
 * element rejects the call, as one bad argument rejects realtime_ack); then one statement
 * applies each client's highest acceptable ack.  Returns how many records moved.
 */
PG_FUNCTION_INFO_V1(syncular_realtime_ack_many);

Datum
syncular_realtime_ack_many(PG_FUNCTION_ARGS)
{
	static const char *const names[4] = {"actor_ids", "client_ids", "cursors", "log_epochs"};
	static const Oid types[4] = {TEXTOID, TEXTOID, INT8OID, TEXTOID};
	char	   *partition = sync_required_text_arg(fcinfo, 0, "realtime", "partition");
	Datum		arrays[4];
	Datum	   *elems[4];
	int			len[4];
	int64		updated;

	for (int a = 0; a < 4; a++)
		arrays[a] = batch_arg(fcinfo, a + 1, names[a], types[a], &elems[a], &len[a]);
	if (len[1] != len[0] || len[2] != len[0] || len[3] != len[0])
		sync_raise("sync.invalid_request", "realtime: the ack batch arrays differ in length",
				   psprintf("{\"actor_ids\": %d, \"client_ids\": %d, \"cursors\": %d, "
							"\"log_epochs\": %d}", len[0], len[1], len[2], len[3]));
	for (int i = 0; i < len[2]; i++)
		check_cursor(DatumGetInt64(elems[2][i]), i);
	if (len[0] == 0)
		PG_RETURN_INT64(0);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "syncular realtime: SPI_connect failed");
	updated = sync_storage_client_ack_many(partition, arrays[0], arrays[1], arrays[2], arrays[3],
										   sync_now_ms());
	SPI_finish();
	PG_RETURN_INT64(updated);
}
