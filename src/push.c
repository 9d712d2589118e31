/*
 * push.c — the per-commit push pipeline (push-and-pull.md §2.2–2.6).
 *
 * For one PUSH_COMMIT:
 *   1. lock the partition's sync_partitions row FOR UPDATE (inserted first when missing), in the
 *      enclosing transaction so the lock outlives the commit's subtransaction;
 *   2. serve-gate seam (sync_gate_check_push);
 *   3. locked idempotency check: a stored result replays (applied -> cached, rejected stays
 *      rejected; an unreadable one -> sync.idempotency_cache_miss, not persisted);
 *   4. in a subtransaction: every operation in order (§2.3 with this project's decisions; the
 *      row validator runs before each row write, hooks.c), then declared-reference enforcement
 *      (references.c; it may append cascade / SET NULL operations through the rules.h
 *      services below) and the whole-commit validator (hooks.c); the first non-applied outcome
 *      terminates the commit;
 *   5. applied: allocate commit_seq, append sync_commits + sync_changes (+ scope index,
 *      tombstones), the reaction planner + _enqueue_reactions (hooks.c; any error there is a
 *      server failure), store the applied result, NOTIFY syncular_commit, release the
 *      subtransaction;
 *      rejected: roll the subtransaction back, store the rejection (first writer wins), re-read
 *      it and replay the winner when another delivery stored first;
 *   6. write PUSH_RESULT (+ PUSH_RESULT_DETAILS) into round->out.
 * A SQLSTATE class 23 error raised by a row write becomes a durable rejection
 * sync.constraint_violation at that opIndex (logged at LOG with a fixed text: the database
 * message names the constraint).  Sizes are checked before a row is written
 * (syncular.max_row_bytes, the key maxima of engine.h) and reject the commit durably with
 * sync.invalid_request; a 54000 (program_limit_exceeded) that still escapes a row write is
 * the same durable rejection.  Any other error rolls the commit back and raises
 * sync.internal_error (the original is logged, never returned).  Rejection details are stored
 * and sent in the codec's normalized form; details that break the PUSH_RESULT_DETAILS rules are
 * dropped.
 */
#include "postgres.h"

#include "access/xact.h"
#include "common/base64.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "port.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/resowner.h"

#include "blobs.h"
#include "engine.h"
#include "rules.h"
#include "stats.h"
#include "storage.h"
#include "wakeup.h"

/* ---------------------------------------------------------------- seams (weak no-ops) */

SYNC_WEAK void
sync_gate_check_push(SyncRound *round)
{
}

/*
 * sync_validate_row, sync_enforce_references, sync_validate_commit and sync_plan_reactions are
 * defined in hooks.c and references.c (issue 4); push.c offers them the services of rules.h.
 */

SYNC_WEAK bool
sync_crdt_merge(SyncRound *round, const SyncTable *table, int column, const SspValue *stored,
				const SspValue *incoming, SspValue *merged, SyncOpReject *reject)
{
	reject->code = "sync.crdt_merge_failed";
	reject->message = "no CRDT merger registered";
	reject->retryable = false;
	reject->details_json = NULL;
	return false;
}

/* ---------------------------------------------------------------- result records */

typedef struct OpRecord
{
	int32		op_index;
	uint8		status;			/* SSP_RESULT_* */
	char	   *code;
	char	   *message;
	bool		retryable;
	int64		server_version;
	uint8	   *server_row;
	uint32		server_row_len;
	uint8	   *conflict_cols;
	uint32		conflict_len;
	char	   *details_json;
} OpRecord;

typedef struct CommitOutcome
{
	uint8		status;			/* SSP_PUSH_* */
	bool		has_seq;
	int64		commit_seq;
	int			nrecords;
	OpRecord   *records;
} CommitOutcome;

typedef struct PendingChange
{
	const char *table;
	const char *row_id;
	int16		op;
	bool		has_version;
	int64		version;
	char	   *scopes_json;
	uint8	   *payload;
	size_t		payload_len;
} PendingChange;

typedef struct PushState
{
	SyncRound  *round;
	SyncSchema *schema;
	const SspPushCommit *commit;
	char	   *client_commit_id;
	SyncCommitState cs;
	int			nchanges;
	int			maxchanges;
	PendingChange *changes;
	int32		writing_op;		/* opIndex of the row write in progress, else -1 */
	bool		planning;		/* inside the reaction planner / enqueue */
	int64		created_at_ms;	/* set when commit_seq is allocated */
	OpRecord	reject;			/* the terminating record when rejected */
	/* read-ahead of the client ops' rows (prefetch_rows); NULL when not done */
	bool	   *pre_valid;		/* per client op: pre_rows[i] / pre_tombs[i] answer it */
	SyncStoredRow *pre_rows;
	SyncTombstone *pre_tombs;
} PushState;

/* The PushState a SyncCommitState is embedded in (rules.h services get the latter). */
#define PUSH_STATE(cs) ((PushState *) ((char *) (cs) - offsetof(PushState, cs)))

static void
set_error(OpRecord *rec, int32 op_index, const char *code, const char *message, bool retryable)
{
	memset(rec, 0, sizeof(*rec));
	rec->op_index = op_index;
	rec->status = SSP_RESULT_ERROR;
	rec->code = pstrdup(code);
	rec->message = pstrdup(message);
	rec->retryable = retryable;
}

/*
 * PUSH_RESULT_DETAILS text in the codec's normalized form (WF §3.4: only fieldPaths, reason,
 * requiredAction, references, in that order, compact, at most 4,096 bytes), or NULL when the
 * text breaks those rules.  Details that fail are dropped, never fatal: a host validator's
 * details must not turn a rejection into a failed round.
 */
static char *
normalize_details(const char *json, size_t len)
{
	SspBuf		b;
	SspError	err;
	char	   *out = NULL;

	ssp_buf_init(&b);
	if (ssp_details_json_normalize(json, len, &b, &err))
		out = pnstrdup((const char *) b.data, b.len);
	ssp_buf_free(&b);
	return out;
}

static void
set_reject(OpRecord *rec, int32 op_index, const SyncOpReject *r)
{
	set_error(rec, op_index, r->code ? r->code : "sync.constraint_violation",
			  r->message ? r->message : "operation rejected", r->retryable);
	if (r->details_json)
	{
		rec->details_json = normalize_details(r->details_json, strlen(r->details_json));
		if (rec->details_json == NULL)
			ereport(LOG,
					(errmsg("syncular: rejection details of code \"%s\" dropped: they break the PUSH_RESULT_DETAILS rules",
							rec->code)));
	}
}

/* The reverse of set_reject: an OpRecord (error) as a seam rejection. */
static void
record_to_hook(const OpRecord *rec, SyncOpReject *r)
{
	r->op_index = rec->op_index;
	r->code = rec->code;
	r->message = rec->message;
	r->retryable = rec->retryable;
	r->details_json = rec->details_json;
}

static void
internal_error(const char *what)
{
	sync_raise("sync.internal_error", "internal error while applying a push",
			   psprintf("{\"stage\": \"%s\"}", what));
}

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

/* ---------------------------------------------------------------- helpers */

