/*
 * wire.c — reading SSP2 messages: the envelope (WF §2) and the decoders of the request and
 * response frames (WF §3.2, §3.4, §5.1) for wire versions 1-3, with unknown-frame
 * skip-and-keep; each frame is checked against the message grammar (grammar.c: the registered
 * types too) and a PUSH_RESULT_DETAILS body against details.c.  The writers are in
 * wire_write.c.
 */
#include "ssp_internal.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Frame decoders                                                      */
/* ------------------------------------------------------------------ */

static bool
rd_nonempty(SspReader *r, SspStr *s, const char *field, SspError *err)
{
	TRY(ssp_rd_str(r, s, err));
	if (s->len == 0)
		return ssp_fail(err, INV, "%s: %s must not be empty", r->what, field);
	return true;
}

static bool
rd_opt_str(SspReader *r, bool *has, SspStr *s, SspError *err)
{
	TRY(ssp_rd_opt(r, has, err));
	return !*has || ssp_rd_str(r, s, err);
}

static bool
rd_opt_json(SspReader *r, bool *has, SspStr *s, SspError *err)
{
	TRY(ssp_rd_opt(r, has, err));
	return !*has || ssp_rd_json(r, s, err);
}

static bool
rd_opt_i64(SspReader *r, bool *has, int64_t *v, SspError *err)
{
	TRY(ssp_rd_opt(r, has, err));
	return !*has || ssp_rd_i64(r, v, err);
}

static bool
rd_opt_i32(SspReader *r, bool *has, int32_t *v, SspError *err)
{
	TRY(ssp_rd_opt(r, has, err));
	return !*has || ssp_rd_i32(r, v, err);
}

static bool
rd_enum(SspReader *r, uint8_t *v, uint8_t max, const char *field, SspError *err)
{
	TRY(ssp_rd_u8(r, v, err));
	if (*v < 1 || *v > max)
		return ssp_fail(err, INV, "%s: %s value %u out of range at offset %zu",
						r->what, field, *v, r->base + r->pos - 1);
	return true;
}

static void *
rd_alloc(SspReader *r, size_t n, size_t sz)
{
	return ssp_arena_array(r->arena, n ? n : 1, sz);
}

/* map str -> list(str), keys strictly ascending in UTF-16 order */
static bool
rd_scope_map(SspReader *r, SspScopeMap *m, SspError *err)
{
	TRY(ssp_rd_count(r, &m->n, 8, err));
	m->entries = rd_alloc(r, m->n, sizeof(SspScopeEntry));
	if (!m->entries)
		return ssp_oom(err);
	for (uint32_t i = 0; i < m->n; i++)
	{
		SspScopeEntry *e = &m->entries[i];

		TRY(ssp_rd_str(r, &e->key, err));
		if (i > 0 && ssp_utf16_cmp(m->entries[i - 1].key.ptr, m->entries[i - 1].key.len,
								   e->key.ptr, e->key.len) >= 0)
			return ssp_fail(err, INV, "%s: map keys not strictly ascending at offset %zu",
							r->what, r->base + r->pos);
		TRY(ssp_rd_count(r, &e->nvalues, 4, err));
		e->values = rd_alloc(r, e->nvalues, sizeof(SspStr));
		if (!e->values)
			return ssp_oom(err);
		for (uint32_t j = 0; j < e->nvalues; j++)
			TRY(ssp_rd_str(r, &e->values[j], err));
	}
	return true;
}

static bool
rd_str_map(SspReader *r, SspStrMap *m, SspError *err)
{
	TRY(ssp_rd_count(r, &m->n, 8, err));
	m->entries = rd_alloc(r, m->n, sizeof(SspStrPair));
	if (!m->entries)
		return ssp_oom(err);
	for (uint32_t i = 0; i < m->n; i++)
	{
		SspStrPair *e = &m->entries[i];

		TRY(ssp_rd_str(r, &e->key, err));
		if (i > 0 && ssp_utf16_cmp(m->entries[i - 1].key.ptr, m->entries[i - 1].key.len,
								   e->key.ptr, e->key.len) >= 0)
			return ssp_fail(err, INV, "%s: map keys not strictly ascending at offset %zu",
							r->what, r->base + r->pos);
		TRY(ssp_rd_str(r, &e->value, err));
	}
	return true;
}

