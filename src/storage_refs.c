/*
 * storage_refs.c — the declared-reference children statement (SPEC §6.11, push-and-pull.md
 * §2.7: the children of a parent row, for a cascade or a restrict), one per (child table,
 * reference), following the compiled schema like storage_rows.c's statements.  Conventions as
 * in storage.c.
 */
#include "postgres.h"

#include "storage_internal.h"

/* Per (child table, reference): the children statement, rebuilt with the schema cache. */
typedef struct RefPlans
{
	int			n;
	SPIPlanPtr *plans;			/* one per reference of the table */
} RefPlans;

static void
free_ref_plans(void *entry)
{
	RefPlans   *rp = entry;

	for (int k = 0; k < rp->n; k++)
		if (rp->plans[k])
			SPI_freeplan(rp->plans[k]);
	if (rp->plans)
		pfree(rp->plans);
}

static PlanCache ref_plan_cache = {.entry_size = sizeof(RefPlans), .free_entry = free_ref_plans};

/* The projection can answer the lookup: a materialized column compared in its SQL type. */
static bool
reference_projected(const SyncTable *t, int column)
{
	uint8		type = t->columns[column].type;

	return t->materialize &&
		(type == SSP_COL_STRING || type == SSP_COL_INTEGER || type == SSP_COL_BOOLEAN);
}

static SPIPlanPtr
reference_plan(const SyncSchema *schema, int child_index, int ref_index)
{
	const SyncTable *t = &schema->tables[child_index];
	const SyncReference *r = &t->references[ref_index];
	RefPlans   *rp = plan_cache_entry(&ref_plan_cache, schema, child_index);
	StringInfoData sql;

	if (rp->plans == NULL)
	{
		rp->plans =
			MemoryContextAllocZero(TopMemoryContext, sizeof(SPIPlanPtr) * Max(t->nreferences, 1));
		rp->n = t->nreferences;
	}
	if (rp->plans[ref_index] != NULL)
		return rp->plans[ref_index];

	initStringInfo(&sql);
	if (reference_projected(t, r->column_index))
		appendStringInfo(&sql,
						 "SELECT _sync_row_id FROM %s WHERE _sync_partition = $1 AND %s = $2::%s "
						 "ORDER BY _sync_row_id COLLATE \"C\" LIMIT $3",
						 t->qualified, quote_identifier(r->column),
						 column_sql_type(t->columns[r->column_index].type));
	else
		appendStringInfo(&sql,
						 "SELECT _sync_row_id, _sync_payload FROM %s WHERE _sync_partition = $1 "
						 "ORDER BY _sync_row_id COLLATE \"C\"",
						 t->qualified);
	rp->plans[ref_index] = prepare(sql.data, 3, (Oid[]) {TEXTOID, TEXTOID, INT8OID});
	return rp->plans[ref_index];
}

int
sync_storage_reference_children(const SyncSchema *schema, int child_index, int ref_index,
								const char *partition, const char *parent_row_id, long limit,
								char ***row_ids)
{
	const SyncTable *t = &schema->tables[child_index];
	const SyncReference *r = &t->references[ref_index];
	SPIPlanPtr	plan = reference_plan(schema, child_index, ref_index);
	MemoryContext caller = CurrentMemoryContext;
	Datum		v[3];
	char	  **ids;
	int			n = 0;
	size_t		plen = strlen(parent_row_id);
	Portal		portal;

	*row_ids = NULL;
	if (limit <= 0)
		return 0;
	v[0] = text_datum(partition);
	v[1] = text_datum(parent_row_id);
	v[2] = Int64GetDatum((int64) limit);
	if (reference_projected(t, r->column_index))
	{
		run_keep(plan, v, NULL, false, limit);
		ids = palloc0(sizeof(char *) * Max(SPI_processed, 1));
		for (uint64 i = 0; i < SPI_processed; i++)
			ids[n++] = get_text((int) i, 1);
		done();
		*row_ids = ids;
		return n;
	}

	/*
	 * Not projected: decode every row of the partition and render the column as a rowId
	 * (the cost is a scan of the child table's partition per deleted parent).
	 */
	ids = palloc0(sizeof(char *) * Min(limit, 64));
	{
		long		cap = Min(limit, 64);

		portal = SPI_cursor_open(NULL, plan, v, NULL, false);
		MemoryContextSwitchTo(caller);
		for (;;)
		{
			SPI_cursor_fetch(portal, true, 256);
			MemoryContextSwitchTo(caller);
			if (SPI_processed == 0)
			{
				done();
				break;
			}
			for (uint64 i = 0; i < SPI_processed && n < limit; i++)
			{
				bool		isnull;
				bytea	   *payload = get_varlena((int) i, 2, &isnull);
				SspValue   *vals;
				SspArena   *arena;
				SspError	err;
				SspBuf		b;
				bool		match = false;

				if (isnull)
					continue;
				arena = ssp_arena_new();
				vals = palloc0(sizeof(SspValue) * t->ncolumns);
				ssp_buf_init(&b);
				if (ssp_row_decode_full(arena, t->codec_columns, t->ncolumns,
										(const uint8 *) VARDATA_ANY(payload),
										VARSIZE_ANY_EXHDR(payload), vals, &err) &&
					ssp_render_pk(&t->codec_columns[r->column_index], &vals[r->column_index],
								  &b, &err))
					match = b.len == plen && memcmp(b.data, parent_row_id, plen) == 0;
				ssp_buf_free(&b);
				ssp_arena_free(arena);
				pfree(vals);
				pfree(payload);
				if (!match)
					continue;
				if (n >= cap)
				{
					cap = Min(limit, cap * 2);
					ids = repalloc(ids, sizeof(char *) * cap);
				}
				ids[n++] = get_text((int) i, 1);
			}
			done();
			if (n >= limit)
				break;
		}
		SPI_cursor_close(portal);
		MemoryContextSwitchTo(caller);
	}
	*row_ids = ids;
	return n;
}