/* A column value as a scope value string; NULL when absent, NULL, empty or not renderable. */
static char *
scope_text(const SspColumn *col, const SspValue *v)
{
	SspBuf		b;
	SspError	err;
	char	   *s;

	if (!v->present || v->is_null)
		return NULL;
	ssp_buf_init(&b);
	if (!ssp_render_pk(col, v, &b, &err) || b.len == 0 || memchr(b.data, '\0', b.len) != NULL)
		return NULL;
	s = pnstrdup((const char *) b.data, b.len);
	ssp_buf_free(&b);
	return s;
}

/* Scope map extracted from (present) payload values; *complete = every variable has a value. */
static void
payload_scopes(const SyncTable *t, const SspValue *vals, SyncRowScopes *out, bool *complete)
{
	out->n = 0;
	out->vars = palloc0(sizeof(char *) * Max(t->nscopes, 1));
	out->values = palloc0(sizeof(char *) * Max(t->nscopes, 1));
	*complete = true;
	for (int i = 0; i < t->nscopes; i++)
	{
		const SyncScope *sc = &t->scopes[i];
		char	   *v = scope_text(&t->codec_columns[sc->column_index], &vals[sc->column_index]);

		if (v == NULL)
		{
			*complete = false;
			continue;
		}
		if (sync_row_scopes_lookup(out, sc->variable) != NULL)
			continue;
		out->vars[out->n] = sc->variable;
		out->values[out->n] = v;
		out->n++;
	}
}

static char *
jsonb_text(Jsonb *j)
{
	return JsonbToCString(NULL, &j->root, VARSIZE(j));
}

/* LEB128 helpers for _sync_column_versions (data-model-and-storage.md §1.4). */
static void
put_leb(StringInfo b, uint64 v)
{
	do
	{
		uint8		c = v & 0x7f;

		v >>= 7;
		if (v)
			c |= 0x80;
		appendStringInfoChar(b, (char) c);
	} while (v);
}

static bool
get_leb(const uint8 *p, size_t len, size_t *pos, uint64 *out)
{
	uint64		v = 0;
	int			shift = 0;

	while (*pos < len && shift < 64)
	{
		uint8		c = p[(*pos)++];

		v |= (uint64) (c & 0x7f) << shift;
		if (!(c & 0x80))
		{
			*out = v;
			return true;
		}
		shift += 7;
	}
	return false;
}

/* Effective column versions of a stored row (legacy rule: no blob = every column at version). */
static int64 *
column_versions(const SyncTable *t, const SyncStoredRow *row)
{
	int64	   *cv = palloc(sizeof(int64) * t->ncolumns);

	if (row->column_versions == NULL)
	{
		for (int i = 0; i < t->ncolumns; i++)
			cv[i] = row->server_version;
		return cv;
	}
	for (int i = 0; i < t->ncolumns; i++)
		cv[i] = 1;
	{
		const uint8 *p = (const uint8 *) VARDATA_ANY(row->column_versions);
		size_t		len = VARSIZE_ANY_EXHDR(row->column_versions);
		size_t		pos = 0;

		while (pos < len)
		{
			uint64		ord;
			uint64		ver;

			if (!get_leb(p, len, &pos, &ord) || !get_leb(p, len, &pos, &ver) ||
				ord >= (uint64) t->ncolumns || ver <= 1 || ver > (uint64) PG_INT64_MAX)
				internal_error("column_versions");
			cv[ord] = (int64) ver;
		}
	}
	return cv;
}

static bytea *
encode_column_versions(const SyncTable *t, const int64 *cv)
{
	StringInfoData b;
	bytea	   *out;

	initStringInfo(&b);
	for (int i = 0; i < t->ncolumns; i++)
	{
		if (i == t->pk_index || cv[i] <= 1)
			continue;
		put_leb(&b, (uint64) i);
		put_leb(&b, (uint64) cv[i]);
	}
	if (b.len == 0)
		return NULL;
	out = palloc(VARHDRSZ + b.len);
	SET_VARSIZE(out, VARHDRSZ + b.len);
	memcpy(VARDATA(out), b.data, b.len);
	return out;
}

static uint8 *
encode_full(const SyncTable *t, const SspValue *vals, size_t *len)
{
	SspBuf		b;
	SspError	err;

	ssp_buf_init(&b);
	if (!ssp_row_encode_full(t->codec_columns, t->ncolumns, vals, &b, &err))
		internal_error("row encode");
	*len = b.len;
	/* the buffer grew by doubling: give the slack back, the commit keeps the row until it ends */
	if (b.cap > b.len + 1024)
		b.data = repalloc(b.data, Max(b.len, 1));
	return b.data;
}

/* The values of a stored row's payload; a payload that does not decode is an internal error. */
static SspValue *
decode_stored(const SyncTable *t, const SyncStoredRow *stored)
{
	SspValue   *vals = palloc0(sizeof(SspValue) * t->ncolumns);
	SspError	err;

	if (!ssp_row_decode_full(ssp_arena_new(), t->codec_columns, t->ncolumns,
							 (const uint8 *) VARDATA_ANY(stored->payload),
							 VARSIZE_ANY_EXHDR(stored->payload), vals, &err))
		internal_error("stored payload");
	return vals;
}

/* blobId of each non-NULL blob_ref value of a row. */
static int
collect_blob_ids(const SyncTable *t, const SspValue *vals, char ***ids_out)
{
	char	  **ids = palloc0(sizeof(char *) * t->ncolumns);
	int			n = 0;
	SspArena   *arena = NULL;

	for (int i = 0; i < t->ncolumns; i++)
	{
		SspJson    *j;
		SspError	err;

		if (t->columns[i].type != SSP_COL_BLOB_REF || !vals[i].present || vals[i].is_null)
			continue;
		if (arena == NULL)
			arena = ssp_arena_new();
		if (!ssp_json_parse(arena, vals[i].str.ptr, vals[i].str.len, &j, &err) ||
			j->kind != SSP_JSON_OBJECT)
			continue;
		for (uint32 k = 0; k < j->count; k++)
			if (j->keys[k].len == 6 && memcmp(j->keys[k].ptr, "blobId", 6) == 0 &&
				j->items[k].kind == SSP_JSON_STRING &&
				memchr(j->items[k].text.ptr, '\0', j->items[k].text.len) == NULL)
			{
				ids[n++] = pnstrdup(j->items[k].text.ptr, j->items[k].text.len);
				break;
			}
	}
	*ids_out = ids;
	return n;
}

static bool
table_has_blob_refs(const SyncTable *t)
{
	for (int i = 0; i < t->ncolumns; i++)
		if (t->columns[i].type == SSP_COL_BLOB_REF)
			return true;
	return false;
}

/* ---------------------------------------------------------------- size limits */

/*
 * A size rejection: sync.invalid_request at op_index, not retryable, durable like every
 * commit rejection; the limit and the size go in the message (PUSH_RESULT_DETAILS admits only
 * fieldPaths, reason, requiredAction and references, WF §3.4).
 */
