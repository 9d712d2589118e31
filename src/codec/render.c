/*
 * render.c — canonical JSON rendering (SPEC §11) of decoded messages and
 * segments, compact.  Shapes follow the golden .json renderings: enums as
 * strings, bytes as standard base64, absent opt fields omitted, json-typed
 * fields embedded as JSON values (the validated raw text inline),
 * non-finite floats as null, unknown frames as {"type":"UNKNOWN",
 * "frameType":n,"payload":base64}.
 */
#include "ssp_internal.h"

#include <string.h>

typedef struct J
{
	SspBuf     *b;
	bool        first;
} J;

/*
 * Value primitives: the one spelling of each JSON form, shared by the object
 * members (k_*) and by segment column values (render_value).
 */
static void
put_int(SspBuf *b, int64_t v)
{
	ssp_buf_printf(b, "%lld", (long long) v);
}

static void
put_bool(SspBuf *b, bool v)
{
	if (v)
		ssp_buf_append(b, "true", 4);
	else
		ssp_buf_append(b, "false", 5);
}

/* bytes render as a JSON string of standard base64 */
static void
put_b64(SspBuf *b, const uint8_t *p, size_t len)
{
	ssp_put_u8(b, '"');
	ssp_base64_encode(b, p, len);
	ssp_put_u8(b, '"');
}

/* ',' before every element of an array or object but the first */
static void
sep(SspBuf *b, uint32_t i)
{
	if (i)
		ssp_put_u8(b, ',');
}

static void
key(J *j, const char *k)
{
	if (!j->first)
		ssp_put_u8(j->b, ',');
	j->first = false;
	ssp_put_u8(j->b, '"');
	ssp_buf_append(j->b, k, strlen(k));
	ssp_buf_append(j->b, "\":", 2);
}

static void
open_obj(J *j, SspBuf *b)
{
	j->b = b;
	j->first = true;
	ssp_put_u8(b, '{');
}

static void
close_obj(J *j)
{
	ssp_put_u8(j->b, '}');
}

/* element i of an array of objects: its separator, then a fresh object */
static void
elem_obj(J *o, SspBuf *b, uint32_t i)
{
	sep(b, i);
	open_obj(o, b);
}

/* "k":[ ; the caller writes the elements (sep / elem_obj) and the ']' */
static void
k_arr(J *j, const char *k)
{
	key(j, k);
	ssp_put_u8(j->b, '[');
}

static void
k_str(J *j, const char *k, const SspStr *s)
{
	key(j, k);
	ssp_json_escape(j->b, s->ptr, s->len);
}

static void
k_lit(J *j, const char *k, const char *v)
{
	key(j, k);
	ssp_json_escape(j->b, v, strlen(v));
}

static void
k_int(J *j, const char *k, int64_t v)
{
	key(j, k);
	put_int(j->b, v);
}

static void
k_bool(J *j, const char *k, bool v)
{
	key(j, k);
	put_bool(j->b, v);
}

static void
k_b64(J *j, const char *k, const SspBytes *v)
{
	key(j, k);
	put_b64(j->b, v->ptr, v->len);
}

/* json-typed field: the raw text is valid JSON, so it embeds as a value */
static void
k_json(J *j, const char *k, const SspStr *s)
{
	key(j, k);
	ssp_buf_append(j->b, s->ptr, s->len);
}

static void
k_scope_map(J *j, const char *k, const SspScopeMap *m)
{
	SspBuf     *b = j->b;

	key(j, k);
	ssp_put_u8(b, '{');
	for (uint32_t i = 0; i < m->n; i++)
	{
		sep(b, i);
		ssp_json_escape(b, m->entries[i].key.ptr, m->entries[i].key.len);
		ssp_buf_append(b, ":[", 2);
		for (uint32_t v = 0; v < m->entries[i].nvalues; v++)
		{
			sep(b, v);
			ssp_json_escape(b, m->entries[i].values[v].ptr, m->entries[i].values[v].len);
		}
		ssp_put_u8(b, ']');
	}
	ssp_put_u8(b, '}');
}

static void
k_str_map(J *j, const char *k, const SspStrMap *m)
{
	SspBuf     *b = j->b;

	key(j, k);
	ssp_put_u8(b, '{');
	for (uint32_t i = 0; i < m->n; i++)
	{
		sep(b, i);
		ssp_json_escape(b, m->entries[i].key.ptr, m->entries[i].key.len);
		ssp_put_u8(b, ':');
		ssp_json_escape(b, m->entries[i].value.ptr, m->entries[i].value.len);
	}
	ssp_put_u8(b, '}');
}

