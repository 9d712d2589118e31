/*
 * storage_rowdirect.h — rows written without a statement (storage_rowdirect.c), for
 * storage_rows.c and storage_append.c.  Internal to the storage layer.
 */
#ifndef SYNCULAR_STORAGE_ROWDIRECT_H
#define SYNCULAR_STORAGE_ROWDIRECT_H

#include "commands/trigger.h"
#include "utils/jsonb.h"
#include "utils/relcache.h"

#include "engine.h"

/* A row to write, by attribute (index attnum - 1) of the table: set says which the write gives. */
typedef struct SyncDirectRow
{
	Datum	   *values;
	bool	   *isnull;
	bool	   *set;
	int			key[2];			/* the attribute indexes of _sync_partition, _sync_row_id */
} SyncDirectRow;

extern bool sync_rowdirect_row(Relation rel, const SyncTable *t, const Datum *v, const char *n,
							   Datum scopes, SyncDirectRow *row);
extern bool sync_rowdirect_capture_only(const TriggerDesc *td);
/* the direct writes of rows of one synced table, begun and ended together (one row or several) */
typedef struct SyncDirectBatch SyncDirectBatch;
extern SyncDirectBatch *sync_rowdirect_begin(Relation rel);
extern void sync_rowdirect_end(SyncDirectBatch *b);
extern bool sync_rowdirect_update(SyncDirectBatch *b, const Datum *key, const SyncDirectRow *row);
extern bool sync_rowdirect_insert(SyncDirectBatch *b, const Datum *key, const SyncDirectRow *row,
								  Jsonb *scopes, Datum tbl);

extern bool sync_rowdirect_scope_pairs(Jsonb *scopes, List **vars, List **values);
extern bool sync_rowdirect_insertable(Relation rel, int n, const char *const *names,
									  const Oid *types, int *att);
extern void sync_rowdirect_insert_values(Relation rel, int n, const int *att, const Datum *vals,
										 const bool *nulls);
extern void sync_rowdirect_insert_rows(Relation rel, int n, const int *att, int nrows,
									   const Datum *vals, const bool *nulls);

#endif							/* SYNCULAR_STORAGE_ROWDIRECT_H */