static void
set_size_reject(OpRecord *rec, int32 op_index, const char *reason, const char *what,
				size_t bytes, size_t max, const char *field)
{
	SyncOpReject r = {0};
	StringInfoData d;

	initStringInfo(&d);
	appendStringInfoChar(&d, '{');
	if (field != NULL)
	{
		appendStringInfoString(&d, "\"fieldPaths\":[");
		escape_json(&d, field);
		appendStringInfoString(&d, "],");
	}
	appendStringInfoString(&d, "\"reason\":");
	escape_json(&d, reason);
	appendStringInfoChar(&d, '}');
	r.op_index = op_index;
	r.code = "sync.invalid_request";
	r.message = psprintf("%s is %zu bytes, at most %zu are accepted", what, bytes, max);
	r.retryable = false;
	r.details_json = d.data;
	set_reject(rec, op_index, &r);
}

/* Bytes a value occupies in an index key (text, json text, bytes; 8 for the scalars). */
static size_t
value_key_bytes(const SyncColumn *c, const SspValue *v)
{
	if (!v->present || v->is_null)
		return 0;
	switch (c->type)
	{
		case SSP_COL_STRING:
		case SSP_COL_JSON:
		case SSP_COL_BLOB_REF:
			return v->str.len;
		case SSP_COL_BYTES:
		case SSP_COL_CRDT:
			return v->bytes.len;
		default:
			return 8;
	}
}

/*
 * The key maxima of engine.h for the row that is about to be written (`row`: every column
 * present), checked before the write: a value over PostgreSQL's btree limit would fail the
 * whole round on every retry.  Scope values only for an insert (an update keeps the stored
 * scopes).  false with st->reject filled.
 */
static bool
check_row_keys(PushState *st, int32 op_index, const SyncTable *t, const SspValue *row,
			   bool insert)
{
	OpRecord   *rej = &st->reject;

	for (int s = 0; insert && s < t->nscopes; s++)
	{
		const SyncScope *sc = &t->scopes[s];
		size_t		n = value_key_bytes(&t->columns[sc->column_index], &row[sc->column_index]);

		if (n > SYNC_MAX_SCOPE_VALUE_BYTES)
		{
			set_size_reject(rej, op_index, "key_too_large", "a scope value", n,
							SYNC_MAX_SCOPE_VALUE_BYTES, sc->column);
			return false;
		}
	}
	for (int x = 0; x < t->nindexes; x++)
	{
		const SyncIndex *ix = &t->indexes[x];
		size_t		n = 0;

		for (int k = 0; k < ix->ncolumns; k++)
			n += value_key_bytes(&t->columns[ix->column_index[k]], &row[ix->column_index[k]]);
		if (n > SYNC_MAX_INDEX_KEY_BYTES)
		{
			set_size_reject(rej, op_index, "key_too_large", "the key of a declared index", n,
							SYNC_MAX_INDEX_KEY_BYTES,
							ix->ncolumns > 0 ? t->columns[ix->column_index[0]].name : NULL);
			return false;
		}
	}
	for (int r = 0; t->materialize && r < t->nreferences; r++)
	{
		int			c = t->references[r].column_index;
		size_t		n = value_key_bytes(&t->columns[c], &row[c]);

		if (n > SYNC_MAX_INDEX_KEY_BYTES)
		{
			set_size_reject(rej, op_index, "key_too_large", "a reference column value", n,
							SYNC_MAX_INDEX_KEY_BYTES, t->columns[c].name);
			return false;
		}
	}
	if (table_has_blob_refs(t))
	{
		char	  **ids;
		int			nids = collect_blob_ids(t, row, &ids);
		SyncOpReject hook;

		for (int k = 0; k < nids; k++)
			if (strlen(ids[k]) > SYNC_MAX_ROW_ID_BYTES)
			{
				set_size_reject(rej, op_index, "key_too_large", "a blobId",
								strlen(ids[k]), SYNC_MAX_ROW_ID_BYTES, NULL);
				return false;
			}
		/* §5.9.6: every referenced blob is stored (and locked until the commit ends) */
		if (!sync_blobs_check_row(st->round->partition, t, row, op_index, &hook))
		{
			set_reject(rej, op_index, &hook);
			return false;
		}
	}
	return true;
}

/* syncular.max_row_bytes on the full row about to be written. */
static bool
check_row_bytes(PushState *st, int32 op_index, size_t payload_len)
{
	if (payload_len <= (size_t) sync_max_row_bytes)
		return true;
	set_size_reject(&st->reject, op_index, "row_too_large", "the row", payload_len,
					(size_t) sync_max_row_bytes, NULL);
	return false;
}

static uint8 *
new_bitmap(const SyncTable *t, uint32 *len)
{
	*len = (uint32) ((t->ncolumns + 7) / 8);
	return palloc0(Max(*len, 1));
}

static void
set_conflict(OpRecord *rec, int32 op_index, const SyncStoredRow *row, uint8 *bitmap,
			 uint32 bitmap_len)
{
	memset(rec, 0, sizeof(*rec));
	rec->op_index = op_index;
	rec->status = SSP_RESULT_CONFLICT;
	rec->code = "sync.version_conflict";
	rec->message = "row version conflict";
	rec->server_version = row->server_version;
	rec->server_row = (uint8 *) VARDATA_ANY(row->payload);
	rec->server_row_len = VARSIZE_ANY_EXHDR(row->payload);
	rec->conflict_cols = bitmap;
	rec->conflict_len = bitmap_len;
}

/* Seam calls that restore the operation's memory context (hooks may run SPI). */
static bool
validate_row(SyncRound *round, PushState *st, const SyncOpEvidence *ev, SyncOpReject *hook,
			 MemoryContext cxt)
{
	bool		ok = sync_validate_row(round, &st->cs, ev, hook);

	MemoryContextSwitchTo(cxt);
	return ok;
}

static bool
crdt_merge(SyncRound *round, const SyncTable *t, int c, const SspValue *stored,
		   const SspValue *incoming, SspValue *merged, SyncOpReject *hook, MemoryContext cxt)
{
	bool		ok = sync_crdt_merge(round, t, c, stored, incoming, merged, hook);

	MemoryContextSwitchTo(cxt);
	return ok;
}

/* ---------------------------------------------------------------- row writes */

/*
 * The write of an upserted row: the row (with its row-scope entries), its blob references when
 * blob_refs, then the change record.  A class 23 error raised meanwhile is charged to op_index.
 */
