/*
 * backend_memory.c — syncular.malloc_trim_threshold: how much freed memory the C library keeps
 * in the backend instead of giving it back to the kernel.
 *
 * A round of many operations allocates a few MB in memory contexts (the decoded request, the
 * batched statements' arrays and tuplestores, the outcome) and frees them at its end.  glibc
 * gives the top of its heap back to the kernel once more than M_TRIM_THRESHOLD (128 kB) of it
 * is free, so the next round takes page faults on all of it again: a fifth of a 100-operation
 * push round's backend CPU (bench/README.md "Rounds of many operations: the C library's heap
 * trimming").  Keeping a few MB of the heap instead costs that much resident memory per
 * backend, at most; M_MMAP_THRESHOLD is set to the same value so that blocks up to that size
 * come from the heap rather than from a mapping made and unmapped per block.
 *
 * mallopt acts on the whole process: with shared_preload_libraries it is called in the
 * postmaster at start, and every backend inherits it; otherwise in each backend that loads the
 * library, and on every change of the setting.  Not glibc: the setting exists and does nothing.
 */
#include "postgres.h"

#include <limits.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "utils/guc.h"

#include "engine.h"

/* the setting's value, bytes; 0: the C library's own behaviour is left alone */
static int	malloc_trim_threshold = 4 * 1024 * 1024;

/* 32 MB: the largest M_MMAP_THRESHOLD glibc accepts on 64-bit (HEAP_MAX_SIZE / 2) */
#define TRIM_THRESHOLD_MAX (32 * 1024 * 1024)

static void
assign_trim_threshold(int newval, void *extra)
{
#ifdef __GLIBC__
	if (newval > 0)
	{
		mallopt(M_TRIM_THRESHOLD, newval);
		mallopt(M_MMAP_THRESHOLD, newval);
	}
#endif
}

void
sync_backend_memory_define_gucs(void)
{
	DefineCustomIntVariable("syncular.malloc_trim_threshold",
							"Freed memory the C library keeps in each backend instead of returning it to the kernel, in bytes.",
							"Sets glibc's M_TRIM_THRESHOLD and M_MMAP_THRESHOLD in the backend (with "
							"shared_preload_libraries: in the postmaster, for every backend), so that a "
							"round of many operations does not page-fault its memory in again each time. "
							"0 leaves the C library's defaults (128 kB, adjusted by it) as they are.",
							&malloc_trim_threshold,
							4 * 1024 * 1024, 0, TRIM_THRESHOLD_MAX,
							PGC_SUSET, GUC_UNIT_BYTE,
							NULL, assign_trim_threshold, NULL);
}
