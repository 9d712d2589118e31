/*
 * storage_internal.h — what storage.c (the sync_* tables), storage_append.c (the commit log's
 * writes), storage_rows.c and storage_refs.c (synced rows, declared references) share: the per-table plan cache and the SPI helpers, as static inline
 * functions (each file keeps its own copies of these; storage_rows.c calls storage.c only for
 * the internal subtransaction helpers sync_subxact_*).
 *
 * SPI switches CurrentMemoryContext to its procedure context after every call; run() restores
 * the caller's context so results are copied where the caller allocates.
 */
#ifndef SYNCULAR_STORAGE_INTERNAL_H
#define SYNCULAR_STORAGE_INTERNAL_H

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/syscache.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "access/htup_details.h"

#include "engine.h"
#include "rules.h"
#include "storage.h"

/*
 * Per-table statements that follow the compiled schema: one entry per schema table, in
 * TopMemoryContext, all dropped (free_entry frees one entry's plans) when the schema
 * generation changes.  The row statements and the reference statements each keep one.
 */
typedef struct PlanCache
{
	Size		entry_size;
	void		(*free_entry) (void *entry);
	char	   *entries;
	int			n;
	uint64		generation;
} PlanCache;

/* Entry table_index for the current schema generation (zeroed when new). */
static inline void *
plan_cache_entry(PlanCache *c, const SyncSchema *schema, int table_index)
{
	if (c->entries == NULL || c->generation != schema->generation)
	{
		if (c->entries != NULL)
		{
			for (int i = 0; i < c->n; i++)
				c->free_entry(c->entries + i * c->entry_size);
			pfree(c->entries);
		}
		c->entries = MemoryContextAllocZero(TopMemoryContext,
											c->entry_size * Max(schema->ntables, 1));
		c->n = schema->ntables;
		c->generation = schema->generation;
	}
	return c->entries + table_index * c->entry_size;
}

/*
 * Every statement here is a key probe or a keyed write whose best plan does not depend on the
 * parameter values: a generic plan from the start (CURSOR_OPT_GENERIC_PLAN), so no call pays
 * for planning (the plan cache's default plans the first five calls afresh and keeps doing so
 * while a custom plan looks cheaper than the generic one).  ANALYZE and DDL still re-plan it.
 */
static inline SPIPlanPtr
prepare(const char *sql, int nargs, Oid *types)
{
	return sync_storage_keep_plan(sql, nargs, types, CURSOR_OPT_GENERIC_PLAN);
}


/*
 * Execute a plan; restores the caller's memory context; raises on an SPI failure code.  The
 * result tuples stay in SPI_tuptable until done() (callers that read them) — statements whose
 * result is not read are released at once, so a long round does not pile up tuple tables in
 * the SPI procedure context.
 */
static inline int
run_keep(SPIPlanPtr plan, Datum *values, const char *nulls, bool read_only, long count)
{
	MemoryContext caller = CurrentMemoryContext;
	int			rc = SPI_execute_plan(plan, values, nulls, read_only, count);

	MemoryContextSwitchTo(caller);
	if (rc < 0)
		elog(ERROR, "syncular: SPI_execute_plan failed: %s", SPI_result_code_string(rc));
	return rc;
}

static inline void
done(void)
{
	if (SPI_tuptable != NULL)
	{
		SPI_freetuptable(SPI_tuptable);
		SPI_tuptable = NULL;
	}
}

/*
 * A lookup of at most one row.  true: the row is in SPI_tuptable for get_*(0, ...) and the
 * caller calls done() once it has read it; false: no row, nothing left to release.
 */
static inline bool
run_row(SPIPlanPtr plan, Datum *values, bool read_only)
{
	run_keep(plan, values, NULL, read_only, 1);
	if (SPI_processed == 1)
		return true;
	done();
	return false;
}