static void
write_row(PushState *st, int32 op_index, int ti, const char *row_id, int64 version,
		  char *scopes_json, uint8 *payload, size_t payload_len, bytea *cvblob,
		  const SspValue *row, bool blob_refs)
{
	const SyncTable *t = &st->schema->tables[ti];

	st->writing_op = op_index;
	sync_storage_row_upsert(st->schema, ti, st->round->partition, row_id, version, scopes_json,
							payload, payload_len,
							cvblob ? (const uint8 *) VARDATA(cvblob) : NULL,
							cvblob ? VARSIZE(cvblob) - VARHDRSZ : 0, row);
	if (blob_refs && table_has_blob_refs(t))
	{
		char	  **ids;
		int			nids = collect_blob_ids(t, row, &ids);

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
			  const int64 *cv, int64 next_version, bool blob_refs, MemoryContext cxt)
{
	const SyncTable *t = &st->schema->tables[ti];
	SyncOpReject hook = {0};
	size_t		payload_len;
	uint8	   *payload = encode_full(t, merged, &payload_len);
	bytea	   *cvblob = encode_column_versions(t, cv);
	SyncOpEvidence *ev;

	if (!check_row_bytes(st, op_index, payload_len) ||
		!check_row_keys(st, op_index, t, merged, false))
		return false;
	ev = new_evidence(st, op_index, SSP_OP_UPSERT, ti, row_id);
	ev->row = merged;
	ev->stored = stored_vals;
	ev->has_stored_version = true;
	ev->stored_version = stored->server_version;
	ev->has_next_version = true;
	ev->next_version = next_version;
	if (!validate_row(st->round, st, ev, &hook, cxt))
	{
		set_reject(&st->reject, op_index, &hook);
		return false;
	}
	write_row(st, op_index, ti, row_id, next_version, jsonb_text(stored->scopes), payload,
			  payload_len, cvblob, merged, blob_refs);
	return true;
}

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
static int
op_table_index(const SyncSchema *schema, const SspPushOp *op)
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
static void
prefetch_rows(PushState *st)
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
		int			ti = op_table_index(schema, op);

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
static void
op_row_get(PushState *st, int32 i, int ti, const char *row_id, SyncStoredRow *out,
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

/* ---------------------------------------------------------------- one operation */

/*
 * Delete a stored row (§2.3 "Delete", stored row present): authorize on the stored scopes,
 * require every scope value, run the row validator, delete, record the change.  `op_index` is
 * the client op (or the origin of a cascade).  false with st->reject filled.
 */
static bool
delete_stored(PushState *st, int32 op_index, int ti, const char *row_id,
			  const SyncStoredRow *stored, const SyncRowScopes *stored_scopes, MemoryContext cxt)
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
		set_error(rej, op_index, "sync.forbidden", "the actor may not write this row", false);
		return false;
	}
	for (int s = 0; s < t->nscopes; s++)
		if (sync_row_scopes_lookup(stored_scopes, t->scopes[s].variable) == NULL)
		{
			set_error(rej, op_index, "sync.missing_scopes", "the stored row lacks a scope value",
					  false);
			return false;
		}
	stored_vals = decode_stored(t, stored);
	ev = new_evidence(st, op_index, SSP_OP_DELETE, ti, row_id);
	ev->stored = stored_vals;
	ev->has_stored_version = true;
	ev->stored_version = stored->server_version;
	if (!validate_row(round, st, ev, &hook, cxt))
	{
		set_reject(rej, op_index, &hook);
		return false;
	}
	st->writing_op = op_index;
	sync_storage_row_delete(schema, ti, round->partition, row_id);
	st->writing_op = -1;
	add_change(st, t->name, row_id, SSP_OP_DELETE, false, 0, jsonb_text(stored->scopes),
			   NULL, 0);
	return true;
}

/*
 * Apply operation `i`.  Returns true when applied; false with st->reject filled.
 * Errors raised here (other than class 23 during a row write) become sync.internal_error.
 */
