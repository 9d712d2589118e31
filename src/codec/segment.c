/*
 * segment.c — SSG2 rows segments (WF §4.8): structural decoder/validator,
 * re-encoder, and a streaming block writer.
 */
#include "ssp_internal.h"

#include <string.h>


static const uint8_t magic_ssg2[4] = {'S', 'S', 'G', '2'};

static bool
read_columns(SspReader *r, SspSegment *seg, uint16_t *ncols_out,
			 SspColumn **cols_out, SspError *err)
{
	uint16_t    ncols;
	SspColumn  *cols;

	TRY(ssp_rd_u16(r, &ncols, err));
	/* each column takes at least 6 bytes: check before allocating */
	if ((size_t) ncols * 6 > ssp_rd_left(r))
		return ssp_fail(err, INV, "segment: column count %u exceeds the remaining bytes", ncols);
	if (seg)
		cols = ssp_arena_array(r->arena, ncols ? ncols : 1, sizeof(SspColumn));
	else
		cols = ssp_malloc(sizeof(SspColumn) * (ncols ? ncols : 1));
	if (cols == NULL)
		return ssp_oom(err);
	for (uint16_t i = 0; i < ncols; i++)
	{
		SspStr      name;
		uint8_t     tag,
					flags;

		if (!ssp_rd_str(r, &name, err) || !ssp_rd_u8(r, &tag, err) ||
			!ssp_rd_u8(r, &flags, err))
			goto fail;
		if (tag < 1 || tag > 8)
		{
			ssp_fail(err, INV, "segment: column %u has unknown type tag %u", i, tag);
			goto fail;
		}
		if (flags & ~1u)
		{
			ssp_fail(err, INV, "segment: column %u has reserved flag bits 0x%02x", i, flags);
			goto fail;
		}
		cols[i].name = name.ptr;
		cols[i].name_len = name.len;
		cols[i].type = tag;
		cols[i].nullable = flags & 1;
	}
	*ncols_out = ncols;
	*cols_out = cols;
	return true;
fail:
	if (!seg)
		ssp_free(cols);
	return false;
}

/* Count blocks without failing, to size the block array. */
static uint32_t
count_blocks(const uint8_t *p, size_t len)
{
	size_t      pos = 0;
	uint32_t    n = 0;

	while (len - pos >= 8 && n < UINT32_MAX)
	{
		uint32_t    rc = (uint32_t) p[pos] | ((uint32_t) p[pos + 1] << 8) |
			((uint32_t) p[pos + 2] << 16) | ((uint32_t) p[pos + 3] << 24);
		uint32_t    bl = (uint32_t) p[pos + 4] | ((uint32_t) p[pos + 5] << 8) |
			((uint32_t) p[pos + 6] << 16) | ((uint32_t) p[pos + 7] << 24);

		if (rc == 0 || bl > len - pos - 8)
			break;
		n++;
		pos += 8 + (size_t) bl;
	}
	return n;
}

static bool
read_blocks(SspReader *r, SspSegment *seg, const SspColumn *cols, uint16_t ncols,
			SspError *err)
{
	uint32_t    maxblocks = count_blocks(r->p + r->pos, ssp_rd_left(r));
	uint32_t    nb = 0;
	size_t      minrow = 8 + ((size_t) ncols + 7) / 8;

	if (seg)
	{
		seg->blocks = ssp_arena_array(r->arena, maxblocks ? maxblocks : 1,
									  sizeof(SspSegmentBlock));
		if (seg->blocks == NULL)
			return ssp_oom(err);
	}
	for (;;)
	{
		uint32_t    rows,
					blen;
		const uint8_t *bp;
		SspReader   br;
		SspSegmentBlock *blk = NULL;
		size_t      at = r->pos;

		if (ssp_rd_left(r) < 4)
			return ssp_fail(err, INV, "segment: missing end marker at offset %zu", r->pos);
		TRY(ssp_rd_u32(r, &rows, err));
		if (rows == 0)
			break;              /* end marker */
		TRY(ssp_rd_u32(r, &blen, err));
		if (blen > ssp_rd_left(r))
			return ssp_fail(err, INV, "segment: block at offset %zu declares %u bytes, only %zu remain",
							at, blen, ssp_rd_left(r));
		if (rows > blen / minrow)
			return ssp_fail(err, INV, "segment: block at offset %zu: %u rows cannot fit in %u bytes",
							at, rows, blen);
		TRY(ssp_rd_raw(r, blen, &bp, err));
		ssp_rd_init(&br, bp, blen, r->base + r->pos - blen, "segment block", r->arena);
		if (seg)
		{
			if (nb >= maxblocks)
				return ssp_fail(err, SSP_ERR_INTERNAL, "segment: block count mismatch");
			blk = &seg->blocks[nb];
			blk->nrows = rows;
			blk->rows = ssp_arena_array(r->arena, rows, sizeof(SspSegmentRow));
			if (blk->rows == NULL)
				return ssp_oom(err);
		}
		for (uint32_t i = 0; i < rows; i++)
		{
			int64_t     sv;
			size_t      rs;
			SspValue   *vals = NULL;

			TRY(ssp_rd_i64(&br, &sv, err));
			if (sv < 1)
				return ssp_fail(err, INV, "segment: row serverVersion %lld < 1 at offset %zu",
								(long long) sv, br.base + br.pos - 8);
			rs = br.pos;
			if (blk)
			{
				vals = ssp_arena_array(r->arena, ncols ? ncols : 1, sizeof(SspValue));
				if (vals == NULL)
					return ssp_oom(err);
			}
			TRY(ssp_row_read_full(&br, cols, ncols, vals, err));
			if (blk)
			{
				uint8_t    *raw = ssp_arena_alloc(r->arena, br.pos - rs);

				if (raw == NULL && br.pos > rs)
					return ssp_oom(err);
				if (br.pos > rs)
					memcpy(raw, bp + rs, br.pos - rs);
				blk->rows[i].server_version = sv;
				blk->rows[i].values = vals;
				blk->rows[i].raw.ptr = raw;
				blk->rows[i].raw.len = (uint32_t) (br.pos - rs);
			}
		}
		if (br.pos != br.len)
			return ssp_fail(err, INV, "segment: block at offset %zu has %zu unused bytes",
							at, br.len - br.pos);
		nb++;
	}
	if (!ssp_rd_done(r, err))
		return false;
	if (seg)
		seg->nblocks = nb;
	return true;
}

