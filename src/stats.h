/*
 * stats.h — activity counters of the sync engine (syncular.stats, syncular.stats_tables).
 *
 * The counters live in shared memory, which exists only when the library is in
 * shared_preload_libraries; otherwise every call below is a no-op and the views say so.
 * A round's figures are gathered in backend memory and added to shared memory once, when the
 * round ends (sync_stats_round_done / sync_stats_round_failed): one lock round-trip per round.
 * The hooks outside a round (sync_stats_round_begin not called) count nothing.
 */
#ifndef SYNCULAR_STATS_H
#define SYNCULAR_STATS_H

#include "postgres.h"
#include "ssp.h"

typedef enum SyncStatsPhase
{
	SYNC_STATS_PHASE_PUSH,		/* the round's push commits (timed into the push histogram) */
	SYNC_STATS_PHASE_PULL		/* the round's pull sections (timed into the pull histogram) */
} SyncStatsPhase;

/* syncular.c: from _PG_init (installs the shared-memory hooks when preloaded) */
extern void sync_stats_init(void);

/* sql_api.c: around one round */
extern void sync_stats_round_begin(void);
extern void sync_stats_round_done(Size response_bytes);
extern void sync_stats_round_failed(void);	/* inside PG_CATCH, before the rethrow */

/* round.c: the round enters its push or pull phase */
extern void sync_stats_phase(SyncStatsPhase phase);

/* push_outcome.c: every PUSH_RESULT written (fresh or replayed); failures: its non-applied records */
extern void sync_stats_push_result(const SspPushCommit *commit, uint8 status);
extern void sync_stats_push_failure(const SspPushCommit *commit, int32 op_index,
									uint8 result_status, const char *code);

/* pull.c: a section starts; commits / bootstrap rows enter the response */
extern void sync_stats_section(const char *table, uint8 status, bool bootstrap);
extern void sync_stats_commit_served(const char *table, int nchanges);
extern void sync_stats_rows_served(const char *table, uint64 rows);

#endif