static bool
apply_op(PushState *st, int32 i, const SspPushOp *op)
{
	MemoryContext op_cxt = CurrentMemoryContext;
	SyncRound  *round = st->round;
	SyncSchema *schema = st->schema;
	OpRecord   *rej = &st->reject;
	SyncOpReject hook = {0};
	const SyncTable *t;
	int			ti;
	char	   *row_id;
	SyncStoredRow stored;
	SyncTombstone *pre_tomb;
	SyncRowScopes stored_scopes;
	SyncOpEvidence *ev;

	/* common steps */
	ti = op_table_index(schema, op);
	if (ti < 0)
	{
		set_error(rej, i, "sync.unknown_table", "the operation names a table that is not served",
				  false);
		return false;
	}
	t = &schema->tables[ti];
	if (round->allowed == NULL || round->allowed->failed)
	{
		set_error(rej, i, "sync.forbidden", "scope resolution failed; writes are refused", false);
		return false;
	}
	if (strlen(op->row_id.ptr) != op->row_id.len)
	{
		set_error(rej, i, "sync.invalid_request", "rowId must not contain U+0000", false);
		return false;
	}
	if (op->row_id.len > SYNC_MAX_ROW_ID_BYTES)
	{
		/* checked before any read: the key could not be stored anywhere */
		set_size_reject(rej, i, "key_too_large", "the rowId", op->row_id.len,
						SYNC_MAX_ROW_ID_BYTES, t->columns[t->pk_index].name);
		return false;
	}
	row_id = pnstrdup(op->row_id.ptr, op->row_id.len);
	op_row_get(st, i, ti, row_id, &stored, &pre_tomb);
	if (stored.found)
		sync_row_scopes_from_jsonb(stored.scopes, &stored_scopes);

	/* ------------------------------------------------ delete */
	if (op->op == SSP_OP_DELETE)
	{
		if (!stored.found)
		{
			(void) new_evidence(st, i, SSP_OP_DELETE, ti, row_id);
			return true;		/* absent row: applied, no change, no authorization */
		}
		return delete_stored(st, i, ti, row_id, &stored, &stored_scopes, op_cxt);
	}

	/* ------------------------------------------------ upsert: decode */
	{
		SspValue   *vals = palloc0(sizeof(SspValue) * t->ncolumns);
		SspError	err;
		SspBuf		pk;
		bool		ok;
		bool		all_present = true;

		if (!op->has_payload)
		{
			set_error(rej, i, "sync.invalid_request", "an upsert needs a payload", false);
			return false;
		}
		if (!check_row_bytes(st, i, op->payload.len))
			return false;		/* before it is decoded */
		if (round->wire_version >= 3)
			ok = ssp_row_decode_sparse(ssp_arena_new(), t->codec_columns, t->ncolumns,
									   t->pk_index, op->payload.ptr, op->payload.len, vals, &err);
		else
			ok = ssp_row_decode_full(ssp_arena_new(), t->codec_columns, t->ncolumns,
									 op->payload.ptr, op->payload.len, vals, &err);
		if (!ok)
		{
			set_error(rej, i, "sync.invalid_request",
					  psprintf("invalid row payload: %s", err.message), false);
			return false;
		}
		if (round->wire_version < 3)
			for (int c = 0; c < t->ncolumns; c++)
				vals[c].present = true;
		ssp_buf_init(&pk);
		if (!ssp_render_pk(&t->codec_columns[t->pk_index], &vals[t->pk_index], &pk, &err) ||
			pk.len != op->row_id.len || memcmp(pk.data, op->row_id.ptr, pk.len) != 0)
		{
			set_error(rej, i, "sync.invalid_request", "the primary key does not match rowId",
					  false);
			return false;
		}
		for (int c = 0; c < t->ncolumns; c++)
			if (!vals[c].present)
				all_present = false;

		/* -------------------------------------------- update */
		if (stored.found)
		{
			SspValue   *stored_vals;
			SspValue   *merged = palloc0(sizeof(SspValue) * t->ncolumns);
			int64	   *cv;
			int64		next_version;

			if (!sync_scopes_authorize_write(round->allowed, t, &stored_scopes))
			{
				set_error(rej, i, "sync.forbidden", "the actor may not write this row", false);
				return false;
			}
			for (int s = 0; s < t->nscopes; s++)
			{
				const SyncScope *sc = &t->scopes[s];
				const SspValue *v = &vals[sc->column_index];
				const char *old;
				char	   *now;

				if (!v->present)
					continue;
				/* wire 2 strips every scope column from the update set (SPEC v2 §3.4 rule 5) */
				if (round->wire_version < 3)
				{
					vals[sc->column_index].present = false;
					continue;
				}
				old = sync_row_scopes_lookup(&stored_scopes, sc->variable);
				now = scope_text(&t->codec_columns[sc->column_index], v);
				if (old == NULL || now == NULL || strcmp(old, now) != 0)
				{
					set_error(rej, i, "sync.invalid_request",
							  "scope columns cannot change on update", false);
					return false;
				}
			}
			if (op->has_base_version && round->wire_version < 3)
			{
				/* wire 2 compares row versions: any other base is a conflict (SPEC v2 §6.2) */
				if (op->base_version != stored.server_version)
				{
					uint32		blen;
					uint8	   *bitmap = new_bitmap(t, &blen);

					/* kept with the stored result; the wire-2 record carries no bitmap */
					for (int c = 0; c < t->ncolumns; c++)
						if (vals[c].present && c != t->pk_index &&
							t->columns[c].type != SSP_COL_CRDT)
							bitmap[c / 8] |= (uint8) (1 << (c % 8));
					set_conflict(rej, i, &stored, bitmap, blen);
					return false;
				}
			}
			else if (op->has_base_version && op->base_version > stored.server_version)
			{
				set_error(rej, i, "sync.invalid_request",
						  "baseVersion is ahead of the server version", false);
				return false;
			}
			cv = column_versions(t, &stored);
			if (op->has_base_version && round->wire_version >= 3)
			{
				uint32		blen;
				uint8	   *bitmap = new_bitmap(t, &blen);
				bool		marked = false;

				for (int c = 0; c < t->ncolumns; c++)
				{
					if (!vals[c].present || c == t->pk_index || t->columns[c].type == SSP_COL_CRDT)
						continue;
					if (op->base_version == 0 || cv[c] > op->base_version)
					{
						bitmap[c / 8] |= (uint8) (1 << (c % 8));
						marked = true;
					}
				}
				if (op->base_version == 0 || marked)
				{
					set_conflict(rej, i, &stored, bitmap, blen);
					return false;
				}
			}

			stored_vals = decode_stored(t, &stored);
			next_version = stored.server_version + 1;
			for (int c = 0; c < t->ncolumns; c++)
			{
				merged[c] = vals[c].present ? vals[c] : stored_vals[c];
				merged[c].present = true;
				if (vals[c].present && t->columns[c].type == SSP_COL_CRDT && !vals[c].is_null)
				{
					if (!crdt_merge(round, t, c, &stored_vals[c], &vals[c], &merged[c], &hook, op_cxt))
					{
						set_reject(rej, i, &hook);
						return false;
					}
				}
				if (vals[c].present && c != t->pk_index)
					cv[c] = next_version;
			}
			return update_stored(st, i, ti, row_id, &stored, stored_vals, merged, cv,
								 next_version, true, op_cxt);
		}

		/* -------------------------------------------- absent row: authorize before disclosing */
		{
			SyncRowScopes pscopes;
			bool		scopes_complete;
			bool		authorized;
			bool		tomb_absent = false;	/* looked up and none found */
			uint8	   *payload;
			size_t		payload_len;
			char	   *scopes_json;

			payload_scopes(t, vals, &pscopes, &scopes_complete);
			authorized = scopes_complete &&
				sync_scopes_authorize_write(round->allowed, t, &pscopes);

			if (op->has_base_version && op->base_version > 0)
			{
				if (!authorized)
				{
					set_error(rej, i, "sync.forbidden", "the actor may not write this row", false);
					return false;
				}
				set_error(rej, i, "sync.row_missing", "the row does not exist", false);
				return false;
			}
			/* wire 2 has no delete precedence: an unversioned upsert inserts (SPEC v2 §6.2) */
			if (!op->has_base_version && round->wire_version >= 3)
			{
				int64		tomb_seq;
				Jsonb	   *tomb_scopes = NULL;

				bool		tomb_found;

				tomb_absent = true;
				if (pre_tomb != NULL)
				{
					tomb_found = pre_tomb->found;
					tomb_seq = pre_tomb->commit_seq;
					tomb_scopes = pre_tomb->delete_scopes;
				}
				else
					tomb_found = sync_storage_tombstone_get(t->name, round->partition, row_id,
															&tomb_seq, &tomb_scopes);
				if (tomb_found)
				{
					bool		ok_tomb = authorized;

					if (!scopes_complete && tomb_scopes != NULL)
					{
						SyncRowScopes ts;

						sync_row_scopes_from_jsonb(tomb_scopes, &ts);
						ok_tomb = sync_scopes_authorize_write(round->allowed, t, &ts);
					}
					if (!ok_tomb)
					{
						set_error(rej, i, "sync.forbidden", "the actor may not write this row",
								  false);
						return false;
					}
					set_error(rej, i, "sync.row_deleted", "the row was deleted", false);
					return false;
				}
			}
			if (!authorized)
			{
				set_error(rej, i, "sync.forbidden", "the actor may not write this row", false);
				return false;
			}
			if (!all_present)
			{
				set_error(rej, i, "sync.row_missing", "the row does not exist", false);
				return false;
			}

			/* insert */
			for (int c = 0; c < t->ncolumns; c++)
				if (t->columns[c].type == SSP_COL_CRDT && !vals[c].is_null)
				{
					SspValue	none = {0};
					SspValue	merged = vals[c];

					none.present = true;
					none.is_null = true;
					if (!crdt_merge(round, t, c, &none, &vals[c], &merged, &hook, op_cxt))
					{
						set_reject(rej, i, &hook);
						return false;
					}
					vals[c] = merged;
				}
			payload = encode_full(t, vals, &payload_len);
			if (!check_row_bytes(st, i, payload_len) || !check_row_keys(st, i, t, vals, true))
				return false;
			scopes_json = sync_row_scopes_json(&pscopes);

			ev = new_evidence(st, i, SSP_OP_UPSERT, ti, row_id);
			ev->row = vals;
			ev->has_next_version = true;
			ev->next_version = 1;
			if (!validate_row(round, st, ev, &hook, op_cxt))
			{
				set_reject(rej, i, &hook);
				return false;
			}
			/* the tombstone clear is inside this op's write window, as the row write is */
			st->writing_op = i;
			if (!tomb_absent)
				sync_storage_tombstone_clear(t->name, round->partition, row_id);
			write_row(st, i, ti, row_id, 1, scopes_json, payload, payload_len, NULL, vals, true);
			return true;
		}
	}
}

/* ---------------------------------------------------------------- operations appended by references */

bool
sync_push_append_delete(SyncCommitState *cs, int table_index, const char *row_id, int32 origin,
						SyncOpReject *reject)
{
	PushState  *st = PUSH_STATE(cs);
	MemoryContext cxt = CurrentMemoryContext;
	SyncStoredRow stored;
	SyncRowScopes scopes;
	char	   *id = pstrdup(row_id);

	sync_storage_row_get(st->schema, table_index, st->round->partition, id, &stored);
	if (!stored.found)
		return true;
	sync_row_scopes_from_jsonb(stored.scopes, &scopes);
	if (!delete_stored(st, origin, table_index, id, &stored, &scopes, cxt))
	{
		record_to_hook(&st->reject, reject);
		return false;
	}
	return true;
}

