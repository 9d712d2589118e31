/*
 * partition_lock.c — syncular._partition_lock(partition text) RETURNS void: the partition lock
 * (docs/storage.md "The partition lock") for the SQL functions that must exclude the partition's
 * writers until their transaction ends: prune, rotate_log_epoch and the checkpoint activation
 * (through syncular._lock_partition), as pushes and SQL writes take it before their commit_seq.
 * Held to the end of the transaction; creates the partition row when missing.  Owner-only.
 * Errors: none of its own (a lock wait obeys lock_timeout and deadlock detection: SQLSTATE
 * 55P03 / 40P01).
 */
#include "postgres.h"

#include "executor/spi.h"
#include "fmgr.h"
#include "utils/builtins.h"

#include "storage.h"

PG_FUNCTION_INFO_V1(syncular_partition_lock);

Datum
syncular_partition_lock(PG_FUNCTION_ARGS)
{
	char	   *partition = text_to_cstring(PG_GETARG_TEXT_PP(0));

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "syncular._partition_lock: SPI_connect failed");
	sync_storage_lock_partition(partition);
	SPI_finish();
	PG_RETURN_VOID();
}
