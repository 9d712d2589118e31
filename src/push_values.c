/*
 * push_values.c — row values for the push pipeline: scope values, column versions
 * (data-model-and-storage.md §1.4), the full-row codec bytes, blob references, and the size
 * limits checked before a row is written (syncular.max_row_bytes, the key maxima of engine.h).
 */
#include "postgres.h"

#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"

#include "blobs.h"
#include "push_internal.h"

/* ---------------------------------------------------------------- helpers */

/* A column value as a scope value string; NULL when absent, NULL, empty or not renderable. */
char *
push_scope_text(const SspColumn *col, const SspValue *v)
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
void
push_payload_scopes(const SyncTable *t, const SspValue *vals, SyncRowScopes *out, bool *complete)
{
	out->n = 0;
	out->vars = palloc0(sizeof(char *) * Max(t->nscopes, 1));
	out->values = palloc0(sizeof(char *) * Max(t->nscopes, 1));
	*complete = true;
	for (int i = 0; i < t->nscopes; i++)
	{
		const SyncScope *sc = &t->scopes[i];
		char	   *v = push_scope_text(&t->codec_columns[sc->column_index], &vals[sc->column_index]);

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

char *
push_jsonb_text(Jsonb *j)
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
int64 *
push_column_versions(const SyncTable *t, const SyncStoredRow *row)
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
				push_internal_error("column_versions");
			cv[ord] = (int64) ver;
		}
	}
	return cv;
}

bytea *
push_encode_column_versions(const SyncTable *t, const int64 *cv)
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

uint8 *
push_encode_full(const SyncTable *t, const SspValue *vals, size_t *len)
{
	SspBuf		b;
	SspError	err;

	ssp_buf_init(&b);
	if (!ssp_row_encode_full(t->codec_columns, t->ncolumns, vals, &b, &err))
		push_internal_error("row encode");
	*len = b.len;
	/* the buffer grew by doubling: give the slack back, the commit keeps the row until it ends */
	if (b.cap > b.len + 1024)
		b.data = repalloc(b.data, Max(b.len, 1));
	return b.data;
}

/* The values of a stored row's payload; a payload that does not decode is an internal error. */
SspValue *
push_decode_stored(const SyncTable *t, const SyncStoredRow *stored)
{
	SspValue   *vals = palloc0(sizeof(SspValue) * t->ncolumns);
	SspError	err;

	if (!ssp_row_decode_full(ssp_arena_new(), t->codec_columns, t->ncolumns,
							 (const uint8 *) VARDATA_ANY(stored->payload),
							 VARSIZE_ANY_EXHDR(stored->payload), vals, &err))
		push_internal_error("stored payload");
	return vals;
}

/* blobId of each non-NULL blob_ref value of a row. */
int
push_collect_blob_ids(const SyncTable *t, const SspValue *vals, char ***ids_out)
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

bool
push_table_has_blob_refs(const SyncTable *t)
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
void
push_set_size_reject(OpRecord *rec, int32 op_index, const char *reason, const char *what,
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
	push_set_reject(rec, op_index, &r);
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
bool
push_check_row_keys(PushState *st, int32 op_index, const SyncTable *t, const SspValue *row,
			   bool insert)
{
	OpRecord   *rej = &st->reject;

	for (int s = 0; insert && s < t->nscopes; s++)
	{
		const SyncScope *sc = &t->scopes[s];
		size_t		n = value_key_bytes(&t->columns[sc->column_index], &row[sc->column_index]);

		if (n > SYNC_MAX_SCOPE_VALUE_BYTES)
		{
			push_set_size_reject(rej, op_index, "key_too_large", "a scope value", n,
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
			push_set_size_reject(rej, op_index, "key_too_large", "the key of a declared index", n,
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
			push_set_size_reject(rej, op_index, "key_too_large", "a reference column value", n,
							SYNC_MAX_INDEX_KEY_BYTES, t->columns[c].name);
			return false;
		}
	}
	if (push_table_has_blob_refs(t))
	{
		char	  **ids;
		int			nids = push_collect_blob_ids(t, row, &ids);
		SyncOpReject hook;

		for (int k = 0; k < nids; k++)
			if (strlen(ids[k]) > SYNC_MAX_ROW_ID_BYTES)
			{
				push_set_size_reject(rej, op_index, "key_too_large", "a blobId",
								strlen(ids[k]), SYNC_MAX_ROW_ID_BYTES, NULL);
				return false;
			}
		/* §5.9.6: every referenced blob is stored (and locked until the commit ends) */
		if (!sync_blobs_check_row(st->round->partition, t, row, op_index, &hook))
		{
			push_set_reject(rej, op_index, &hook);
			return false;
		}
	}
	return true;
}

/* syncular.max_row_bytes on the full row about to be written. */
bool
push_check_row_bytes(PushState *st, int32 op_index, size_t payload_len)
{
	if (payload_len <= (size_t) sync_max_row_bytes)
		return true;
	push_set_size_reject(&st->reject, op_index, "row_too_large", "the row", payload_len,
					(size_t) sync_max_row_bytes, NULL);
	return false;
}

uint8 *
push_new_bitmap(const SyncTable *t, uint32 *len)
{
	*len = (uint32) ((t->ncolumns + 7) / 8);
	return palloc0(Max(*len, 1));
}

void
push_set_conflict(OpRecord *rec, int32 op_index, const SyncStoredRow *row, uint8 *bitmap,
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