static const char *
enum_name(uint8_t v, const char *const *names, uint8_t max)
{
	return v >= 1 && v <= max ? names[v - 1] : "?";
}

static const char *const op_names[] = {"upsert", "delete"};
static const char *const push_names[] = {"applied", "cached", "rejected"};
static const char *const result_names[] = {"applied", "conflict", "error"};
static const char *const sub_names[] = {"active", "revoked", "reset"};
static const char *const media_names[] = {"rows", "sqlite"};

static void
render_frame_body(J *j, uint16_t wire, const SspFrame *f)
{
	SspBuf     *b = j->b;

	switch (f->type)
	{
		case SSP_FRAME_REQ_HEADER:
			{
				const SspReqHeader *h = &f->req_header;

				k_str(j, "clientId", &h->client_id);
				k_int(j, "schemaVersion", h->schema_version);
				if (wire >= 2 && h->has_log_epoch)
					k_str(j, "logEpoch", &h->log_epoch);
				break;
			}
		case SSP_FRAME_PUSH_COMMIT:
			{
				const SspPushCommit *c = &f->push_commit;

				k_str(j, "clientCommitId", &c->client_commit_id);
				k_arr(j, "operations");
				for (uint32_t i = 0; i < c->nops; i++)
				{
					const SspPushOp *op = &c->ops[i];
					J           o;

					elem_obj(&o, b, i);
					k_str(&o, "table", &op->table);
					k_str(&o, "rowId", &op->row_id);
					k_lit(&o, "op", enum_name(op->op, op_names, 2));
					if (op->has_base_version)
						k_int(&o, "baseVersion", op->base_version);
					if (op->has_payload)
						k_b64(&o, "payload", &op->payload);
					close_obj(&o);
				}
				ssp_put_u8(b, ']');
				break;
			}
		case SSP_FRAME_PULL_HEADER:
			k_int(j, "limitCommits", f->pull_header.limit_commits);
			k_int(j, "limitSnapshotRows", f->pull_header.limit_snapshot_rows);
			k_int(j, "maxSnapshotPages", f->pull_header.max_snapshot_pages);
			k_int(j, "accept", f->pull_header.accept);
			break;
		case SSP_FRAME_SUBSCRIPTION:
			{
				const SspSubscription *s = &f->subscription;

				k_str(j, "id", &s->id);
				k_str(j, "table", &s->table);
				k_scope_map(j, "scopes", &s->scopes);
				if (s->has_params)
					k_json(j, "params", &s->params);
				k_int(j, "cursor", s->cursor);
				if (s->has_bootstrap_state)
					k_json(j, "bootstrapState", &s->bootstrap_state);
				break;
			}
		case SSP_FRAME_RESP_HEADER:
			{
				const SspRespHeader *h = &f->resp_header;

				if (h->has_required_schema_version)
					k_int(j, "requiredSchemaVersion", h->required_schema_version);
				if (h->has_latest_schema_version)
					k_int(j, "latestSchemaVersion", h->latest_schema_version);
				if (wire >= 2)
				{
					k_str(j, "logEpoch", &h->log_epoch);
					k_bool(j, "resetRequired", h->reset_required);
				}
				break;
			}
		case SSP_FRAME_LEASE:
			k_str(j, "leaseId", &f->lease.lease_id);
			k_int(j, "expiresAtMs", f->lease.expires_at_ms);
			break;
		case SSP_FRAME_PUSH_RESULT:
			{
				const SspPushResult *p = &f->push_result;

				k_str(j, "clientCommitId", &p->client_commit_id);
				k_lit(j, "status", enum_name(p->status, push_names, 3));
				if (p->has_commit_seq)
					k_int(j, "commitSeq", p->commit_seq);
				k_arr(j, "results");
				for (uint32_t i = 0; i < p->nresults; i++)
				{
					const SspOpResult *r = &p->results[i];
					J           o;

					elem_obj(&o, b, i);
					k_int(&o, "opIndex", r->op_index);
					k_lit(&o, "status", enum_name(r->status, result_names, 3));
					if (r->status == SSP_RESULT_CONFLICT)
					{
						k_str(&o, "code", &r->code);
						k_str(&o, "message", &r->message);
						k_int(&o, "serverVersion", r->server_version);
						k_b64(&o, "serverRow", &r->server_row);
						if (wire >= 3)
							k_b64(&o, "conflictColumns", &r->conflict_columns);
					}
					else if (r->status == SSP_RESULT_ERROR)
					{
						k_str(&o, "code", &r->code);
						k_str(&o, "message", &r->message);
						k_bool(&o, "retryable", r->retryable);
					}
					close_obj(&o);
				}
				ssp_put_u8(b, ']');
				break;
			}
		case SSP_FRAME_PUSH_RESULT_DETAILS:
			{
				const SspPushResultDetails *d = &f->push_result_details;

				k_str(j, "clientCommitId", &d->client_commit_id);
				k_arr(j, "entries");
				for (uint32_t i = 0; i < d->nentries; i++)
				{
					J           o;

					elem_obj(&o, b, i);
					k_int(&o, "opIndex", d->entries[i].op_index);
					k_json(&o, "details", &d->entries[i].details_json);
					close_obj(&o);
				}
				ssp_put_u8(b, ']');
				break;
			}
		case SSP_FRAME_SUB_START:
			{
				const SspSubStart *s = &f->sub_start;

				k_str(j, "id", &s->id);
				k_lit(j, "status", enum_name(s->status, sub_names, 3));
				k_str(j, "reasonCode", &s->reason_code);
				k_scope_map(j, "effectiveScopes", &s->effective_scopes);
				k_bool(j, "bootstrap", s->bootstrap);
				break;
			}
		case SSP_FRAME_COMMIT:
			{
				const SspCommit *c = &f->commit;

				k_int(j, "commitSeq", c->commit_seq);
				k_int(j, "createdAtMs", c->created_at_ms);
				k_str(j, "actorId", &c->actor_id);
				k_arr(j, "tables");
				for (uint32_t i = 0; i < c->ntables; i++)
				{
					sep(b, i);
					ssp_json_escape(b, c->tables[i].ptr, c->tables[i].len);
				}
				ssp_put_u8(b, ']');
				k_arr(j, "changes");
				for (uint32_t i = 0; i < c->nchanges; i++)
				{
					const SspChange *ch = &c->changes[i];
					J           o;

					elem_obj(&o, b, i);
					k_int(&o, "tableIndex", ch->table_index);
					k_str(&o, "rowId", &ch->row_id);
					k_lit(&o, "op", enum_name(ch->op, op_names, 2));
					if (ch->has_row_version)
						k_int(&o, "rowVersion", ch->row_version);
					k_str_map(&o, "scopes", &ch->scopes);
					if (ch->has_row)
						k_b64(&o, "row", &ch->row);
					close_obj(&o);
				}
				ssp_put_u8(b, ']');
				break;
			}
		case SSP_FRAME_SEGMENT_REF:
			{
				const SspSegmentRef *s = &f->segment_ref;

				k_str(j, "segmentId", &s->segment_id);
				k_lit(j, "mediaType", enum_name(s->media_type, media_names, 2));
				k_str(j, "table", &s->table);
				k_int(j, "byteLength", s->byte_length);
				k_int(j, "rowCount", s->row_count);
				k_int(j, "asOfCommitSeq", s->as_of_commit_seq);
				k_str(j, "scopeDigest", &s->scope_digest);
				if (s->has_row_cursor)
					k_str(j, "rowCursor", &s->row_cursor);
				if (s->has_next_row_cursor)
					k_str(j, "nextRowCursor", &s->next_row_cursor);
				if (s->has_url)
					k_str(j, "url", &s->url);
				if (s->has_url_expires_at_ms)
					k_int(j, "urlExpiresAtMs", s->url_expires_at_ms);
				break;
			}
		case SSP_FRAME_SEGMENT_INLINE:
			k_b64(j, "payload", &f->segment_inline.payload);
			break;
		case SSP_FRAME_SUB_END:
			k_int(j, "nextCursor", f->sub_end.next_cursor);
			if (f->sub_end.has_bootstrap_state)
				k_json(j, "bootstrapState", &f->sub_end.bootstrap_state);
			break;
		case SSP_FRAME_ERROR:
			{
				const SspErrorFrame *e = &f->error;

				k_str(j, "code", &e->code);
				k_str(j, "message", &e->message);
				k_str(j, "category", &e->category);
				k_bool(j, "retryable", e->retryable);
				k_str(j, "recommendedAction", &e->recommended_action);
				if (e->has_details)
					k_json(j, "details", &e->details);
				break;
			}
	}
}

