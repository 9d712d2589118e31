/*
 * clock.c — wall-clock milliseconds since the Unix epoch, the unit of every SSP2 timestamp
 * (createdAtMs, recordedAtMs, expiresAtMs; SPEC §3).  A leaf: every file that stamps time calls
 * down to it.
 */
#include "postgres.h"

#include "datatype/timestamp.h"
#include "utils/timestamp.h"

#include "engine.h"

int64
sync_now_ms(void)
{
	TimestampTz now = GetCurrentTimestamp();

	return (int64) (now / 1000) +
		(int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * 1000;
}