bool
sync_push_append_set_null(SyncCommitState *cs, int table_index, const char *row_id, int column,
						  int32 origin, SyncOpReject *reject)
{
	PushState  *st = PUSH_STATE(cs);
	MemoryContext cxt = CurrentMemoryContext;
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
		set_error(&st->reject, origin, "sync.forbidden", "the actor may not write this row",
				  false);
		record_to_hook(&st->reject, reject);
		return false;
	}
	stored_vals = decode_stored(t, &stored);
	merged = palloc0(sizeof(SspValue) * t->ncolumns);
	if (stored_vals[column].is_null)
		return true;			/* nothing to clear */
	next_version = stored.server_version + 1;
	cv = column_versions(t, &stored);
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
					   next_version, false, cxt))
	{
		record_to_hook(&st->reject, reject);
		return false;
	}
	return true;
}

int64
sync_push_created_at_ms(const SyncCommitState *cs)
{
	return PUSH_STATE(cs)->created_at_ms;
}

/* ---------------------------------------------------------------- stored results (JSON) */

static void
append_b64(StringInfo buf, const uint8 *p, uint32 len)
{
	int			enc_len = pg_b64_enc_len(len);
	char	   *enc = palloc(enc_len + 1);
	int			n = pg_b64_encode((const char *) p, len, enc, enc_len);

	if (n < 0)
		internal_error("base64");
	enc[n] = '\0';
	escape_json(buf, enc);
}

static char *
new_cache_identity(void)
{
	uint8		b[16];

	if (!pg_strong_random(b, sizeof(b)))
		internal_error("random");
	b[6] = (b[6] & 0x0f) | 0x40;
	b[8] = (b[8] & 0x3f) | 0x80;
	return psprintf("%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
					b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
					b[12], b[13], b[14], b[15]);
}

/* data-model-and-storage.md, sync_push_results: status, commitSeq, recordedAtMs,
 * cacheIdentity, results[]. */
static char *
outcome_json(const CommitOutcome *o, int64 recorded_at_ms, const char *cache_identity)
{
	StringInfoData b;

	initStringInfo(&b);
	appendStringInfo(&b, "{\"status\": \"%s\"",
					 o->status == SSP_PUSH_REJECTED ? "rejected" : "applied");
	if (o->has_seq)
		appendStringInfo(&b, ", \"commitSeq\": " INT64_FORMAT, o->commit_seq);
	appendStringInfo(&b, ", \"recordedAtMs\": " INT64_FORMAT ", \"cacheIdentity\": ",
					 recorded_at_ms);
	escape_json(&b, cache_identity);
	appendStringInfoString(&b, ", \"results\": [");
	for (int i = 0; i < o->nrecords; i++)
	{
		const OpRecord *r = &o->records[i];

		if (i > 0)
			appendStringInfoString(&b, ", ");
		appendStringInfo(&b, "{\"opIndex\": %d, \"status\": \"%s\"", r->op_index,
						 r->status == SSP_RESULT_APPLIED ? "applied" :
						 r->status == SSP_RESULT_CONFLICT ? "conflict" : "error");
		if (r->status != SSP_RESULT_APPLIED)
		{
			appendStringInfoString(&b, ", \"code\": ");
			escape_json(&b, r->code);
			appendStringInfoString(&b, ", \"message\": ");
			escape_json(&b, r->message);
		}
		if (r->status == SSP_RESULT_CONFLICT)
		{
			appendStringInfo(&b, ", \"serverVersion\": " INT64_FORMAT ", \"serverRow\": ",
							 r->server_version);
			append_b64(&b, r->server_row, r->server_row_len);
			appendStringInfoString(&b, ", \"conflictColumns\": ");
			append_b64(&b, r->conflict_cols, r->conflict_len);
		}
		if (r->status == SSP_RESULT_ERROR)
		{
			appendStringInfo(&b, ", \"retryable\": %s", r->retryable ? "true" : "false");
			if (r->details_json)
				appendStringInfo(&b, ", \"details\": %s", r->details_json);
		}
		appendStringInfoChar(&b, '}');
	}
	appendStringInfoString(&b, "]}");
	return b.data;
}

static bool
jget(JsonbContainer *c, const char *key, JsonbValue *v)
{
	return getKeyJsonValueFromContainer(c, key, strlen(key), v) != NULL;
}

static bool
jget_str(JsonbContainer *c, const char *key, char **out)
{
	JsonbValue	v;

	if (!jget(c, key, &v) || v.type != jbvString)
		return false;
	*out = pnstrdup(v.val.string.val, v.val.string.len);
	return true;
}

static bool
jget_int(JsonbContainer *c, const char *key, int64 *out)
{
	JsonbValue	v;
	char	   *s;
	char	   *end;

	if (!jget(c, key, &v) || v.type != jbvNumeric)
		return false;
	s = DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(v.val.numeric)));
	errno = 0;
	*out = strtoll(s, &end, 10);
	return errno == 0 && *end == '\0';
}

static bool
jget_b64(JsonbContainer *c, const char *key, uint8 **out, uint32 *len)
{
	char	   *s;
	int			dlen;
	int			n;

	if (!jget_str(c, key, &s))
		return false;
	dlen = pg_b64_dec_len(strlen(s));
	*out = palloc(Max(dlen, 1));
	n = pg_b64_decode(s, strlen(s), (char *) *out, dlen);
	if (n < 0)
		return false;
	*len = (uint32) n;
	return true;
}