bool
ssp_render_frame(uint16_t wire, const SspFrame *f, SspBuf *out, SspError *err)
{
	J           j;
	const char *name = f->unknown ? NULL : ssp_frame_name(f->type);

	if (!f->unknown && (name == NULL || f->type == SSP_FRAME_END))
		return ssp_fail(err, SSP_ERR_INTERNAL, "cannot render frame type 0x%02x", f->type);
	open_obj(&j, out);
	if (f->unknown)
	{
		k_lit(&j, "type", "UNKNOWN");
		k_int(&j, "frameType", f->type);
		k_b64(&j, "payload", &f->unknown_frame.payload);
	}
	else
	{
		k_lit(&j, "type", name);
		render_frame_body(&j, wire, f);
	}
	close_obj(&j);
	return out->oom ? ssp_oom(err) : true;
}

bool
ssp_render_message(const SspMessage *msg, SspBuf *out, SspError *err)
{
	J           j;

	open_obj(&j, out);
	k_lit(&j, "magic", "SSP2");
	k_int(&j, "wireVersion", msg->wire_version);
	k_lit(&j, "msgKind", msg->kind == SSP_KIND_REQUEST ? "request" : "response");
	k_arr(&j, "frames");
	for (uint32_t i = 0; i < msg->nframes; i++)
	{
		sep(out, i);
		if (!ssp_render_frame(msg->wire_version, &msg->frames[i], out, err))
			return false;
	}
	ssp_put_u8(out, ']');
	close_obj(&j);
	return out->oom ? ssp_oom(err) : true;
}