bool
ssp_segment_decode(const uint8_t *data, size_t len, SspSegment *seg, SspError *err)
{
	SspReader   r;
	const uint8_t *m;
	uint16_t    ver,
				flags,
				ncols = 0;
	SspStr      table;
	int32_t     schema;
	SspColumn  *cols = NULL;
	SspArena   *arena = NULL;
	bool        ok = false;

	if (seg)
	{
		memset(seg, 0, sizeof(*seg));
		arena = ssp_arena_new();
		if (arena == NULL)
			return ssp_oom(err);
	}
	ssp_rd_init(&r, data, len, 0, "segment", arena);
	if (!ssp_rd_raw(&r, 4, &m, err))
		goto done;
	if (memcmp(m, magic_ssg2, 4) != 0)
	{
		ssp_fail(err, INV, "segment: bad magic (expected SSG2)");
		goto done;
	}
	if (!ssp_rd_u16(&r, &ver, err) || !ssp_rd_u16(&r, &flags, err))
		goto done;
	if (ver != 1 || flags != 0)
	{
		ssp_fail(err, INV, "segment: unsupported formatVersion %u / flags 0x%04x", ver, flags);
		goto done;
	}
	if (!ssp_rd_str(&r, &table, err) || !ssp_rd_i32(&r, &schema, err))
		goto done;
	if (!read_columns(&r, seg, &ncols, &cols, err))
		goto done;
	if (seg)
	{
		seg->format_version = ver;
		seg->table = table;
		seg->schema_version = schema;
		seg->ncolumns = ncols;
		seg->columns = cols;
		seg->arena = arena;
	}
	ok = read_blocks(&r, seg, cols, ncols, err);
done:
	if (!seg)
		ssp_free(cols);
	else if (!ok)
	{
		ssp_arena_free(arena);
		memset(seg, 0, sizeof(*seg));
	}
	return ok;
}

void
ssp_segment_free(SspSegment *seg)
{
	if (seg == NULL)
		return;
	ssp_arena_free(seg->arena);
	memset(seg, 0, sizeof(*seg));
}

static bool
write_header(SspBuf *out, const char *table, uint32_t table_len, int32_t schema,
			 const SspColumn *cols, uint16_t ncols, SspError *err)
{
	if (table_len && table == NULL)
		return ssp_fail(err, SSP_ERR_INTERNAL, "segment: NULL table name");
	if (!ssp_utf8_valid(table, table_len))
		return ssp_fail(err, INV, "segment: table name is not valid UTF-8");
	ssp_buf_append(out, magic_ssg2, 4);
	ssp_put_u16(out, 1);
	ssp_put_u16(out, 0);
	ssp_put_str(out, table, table_len);
	ssp_put_i32(out, schema);
	ssp_put_u16(out, ncols);
	for (uint16_t i = 0; i < ncols; i++)
	{
		uint32_t    nl = cols[i].name_len ? cols[i].name_len :
			(cols[i].name ? (uint32_t) strlen(cols[i].name) : 0);

		if (cols[i].type < 1 || cols[i].type > 8)
			return ssp_fail(err, INV, "segment: column %u has unknown type tag %u", i, cols[i].type);
		if (!ssp_utf8_valid(cols[i].name, nl))
			return ssp_fail(err, INV, "segment: column %u name is not valid UTF-8", i);
		ssp_put_str(out, cols[i].name, nl);
		ssp_put_u8(out, cols[i].type);
		ssp_put_u8(out, cols[i].nullable ? 1 : 0);
	}
	return out->oom ? ssp_oom(err) : true;
}