static bool
dec_req_header(SspReader *r, uint16_t wire, SspReqHeader *h, SspError *err)
{
	TRY(rd_nonempty(r, &h->client_id, "clientId", err));
	TRY(ssp_rd_i32(r, &h->schema_version, err));
	if (h->schema_version < 1)
		return ssp_fail(err, INV, "%s: schemaVersion %d < 1", r->what, (int) h->schema_version);
	if (wire >= 2)
	{
		TRY(rd_opt_str(r, &h->has_log_epoch, &h->log_epoch, err));
		if (h->has_log_epoch && h->log_epoch.len == 0)
			return ssp_fail(err, INV, "%s: logEpoch must not be empty", r->what);
	}
	return true;
}

static bool
dec_push_commit(SspReader *r, SspPushCommit *c, SspError *err)
{
	TRY(rd_nonempty(r, &c->client_commit_id, "clientCommitId", err));
	TRY(ssp_rd_count(r, &c->nops, 11, err));
	if (c->nops == 0)
		return ssp_fail(err, SSP_ERR_EMPTY_COMMIT, "PUSH_COMMIT \"%.*s\" has zero operations",
						(int) (c->client_commit_id.len > 64 ? 64 : c->client_commit_id.len),
						c->client_commit_id.ptr);
	c->ops = rd_alloc(r, c->nops, sizeof(SspPushOp));
	if (!c->ops)
		return ssp_oom(err);
	for (uint32_t i = 0; i < c->nops; i++)
	{
		SspPushOp  *op = &c->ops[i];

		TRY(ssp_rd_str(r, &op->table, err));
		TRY(ssp_rd_str(r, &op->row_id, err));
		TRY(rd_enum(r, &op->op, 2, "op", err));
		TRY(rd_opt_i64(r, &op->has_base_version, &op->base_version, err));
		TRY(ssp_rd_opt(r, &op->has_payload, err));
		if (op->has_payload)
			TRY(ssp_rd_bytes(r, &op->payload, err));
		if (op->has_payload != (op->op == SSP_OP_UPSERT))
			return ssp_fail(err, INV, "%s: operation %u payload presence does not match op",
							r->what, i);
	}
	return true;
}

static bool
dec_pull_header(SspReader *r, SspPullHeader *p, SspError *err)
{
	TRY(ssp_rd_i32(r, &p->limit_commits, err));
	TRY(ssp_rd_i32(r, &p->limit_snapshot_rows, err));
	TRY(ssp_rd_i32(r, &p->max_snapshot_pages, err));
	TRY(ssp_rd_u8(r, &p->accept, err));
	if (p->accept & 0xF0)
		return ssp_fail(err, INV, "%s: accept has reserved bits set (0x%02x)", r->what, p->accept);
	return true;
}

static bool
dec_subscription(SspReader *r, SspSubscription *s, SspError *err)
{
	TRY(ssp_rd_str(r, &s->id, err));
	TRY(ssp_rd_str(r, &s->table, err));
	TRY(rd_scope_map(r, &s->scopes, err));
	TRY(rd_opt_json(r, &s->has_params, &s->params, err));
	TRY(ssp_rd_i64(r, &s->cursor, err));
	TRY(rd_opt_json(r, &s->has_bootstrap_state, &s->bootstrap_state, err));
	return true;
}

static bool
dec_resp_header(SspReader *r, uint16_t wire, SspRespHeader *h, SspError *err)
{
	TRY(rd_opt_i32(r, &h->has_required_schema_version, &h->required_schema_version, err));
	TRY(rd_opt_i32(r, &h->has_latest_schema_version, &h->latest_schema_version, err));
	if (wire >= 2)
	{
		TRY(rd_nonempty(r, &h->log_epoch, "logEpoch", err));
		TRY(ssp_rd_bool(r, &h->reset_required, err));
	}
	return true;
}

