/*
 * wire_write.c — SSP2 frame encoders and the streaming writers (WF §2, §3.2, §3.4, §5.1): the
 * envelope header, each frame's body for wire versions 1-3 (frame bodies written through
 * fields.c), END, and whole messages (ssp_encode_message).
 */
#include "ssp_internal.h"

#include <string.h>

/* ------------------------------------------------------------------ */
/* Frame encoders                                                      */
/* ------------------------------------------------------------------ */

static bool
enc_req_header(SspBuf *out, uint16_t wire, const SspReqHeader *h, SspError *err)
{
	TRY(ssp_wr_nonempty(out, &h->client_id, "REQ_HEADER.clientId", err));
	if (h->schema_version < 1)
		return ssp_fail(err, INV, "REQ_HEADER.schemaVersion must be >= 1");
	ssp_put_i32(out, h->schema_version);
	if (wire >= 2)
	{
		if (h->has_log_epoch && h->log_epoch.len == 0)
			return ssp_fail(err, INV, "REQ_HEADER.logEpoch must not be empty");
		return ssp_wr_opt_str(out, h->has_log_epoch, &h->log_epoch, "REQ_HEADER.logEpoch", err);
	}
	if (h->has_log_epoch)
		return ssp_fail(err, INV, "REQ_HEADER.logEpoch does not exist at wire 1");
	return true;
}

static bool
enc_push_commit(SspBuf *out, const SspPushCommit *c, SspError *err)
{
	TRY(ssp_wr_nonempty(out, &c->client_commit_id, "PUSH_COMMIT.clientCommitId", err));
	if (c->nops == 0)
		return ssp_fail(err, SSP_ERR_EMPTY_COMMIT, "PUSH_COMMIT with zero operations");
	ssp_put_u32(out, c->nops);
	for (uint32_t i = 0; i < c->nops; i++)
	{
		const SspPushOp *op = &c->ops[i];

		TRY(ssp_wr_str(out, &op->table, "PUSH_COMMIT.table", err));
		TRY(ssp_wr_str(out, &op->row_id, "PUSH_COMMIT.rowId", err));
		TRY(ssp_wr_enum(out, op->op, 2, "PUSH_COMMIT.op", err));
		TRY(ssp_wr_opt_i64(out, op->has_base_version, op->base_version, "PUSH_COMMIT.baseVersion", err));
		if (op->has_payload != (op->op == SSP_OP_UPSERT))
			return ssp_fail(err, INV, "PUSH_COMMIT operation %u: payload present iff upsert", i);
		ssp_put_bool(out, op->has_payload);
		if (op->has_payload)
			TRY(ssp_wr_bytes(out, &op->payload, "PUSH_COMMIT.payload", err));
	}
	return true;
}

static bool
enc_pull_header(SspBuf *out, const SspPullHeader *p, SspError *err)
{
	if (p->accept & 0xF0)
		return ssp_fail(err, INV, "PULL_HEADER.accept has reserved bits set");
	ssp_put_i32(out, p->limit_commits);
	ssp_put_i32(out, p->limit_snapshot_rows);
	ssp_put_i32(out, p->max_snapshot_pages);
	ssp_put_u8(out, p->accept);
	return true;
}

static bool
enc_subscription(SspBuf *out, const SspSubscription *s, SspError *err)
{
	TRY(ssp_wr_str(out, &s->id, "SUBSCRIPTION.id", err));
	TRY(ssp_wr_str(out, &s->table, "SUBSCRIPTION.table", err));
	TRY(ssp_wr_scope_map(out, &s->scopes, "SUBSCRIPTION.scopes", err));
	TRY(ssp_wr_opt_json(out, s->has_params, &s->params, "SUBSCRIPTION.params", err));
	TRY(ssp_wr_i64(out, s->cursor, "SUBSCRIPTION.cursor", err));
	return ssp_wr_opt_json(out, s->has_bootstrap_state, &s->bootstrap_state,
					   "SUBSCRIPTION.bootstrapState", err);
}

static bool
enc_resp_header(SspBuf *out, uint16_t wire, const SspRespHeader *h, SspError *err)
{
	ssp_wr_opt_i32(out, h->has_required_schema_version, h->required_schema_version);
	ssp_wr_opt_i32(out, h->has_latest_schema_version, h->latest_schema_version);
	if (wire >= 2)
	{
		TRY(ssp_wr_nonempty(out, &h->log_epoch, "RESP_HEADER.logEpoch", err));
		ssp_put_bool(out, h->reset_required);
		return true;
	}
	if (h->log_epoch.len || h->reset_required)
		return ssp_fail(err, INV, "RESP_HEADER epoch fields do not exist at wire 1");
	return true;
}

