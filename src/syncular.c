/*
 * syncular.c — module magic and load-time setup (GUCs, codec allocator).
 */
#include "postgres.h"

#include <limits.h>

#include "fmgr.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "blobs.h"
#include "engine.h"
#include "leases.h"
#include "rules.h"
#include "stats.h"
#include "segments.h"
#include "capture.h"
#include "ddl_guard.h"
#include "wakeup.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

/* syncular.max_operations_per_request: total operations over every PUSH_COMMIT of a request. */
int			sync_max_operations_per_request = 500;

/*
 * Per-request resource limits (README "Security"; docs/limits.md).  PGC_SUSET: a superuser
 * or a role granted SET on the parameter may change them, a gateway role with EXECUTE only may
 * not.  Bytes are plain byte counts (GUC_UNIT_BYTE, so '8MB' is accepted).
 */
int			sync_max_request_bytes = 8 * 1024 * 1024;
int			sync_max_subscriptions_per_request = 100;
int			sync_max_response_bytes = 16 * 1024 * 1024;
int			sync_max_row_bytes = 1024 * 1024;
bool		sync_auto_create_partitions = true;

/* syncular.checkpoints: the backfill checkpoints this session declares (JSON array text). */
char	   *sync_declared_checkpoints = NULL;

/*
 * The codec allocates through these hooks: palloc in CurrentMemoryContext (huge allocations
 * allowed, the bytea limit is checked where a response is returned).  repalloc keeps the
 * chunk's own context, so a buffer whose first allocation happened in a long-lived context
 * stays there.  palloc never returns NULL: out of memory is an ERROR.
 */
static void *
codec_malloc(size_t size)
{
	return MemoryContextAllocHuge(CurrentMemoryContext, size);
}

static void *
codec_realloc(void *ptr, size_t size)
{
	if (ptr == NULL)
		return MemoryContextAllocHuge(CurrentMemoryContext, size);
	return repalloc_huge(ptr, size);
}

static void
codec_free(void *ptr)
{
	if (ptr != NULL)
		pfree(ptr);
}

/*
 * Every syncular.* setting is PGC_SUSET: the operation caps and the checkpoint declarations are
 * the operator's (a declaration lets a session serve past a pending backfill, RFC 0007 §4.4), so
 * a role that only has EXECUTE on the serving surface must not change them.  The operator lets a
 * role set one with GRANT SET ON PARAMETER (PostgreSQL 15) or sets it for the role with ALTER ROLE
 * ... SET.  A value a role without that privilege gave the placeholder before this library was
 * loaded is dropped with a WARNING when the variable is defined here.
 */
void
_PG_init(void)
{
	DefineCustomIntVariable("syncular.max_operations_per_request",
							"Maximum number of push operations in one sync request.",
							"Counted over every PUSH_COMMIT of the request; a request above the cap "
							"fails with sync.too_many_operations and nothing is applied.",
							&sync_max_operations_per_request,
							500, 1, INT_MAX,
							PGC_SUSET, 0,
							NULL, NULL, NULL);
	DefineCustomStringVariable("syncular.checkpoints",
							   "Backfill checkpoints this session declares (RFC 0007).",
							   "A JSON array of {partition, name, schemaVersion}. The serve gate lets a "
							   "session serve past a pending checkpoint only when it declares it.",
							   &sync_declared_checkpoints,
							   "",
							   PGC_SUSET, 0,
							   NULL, NULL, NULL);
	DefineCustomIntVariable("syncular.max_request_bytes",
							"Maximum size of one sync request, in bytes.",
							"Checked before the request is decoded; a larger request fails with "
							"sync.invalid_request (details maxRequestBytes, requestBytes).",
							&sync_max_request_bytes,
							8 * 1024 * 1024, 1024, (int) MaxAllocSize,
							PGC_SUSET, GUC_UNIT_BYTE,
							NULL, NULL, NULL);
	DefineCustomIntVariable("syncular.max_subscriptions_per_request",
							"Maximum number of SUBSCRIPTION frames in one sync request.",
							"A request with more fails with sync.invalid_request (details "
							"maxSubscriptions, subscriptions) before any subscription is read.",
							&sync_max_subscriptions_per_request,
							100, 1, 100000,
							PGC_SUSET, 0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("syncular.max_response_bytes",
							"Budget for the row data of one sync response, in bytes.",
							"Bootstrap pages and incremental commits stop at the budget: a "
							"bootstrap hands out its resume token, an incremental section its "
							"last delivered commit; the client continues in the next round.",
							&sync_max_response_bytes,
							16 * 1024 * 1024, 64 * 1024, (int) (MaxAllocSize / 2),
							PGC_SUSET, GUC_UNIT_BYTE,
							NULL, NULL, NULL);
	DefineCustomIntVariable("syncular.max_row_bytes",
							"Maximum size of one pushed row payload, in bytes.",
							"An operation whose payload (or the full row it produces) is larger "
							"rejects its commit durably with sync.invalid_request.",
							&sync_max_row_bytes,
							1024 * 1024, 1024, (int) (MaxAllocSize / 4),
							PGC_SUSET, GUC_UNIT_BYTE,
							NULL, NULL, NULL);
	DefineCustomBoolVariable("syncular.auto_create_partitions",
							 "Whether a round or push for a partition this database has never seen creates it.",
							 "on: the partition is created with a new log epoch on first sight. off: the "
							 "round fails with sync.storage.partition_unregistered (42704), so a mistyped "
							 "partition never starts a new, empty one.",
							 &sync_auto_create_partitions,
							 true,
							 PGC_SUSET, 0,
							 NULL, NULL, NULL);
	sync_clock_define_gucs();
	sync_backend_memory_define_gucs();
	sync_references_define_gucs();
	sync_realtime_define_gucs();
	sync_blobs_define_gucs();
	sync_leases_define_gucs();
	sync_segments_define_gucs();
	sync_segment_url_define_gucs();
	sync_wakeup_init();
	sync_capture_init();
	sync_ddl_guard_init();
	MarkGUCPrefixReserved("syncular");
	sync_stats_init();

	ssp_set_allocator(codec_malloc, codec_realloc, codec_free);
}