/* Parse a stored result; false when unreadable.  *identity gets its cacheIdentity. */
static bool
outcome_from_json(Jsonb *j, CommitOutcome *o, char **identity)
{
	JsonbContainer *root;
	JsonbValue	v;
	char	   *status;
	JsonbContainer *arr;
	int			n;

	memset(o, 0, sizeof(*o));
	*identity = NULL;
	if (j == NULL || !JB_ROOT_IS_OBJECT(j))
		return false;
	root = &j->root;
	if (!jget_str(root, "status", &status))
		return false;
	(void) jget_str(root, "cacheIdentity", identity);
	if (strcmp(status, "applied") == 0)
	{
		o->status = SSP_PUSH_CACHED;
		o->has_seq = true;
		if (!jget_int(root, "commitSeq", &o->commit_seq) || o->commit_seq < 1)
			return false;
	}
	else if (strcmp(status, "rejected") == 0)
		o->status = SSP_PUSH_REJECTED;
	else
		return false;
	if (!jget(root, "results", &v) || v.type != jbvBinary || !JsonContainerIsArray(v.val.binary.data))
		return false;
	arr = v.val.binary.data;
	n = JsonContainerSize(arr);
	o->nrecords = n;
	o->records = palloc0(sizeof(OpRecord) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		JsonbValue *e = getIthJsonbValueFromContainer(arr, i);
		JsonbContainer *rc;
		OpRecord   *r = &o->records[i];
		char	   *rs;
		int64		idx;

		if (e == NULL || e->type != jbvBinary || !JsonContainerIsObject(e->val.binary.data))
			return false;
		rc = e->val.binary.data;
		if (!jget_int(rc, "opIndex", &idx) || idx < 0 || idx > PG_INT32_MAX ||
			!jget_str(rc, "status", &rs))
			return false;
		r->op_index = (int32) idx;
		if (strcmp(rs, "applied") == 0)
		{
			r->status = SSP_RESULT_APPLIED;
			continue;
		}
		if (!jget_str(rc, "code", &r->code) || !jget_str(rc, "message", &r->message))
			return false;
		if (strcmp(rs, "conflict") == 0)
		{
			r->status = SSP_RESULT_CONFLICT;
			if (!jget_int(rc, "serverVersion", &r->server_version) ||
				!jget_b64(rc, "serverRow", &r->server_row, &r->server_row_len))
				return false;
			if (!jget_b64(rc, "conflictColumns", &r->conflict_cols, &r->conflict_len))
			{
				r->conflict_cols = NULL;
				r->conflict_len = 0;
			}
		}
		else if (strcmp(rs, "error") == 0)
		{
			r->status = SSP_RESULT_ERROR;
			if (!jget(rc, "retryable", &v) || v.type != jbvBool)
				return false;
			r->retryable = v.val.boolean;
			if (jget(rc, "details", &v) && v.type == jbvBinary)
			{
				Jsonb	   *d = JsonbValueToJsonb(&v);
				char	   *text = JsonbToCString(NULL, &d->root, VARSIZE(d));

				/* normalized again, so a replay writes the same bytes as the first answer */
				r->details_json = normalize_details(text, strlen(text));
			}
		}
		else
			return false;
	}
	return true;
}

static void
cache_miss(CommitOutcome *o)
{
	memset(o, 0, sizeof(*o));
	o->status = SSP_PUSH_REJECTED;
	o->nrecords = 1;
	o->records = palloc0(sizeof(OpRecord));
	set_error(&o->records[0], 0, "sync.idempotency_cache_miss",
			  "the stored push result is unreadable", true);
}

static void
replay(Jsonb *stored, CommitOutcome *o)
{
	char	   *identity;

	if (!outcome_from_json(stored, o, &identity))
		cache_miss(o);
}

/* ---------------------------------------------------------------- output */

static void
write_outcome(SyncRound *round, const SspPushCommit *commit, const CommitOutcome *o,
			  MemoryContext out_cxt)
{
	SspFrame	f;
	SspError	err;
	SspOpResult *res = palloc0(sizeof(SspOpResult) * Max(o->nrecords, 1));
	int			ndetails = 0;
	MemoryContext old;

	memset(&f, 0, sizeof(f));
	f.type = SSP_FRAME_PUSH_RESULT;
	f.push_result.client_commit_id = commit->client_commit_id;
	f.push_result.status = o->status;
	f.push_result.has_commit_seq = o->has_seq;
	f.push_result.commit_seq = o->commit_seq;
	f.push_result.nresults = (uint32) o->nrecords;
	f.push_result.results = res;
	sync_stats_push_result(commit, o->status);
	for (int i = 0; i < o->nrecords; i++)
	{
		const OpRecord *r = &o->records[i];

		res[i].op_index = r->op_index;
		res[i].status = r->status;
		if (r->status == SSP_RESULT_APPLIED)
			continue;
		sync_stats_push_failure(commit, r->op_index, r->status, r->code);
		res[i].code.ptr = r->code;
		/* the wire-2 catalogue has no declared references: their FK-like rejection is the
		 * constraint code it lists for unique/FK/not-null failures (SPEC v2 §10.2) */
		if (round->wire_version < 3 && strcmp(r->code, "sync.reference_violation") == 0)
			res[i].code.ptr = "sync.constraint_violation";
		res[i].code.len = strlen(res[i].code.ptr);
		res[i].message.ptr = r->message;
		res[i].message.len = strlen(r->message);
		if (r->status == SSP_RESULT_CONFLICT)
		{
			res[i].server_version = r->server_version;
			res[i].server_row.ptr = r->server_row;
			res[i].server_row.len = r->server_row_len;
			if (round->wire_version >= 3)
			{
				res[i].conflict_columns.ptr = r->conflict_cols;
				res[i].conflict_columns.len = r->conflict_len;
			}
		}
		else
		{
			res[i].retryable = r->retryable;
			if (r->details_json)
				ndetails++;
		}
	}
	old = MemoryContextSwitchTo(out_cxt);
	if (!ssp_write_frame(round->out, round->wire_version, &f, &err))
		sync_raise("sync.internal_error", "could not encode a push result",
				   psprintf("{\"reason\": \"%s\"}", err.code));
	MemoryContextSwitchTo(old);

	if (ndetails > 0 && o->status == SSP_PUSH_REJECTED)
	{
		SspFrame	d;
		SspDetailsEntry *e = palloc0(sizeof(SspDetailsEntry) * ndetails);
		int			k = 0;

		memset(&d, 0, sizeof(d));
		d.type = SSP_FRAME_PUSH_RESULT_DETAILS;
		d.push_result_details.client_commit_id = commit->client_commit_id;
		for (int i = 0; i < o->nrecords; i++)
		{
			const OpRecord *r = &o->records[i];

			if (r->status != SSP_RESULT_ERROR || r->details_json == NULL)
				continue;
			e[k].op_index = r->op_index;
			e[k].details_json.ptr = r->details_json;
			e[k].details_json.len = strlen(r->details_json);
			k++;
		}
		d.push_result_details.nentries = (uint32) k;
		d.push_result_details.entries = e;
		old = MemoryContextSwitchTo(out_cxt);
		if (!ssp_write_frame(round->out, round->wire_version, &d, &err))
			sync_raise("sync.internal_error", "could not encode push result details",
					   psprintf("{\"reason\": \"%s\"}", err.code));
		MemoryContextSwitchTo(old);
	}
}

/* ---------------------------------------------------------------- one commit */

static bool
is_own_error(const ErrorData *edata)
{
	return edata->detail != NULL && strncmp(edata->detail, "{\"code\": \"sync.", 15) == 0;
}