static bool
dec_lease(SspReader *r, SspLease *l, SspError *err)
{
	TRY(rd_nonempty(r, &l->lease_id, "leaseId", err));
	return ssp_rd_i64(r, &l->expires_at_ms, err);
}

static bool
dec_push_result(SspReader *r, uint16_t wire, SspPushResult *p, SspError *err)
{
	TRY(ssp_rd_str(r, &p->client_commit_id, err));
	TRY(rd_enum(r, &p->status, 3, "status", err));
	TRY(rd_opt_i64(r, &p->has_commit_seq, &p->commit_seq, err));
	if (p->has_commit_seq != (p->status != SSP_PUSH_REJECTED))
		return ssp_fail(err, INV, "%s: commitSeq presence does not match status", r->what);
	TRY(ssp_rd_count(r, &p->nresults, 5, err));
	p->results = rd_alloc(r, p->nresults, sizeof(SspOpResult));
	if (!p->results)
		return ssp_oom(err);
	for (uint32_t i = 0; i < p->nresults; i++)
	{
		SspOpResult *o = &p->results[i];

		TRY(ssp_rd_i32(r, &o->op_index, err));
		TRY(rd_enum(r, &o->status, 3, "result status", err));
		if (o->status == SSP_RESULT_CONFLICT)
		{
			TRY(ssp_rd_str(r, &o->code, err));
			TRY(ssp_rd_str(r, &o->message, err));
			TRY(ssp_rd_i64(r, &o->server_version, err));
			TRY(ssp_rd_bytes(r, &o->server_row, err));
			if (wire >= 3)
				TRY(ssp_rd_bytes(r, &o->conflict_columns, err));
		}
		else if (o->status == SSP_RESULT_ERROR)
		{
			TRY(ssp_rd_str(r, &o->code, err));
			TRY(ssp_rd_str(r, &o->message, err));
			TRY(ssp_rd_bool(r, &o->retryable, err));
		}
	}
	return true;
}

static bool
dec_details(SspReader *r, SspPushResultDetails *d, SspError *err)
{
	TRY(rd_nonempty(r, &d->client_commit_id, "clientCommitId", err));
	TRY(ssp_rd_count(r, &d->nentries, 8, err));
	if (d->nentries == 0)
		return ssp_fail(err, INV, "%s: no entries", r->what);
	d->entries = rd_alloc(r, d->nentries, sizeof(SspDetailsEntry));
	if (!d->entries)
		return ssp_oom(err);
	for (uint32_t i = 0; i < d->nentries; i++)
	{
		SspDetailsEntry *e = &d->entries[i];

		TRY(ssp_rd_i32(r, &e->op_index, err));
		if (e->op_index < 0)
			return ssp_fail(err, INV, "%s: negative opIndex", r->what);
		for (uint32_t j = 0; j < i; j++)
			if (d->entries[j].op_index == e->op_index)
				return ssp_fail(err, INV, "%s: duplicate opIndex %d", r->what, (int) e->op_index);
		TRY(ssp_rd_str(r, &e->details_json, err));
		TRY(ssp_details_json_valid(e->details_json.ptr, e->details_json.len, err));
	}
	return true;
}

static bool
dec_sub_start(SspReader *r, SspSubStart *s, SspError *err)
{
	TRY(ssp_rd_str(r, &s->id, err));
	TRY(rd_enum(r, &s->status, 3, "status", err));
	TRY(ssp_rd_str(r, &s->reason_code, err));
	TRY(rd_scope_map(r, &s->effective_scopes, err));
	return ssp_rd_bool(r, &s->bootstrap, err);
}

