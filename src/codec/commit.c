/*
 * commit.c — the COMMIT frame (WF §3.4): the one place its layout is written.  Two ways in,
 * the same field writers (fields.c) and the same per-change writer:
 *   - ssp_enc_commit: a whole SspCommit, for ssp_write_frame;
 *   - the streaming writer (ssp_commit_begin / _add / _end): a server reading a commit's
 *     changes one by one writes each change record straight into the response as it reads
 *     it, without building an SspCommit first, and fills in the change count and the frame
 *     length at the end (or abandons the frame: a commit that matched nothing, or did not fit).
 * Both produce identical bytes for the same commit (test/codec/unit.c checks it).
 */
#include "ssp_internal.h"

#include <string.h>


/* commitSeq, createdAtMs, actorId, tables: the fields before the change records */
static bool
wr_commit_head(SspBuf *out, int64_t commit_seq, int64_t created_at_ms, const SspStr *actor_id,
			   uint32_t ntables, const SspStr *tables, SspError *err)
{
	TRY(ssp_wr_i64(out, commit_seq, "COMMIT.commitSeq", err));
	TRY(ssp_wr_i64(out, created_at_ms, "COMMIT.createdAtMs", err));
	TRY(ssp_wr_str(out, actor_id, "COMMIT.actorId", err));
	ssp_put_u32(out, ntables);
	for (uint32_t i = 0; i < ntables; i++)
		TRY(ssp_wr_str(out, &tables[i], "COMMIT.tables", err));
	return true;
}

/* Change record i of a commit of ntables tables. */
static bool
wr_change(SspBuf *out, const SspChange *ch, uint32_t i, uint32_t ntables, SspError *err)
{
	if (ch->table_index >= ntables)
		return ssp_fail(err, INV, "COMMIT change %u: tableIndex out of range", i);
	ssp_put_u16(out, ch->table_index);
	TRY(ssp_wr_str(out, &ch->row_id, "COMMIT.rowId", err));
	TRY(ssp_wr_enum(out, ch->op, 2, "COMMIT.op", err));
	if (ch->has_row_version != (ch->op == SSP_OP_UPSERT) ||
		ch->has_row != (ch->op == SSP_OP_UPSERT))
		return ssp_fail(err, INV, "COMMIT change %u: rowVersion/row present iff upsert", i);
	TRY(ssp_wr_opt_i64(out, ch->has_row_version, ch->row_version, "COMMIT.rowVersion", err));
	TRY(ssp_wr_str_map(out, &ch->scopes, "COMMIT.scopes", err));
	ssp_put_bool(out, ch->has_row);
	if (ch->has_row)
		TRY(ssp_wr_bytes(out, &ch->row, "COMMIT.row", err));
	return true;
}

bool
ssp_enc_commit(SspBuf *out, const SspCommit *c, SspError *err)
{
	TRY(wr_commit_head(out, c->commit_seq, c->created_at_ms, &c->actor_id, c->ntables,
					   c->tables, err));
	ssp_put_u32(out, c->nchanges);
	for (uint32_t i = 0; i < c->nchanges; i++)
		TRY(wr_change(out, &c->changes[i], i, c->ntables, err));
	return true;
}

/* ------------------------------------------------------------------ */
/* Streaming writer                                                    */
/* ------------------------------------------------------------------ */

static void
put_u32_at(SspBuf *out, size_t at, uint32_t v)
{
	for (int k = 0; k < 4; k++)
		out->data[at + k] = (uint8_t) (v >> (8 * k));
}

/* Roll back w's partial frame and fail (oom when no message was set). */
static bool
commit_failed(SspCommitWriter *w, bool ok, SspError *err)
{
	w->out->len = w->start;
	return ok ? ssp_oom(err) : false;
}

bool
ssp_commit_begin(SspCommitWriter *w, SspBuf *out, int64_t commit_seq, int64_t created_at_ms,
				 const SspStr *actor_id, uint32_t ntables, const SspStr *tables, SspError *err)
{
	bool		ok;

	w->out = out;
	w->start = out->len;
	w->ntables = ntables;
	w->nchanges = 0;
	if (out->oom)
		return ssp_oom(err);
	ssp_put_u8(out, SSP_FRAME_COMMIT);
	ssp_put_u32(out, 0);		/* the frame length, filled in by ssp_commit_end */
	ok = wr_commit_head(out, commit_seq, created_at_ms, actor_id, ntables, tables, err);
	w->count_at = out->len;
	ssp_put_u32(out, 0);		/* the change count, likewise */
	if (!ok || out->oom)
		return commit_failed(w, ok, err);
	return true;
}

bool
ssp_commit_add(SspCommitWriter *w, const SspChange *ch, SspError *err)
{
	bool		ok;

	if (w->nchanges == UINT32_MAX)
		return commit_failed(w, ssp_fail(err, INV, "COMMIT: too many changes"), err);
	ok = wr_change(w->out, ch, w->nchanges, w->ntables, err);
	if (!ok || w->out->oom)
		return commit_failed(w, ok, err);
	w->nchanges++;
	return true;
}

bool
ssp_commit_end(SspCommitWriter *w, SspError *err)
{
	size_t		n = w->out->len - w->start - 5;

	if (w->out->oom)
		return commit_failed(w, true, err);
	if (n > UINT32_MAX)
		return commit_failed(w, ssp_fail(err, INV, "frame 0x%02x payload exceeds 4 GiB",
										 SSP_FRAME_COMMIT), err);
	put_u32_at(w->out, w->count_at, w->nchanges);
	put_u32_at(w->out, w->start + 1, (uint32_t) n);
	return true;
}

void
ssp_commit_abandon(SspCommitWriter *w)
{
	w->out->len = w->start;
}