/* A column's name as a string: name_len 0 means NUL-terminated (see SspColumn) */
static SspStr
col_name(const SspColumn *c)
{
	SspStr      nm = {c->name, c->name_len ? c->name_len : (uint32_t) strlen(c->name)};

	return nm;
}

/* One column value; blob_ref renders as its parsed JSON object
 * (UNCONFIRMED: no vector carries a blob_ref column). */
static void
render_value(SspBuf *b, const SspColumn *c, const SspValue *v)
{
	if (v->is_null)
	{
		ssp_buf_append(b, "null", 4);
		return;
	}
	switch (c->type)
	{
		case SSP_COL_STRING:
			ssp_json_escape(b, v->str.ptr, v->str.len);
			break;
		case SSP_COL_INTEGER:
			put_int(b, v->i);
			break;
		case SSP_COL_FLOAT:
			ssp_render_double(b, v->f);
			break;
		case SSP_COL_BOOLEAN:
			put_bool(b, v->b);
			break;
		case SSP_COL_JSON:
		case SSP_COL_BLOB_REF:
			ssp_buf_append(b, v->str.ptr, v->str.len);
			break;
		default:                /* bytes, crdt */
			put_b64(b, v->bytes.ptr, v->bytes.len);
			break;
	}
}

bool
ssp_render_segment(const SspSegment *seg, SspBuf *out, SspError *err)
{
	J           j;

	open_obj(&j, out);
	k_lit(&j, "magic", "SSG2");
	k_int(&j, "formatVersion", seg->format_version);
	k_str(&j, "table", &seg->table);
	k_int(&j, "schemaVersion", seg->schema_version);
	k_arr(&j, "columns");
	for (uint16_t i = 0; i < seg->ncolumns; i++)
	{
		const SspColumn *c = &seg->columns[i];
		const char *tn = ssp_column_type_name(c->type);
		SspStr      nm = col_name(c);
		J           o;

		if (tn == NULL)
			return ssp_fail(err, SSP_ERR_INTERNAL, "bad column type tag %u", c->type);
		elem_obj(&o, out, i);
		k_str(&o, "name", &nm);
		k_lit(&o, "type", tn);
		k_bool(&o, "nullable", c->nullable);
		close_obj(&o);
	}
	ssp_put_u8(out, ']');
	k_arr(&j, "blocks");
	for (uint32_t bi = 0; bi < seg->nblocks; bi++)
	{
		const SspSegmentBlock *blk = &seg->blocks[bi];

		sep(out, bi);
		ssp_put_u8(out, '[');
		for (uint32_t ri = 0; ri < blk->nrows; ri++)
		{
			const SspSegmentRow *row = &blk->rows[ri];
			J           o;

			if (row->values == NULL)
				return ssp_fail(err, SSP_ERR_INTERNAL, "segment row without decoded values");
			elem_obj(&o, out, ri);
			k_int(&o, "serverVersion", row->server_version);
			key(&o, "values");
			ssp_put_u8(out, '{');
			for (uint16_t c = 0; c < seg->ncolumns; c++)
			{
				const SspColumn *col = &seg->columns[c];
				SspStr      nm = col_name(col);

				sep(out, c);
				ssp_json_escape(out, nm.ptr, nm.len);
				ssp_put_u8(out, ':');
				render_value(out, col, &row->values[c]);
			}
			ssp_put_u8(out, '}');
			close_obj(&o);
		}
		ssp_put_u8(out, ']');
	}
	ssp_put_u8(out, ']');
	close_obj(&j);
	return out->oom ? ssp_oom(err) : true;
}