static bool
dec_commit(SspReader *r, SspCommit *c, SspError *err)
{
	TRY(ssp_rd_i64(r, &c->commit_seq, err));
	TRY(ssp_rd_i64(r, &c->created_at_ms, err));
	TRY(ssp_rd_str(r, &c->actor_id, err));
	TRY(ssp_rd_count(r, &c->ntables, 4, err));
	c->tables = rd_alloc(r, c->ntables, sizeof(SspStr));
	if (!c->tables)
		return ssp_oom(err);
	for (uint32_t i = 0; i < c->ntables; i++)
		TRY(ssp_rd_str(r, &c->tables[i], err));
	TRY(ssp_rd_count(r, &c->nchanges, 13, err));
	c->changes = rd_alloc(r, c->nchanges, sizeof(SspChange));
	if (!c->changes)
		return ssp_oom(err);
	for (uint32_t i = 0; i < c->nchanges; i++)
	{
		SspChange  *ch = &c->changes[i];

		TRY(ssp_rd_u16(r, &ch->table_index, err));
		if (ch->table_index >= c->ntables)
			return ssp_fail(err, INV, "%s: change %u tableIndex %u out of range",
							r->what, i, ch->table_index);
		TRY(ssp_rd_str(r, &ch->row_id, err));
		TRY(rd_enum(r, &ch->op, 2, "op", err));
		TRY(rd_opt_i64(r, &ch->has_row_version, &ch->row_version, err));
		if (ch->has_row_version != (ch->op == SSP_OP_UPSERT))
			return ssp_fail(err, INV, "%s: change %u rowVersion presence does not match op",
							r->what, i);
		TRY(rd_str_map(r, &ch->scopes, err));
		TRY(ssp_rd_opt(r, &ch->has_row, err));
		if (ch->has_row)
			TRY(ssp_rd_bytes(r, &ch->row, err));
		if (ch->has_row != (ch->op == SSP_OP_UPSERT))
			return ssp_fail(err, INV, "%s: change %u row presence does not match op", r->what, i);
	}
	return true;
}

static bool
dec_segment_ref(SspReader *r, SspSegmentRef *s, SspError *err)
{
	TRY(ssp_rd_str(r, &s->segment_id, err));
	TRY(rd_enum(r, &s->media_type, 2, "mediaType", err));
	TRY(ssp_rd_str(r, &s->table, err));
	TRY(ssp_rd_i64(r, &s->byte_length, err));
	TRY(ssp_rd_i64(r, &s->row_count, err));
	TRY(ssp_rd_i64(r, &s->as_of_commit_seq, err));
	TRY(ssp_rd_str(r, &s->scope_digest, err));
	TRY(rd_opt_str(r, &s->has_row_cursor, &s->row_cursor, err));
	TRY(rd_opt_str(r, &s->has_next_row_cursor, &s->next_row_cursor, err));
	TRY(rd_opt_str(r, &s->has_url, &s->url, err));
	TRY(rd_opt_i64(r, &s->has_url_expires_at_ms, &s->url_expires_at_ms, err));
	if (s->has_url != s->has_url_expires_at_ms)
		return ssp_fail(err, INV, "%s: urlExpiresAtMs presence does not match url", r->what);
	return true;
}

static bool
dec_segment_inline(SspReader *r, SspSegmentInline *s, SspError *err)
{
	const uint8_t *p;
	size_t      n = ssp_rd_left(r);
	SspError    e2;

	if (n > UINT32_MAX)
		return ssp_fail(err, INV, "%s: payload too large", r->what);
	TRY(ssp_rd_raw(r, n, &p, err));
	if (!ssp_segment_decode(p, n, NULL, &e2))
	{
		if (err)
		{
			err->code = e2.code;
			snprintf(err->message, sizeof(err->message), "SEGMENT_INLINE: %.180s", e2.message);
		}
		return false;
	}
	if (r->arena)
	{
		uint8_t    *d = ssp_arena_alloc(r->arena, n ? n : 1);

		if (!d)
			return ssp_oom(err);
		if (n)
			memcpy(d, p, n);
		p = d;
	}
	s->payload.ptr = p;
	s->payload.len = (uint32_t) n;
	return true;
}

