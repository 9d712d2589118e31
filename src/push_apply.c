/*
 * push_apply.c — one operation of a push commit (push-and-pull.md §2.3 with this project's
 * decisions; the row validator runs before each row write, hooks.c): the common steps, then
 * a delete, or an upsert decoded and applied as an update or an insert; the conflict step of an
 * upsert is push_conflict.c.  Also the operations declared references append: the row writer
 * push_row_writer (rules.h SyncRowWriter) that push.c passes to references.c.
 * A SQLSTATE class 23 error raised by a row write is charged to st->writing_op by push.c.
 */
#include "postgres.h"

#include "push_internal.h"
#include "rules.h"

static void
add_change(PushState *st, const char *table, const char *row_id, int16 op, bool has_version,
		   int64 version, char *scopes_json, uint8 *payload, size_t payload_len)
{
	PendingChange *c;

	if (st->nchanges >= st->maxchanges)
	{
		st->maxchanges = Max(8, st->maxchanges * 2);
		st->changes = st->changes
			? repalloc(st->changes, sizeof(PendingChange) * st->maxchanges)
			: palloc(sizeof(PendingChange) * st->maxchanges);
	}
	c = &st->changes[st->nchanges++];
	c->table = table;
	c->row_id = row_id;
	c->op = op;
	c->has_version = has_version;
	c->version = version;
	c->scopes_json = scopes_json;
	c->payload = payload;
	c->payload_len = payload_len;
}

static SyncOpEvidence *
add_evidence(PushState *st)
{
	SyncOpEvidence *e;

	if (st->cs.ops == NULL)
		st->cs.ops = palloc0(sizeof(SyncOpEvidence) * Max(st->commit->nops, 1));
	if (st->cs.nops >= (int) st->commit->nops)
		st->cs.ops = repalloc(st->cs.ops, sizeof(SyncOpEvidence) * (st->cs.nops + 1));
	e = &st->cs.ops[st->cs.nops++];
	memset(e, 0, sizeof(*e));
	return e;
}

/* Evidence for operation op_index on row row_id of table ti; the caller adds the rest. */
static SyncOpEvidence *
new_evidence(PushState *st, int32 op_index, uint8 op, int ti, const char *row_id)
{
	SyncOpEvidence *e = add_evidence(st);

	e->op_index = op_index;
	e->op = op;
	e->table_index = ti;
	e->row_id = row_id;
	return e;
}

/* The row validator (hooks.c) on one evidence entry; false + *hook when it refuses. */
static bool
validate_row(PushState *st, const SyncOpEvidence *ev, SyncOpReject *hook)
{
	/* the validator's SQL may read any table: it sees every earlier write of the commit */
	if (st->npending > 0 && sync_has_row_validator(st->schema, ev->table_index))
		push_rows_flush(st);
	return sync_validate_row(st->round, &st->cs, ev, hook);
}

/* The crdt merge of column c (crdt.c); false + *hook when it fails. */
static bool
crdt_merge(SyncRound *round, PushState *st, const SyncTable *t, int c, const SspValue *stored,
		   const SspValue *incoming, SspValue *merged, SyncOpReject *hook)
{
	push_rows_flush(st);		/* a registered merger is SQL that may read any table */
	return sync_crdt_merge(round, t, c, stored, incoming, merged, hook);
}

/* ---------------------------------------------------------------- row writes */

/*
 * The write of an upserted row: the row (with its row-scope entries), its blob references when
 * blob_refs, then the change record.  A class 23 error raised meanwhile is charged to op_index.
 * The row of a batchable table is deferred into the commit's row-write batch (push_rows.c);
 * any other write first flushes the batch (its triggers may read any table).
 */