static bool
enc_lease(SspBuf *out, const SspLease *l, SspError *err)
{
	TRY(ssp_wr_nonempty(out, &l->lease_id, "LEASE.leaseId", err));
	return ssp_wr_i64(out, l->expires_at_ms, "LEASE.expiresAtMs", err);
}

static bool
enc_push_result(SspBuf *out, uint16_t wire, const SspPushResult *p, SspError *err)
{
	TRY(ssp_wr_str(out, &p->client_commit_id, "PUSH_RESULT.clientCommitId", err));
	TRY(ssp_wr_enum(out, p->status, 3, "PUSH_RESULT.status", err));
	if (p->has_commit_seq != (p->status != SSP_PUSH_REJECTED))
		return ssp_fail(err, INV, "PUSH_RESULT.commitSeq present iff applied or cached");
	TRY(ssp_wr_opt_i64(out, p->has_commit_seq, p->commit_seq, "PUSH_RESULT.commitSeq", err));
	ssp_put_u32(out, p->nresults);
	for (uint32_t i = 0; i < p->nresults; i++)
	{
		const SspOpResult *o = &p->results[i];

		ssp_put_i32(out, o->op_index);
		TRY(ssp_wr_enum(out, o->status, 3, "PUSH_RESULT result status", err));
		if (o->status == SSP_RESULT_CONFLICT)
		{
			TRY(ssp_wr_str(out, &o->code, "conflict.code", err));
			TRY(ssp_wr_str(out, &o->message, "conflict.message", err));
			TRY(ssp_wr_i64(out, o->server_version, "conflict.serverVersion", err));
			TRY(ssp_wr_bytes(out, &o->server_row, "conflict.serverRow", err));
			if (wire >= 3)
				TRY(ssp_wr_bytes(out, &o->conflict_columns, "conflict.conflictColumns", err));
			else if (o->conflict_columns.len)
				return ssp_fail(err, INV, "conflictColumns does not exist before wire 3");
		}
		else if (o->status == SSP_RESULT_ERROR)
		{
			TRY(ssp_wr_str(out, &o->code, "error.code", err));
			TRY(ssp_wr_str(out, &o->message, "error.message", err));
			ssp_put_bool(out, o->retryable);
		}
	}
	return true;
}

static bool
enc_details(SspBuf *out, const SspPushResultDetails *d, SspError *err)
{
	TRY(ssp_wr_nonempty(out, &d->client_commit_id, "PUSH_RESULT_DETAILS.clientCommitId", err));
	if (d->nentries == 0)
		return ssp_fail(err, INV, "PUSH_RESULT_DETAILS needs at least one entry");
	ssp_put_u32(out, d->nentries);
	for (uint32_t i = 0; i < d->nentries; i++)
	{
		const SspDetailsEntry *e = &d->entries[i];
		size_t      lenpos;
		size_t      n;

		if (e->op_index < 0)
			return ssp_fail(err, INV, "PUSH_RESULT_DETAILS: negative opIndex");
		for (uint32_t j = 0; j < i; j++)
			if (d->entries[j].op_index == e->op_index)
				return ssp_fail(err, INV, "PUSH_RESULT_DETAILS: duplicate opIndex %d",
								(int) e->op_index);
		ssp_put_i32(out, e->op_index);
		lenpos = out->len;
		ssp_put_u32(out, 0);
		if (out->oom)
			return ssp_oom(err);
		TRY(ssp_details_json_normalize(e->details_json.ptr, e->details_json.len, out, err));
		n = out->len - lenpos - 4;
		for (int k = 0; k < 4; k++)
			out->data[lenpos + k] = (uint8_t) (n >> (8 * k));
	}
	return true;
}

static bool
enc_sub_start(SspBuf *out, const SspSubStart *s, SspError *err)
{
	TRY(ssp_wr_str(out, &s->id, "SUB_START.id", err));
	TRY(ssp_wr_enum(out, s->status, 3, "SUB_START.status", err));
	TRY(ssp_wr_str(out, &s->reason_code, "SUB_START.reasonCode", err));
	TRY(ssp_wr_scope_map(out, &s->effective_scopes, "SUB_START.effectiveScopes", err));
	ssp_put_bool(out, s->bootstrap);
	return true;
}

