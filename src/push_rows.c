/*
 * push_rows.c — the read-ahead of a commit's stored rows (one statement per table instead of one
 * or two per operation), each operation's read of its stored row, and the row-write batch.
 *
 * The row-write batch.  While the client operations are applied (st->batching), the upserts of
 * a batchable table are deferred and written per table in array statements
 * (sync_storage_rows_upsert: one plain update of the stored rows whose scopes stay, one upsert of
 * the others) instead of one statement per operation.  A table is batchable when
 * nothing can observe its rows between two operations: no trigger or rewrite rule (including
 * foreign keys and deferrable constraints, whose checks are triggers), no row validator, no
 * blob_ref column (its blob references are written with the row).  The batch is flushed before
 * anything that could observe or change what it holds:
 *   - an operation's read of a row the batch holds (a second write to the same row);
 *   - a row validator or CRDT merger (host SQL that may read any table), a delete, and the
 *     write of a row of a table that is not batchable (its triggers may read any table);
 *   - a rejected operation, the end of the client operations (before declared references, the
 *     whole-commit validator and the reaction planner), and SYNC_ROW_BATCH_MAX rows.
 * A flush runs in an internal subtransaction.  When it fails, that subtransaction is rolled
 * back and the deferred writes run again one statement each, in operation order, each charged
 * to its own operation (st->writing_op): the first failing write raises exactly the error the
 * unbatched path would have raised at that operation, so the outcome (a class 23 error is the
 * durable sync.constraint_violation at that opIndex) is the same.  A server failure (SQLSTATE
 * class 40, 53, 57, 58, XX) or a class 42 error is not replayed: it propagates as it would
 * from a single write.
 */
#include "postgres.h"

#include "access/xact.h"
#include "utils/memutils.h"
#include "utils/resowner.h"

#include "push_internal.h"

/* Deferred row writes at most per flush. */
#define SYNC_ROW_BATCH_MAX 1000

static bool pending_row(const PushState *st, int ti, const char *row_id);

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
	const SspPushCommit *commit = st->commit;
	SyncSchema *schema = st->schema;
	int			n = (int) commit->nops;
	PrefetchKey *keys;
	int			nkeys = 0;
	bool	   *seen;

	if (n == 0 || st->round->allowed == NULL || st->round->allowed->failed)
		return;					/* every op is refused before its read */
	/*
	 * one operation: its own read (the row by key; the tombstone only when the row is absent)
	 * is the cheaper statement, and an update of a stored row needs no second one
	 */
	if (n == 1)
		return;
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
	if (pending_row(st, ti, row_id))
		push_rows_flush(st);	/* the read sees the commit's earlier write */
	sync_storage_row_get(st->schema, ti, st->round->partition, row_id, out);
}

/* ---------------------------------------------------------------- the row-write batch */

/* Whether upserts of table ti may be deferred (see the head of this file). */
bool
push_rows_batchable(PushState *st, int ti)
{
	if (!st->batching)
		return false;
	if (st->batchable == NULL)
		st->batchable = palloc0(sizeof(int8) * Max(st->schema->ntables, 1));
	if (st->batchable[ti] == 0)
	{
		bool		ok = !push_table_has_blob_refs(&st->schema->tables[ti]) &&
			sync_storage_table_plain(st->schema, ti) &&
			!sync_has_row_validator(st->schema, ti);

		st->batchable[ti] = ok ? 1 : -1;
	}
	return st->batchable[ti] > 0;
}

/* Whether the batch holds a write of row row_id of table ti. */
static bool
pending_row(const PushState *st, int ti, const char *row_id)
{
	for (int k = 0; k < st->npending; k++)
		if (st->pending[k].ti == ti && strcmp(st->pending[k].w.row_id, row_id) == 0)
			return true;
	return false;
}

/*
 * Defer the upsert w of op_index (a batchable table; the caller keeps w's pointers alive until
 * the commit ends).  A second write to a row the batch holds flushes it first.
 */