static void
write_row(PushState *st, int32 op_index, int ti, const char *row_id, int64 version,
		  char *scopes_json, uint8 *payload, size_t payload_len, bytea *cvblob,
		  const SspValue *row, bool blob_refs, SyncRowStored stored)
{
	const SyncTable *t = &st->schema->tables[ti];

	if (push_rows_batchable(st, ti))
	{
		SyncRowWrite w;

		w.row_id = row_id;
		w.server_version = version;
		w.scopes_json = scopes_json;
		w.payload = payload;
		w.payload_len = payload_len;
		w.column_versions = cvblob ? (const uint8 *) VARDATA(cvblob) : NULL;
		w.column_versions_len = cvblob ? VARSIZE(cvblob) - VARHDRSZ : 0;
		w.values = row;
		w.stored = stored;
		push_rows_queue(st, op_index, ti, &w);
		st->writing_op = -1;
		add_change(st, t->name, row_id, SSP_OP_UPSERT, true, version, scopes_json, payload,
				   payload_len);
		return;
	}
	push_rows_flush(st);
	st->writing_op = op_index;
	sync_storage_row_upsert(st->schema, ti, st->round->partition, row_id, version, scopes_json,
							payload, payload_len,
							cvblob ? (const uint8 *) VARDATA(cvblob) : NULL,
							cvblob ? VARSIZE(cvblob) - VARHDRSZ : 0, row, SYNC_ROW_UNKNOWN);
	if (blob_refs && push_table_has_blob_refs(t))
	{
		char	  **ids;
		int			nids = push_collect_blob_ids(t, row, &ids);

		sync_storage_blob_refs_replace(t->name, st->round->partition, row_id, nids, ids);
	}
	st->writing_op = -1;
	add_change(st, t->name, row_id, SSP_OP_UPSERT, true, version, scopes_json, payload,
			   payload_len);
}

/*
 * Update a stored row to `merged` at next_version with column versions cv (an update op, or a
 * reference's SET NULL): the row validator on the evidence, then the write, keeping the stored
 * scopes.  blob_refs as for write_row.  false with st->reject filled when the validator refuses.
 */
static bool
update_stored(PushState *st, int32 op_index, int ti, const char *row_id,
			  const SyncStoredRow *stored, const SspValue *stored_vals, SspValue *merged,
			  const int64 *cv, int64 next_version, bool blob_refs)
{
	const SyncTable *t = &st->schema->tables[ti];
	SyncOpReject hook = {0};
	size_t		payload_len;
	uint8	   *payload = push_encode_full(t, merged, &payload_len);
	bytea	   *cvblob = push_encode_column_versions(t, cv);
	SyncOpEvidence *ev;

	if (!push_check_row_bytes(st, op_index, payload_len) ||
		!push_check_row_keys(st, op_index, t, merged, false))
		return false;
	ev = new_evidence(st, op_index, SSP_OP_UPSERT, ti, row_id);
	ev->row = merged;
	ev->stored = stored_vals;
	ev->has_stored_version = true;
	ev->stored_version = stored->server_version;
	ev->has_next_version = true;
	ev->next_version = next_version;
	if (!validate_row(st, ev, &hook))
	{
		push_set_reject(&st->reject, op_index, &hook);
		return false;
	}
	write_row(st, op_index, ti, row_id, next_version, push_jsonb_text(stored->scopes), payload,
			  payload_len, cvblob, merged, blob_refs, SYNC_ROW_SAME_SCOPES);
	return true;
}

/* ---------------------------------------------------------------- one operation */

/*
 * Delete a stored row (§2.3 "Delete", stored row present): authorize on the stored scopes,
 * require every scope value, run the row validator, delete, record the change.  `op_index` is
 * the client op (or the origin of a cascade).  false with st->reject filled.
 */
static bool
delete_stored(PushState *st, int32 op_index, int ti, const char *row_id,
			  const SyncStoredRow *stored, const SyncRowScopes *stored_scopes)
{
	SyncRound  *round = st->round;
	SyncSchema *schema = st->schema;
	const SyncTable *t = &schema->tables[ti];
	OpRecord   *rej = &st->reject;
	SyncOpReject hook = {0};
	SspValue   *stored_vals;
	SyncOpEvidence *ev;

	if (!sync_scopes_authorize_write(round->allowed, t, stored_scopes))
	{
		push_set_error(rej, op_index, "sync.forbidden", "the actor may not write this row", false);
		return false;
	}
	for (int s = 0; s < t->nscopes; s++)
		if (sync_row_scopes_lookup(stored_scopes, t->scopes[s].variable) == NULL)
		{
			push_set_error(rej, op_index, "sync.missing_scopes", "the stored row lacks a scope value",
					  false);
			return false;
		}
	stored_vals = push_decode_stored(t, stored);
	ev = new_evidence(st, op_index, SSP_OP_DELETE, ti, row_id);
	ev->stored = stored_vals;
	ev->has_stored_version = true;
	ev->stored_version = stored->server_version;
	if (!validate_row(st, ev, &hook))
	{
		push_set_reject(rej, op_index, &hook);
		return false;
	}
	push_rows_flush(st);		/* the batch's writes come first, as they were made first */
	st->writing_op = op_index;
	sync_storage_row_delete(schema, ti, round->partition, row_id);
	st->writing_op = -1;
	add_change(st, t->name, row_id, SSP_OP_DELETE, false, 0, push_jsonb_text(stored->scopes),
			   NULL, 0);
	return true;
}

