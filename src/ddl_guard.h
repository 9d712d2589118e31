/*
 * ddl_guard.h — DDL on a synced table outside ensure_schema is refused (ddl_guard.c).
 */
#ifndef SYNCULAR_DDL_GUARD_H
#define SYNCULAR_DDL_GUARD_H

/* from _PG_init: the setting syncular.allow_synced_table_ddl and the transaction callbacks */
extern void sync_ddl_guard_init(void);

#endif							/* SYNCULAR_DDL_GUARD_H */