bool
ssp_segment_encode(const SspSegment *seg, SspBuf *out, SspError *err)
{
	size_t      start = out->len;
	bool        ok;

	ok = write_header(out, seg->table.ptr, seg->table.len, seg->schema_version,
					  seg->columns, seg->ncolumns, err);
	for (uint32_t b = 0; ok && b < seg->nblocks; b++)
	{
		const SspSegmentBlock *blk = &seg->blocks[b];
		size_t      lenpos;
		size_t      n;

		if (blk->nrows == 0)
		{
			ok = ssp_fail(err, INV, "segment: empty block %u", b);
			break;
		}
		ssp_put_u32(out, blk->nrows);
		lenpos = out->len;
		ssp_put_u32(out, 0);
		for (uint32_t i = 0; ok && i < blk->nrows; i++)
		{
			const SspSegmentRow *rw = &blk->rows[i];

			if (rw->server_version < 1 || !ssp_i64_safe(rw->server_version))
			{
				ok = ssp_fail(err, INV, "segment: serverVersion out of range");
				break;
			}
			ssp_put_i64(out, rw->server_version);
			if (rw->raw.ptr)
			{
				ok = ssp_row_decode_full(NULL, seg->columns, seg->ncolumns,
										 rw->raw.ptr, rw->raw.len, NULL, err);
				if (ok)
					ssp_buf_append(out, rw->raw.ptr, rw->raw.len);
			}
			else
				ok = ssp_row_encode_full(seg->columns, seg->ncolumns, rw->values, out, err);
		}
		if (!ok || out->oom)
			break;
		n = out->len - lenpos - 4;
		if (n > UINT32_MAX)
		{
			ok = ssp_fail(err, INV, "segment: block exceeds 4 GiB");
			break;
		}
		for (int k = 0; k < 4; k++)
			out->data[lenpos + k] = (uint8_t) (n >> (8 * k));
	}
	if (ok)
		ssp_put_u32(out, 0);
	if (ok && out->oom)
		ok = ssp_oom(err);
	if (!ok && out->len > start)
		out->len = start;
	return ok;
}

/* ------------------------------------------------------------------ */
/* Streaming writer                                                    */
/* ------------------------------------------------------------------ */

bool
ssp_segment_begin(SspSegmentWriter *w, SspBuf *out, const char *table,
				  uint32_t table_len, int32_t schema_version,
				  const SspColumn *cols, uint16_t ncols, SspError *err)
{
	memset(w, 0, sizeof(*w));
	ssp_buf_init(&w->block);
	w->out = out;
	w->cols = cols;
	w->ncols = ncols;
	w->validate = true;
	return write_header(out, table, table_len, schema_version, cols, ncols, err);
}

bool
ssp_segment_flush_block(SspSegmentWriter *w, SspError *err)
{
	if (w->block_rows == 0)
		return true;
	ssp_put_u32(w->out, w->block_rows);
	ssp_put_u32(w->out, (uint32_t) w->block.len);
	ssp_buf_append(w->out, w->block.data, w->block.len);
	ssp_buf_reset(&w->block);
	w->block_rows = 0;
	return w->out->oom ? ssp_oom(err) : true;
}

bool
ssp_segment_add_row(SspSegmentWriter *w, int64_t server_version,
					const uint8_t *row, size_t row_len, SspError *err)
{
	size_t      rec = 8 + row_len;

	if (server_version < 1 || !ssp_i64_safe(server_version))
		return ssp_fail(err, INV, "segment: serverVersion must be in [1, 2^53-1]");
	if (w->validate &&
		!ssp_row_decode_full(NULL, w->cols, w->ncols, row, row_len, NULL, err))
		return false;
	/* Cut at 1000 rows, or before the block would pass ~256 KiB. */
	if (w->block_rows >= SSP_SEGMENT_BLOCK_MAX_ROWS ||
		(w->block_rows > 0 && w->block.len + rec > SSP_SEGMENT_BLOCK_MAX_BYTES))
		TRY(ssp_segment_flush_block(w, err));
	if (rec > UINT32_MAX - w->block.len)
		return ssp_fail(err, INV, "segment: row too large");
	ssp_put_i64(&w->block, server_version);
	ssp_buf_append(&w->block, row, row_len);
	if (w->block.oom)
		return ssp_oom(err);
	w->block_rows++;
	w->total_rows++;
	return true;
}

bool
ssp_segment_add_values(SspSegmentWriter *w, int64_t server_version,
					   const SspValue *vals, SspError *err)
{
	SspBuf      row;
	bool        ok;
	bool        v = w->validate;

	ssp_buf_init(&row);
	ok = ssp_row_encode_full(w->cols, w->ncols, vals, &row, err);
	w->validate = false;        /* the encoder already validated the values */
	if (ok)
		ok = ssp_segment_add_row(w, server_version, row.data, row.len, err);
	w->validate = v;
	ssp_buf_free(&row);
	return ok;
}

bool
ssp_segment_finish(SspSegmentWriter *w, SspError *err)
{
	bool        ok = ssp_segment_flush_block(w, err);

	if (ok)
	{
		ssp_put_u32(w->out, 0);
		if (w->out->oom)
			ok = ssp_oom(err);
	}
	ssp_buf_free(&w->block);
	return ok;
}

void
ssp_segment_writer_discard(SspSegmentWriter *w)
{
	ssp_buf_free(&w->block);
}