static bool
enc_segment_ref(SspBuf *out, const SspSegmentRef *s, SspError *err)
{
	TRY(ssp_wr_str(out, &s->segment_id, "SEGMENT_REF.segmentId", err));
	TRY(ssp_wr_enum(out, s->media_type, 2, "SEGMENT_REF.mediaType", err));
	TRY(ssp_wr_str(out, &s->table, "SEGMENT_REF.table", err));
	TRY(ssp_wr_i64(out, s->byte_length, "SEGMENT_REF.byteLength", err));
	TRY(ssp_wr_i64(out, s->row_count, "SEGMENT_REF.rowCount", err));
	TRY(ssp_wr_i64(out, s->as_of_commit_seq, "SEGMENT_REF.asOfCommitSeq", err));
	TRY(ssp_wr_str(out, &s->scope_digest, "SEGMENT_REF.scopeDigest", err));
	TRY(ssp_wr_opt_str(out, s->has_row_cursor, &s->row_cursor, "SEGMENT_REF.rowCursor", err));
	TRY(ssp_wr_opt_str(out, s->has_next_row_cursor, &s->next_row_cursor,
				   "SEGMENT_REF.nextRowCursor", err));
	if (s->has_url != s->has_url_expires_at_ms)
		return ssp_fail(err, INV, "SEGMENT_REF.urlExpiresAtMs present iff url");
	TRY(ssp_wr_opt_str(out, s->has_url, &s->url, "SEGMENT_REF.url", err));
	return ssp_wr_opt_i64(out, s->has_url_expires_at_ms, s->url_expires_at_ms,
					  "SEGMENT_REF.urlExpiresAtMs", err);
}

static bool
enc_segment_inline(SspBuf *out, const SspSegmentInline *s, SspError *err)
{
	if (s->payload.len && s->payload.ptr == NULL)
		return ssp_fail(err, SSP_ERR_INTERNAL, "SEGMENT_INLINE: NULL payload");
	TRY(ssp_segment_decode(s->payload.ptr, s->payload.len, NULL, err));
	ssp_buf_append(out, s->payload.ptr, s->payload.len);
	return true;
}

static bool
enc_sub_end(SspBuf *out, const SspSubEnd *s, SspError *err)
{
	TRY(ssp_wr_i64(out, s->next_cursor, "SUB_END.nextCursor", err));
	return ssp_wr_opt_json(out, s->has_bootstrap_state, &s->bootstrap_state,
					   "SUB_END.bootstrapState", err);
}

static bool
enc_error(SspBuf *out, const SspErrorFrame *e, SspError *err)
{
	TRY(ssp_wr_str(out, &e->code, "ERROR.code", err));
	TRY(ssp_wr_str(out, &e->message, "ERROR.message", err));
	TRY(ssp_wr_str(out, &e->category, "ERROR.category", err));
	ssp_put_bool(out, e->retryable);
	TRY(ssp_wr_str(out, &e->recommended_action, "ERROR.recommendedAction", err));
	return ssp_wr_opt_json(out, e->has_details, &e->details, "ERROR.details", err);
}

bool
ssp_write_message_header(SspBuf *out, uint16_t wire, uint8_t kind, SspError *err)
{
	if (wire < SSP_WIRE_MIN || wire > SSP_WIRE_MAX)
		return ssp_fail(err, SSP_ERR_INTERNAL, "cannot write wireVersion %u", wire);
	if (kind != SSP_KIND_REQUEST && kind != SSP_KIND_RESPONSE)
		return ssp_fail(err, SSP_ERR_INTERNAL, "cannot write msgKind %u", kind);
	ssp_buf_append(out, SSP_MAGIC_SSP2, 4);
	ssp_put_u16(out, wire);
	ssp_put_u8(out, kind);
	ssp_put_u8(out, 0);
	return out->oom ? ssp_oom(err) : true;
}