/* ---------------------------------------------------------------- an upsert */

/*
 * Decode an upsert's payload (push-and-pull.md §2.3 "Upsert: decode"): a sparse row on wire 3,
 * a full row on wire 2 (every column present); the PK must render equal to rowId.  NULL with
 * st->reject filled.  *all_present: every column of the table is present.
 */
static SspValue *
decode_upsert(PushState *st, int32 i, const SspPushOp *op, const SyncTable *t, bool *all_present)
{
	OpRecord   *rej = &st->reject;
	SspValue   *vals = palloc0(sizeof(SspValue) * t->ncolumns);
	SspError	err;
	SspBuf		pk;
	bool		ok;

	if (!op->has_payload)
	{
		push_set_error(rej, i, "sync.invalid_request", "an upsert needs a payload", false);
		return NULL;
	}
	if (!push_check_row_bytes(st, i, op->payload.len))
		return NULL;			/* before it is decoded */
	if (st->round->wire_version >= 3)
		ok = ssp_row_decode_sparse(ssp_arena_new(), t->codec_columns, t->ncolumns,
								   t->pk_index, op->payload.ptr, op->payload.len, vals, &err);
	else
		ok = ssp_row_decode_full(ssp_arena_new(), t->codec_columns, t->ncolumns,
								 op->payload.ptr, op->payload.len, vals, &err);
	if (!ok)
	{
		push_set_error(rej, i, "sync.invalid_request",
					   psprintf("invalid row payload: %s", err.message), false);
		return NULL;
	}
	if (st->round->wire_version < 3)
		for (int c = 0; c < t->ncolumns; c++)
			vals[c].present = true;
	ssp_buf_init(&pk);
	if (!ssp_render_pk(&t->codec_columns[t->pk_index], &vals[t->pk_index], &pk, &err) ||
		pk.len != op->row_id.len || memcmp(pk.data, op->row_id.ptr, pk.len) != 0)
	{
		push_set_error(rej, i, "sync.invalid_request", "the primary key does not match rowId",
					   false);
		return NULL;
	}
	*all_present = true;
	for (int c = 0; c < t->ncolumns; c++)
		if (!vals[c].present)
			*all_present = false;
	return vals;
}

/*
 * The row an update writes (push-and-pull.md §2.3 update step 7): the stored values with the
 * present columns over them, each present non-NULL crdt column merged with its stored value
 * (SPEC §5.10.3); the present non-PK columns move to next_version in cv.  NULL with st->reject
 * filled when a merge fails.
 */
static SspValue *
merge_update(PushState *st, int32 i, const SyncTable *t, SspValue *vals,
			 const SspValue *stored_vals, int64 *cv, int64 next_version)
{
	SspValue   *merged = palloc0(sizeof(SspValue) * t->ncolumns);
	SyncOpReject hook = {0};

	for (int c = 0; c < t->ncolumns; c++)
	{
		merged[c] = vals[c].present ? vals[c] : stored_vals[c];
		merged[c].present = true;
		if (vals[c].present && t->columns[c].type == SSP_COL_CRDT && !vals[c].is_null &&
			!crdt_merge(st->round, st, t, c, &stored_vals[c], &vals[c], &merged[c], &hook))
		{
			push_set_reject(&st->reject, i, &hook);
			return NULL;
		}
		if (vals[c].present && c != t->pk_index)
			cv[c] = next_version;
	}
	return merged;
}

/*
 * An upsert onto a stored row (push-and-pull.md §2.3 "Upsert onto an existing row"): authorize
 * on the stored scopes, the conflict step (push_conflict.c), merge, then update_stored.
 */
static bool
apply_update(PushState *st, int32 i, const SspPushOp *op, int ti, const char *row_id,
			 SspValue *vals, const SyncStoredRow *stored, const SyncRowScopes *stored_scopes)
{
	const SyncTable *t = &st->schema->tables[ti];
	SspValue   *stored_vals;
	SspValue   *merged;
	int64	   *cv;
	int64		next_version;

	if (!sync_scopes_authorize_write(st->round->allowed, t, stored_scopes))
	{
		push_set_error(&st->reject, i, "sync.forbidden", "the actor may not write this row", false);
		return false;
	}
	if (!push_conflict_scope_columns(st, i, t, vals, stored_scopes) ||
		!push_conflict_update(st, i, op, t, vals, stored, &cv))
		return false;
	stored_vals = push_decode_stored(t, stored);
	next_version = stored->server_version + 1;
	merged = merge_update(st, i, t, vals, stored_vals, cv, next_version);
	if (merged == NULL)
		return false;
	return update_stored(st, i, ti, row_id, stored, stored_vals, merged, cv, next_version, true);
}

