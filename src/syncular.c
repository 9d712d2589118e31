/*
 * syncular.c — module magic and load-time setup (GUCs, codec allocator).
 */
#include "postgres.h"

#include <limits.h>

#include "fmgr.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "engine.h"
#include "rules.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

/* syncular.max_operations_per_request: total operations over every PUSH_COMMIT of a request. */
int			sync_max_operations_per_request = 500;

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

void
_PG_init(void)
{
	DefineCustomIntVariable("syncular.max_operations_per_request",
							"Maximum number of push operations in one sync request.",
							"Counted over every PUSH_COMMIT of the request; a request above the cap "
							"fails with sync.too_many_operations and nothing is applied.",
							&sync_max_operations_per_request,
							500, 1, INT_MAX,
							PGC_USERSET, 0,
							NULL, NULL, NULL);
	DefineCustomStringVariable("syncular.checkpoints",
							   "Backfill checkpoints this session declares (RFC 0007).",
							   "A JSON array of {partition, name, schemaVersion}. The serve gate lets a "
							   "session serve past a pending checkpoint only when it declares it.",
							   &sync_declared_checkpoints,
							   "",
							   PGC_USERSET, 0,
							   NULL, NULL, NULL);
	sync_references_define_gucs();
	sync_realtime_define_gucs();
	MarkGUCPrefixReserved("syncular");

	ssp_set_allocator(codec_malloc, codec_realloc, codec_free);
}
