/*
 * storage_rows.h — what storage_rows_many.c (several rows of a table) shares with
 * storage_rows.c (one row): the table's statements, the synced table's opening, the engine's
 * write, the direct write of one row and the text of the row statements.  Internal to the
 * storage layer.
 */
#ifndef SYNCULAR_STORAGE_ROWS_H
#define SYNCULAR_STORAGE_ROWS_H

#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "utils/relcache.h"

#include "storage_internal.h"
#include "storage_rowdirect.h"

/* the statements of one synced table, each built on first use (storage_rows.c's plan cache) */
typedef struct TablePlans
{
	Oid			relid;			/* the synced table, as last opened by a keyed read */
	Oid			nsp;
	SPIPlanPtr	upsert;
	SPIPlanPtr	del;
	SPIPlanPtr	prefetch;		/* many rows (+ tombstones) by id, one statement */
	SPIPlanPtr	upsert_many;	/* many rows' upserts, one statement (built on first use) */
	SPIPlanPtr	update;			/* a stored row with unchanged scopes (built on first use) */
	SPIPlanPtr	update_many;	/* many such rows, one statement (built on first use) */
	SPIPlanPtr	insert;			/* a row read as absent (built on first use) */
	SPIPlanPtr	insert_many;	/* many such rows, one statement (built on first use) */
} TablePlans;

extern TablePlans *sync_rows_table_plans(const SyncSchema *schema, int table_index);
/* the synced table with lock: by the OID a previous read found while it still names it */
extern Relation sync_rows_open_synced(const SyncTable *t, TablePlans *tp, LOCKMODE lock);
/* a statement that writes synced rows for the engine (the capture triggers skip it) */
extern uint64 sync_rows_engine_write(SPIPlanPtr plan, Datum *values, const char *nulls);
/* a stored row whose scopes stay, or one read as absent, by the direct write of batch b */
extern bool sync_rows_write_direct(SyncDirectBatch *b, Relation rel, const SyncTable *t,
								   const Datum *v, const char *n, const char *scopes_json,
								   SyncRowStored stored);
/* the single-row statements' parameters for one row */
extern void sync_rows_args(const SyncTable *t, const char *partition, const SyncRowWrite *w,
						   Datum **v, char **n);
extern void sync_rows_append_on_conflict_update(StringInfo sql, const SyncTable *t);
extern void sync_rows_append_insert_columns(StringInfo sql, const SyncTable *t);

#endif							/* SYNCULAR_STORAGE_ROWS_H */