/* An insert's crdt columns: each non-NULL value is merge(NULL, incoming) (SPEC §5.10.3). */
static bool
merge_insert(PushState *st, int32 i, const SyncTable *t, SspValue *vals)
{
	SyncOpReject hook = {0};

	for (int c = 0; c < t->ncolumns; c++)
		if (t->columns[c].type == SSP_COL_CRDT && !vals[c].is_null)
		{
			SspValue	none = {0};
			SspValue	merged = vals[c];

			none.present = true;
			none.is_null = true;
			if (!crdt_merge(st->round, st, t, c, &none, &vals[c], &merged, &hook))
			{
				push_set_reject(&st->reject, i, &hook);
				return false;
			}
			vals[c] = merged;
		}
	return true;
}

/*
 * An upsert onto an absent row (push-and-pull.md §2.3 "Upsert onto an absent row"): the payload
 * scopes authorized and the conflict step (push_conflict.c), then the insert at version 1: crdt
 * merges, size limits, the row validator, the tombstone cleared, the write.
 */
static bool
apply_insert(PushState *st, int32 i, const SspPushOp *op, int ti, const char *row_id,
			 SspValue *vals, bool all_present, const SyncTombstone *pre_tomb)
{
	const SyncTable *t = &st->schema->tables[ti];
	SyncOpReject hook = {0};
	SyncRowScopes pscopes;
	bool		scopes_complete;
	bool		authorized;
	bool		tomb_absent;
	uint8	   *payload;
	size_t		payload_len;
	SyncOpEvidence *ev;

	push_payload_scopes(t, vals, &pscopes, &scopes_complete);
	authorized = scopes_complete &&
		sync_scopes_authorize_write(st->round->allowed, t, &pscopes);
	if (!push_conflict_insert(st, i, op, t, row_id, pre_tomb, authorized, scopes_complete,
							  all_present, &tomb_absent) ||
		!merge_insert(st, i, t, vals))
		return false;
	payload = push_encode_full(t, vals, &payload_len);
	if (!push_check_row_bytes(st, i, payload_len) || !push_check_row_keys(st, i, t, vals, true))
		return false;
	ev = new_evidence(st, i, SSP_OP_UPSERT, ti, row_id);
	ev->row = vals;
	ev->has_next_version = true;
	ev->next_version = 1;
	if (!validate_row(st, ev, &hook))
	{
		push_set_reject(&st->reject, i, &hook);
		return false;
	}
	/* the tombstone clear is inside this op's write window, as the row write is */
	st->writing_op = i;
	if (!tomb_absent)
		sync_storage_tombstone_clear(t->name, st->round->partition, row_id);
	write_row(st, i, ti, row_id, 1, sync_row_scopes_json(&pscopes), payload, payload_len, NULL,
			  vals, true, SYNC_ROW_ABSENT);
	return true;
}

/* ---------------------------------------------------------------- one operation */

/*
 * The steps every operation takes first (push-and-pull.md §2.3 "Common steps"): a served
 * table, a resolved actor, a storable rowId.  The table index, or -1 with st->reject filled.
 */
static int
common_checks(PushState *st, int32 i, const SspPushOp *op)
{
	OpRecord   *rej = &st->reject;
	const SyncTable *t;
	int			ti = push_op_table_index(st->schema, op);

	if (ti < 0)
	{
		push_set_error(rej, i, "sync.unknown_table", "the operation names a table that is not served",
					   false);
		return -1;
	}
	t = &st->schema->tables[ti];
	if (st->round->allowed == NULL || st->round->allowed->failed)
	{
		push_set_error(rej, i, "sync.forbidden", "scope resolution failed; writes are refused", false);
		return -1;
	}
	if (strlen(op->row_id.ptr) != op->row_id.len)
	{
		push_set_error(rej, i, "sync.invalid_request", "rowId must not contain U+0000", false);
		return -1;
	}
	if (op->row_id.len > SYNC_MAX_ROW_ID_BYTES)
	{
		/* checked before any read: the key could not be stored anywhere */
		push_set_size_reject(rej, i, "key_too_large", "the rowId", op->row_id.len,
							 SYNC_MAX_ROW_ID_BYTES, t->columns[t->pk_index].name);
		return -1;
	}
	return ti;
}

