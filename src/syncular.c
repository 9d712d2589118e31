/*
 * syncular.c — module magic and load-time setup (GUCs, codec allocator).
 */
#include "postgres.h"

#include "fmgr.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

void
_PG_init(void)
{
}