static inline uint64
run(SPIPlanPtr plan, Datum *values, const char *nulls, bool read_only, long count)
{
	uint64		n;

	run_keep(plan, values, nulls, read_only, count);
	n = SPI_processed;
	done();
	return n;
}

static inline Datum
text_datum(const char *s)
{
	return PointerGetDatum(cstring_to_text(s));
}

/*
 * A short-lived context for a write's argument datums (copies of row payloads and values):
 * deleted right after the statement, so a commit of many large rows does not keep a copy of
 * each until it ends.
 */
static inline MemoryContext
scratch_begin(void)
{
	return MemoryContextSwitchTo(AllocSetContextCreate(CurrentMemoryContext, "syncular write args",
													   ALLOCSET_DEFAULT_SIZES));
}

static inline void
scratch_end(MemoryContext caller)
{
	MemoryContext scratch = MemoryContextSwitchTo(caller);

	MemoryContextDelete(scratch);
}

/* Copy a varlena result column out of the SPI tuple, detoasted, in the current context. */
static inline void *
get_varlena(int row, int col, bool *isnull)
{
	Datum		d = SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, col, isnull);

	if (*isnull)
		return NULL;
	return PG_DETOAST_DATUM_COPY(d);
}

static inline int64
get_int8(int row, int col, bool *isnull)
{
	Datum		d = SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, col, isnull);

	return *isnull ? 0 : DatumGetInt64(d);
}

static inline char *
get_text(int row, int col)
{
	bool		isnull;
	text	   *t = get_varlena(row, col, &isnull);

	return isnull ? NULL : text_to_cstring(t);
}

static inline bytea *
make_bytea(const uint8 *p, size_t len)
{
	bytea	   *b = palloc(VARHDRSZ + len);

	SET_VARSIZE(b, VARHDRSZ + len);
	if (len > 0)
		memcpy(VARDATA(b), p, len);
	return b;
}

/*
 * The jsonb of scopes text json (jsonb_in, as a $n::jsonb cast makes it), for the elements of a
 * many-row statement's jsonb[] parameter: when json equals the previous element's text prev_json
 * (most rows of a commit share their scopes: one list, one owner), the previous value prev is
 * shared instead of parsing the same text again.
 */
static inline Datum
scopes_jsonb(const char *json, const char *prev_json, Datum prev)
{
	if (prev_json != NULL && strcmp(json, prev_json) == 0)
		return prev;
	return DirectFunctionCall1(jsonb_in, CStringGetDatum(json));
}

/* ---------------------------------------------------------------- column types */

static inline const char *
column_sql_type(uint8 type)
{
	switch (type)
	{
		case SSP_COL_STRING:
		case SSP_COL_BLOB_REF:
			return "text";
		case SSP_COL_INTEGER:
			return "int8";
		case SSP_COL_FLOAT:
			return "float8";
		case SSP_COL_BOOLEAN:
			return "bool";
		case SSP_COL_JSON:
			return "jsonb";
		default:
			return "bytea";
	}
}

static inline Oid
column_type_oid(uint8 type)
{
	switch (type)
	{
		case SSP_COL_STRING:
		case SSP_COL_BLOB_REF:
			return TEXTOID;
		case SSP_COL_INTEGER:
			return INT8OID;
		case SSP_COL_FLOAT:
			return FLOAT8OID;
		case SSP_COL_BOOLEAN:
			return BOOLOID;
		case SSP_COL_JSON:
			return JSONBOID;
		default:
			return BYTEAOID;
	}
}

/* storage_values.c */
extern Datum sync_storage_column_datum(const SyncColumn *c, const SspValue *val, bool *isnull);

#endif							/* SYNCULAR_STORAGE_INTERNAL_H */

/*
 * A catalog from before 0.6.0 (library updated, ALTER EXTENSION pending): sync_commits has no
 * result column, so results go to sync_push_results (storage.c; used by storage_append.c).
 */
extern bool sync_storage_log_before_06(void);
extern bool sync_storage_log_inline(void);