void
push_rows_queue(PushState *st, int32 op_index, int ti, const SyncRowWrite *w)
{
	PendingWrite *p;

	if (pending_row(st, ti, w->row_id) || st->npending >= SYNC_ROW_BATCH_MAX)
		push_rows_flush(st);
	if (st->npending >= st->maxpending)
	{
		st->maxpending = Max(16, st->maxpending * 2);
		st->pending = st->pending
			? repalloc(st->pending, sizeof(PendingWrite) * st->maxpending)
			: palloc(sizeof(PendingWrite) * st->maxpending);
	}
	p = &st->pending[st->npending++];
	p->op_index = op_index;
	p->ti = ti;
	p->w = *w;
}

/* One deferred write as its own statement, charged to its operation. */
static void
write_one(PushState *st, const PendingWrite *p)
{
	st->writing_op = p->op_index;
	sync_storage_row_upsert(st->schema, p->ti, st->round->partition, p->w.row_id,
							p->w.server_version, p->w.scopes_json, p->w.payload,
							p->w.payload_len, p->w.column_versions, p->w.column_versions_len,
							p->w.values, p->w.stored);
	st->writing_op = -1;
}

/* Each table's deferred writes, one call per table (in order of first appearance). */
static void
write_batches(PushState *st)
{
	bool	   *done = palloc0(sizeof(bool) * st->npending);
	SyncRowWrite *rows = palloc(sizeof(SyncRowWrite) * st->npending);

	for (int k = 0; k < st->npending; k++)
	{
		int			ti = st->pending[k].ti;
		int			n = 0;

		if (done[k])
			continue;
		for (int j = k; j < st->npending; j++)
			if (!done[j] && st->pending[j].ti == ti)
			{
				rows[n++] = st->pending[j].w;
				done[j] = true;
			}
		sync_storage_rows_upsert(st->schema, ti, st->round->partition, n, rows);
	}
	pfree(rows);
	pfree(done);
}

/* Write every deferred row (see the head of this file); the batch is empty afterwards. */
void
push_rows_flush(PushState *st)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	volatile bool failed = false;

	if (st->npending == 0)
		return;
	if (st->npending == 1)
	{
		/* one write: the statement it would have had anyway, no subtransaction */
		write_one(st, &st->pending[0]);
		st->npending = 0;
		return;
	}
	BeginInternalSubTransaction(NULL);
	/* BeginInternalSubTransaction made the subtransaction's context current: back to ours */
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		write_batches(st);
		sync_subxact_release(cxt, owner);
	}
	PG_CATCH();
	{
		ErrorData  *edata = sync_subxact_rollback(cxt, owner);
		int			cls = ERRCODE_TO_CATEGORY(edata->sqlerrcode);

		/*
		 * a server failure is not a fact about one operation: as on the op-by-op path; nor is
		 * class 42 (a statement that cannot run: privileges, or a defect of the batched
		 * statement, which must not hide behind the replay)
		 */
		if (cls == ERRCODE_SYNTAX_ERROR_OR_ACCESS_RULE_VIOLATION ||
			cls == ERRCODE_TRANSACTION_ROLLBACK || cls == ERRCODE_INSUFFICIENT_RESOURCES ||
			cls == ERRCODE_OPERATOR_INTERVENTION || cls == ERRCODE_SYSTEM_ERROR ||
			cls == ERRCODE_INTERNAL_ERROR)
			ReThrowError(edata);
		ereport(DEBUG1,
				(errmsg_internal("syncular: row batch of %d writes failed (SQLSTATE %s), written again one by one: %s",
								 st->npending, unpack_sql_state(edata->sqlerrcode),
								 edata->message)));
		FreeErrorData(edata);
		failed = true;
	}
	PG_END_TRY();
	if (failed)
		for (int k = 0; k < st->npending; k++)
			write_one(st, &st->pending[k]);
	st->npending = 0;
}