void
sync_push_commit(SyncRound *round, const SspPushCommit *commit)
{
	MemoryContext out_cxt = CurrentMemoryContext;
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "syncular push commit",
											  ALLOCSET_DEFAULT_SIZES);
	ResourceOwner owner = CurrentResourceOwner;
	PushState	st;
	CommitOutcome outcome;
	Jsonb	   *stored;
	volatile bool applied = false;
	volatile bool rejected = false;

	MemoryContextSwitchTo(cxt);
	memset(&st, 0, sizeof(st));
	memset(&outcome, 0, sizeof(outcome));
	st.round = round;
	st.schema = round->schema;
	st.commit = commit;
	st.client_commit_id = pnstrdup(commit->client_commit_id.ptr, commit->client_commit_id.len);
	st.cs.commit = commit;
	st.cs.client_commit_id = st.client_commit_id;
	st.writing_op = -1;

	/* 1-3: lock, gate, locked idempotency check */
	sync_storage_lock_partition(round->partition);
	sync_gate_check_push(round);
	MemoryContextSwitchTo(cxt);		/* seams may leave SPI's context current */
	stored = sync_storage_push_result_get(round->partition, round->client_id,
										  st.client_commit_id);
	if (stored != NULL)
	{
		replay(stored, &outcome);
		write_outcome(round, commit, &outcome, out_cxt);
		MemoryContextSwitchTo(out_cxt);
		MemoryContextDelete(cxt);
		return;
	}

	/* 4-5: the commit in its own subtransaction */
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		int32		terminated_at = -1;

		prefetch_rows(&st);
		MemoryContextSwitchTo(cxt);
		for (uint32 i = 0; i < commit->nops; i++)
		{
			CHECK_FOR_INTERRUPTS();
			if (!apply_op(&st, (int32) i, &commit->ops[i]))
			{
				terminated_at = (int32) i;
				break;
			}
		}
		if (terminated_at < 0)
		{
			SyncOpReject r = {0};

			bool		ok = sync_enforce_references(round, &st.cs, &r);

			MemoryContextSwitchTo(cxt);
			if (ok)
			{
				ok = sync_validate_commit(round, &st.cs, &r);
				MemoryContextSwitchTo(cxt);
			}
			if (!ok)
			{
				set_reject(&st.reject, r.op_index, &r);
				terminated_at = r.op_index;
			}
		}

		if (terminated_at < 0)
		{
			int64		seq = sync_storage_next_commit_seq(round->partition);
			int64		now = sync_now_ms();
			char	   *json;

			st.created_at_ms = now;

			sync_storage_commit_insert(round->partition, seq, round->client_id,
									   st.client_commit_id, round->actor_id, now,
									   (int64) round->schema->version);
			/*
			 * the changes, their scope index entries and tombstones: one statement per
			 * SYNC_CHANGES_PER_STATEMENT changes instead of one per change (same rows, same
			 * point of the commit)
			 */
			for (int first = 0; first < st.nchanges; first += SYNC_CHANGES_PER_STATEMENT)
			{
				int			n = Min(st.nchanges - first, SYNC_CHANGES_PER_STATEMENT);
				SyncChangeRow *rows = palloc(sizeof(SyncChangeRow) * n);

				for (int k = 0; k < n; k++)
				{
					PendingChange *pc = &st.changes[first + k];

					rows[k].table = pc->table;
					rows[k].row_id = pc->row_id;
					rows[k].op = pc->op;
					rows[k].has_version = pc->has_version;
					rows[k].row_version = pc->version;
					rows[k].scopes_json = pc->scopes_json;
					rows[k].payload = pc->payload;
					rows[k].payload_len = pc->payload_len;
				}
				sync_storage_changes_insert(round->partition, seq, first, n, rows);
				pfree(rows);
			}
			/* the planner sees every row of the commit and enqueues in this transaction */
			st.planning = true;
			sync_plan_reactions(round, &st.cs, seq);
			st.planning = false;
			MemoryContextSwitchTo(cxt);

			outcome.status = SSP_PUSH_APPLIED;
			outcome.has_seq = true;
			outcome.commit_seq = seq;
			outcome.nrecords = (int) commit->nops;
			outcome.records = palloc0(sizeof(OpRecord) * Max(commit->nops, 1));
			for (uint32 i = 0; i < commit->nops; i++)
			{
				outcome.records[i].op_index = (int32) i;
				outcome.records[i].status = SSP_RESULT_APPLIED;
			}
			json = outcome_json(&outcome, now, new_cache_identity());
			sync_storage_push_result_insert_new(round->partition, round->client_id,
												st.client_commit_id, json);
			sync_wakeup_commit(round->partition, seq);
			ReleaseCurrentSubTransaction();
			applied = true;
		}
		else
		{
			RollbackAndReleaseCurrentSubTransaction();
			rejected = true;
		}
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		int32		writing = st.writing_op;
		bool		planning = st.planning;
		ErrorData  *edata = sync_subxact_rollback(cxt, owner);

		if (writing >= 0 && ERRCODE_TO_CATEGORY(edata->sqlerrcode) ==
			ERRCODE_INTEGRITY_CONSTRAINT_VIOLATION)
		{
			/* fixed text: the database message names the constraint / index, never shown */
			ereport(LOG,
					(errmsg("syncular: commit \"%s\" rejected at opIndex %d: write violates a relational constraint (SQLSTATE %s)",
							st.client_commit_id, writing, unpack_sql_state(edata->sqlerrcode))));
			set_error(&st.reject, writing, "sync.constraint_violation",
					  "write violates a relational constraint", false);
			rejected = true;
			FreeErrorData(edata);
		}
		else if (writing >= 0 && edata->sqlerrcode == ERRCODE_PROGRAM_LIMIT_EXCEEDED)
		{
			/*
			 * A size limit of the row write (an index entry past the btree maximum, a value
			 * past a type's limit): the same data fails the same way on every retry, so it is
			 * a durable rejection of this commit, not a round failure.  The subtransaction is
			 * already rolled back.
			 */
			ereport(LOG,
					(errmsg("syncular: commit \"%s\" rejected at opIndex %d: the row exceeds a storage limit: %s",
							st.client_commit_id, writing, edata->message)));
			set_error(&st.reject, writing, "sync.invalid_request",
					  "the row exceeds a storage limit", false);
			st.reject.details_json = pstrdup("{\"reason\":\"value_too_large\"}");
			rejected = true;
			FreeErrorData(edata);
		}
		else if (edata->sqlerrcode == ERRCODE_QUERY_CANCELED ||
				 edata->sqlerrcode == ERRCODE_ADMIN_SHUTDOWN ||
				 (is_own_error(edata) && !planning))
			ReThrowError(edata);
		else
		{
			ereport(LOG,
					(errmsg("syncular: %s of commit \"%s\" failed: %s",
							planning ? "reaction planning" : "push",
							st.client_commit_id, edata->message),
					 edata->detail ? errdetail_internal("%s", edata->detail) : 0,
					 errcode(edata->sqlerrcode)));
			sync_raise("sync.internal_error", "internal error while applying a push", NULL);
		}
	}
	PG_END_TRY();

	if (rejected)
	{
		char	   *identity = new_cache_identity();
		char	   *json;
		Jsonb	   *canonical;
		char	   *canonical_identity;

		outcome.status = SSP_PUSH_REJECTED;
		outcome.has_seq = false;
		outcome.nrecords = 1;
		outcome.records = palloc(sizeof(OpRecord));
		outcome.records[0] = st.reject;
		json = outcome_json(&outcome, sync_now_ms(), identity);
		(void) sync_storage_push_result_insert(round->partition, round->client_id,
											   st.client_commit_id, json);
		canonical = sync_storage_push_result_get(round->partition, round->client_id,
												 st.client_commit_id);
		{
			CommitOutcome other;

			if (canonical == NULL || !outcome_from_json(canonical, &other, &canonical_identity))
				cache_miss(&outcome);
			else if (canonical_identity == NULL || strcmp(canonical_identity, identity) != 0)
				outcome = other;	/* another delivery won: replay its result */
		}
	}
	if (!applied && !rejected)
		internal_error("outcome");
	write_outcome(round, commit, &outcome, out_cxt);
	MemoryContextSwitchTo(out_cxt);
	MemoryContextDelete(cxt);
}
