/*
 * push_rows.c — the read-ahead of a commit's stored rows (one statement per table instead of one
 * or two per operation) and each operation's read of its stored row.
 */
#include "postgres.h"

#include "push_internal.h"

/* ---------------------------------------------------------------- read-ahead */

/* Row ids per read-ahead statement. */
#define PREFETCH_CHUNK 64

typedef struct PrefetchKey
{
	int			ti;
	const char *row_id;
	int32		op;
} PrefetchKey;

static int
prefetch_key_cmp(const void *a, const void *b)
{
	const PrefetchKey *x = a;
	const PrefetchKey *y = b;
	int			c;

	if (x->ti != y->ti)
		return x->ti < y->ti ? -1 : 1;
	c = strcmp(x->row_id, y->row_id);
	if (c != 0)
		return c;
	return x->op < y->op ? -1 : (x->op > y->op ? 1 : 0);
}

/* The table index of a client op, as apply_op resolves it (-1: unknown). */
int
push_op_table_index(const SyncSchema *schema, const SspPushOp *op)
{
	return (strlen(op->table.ptr) == op->table.len)
		? sync_schema_table_index((SyncSchema *) schema, op->table.ptr) : -1;
}

/*
 * Read every client op's stored row (and tombstone) ahead, one statement per table, instead of
 * one or two statements per op.  An entry answers what apply_op's own read would return at its
 * turn, so only ops no earlier write can have changed use one:
 *   - the first op naming a row (a later op on the same row reads it at its turn, seeing the
 *     commit's staged state);
 *   - only when no table of the commit has a row validator, trigger or rewrite rule (their SQL
 *     could write any row between the read-ahead and an op's turn).
 * Rows of operations references.c appends are read one by one, as before.  Results live in the
 * commit's memory context.
 */
void
push_prefetch_rows(PushState *st)
{
	MemoryContext cxt = CurrentMemoryContext;
	const SspPushCommit *commit = st->commit;
	SyncSchema *schema = st->schema;
	int			n = (int) commit->nops;
	PrefetchKey *keys;
	int			nkeys = 0;
	bool	   *seen;

	if (n == 0 || st->round->allowed == NULL || st->round->allowed->failed)
		return;					/* every op is refused before its read */
	keys = palloc(sizeof(PrefetchKey) * n);
	seen = palloc0(sizeof(bool) * Max(schema->ntables, 1));
	for (int i = 0; i < n; i++)
	{
		const SspPushOp *op = &commit->ops[i];
		int			ti = push_op_table_index(schema, op);

		if (ti < 0 || strlen(op->row_id.ptr) != op->row_id.len)
			continue;			/* refused before its read */
		if (!seen[ti])
		{
			bool		plain;

			seen[ti] = true;
			plain = sync_storage_table_plain(schema, ti) &&
				!sync_has_row_validator(schema, ti);
			MemoryContextSwitchTo(cxt);	/* the validator lookup may run SPI */
			if (!plain)
				return;
		}
		keys[nkeys].ti = ti;
		keys[nkeys].row_id = pnstrdup(op->row_id.ptr, op->row_id.len);
		keys[nkeys].op = i;
		nkeys++;
	}
	if (nkeys == 0)
		return;
	qsort(keys, nkeys, sizeof(PrefetchKey), prefetch_key_cmp);

	st->pre_valid = palloc0(sizeof(bool) * n);
	st->pre_rows = palloc0(sizeof(SyncStoredRow) * n);
	st->pre_tombs = palloc0(sizeof(SyncTombstone) * n);
	for (int k = 0; k < nkeys;)
	{
		int			ti = keys[k].ti;
		int			m = 0;
		const char **ids = palloc(sizeof(char *) * nkeys);
		int32	   *ops = palloc(sizeof(int32) * nkeys);
		SyncStoredRow *rows;
		SyncTombstone *tombs;

		for (; k < nkeys && keys[k].ti == ti; k++)
		{
			/* keys are sorted by (table, row, op): the first op of each row only */
			if (m > 0 && strcmp(ids[m - 1], keys[k].row_id) == 0)
				continue;
			ids[m] = keys[k].row_id;
			ops[m] = keys[k].op;
			m++;
		}
		rows = palloc(sizeof(SyncStoredRow) * m);
		tombs = palloc(sizeof(SyncTombstone) * m);
		/*
		 * PREFETCH_CHUNK ids per statement: SPI's result holds at most that many stored rows
		 * at a time next to their copies (which the commit keeps, as its own reads would)
		 */
		for (int j = 0; j < m; j += PREFETCH_CHUNK)
		{
			sync_storage_rows_prefetch(schema, ti, st->round->partition, Min(PREFETCH_CHUNK, m - j),
									   ids + j, rows + j, tombs + j);
			MemoryContextSwitchTo(cxt);
		}
		for (int j = 0; j < m; j++)
		{
			st->pre_valid[ops[j]] = true;
			st->pre_rows[ops[j]] = rows[j];
			st->pre_tombs[ops[j]] = tombs[j];
		}
	}
}

/*
 * Op i's stored row: its read-ahead entry when it has one (*tomb then points at the tombstone
 * read with it), else read now (*tomb NULL: read the tombstone now too when needed).
 */
void
push_op_row_get(PushState *st, int32 i, int ti, const char *row_id, SyncStoredRow *out,
		   SyncTombstone **tomb)
{
	if (st->pre_valid != NULL && st->pre_valid[i])
	{
		st->pre_valid[i] = false;	/* one use */
		*out = st->pre_rows[i];
		*tomb = &st->pre_tombs[i];
		return;
	}
	*tomb = NULL;
	sync_storage_row_get(st->schema, ti, st->round->partition, row_id, out);
}