static bool
dec_sub_end(SspReader *r, SspSubEnd *s, SspError *err)
{
	TRY(ssp_rd_i64(r, &s->next_cursor, err));
	return rd_opt_json(r, &s->has_bootstrap_state, &s->bootstrap_state, err);
}

static bool
dec_error(SspReader *r, SspErrorFrame *e, SspError *err)
{
	TRY(ssp_rd_str(r, &e->code, err));
	TRY(ssp_rd_str(r, &e->message, err));
	TRY(ssp_rd_str(r, &e->category, err));
	TRY(ssp_rd_bool(r, &e->retryable, err));
	TRY(ssp_rd_str(r, &e->recommended_action, err));
	return rd_opt_json(r, &e->has_details, &e->details, err);
}

static bool
decode_frame_payload(SspReader *r, uint16_t wire, SspFrame *f, SspError *err)
{
	switch (f->type)
	{
		case SSP_FRAME_REQ_HEADER: return dec_req_header(r, wire, &f->req_header, err);
		case SSP_FRAME_PUSH_COMMIT: return dec_push_commit(r, &f->push_commit, err);
		case SSP_FRAME_PULL_HEADER: return dec_pull_header(r, &f->pull_header, err);
		case SSP_FRAME_SUBSCRIPTION: return dec_subscription(r, &f->subscription, err);
		case SSP_FRAME_RESP_HEADER: return dec_resp_header(r, wire, &f->resp_header, err);
		case SSP_FRAME_LEASE: return dec_lease(r, &f->lease, err);
		case SSP_FRAME_PUSH_RESULT: return dec_push_result(r, wire, &f->push_result, err);
		case SSP_FRAME_PUSH_RESULT_DETAILS: return dec_details(r, &f->push_result_details, err);
		case SSP_FRAME_SUB_START: return dec_sub_start(r, &f->sub_start, err);
		case SSP_FRAME_COMMIT: return dec_commit(r, &f->commit, err);
		case SSP_FRAME_SEGMENT_REF: return dec_segment_ref(r, &f->segment_ref, err);
		case SSP_FRAME_SEGMENT_INLINE: return dec_segment_inline(r, &f->segment_inline, err);
		case SSP_FRAME_SUB_END: return dec_sub_end(r, &f->sub_end, err);
		case SSP_FRAME_ERROR: return dec_error(r, &f->error, err);
		default:
			return ssp_fail(err, SSP_ERR_INTERNAL, "no decoder for frame 0x%02x", f->type);
	}
}

static uint32_t
rd_le32(const uint8_t *p)
{
	return (uint32_t) p[0] | ((uint32_t) p[1] << 8) | ((uint32_t) p[2] << 16) |
		((uint32_t) p[3] << 24);
}

static bool
check_envelope(const uint8_t *data, size_t len, uint16_t *wire, uint8_t *kind,
			   SspError *err)
{
	if (len < 8)
		return ssp_fail(err, INV, "message truncated: %zu bytes, header needs 8", len);
	if (memcmp(data, SSP_MAGIC_SSP2, 4) != 0)
		return ssp_fail(err, INV, "bad magic (expected SSP2)");
	*wire = (uint16_t) (data[4] | (data[5] << 8));
	if (*wire < SSP_WIRE_MIN || *wire > SSP_WIRE_MAX)
		return ssp_fail(err, INV, "unsupported wireVersion %u", *wire);
	*kind = data[6];
	if (*kind != SSP_KIND_REQUEST && *kind != SSP_KIND_RESPONSE)
		return ssp_fail(err, INV, "unknown msgKind 0x%02x", *kind);
	if (data[7] != 0)
		return ssp_fail(err, INV, "envelope flags must be 0 (got 0x%02x)", data[7]);
	return true;
}