bool
ssp_write_frame(SspBuf *out, uint16_t wire, const SspFrame *f, SspError *err)
{
	size_t      start = out->len;
	size_t      n;
	bool        ok;

	if (wire < SSP_WIRE_MIN || wire > SSP_WIRE_MAX)
		return ssp_fail(err, SSP_ERR_INTERNAL, "cannot write wireVersion %u", wire);
	if (out->oom)
		return ssp_oom(err);
	if (f->unknown && ssp_frame_registered_any(f->type))
		return ssp_fail(err, SSP_ERR_INTERNAL,
						"refusing to write registered frame type 0x%02x as unknown", f->type);
	if (!f->unknown && f->type == SSP_FRAME_END)
		return ssp_fail(err, SSP_ERR_INTERNAL, "use ssp_write_end for END");
	ssp_put_u8(out, f->type);
	ssp_put_u32(out, 0);
	if (f->unknown)
	{
		const SspBytes *pl = &f->unknown_frame.payload;

		ok = !(pl->len && pl->ptr == NULL) ||
			ssp_fail(err, SSP_ERR_INTERNAL, "unknown frame: NULL payload");
		if (ok)
			ssp_buf_append(out, pl->ptr, pl->len);
	}
	else
		switch (f->type)
		{
			case SSP_FRAME_REQ_HEADER: ok = enc_req_header(out, wire, &f->req_header, err); break;
			case SSP_FRAME_PUSH_COMMIT: ok = enc_push_commit(out, &f->push_commit, err); break;
			case SSP_FRAME_PULL_HEADER: ok = enc_pull_header(out, &f->pull_header, err); break;
			case SSP_FRAME_SUBSCRIPTION: ok = enc_subscription(out, &f->subscription, err); break;
			case SSP_FRAME_RESP_HEADER: ok = enc_resp_header(out, wire, &f->resp_header, err); break;
			case SSP_FRAME_LEASE: ok = enc_lease(out, &f->lease, err); break;
			case SSP_FRAME_PUSH_RESULT: ok = enc_push_result(out, wire, &f->push_result, err); break;
			case SSP_FRAME_PUSH_RESULT_DETAILS: ok = enc_details(out, &f->push_result_details, err); break;
			case SSP_FRAME_SUB_START: ok = enc_sub_start(out, &f->sub_start, err); break;
			case SSP_FRAME_COMMIT: ok = ssp_enc_commit(out, &f->commit, err); break;
			case SSP_FRAME_SEGMENT_REF: ok = enc_segment_ref(out, &f->segment_ref, err); break;
			case SSP_FRAME_SEGMENT_INLINE: ok = enc_segment_inline(out, &f->segment_inline, err); break;
			case SSP_FRAME_SUB_END: ok = enc_sub_end(out, &f->sub_end, err); break;
			case SSP_FRAME_ERROR: ok = enc_error(out, &f->error, err); break;
			default:
				ok = ssp_fail(err, SSP_ERR_INTERNAL,
							  "frame type 0x%02x is not registered; mark it unknown", f->type);
		}
	if (ok && out->oom)
		ok = ssp_oom(err);
	n = ok ? out->len - start - 5 : 0;
	if (ok && n > UINT32_MAX)
		ok = ssp_fail(err, INV, "frame 0x%02x payload exceeds 4 GiB", f->type);
	if (!ok)
	{
		if (out->len > start)
			out->len = start;   /* roll back the partial frame */
		return false;
	}
	for (int k = 0; k < 4; k++)
		out->data[start + 1 + k] = (uint8_t) (n >> (8 * k));
	return true;
}

bool
ssp_write_end(SspBuf *out, SspError *err)
{
	static const uint8_t end[5] = {0, 0, 0, 0, 0};

	return ssp_buf_append(out, end, 5) ? true : ssp_oom(err);
}

bool
ssp_encode_message(const SspMessage *msg, SspBuf *out, SspError *err)
{
	SspGrammar  g;
	size_t      start = out->len;

	if (msg->kind != SSP_KIND_REQUEST && msg->kind != SSP_KIND_RESPONSE)
		return ssp_fail(err, SSP_ERR_INTERNAL, "bad msgKind %u", msg->kind);
	ssp_grammar_init(&g, msg->kind);
	TRY(ssp_write_message_header(out, msg->wire_version, msg->kind, err));
	for (uint32_t i = 0; i < msg->nframes; i++)
	{
		if (!ssp_grammar_step(&g, &msg->frames[i], err) ||
			!ssp_write_frame(out, msg->wire_version, &msg->frames[i], err))
		{
			out->len = start;
			return false;
		}
	}
	if (!ssp_grammar_finish(&g, err) || !ssp_write_end(out, err))
	{
		out->len = start;
		return false;
	}
	return true;
}