/*
 * Apply operation `i`.  Returns true when applied; false with st->reject filled.
 * Errors raised here (other than class 23 during a row write) become sync.internal_error.
 */
bool
push_apply_op(PushState *st, int32 i, const SspPushOp *op)
{
	int			ti = common_checks(st, i, op);
	const SyncTable *t;
	char	   *row_id;
	SyncStoredRow stored;
	SyncTombstone *pre_tomb;
	SyncRowScopes stored_scopes;
	SspValue   *vals;
	bool		all_present;

	if (ti < 0)
		return false;
	t = &st->schema->tables[ti];
	row_id = pnstrdup(op->row_id.ptr, op->row_id.len);
	push_op_row_get(st, i, ti, row_id, &stored, &pre_tomb);
	if (stored.found)
		sync_row_scopes_from_jsonb(stored.scopes, &stored_scopes);

	if (op->op == SSP_OP_DELETE)
	{
		if (!stored.found)
		{
			(void) new_evidence(st, i, SSP_OP_DELETE, ti, row_id);
			return true;		/* absent row: applied, no change, no authorization */
		}
		return delete_stored(st, i, ti, row_id, &stored, &stored_scopes);
	}
	vals = decode_upsert(st, i, op, t, &all_present);
	if (vals == NULL)
		return false;
	if (stored.found)
		return apply_update(st, i, op, ti, row_id, vals, &stored, &stored_scopes);
	return apply_insert(st, i, op, ti, row_id, vals, all_present, pre_tomb);
}

/* ---------------------------------------------------------------- operations appended by references */

/*
 * The row writer reference enforcement gets (rules.h, SyncRowWriter): it appends ON DELETE
 * CASCADE deletes and SET NULL updates to the commit in progress through these, so that
 * references.c never calls up into the push.
 */
static bool
append_delete(SyncCommitState *cs, int table_index, const char *row_id, int32 origin,
			  SyncOpReject *reject)
{
	PushState  *st = PUSH_STATE(cs);
	SyncStoredRow stored;
	SyncRowScopes scopes;
	char	   *id = pstrdup(row_id);


	sync_storage_row_get(st->schema, table_index, st->round->partition, id, &stored);
	if (!stored.found)
		return true;
	sync_row_scopes_from_jsonb(stored.scopes, &scopes);
	if (!delete_stored(st, origin, table_index, id, &stored, &scopes))
	{
		push_record_to_hook(&st->reject, reject);
		return false;
	}
	return true;
}

static bool
append_set_null(SyncCommitState *cs, int table_index, const char *row_id, int column,
				int32 origin, SyncOpReject *reject)
{
	PushState  *st = PUSH_STATE(cs);
	SyncRound  *round = st->round;
	SyncSchema *schema = st->schema;
	const SyncTable *t = &schema->tables[table_index];
	SyncStoredRow stored;
	SyncRowScopes scopes;
	SspValue   *stored_vals;
	SspValue   *merged;
	int64	   *cv;
	int64		next_version;
	char	   *id = pstrdup(row_id);


	sync_storage_row_get(schema, table_index, round->partition, id, &stored);
	if (!stored.found)
		return true;
	sync_row_scopes_from_jsonb(stored.scopes, &scopes);
	if (!sync_scopes_authorize_write(round->allowed, t, &scopes))
	{
		push_set_error(&st->reject, origin, "sync.forbidden", "the actor may not write this row",
					   false);
		push_record_to_hook(&st->reject, reject);
		return false;
	}
	stored_vals = push_decode_stored(t, &stored);
	merged = palloc0(sizeof(SspValue) * t->ncolumns);
	if (stored_vals[column].is_null)
		return true;			/* nothing to clear */
	next_version = stored.server_version + 1;
	cv = push_column_versions(t, &stored);
	for (int c = 0; c < t->ncolumns; c++)
	{
		merged[c] = stored_vals[c];
		merged[c].present = true;
	}
	memset(&merged[column], 0, sizeof(SspValue));
	merged[column].present = true;
	merged[column].is_null = true;
	cv[column] = next_version;	/* only the reference column's version moves */
	/* no blob-ref re-sync: a reference column (a primary-key type) is never a blob_ref */
	if (!update_stored(st, origin, table_index, id, &stored, stored_vals, merged, cv,
					   next_version, false))
	{
		push_record_to_hook(&st->reject, reject);
		return false;
	}
	return true;
}

const SyncRowWriter push_row_writer = {append_delete, append_set_null};