bool
ssp_decode_message(const uint8_t *data, size_t len, SspMessage *msg, SspError *err)
{
	uint16_t    wire = 0;
	uint8_t     kind = 0;
	size_t      pos,
				maxframes = 0;
	SspArena   *arena;
	SspFrame   *frames;
	uint32_t    n = 0;
	SspGrammar  g;

	memset(msg, 0, sizeof(*msg));
	TRY(check_envelope(data, len, &wire, &kind, err));

	/* Pre-count frame headers (error-free) to size the frame array. */
	for (pos = 8; len - pos >= 5;)
	{
		uint32_t    flen = rd_le32(data + pos + 1);

		maxframes++;
		if (data[pos] == SSP_FRAME_END || flen > len - pos - 5)
			break;
		pos += 5 + (size_t) flen;
	}
	arena = ssp_arena_new();
	if (arena == NULL)
		return ssp_oom(err);
	frames = ssp_arena_array(arena, maxframes ? maxframes : 1, sizeof(SspFrame));
	if (frames == NULL)
	{
		ssp_arena_free(arena);
		return ssp_oom(err);
	}
	ssp_grammar_init(&g, kind);

	for (pos = 8;;)
	{
		uint8_t     type;
		uint32_t    flen;
		SspFrame   *f;
		SspReader   r;
		char        what[24];

		if (len - pos < 5)
		{
			ssp_fail(err, INV, "message truncated at offset %zu: no END frame", pos);
			goto fail;
		}
		type = data[pos];
		flen = rd_le32(data + pos + 1);
		if (flen > len - pos - 5)
		{
			ssp_fail(err, INV, "frame 0x%02x at offset %zu declares %u bytes, only %zu remain",
					 type, pos, flen, len - pos - 5);
			goto fail;
		}
		if (type == SSP_FRAME_END)
		{
			if (flen != 0)
			{
				ssp_fail(err, INV, "END frame with non-zero length %u", flen);
				goto fail;
			}
			if (pos + 5 != len)
			{
				ssp_fail(err, INV, "%zu bytes after END", len - pos - 5);
				goto fail;
			}
			if (!ssp_grammar_finish(&g, err))
				goto fail;
			break;
		}
		if (n >= maxframes)     /* cannot happen: pre-count is exact */
		{
			ssp_fail(err, SSP_ERR_INTERNAL, "frame count mismatch");
			goto fail;
		}
		f = &frames[n];
		f->type = type;
		snprintf(what, sizeof(what), "frame 0x%02x", type);
		ssp_rd_init(&r, data + pos + 5, flen, pos + 5, what, arena);
		if (ssp_frame_registered(kind, type))
		{
			if (!decode_frame_payload(&r, wire, f, err) || !ssp_rd_done(&r, err))
				goto fail;
		}
		else if (ssp_frame_registered_any(type))
		{
			ssp_fail(err, INV, "frame 0x%02x (%s) is not allowed in a %s", type,
					 ssp_frame_name(type), kind == SSP_KIND_REQUEST ? "request" : "response");
			goto fail;
		}
		else
		{
			/* Unknown: keep type and payload for re-emission (WF §2.2 rule 4). */
			uint8_t    *d = ssp_arena_alloc(arena, flen ? flen : 1);

			if (d == NULL)
			{
				ssp_oom(err);
				goto fail;
			}
			if (flen)
				memcpy(d, data + pos + 5, flen);
			f->unknown = true;
			f->unknown_frame.payload.ptr = d;
			f->unknown_frame.payload.len = flen;
		}
		if (!ssp_grammar_step(&g, f, err))
			goto fail;
		n++;
		pos += 5 + (size_t) flen;
	}
	msg->wire_version = wire;
	msg->kind = kind;
	msg->frames = frames;
	msg->nframes = n;
	msg->arena = arena;
	return true;

fail:
	ssp_arena_free(arena);
	memset(msg, 0, sizeof(*msg));
	return false;
}

void
ssp_message_free(SspMessage *msg)
{
	if (msg == NULL)
		return;
	ssp_arena_free(msg->arena);
	memset(msg, 0, sizeof(*msg));
}
