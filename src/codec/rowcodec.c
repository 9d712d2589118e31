/*
 * rowcodec.c — full-row (WF §4.2) and sparse-row (WF §4.3) codecs, column
 * value validation (WF §4.1, incl. the blob_ref shape) and the PK rowId
 * rendering (WF §4.5).
 */
#include "ssp_internal.h"

#include <math.h>
#include <string.h>

const char *
ssp_column_type_name(uint8_t type)
{
	static const char *names[] = {NULL, "string", "integer", "float", "boolean",
	"json", "bytes", "blob_ref", "crdt"};

	return type >= 1 && type <= 8 ? names[type] : NULL;
}

static inline uint32_t
col_name_len(const SspColumn *c)
{
	return c->name_len ? c->name_len : (c->name ? (uint32_t) strlen(c->name) : 0);
}

/* ------------------------------------------------------------------ */
/* blob_ref                                                            */
/* ------------------------------------------------------------------ */

static bool
str_is(const SspStr *s, const char *lit)
{
	size_t      n = strlen(lit);

	return s->len == n && memcmp(s->ptr, lit, n) == 0;
}

/*
 * WF §4.1 tag 7: a JSON object whose keys are exactly blobId, byteLength,
 * then optionally mediaType, then optionally name, in that order.  JSON.parse
 * semantics: a repeated key keeps its first position and its last value.
 */
bool
ssp_blob_ref_valid(const char *s, size_t len)
{
	static const char *order[] = {"blobId", "byteLength", "mediaType", "name"};
	SspArena   *a;
	SspJson    *v;
	bool        ok = false;
	int         pos[4] = {-1, -1, -1, -1};  /* first position of each key */
	int         last[4] = {-1, -1, -1, -1}; /* member index of the last value */
	int         nkeys = 0;

	a = ssp_arena_new();
	if (a == NULL)
		return false;
	if (!ssp_json_parse(a, s, len, &v, NULL) || v->kind != SSP_JSON_OBJECT)
		goto done;
	for (uint32_t i = 0; i < v->count; i++)
	{
		int         k;

		for (k = 0; k < 4; k++)
			if (str_is(&v->keys[i], order[k]))
				break;
		if (k == 4)
			goto done;          /* unknown key */
		if (pos[k] < 0)
			pos[k] = nkeys++;
		last[k] = (int) i;
	}
	/* Distinct keys must appear in the declared order with no gaps in the
	 * required part. */
	if (pos[0] != 0 || pos[1] != 1)
		goto done;
	if (pos[2] >= 0 && pos[2] != 2)
		goto done;
	if (pos[3] >= 0 && pos[3] != (pos[2] >= 0 ? 3 : 2))
		goto done;
	{
		const SspJson *id = &v->items[last[0]];
		const SspJson *bl = &v->items[last[1]];

		if (id->kind != SSP_JSON_STRING || id->text.len != 7 + 64 ||
			memcmp(id->text.ptr, "sha256:", 7) != 0)
			goto done;
		for (int i = 7; i < 7 + 64; i++)
		{
			char        c = id->text.ptr[i];

			if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
				goto done;
		}
		/* JS Number.isSafeInteger(x) && x >= 0, so 1.0 and 1e3 pass */
		if (bl->kind != SSP_JSON_NUMBER || !isfinite(bl->num) ||
			bl->num != floor(bl->num) || bl->num < 0 ||
			bl->num > (double) SSP_I64_SAFE_MAX)
			goto done;
		if (last[2] >= 0 && v->items[last[2]].kind != SSP_JSON_STRING)
			goto done;
		if (last[3] >= 0 && v->items[last[3]].kind != SSP_JSON_STRING)
			goto done;
	}
	ok = true;
done:
	ssp_arena_free(a);
	return ok;
}

/* ------------------------------------------------------------------ */
/* Decoding                                                            */
/* ------------------------------------------------------------------ */

static bool
read_value(SspReader *r, const SspColumn *c, SspValue *v, SspError *err)
{
	size_t      at = r->base + r->pos;

	switch (c->type)
	{
		case SSP_COL_STRING:
			return ssp_rd_str(r, &v->str, err);
		case SSP_COL_INTEGER:
			return ssp_rd_i64(r, &v->i, err);
		case SSP_COL_FLOAT:
			return ssp_rd_f64(r, &v->f, err);
		case SSP_COL_BOOLEAN:
			return ssp_rd_bool(r, &v->b, err);
		case SSP_COL_JSON:
			return ssp_rd_json(r, &v->str, err);
		case SSP_COL_BYTES:
		case SSP_COL_CRDT:
			return ssp_rd_bytes(r, &v->bytes, err);
		case SSP_COL_BLOB_REF:
			if (!ssp_rd_str(r, &v->str, err))
				return false;
			if (!ssp_blob_ref_valid(v->str.ptr, v->str.len))
				return ssp_fail(err, SSP_ERR_INVALID_REQUEST,
								"row: column \"%.*s\" is not a valid blob_ref at offset %zu",
								(int) col_name_len(c), c->name, at);
			return true;
		default:
			return ssp_fail(err, SSP_ERR_INVALID_REQUEST,
							"row: column \"%.*s\" has unknown type tag %u",
							(int) col_name_len(c), c->name, c->type);
	}
}

/* Bits >= n in a bitmap of ceil(n/8) bytes must be zero. */
static bool
padding_clear(const uint8_t *bm, uint32_t n)
{
	uint32_t    nb = (n + 7) / 8;

	if (n % 8 == 0)
		return true;
	return (bm[nb - 1] >> (n % 8)) == 0;
}

static inline bool
bit_set(const uint8_t *bm, uint32_t i)
{
	return (bm[i / 8] >> (i % 8)) & 1;
}

bool
ssp_row_read_full(SspReader *r, const SspColumn *cols, uint32_t ncols,
				  SspValue *out, SspError *err)
{
	const uint8_t *bm;
	size_t      at = r->base + r->pos;

	if (!ssp_rd_raw(r, (ncols + 7) / 8, &bm, err))
		return false;
	if (ncols && !padding_clear(bm, ncols))
		return ssp_fail(err, SSP_ERR_INVALID_REQUEST,
						"row: null bitmap padding bit set at offset %zu", at);
	for (uint32_t i = 0; i < ncols; i++)
	{
		bool        isnull = bit_set(bm, i);
		SspValue    tmp;
		SspValue   *v = out ? &out[i] : &tmp;

		memset(v, 0, sizeof(*v));
		v->present = true;
		v->is_null = isnull;
		if (isnull && !cols[i].nullable)
			return ssp_fail(err, SSP_ERR_INVALID_REQUEST,
							"row: null bit on non-nullable column \"%.*s\" at offset %zu",
							(int) col_name_len(&cols[i]), cols[i].name, at);
	}
	for (uint32_t i = 0; i < ncols; i++)
	{
		SspValue    tmp;
		SspValue   *v = out ? &out[i] : &tmp;

		if (bit_set(bm, i))
			continue;
		if (!read_value(r, &cols[i], v, err))
			return false;
	}
	return true;
}

bool
ssp_row_decode_full(SspArena *arena, const SspColumn *cols, uint32_t ncols,
					const uint8_t *data, size_t len, SspValue *out,
					SspError *err)
{
	SspReader   r;

	ssp_rd_init(&r, data, len, 0, "row", arena);
	if (arena == NULL)
		out = NULL;             /* validate only: nothing may point into data */
	return ssp_row_read_full(&r, cols, ncols, out, err) && ssp_rd_done(&r, err);
}

bool
ssp_row_decode_sparse(SspArena *arena, const SspColumn *cols, uint32_t ncols,
					  uint32_t pk_index, const uint8_t *data, size_t len,
					  SspValue *out, SspError *err)
{
	SspReader   r;
	const uint8_t *pres,
			   *nulls;
	uint32_t    npresent = 0,
				j;

	if (pk_index >= ncols)
		return ssp_fail(err, SSP_ERR_INTERNAL, "row: primary key index %u out of range",
						pk_index);
	if (arena == NULL)
		out = NULL;
	ssp_rd_init(&r, data, len, 0, "sparse row", arena);
	if (!ssp_rd_raw(&r, (ncols + 7) / 8, &pres, err))
		return false;
	/* 1. presence padding */
	if (!padding_clear(pres, ncols))
		return ssp_fail(err, SSP_ERR_INVALID_REQUEST,
						"sparse row: presence bitmap padding bit set");
	/* 2. primary key absent */
	if (!bit_set(pres, pk_index))
		return ssp_fail(err, SSP_ERR_INVALID_REQUEST,
						"sparse row: primary key column \"%.*s\" absent",
						(int) col_name_len(&cols[pk_index]), cols[pk_index].name);
	for (uint32_t i = 0; i < ncols; i++)
		npresent += bit_set(pres, i);
	if (!ssp_rd_raw(&r, (npresent + 7) / 8, &nulls, err))
		return false;
	/* 3. null padding = a null bit for an absent column */
	if (npresent && !padding_clear(nulls, npresent))
		return ssp_fail(err, SSP_ERR_INVALID_REQUEST,
						"sparse row: null bitmap padding bit set (null for an absent column)");
	/* 4. null on non-nullable */
	j = 0;
	for (uint32_t i = 0; i < ncols; i++)
	{
		bool        present = bit_set(pres, i);
		bool        isnull = present && bit_set(nulls, j);

		if (present)
			j++;
		if (out)
		{
			memset(&out[i], 0, sizeof(SspValue));
			out[i].present = present;
			out[i].is_null = isnull;
		}
		if (isnull && !cols[i].nullable)
			return ssp_fail(err, SSP_ERR_INVALID_REQUEST,
							"sparse row: null bit on non-nullable column \"%.*s\"",
							(int) col_name_len(&cols[i]), cols[i].name);
	}
	/* 5. values and exact consumption */
	j = 0;
	for (uint32_t i = 0; i < ncols; i++)
	{
		SspValue    tmp;

		if (!bit_set(pres, i))
			continue;
		if (bit_set(nulls, j++))
			continue;
		if (!read_value(&r, &cols[i], out ? &out[i] : &tmp, err))
			return false;
	}
	return ssp_rd_done(&r, err);
}

/* ------------------------------------------------------------------ */
/* Encoding                                                            */
/* ------------------------------------------------------------------ */

static bool
write_value(SspBuf *out, const SspColumn *c, const SspValue *v, SspError *err)
{
	int         nl = (int) col_name_len(c);

	switch (c->type)
	{
		case SSP_COL_STRING:
		case SSP_COL_JSON:
		case SSP_COL_BLOB_REF:
			if (v->str.len && v->str.ptr == NULL)
				return ssp_fail(err, SSP_ERR_INTERNAL, "row: column \"%.*s\" has no data", nl, c->name);
			if (!ssp_utf8_valid(v->str.ptr, v->str.len))
				return ssp_fail(err, SSP_ERR_INVALID_REQUEST,
								"row: column \"%.*s\" is not valid UTF-8", nl, c->name);
			if (c->type == SSP_COL_JSON && !ssp_json_valid(v->str.ptr, v->str.len))
				return ssp_fail(err, SSP_ERR_INVALID_REQUEST,
								"row: column \"%.*s\" is not valid JSON", nl, c->name);
			if (c->type == SSP_COL_BLOB_REF && !ssp_blob_ref_valid(v->str.ptr, v->str.len))
				return ssp_fail(err, SSP_ERR_INVALID_REQUEST,
								"row: column \"%.*s\" is not a valid blob_ref", nl, c->name);
			ssp_put_str(out, v->str.ptr, v->str.len);
			break;
		case SSP_COL_INTEGER:
			if (!ssp_i64_safe(v->i))
				return ssp_fail(err, SSP_ERR_INVALID_REQUEST,
								"row: column \"%.*s\" integer outside the safe range", nl, c->name);
			ssp_put_i64(out, v->i);
			break;
		case SSP_COL_FLOAT:
			ssp_put_f64(out, v->f);
			break;
		case SSP_COL_BOOLEAN:
			ssp_put_bool(out, v->b);
			break;
		case SSP_COL_BYTES:
		case SSP_COL_CRDT:
			if (v->bytes.len && v->bytes.ptr == NULL)
				return ssp_fail(err, SSP_ERR_INTERNAL, "row: column \"%.*s\" has no data", nl, c->name);
			ssp_put_bytes(out, v->bytes.ptr, v->bytes.len);
			break;
		default:
			return ssp_fail(err, SSP_ERR_INVALID_REQUEST,
							"row: column \"%.*s\" has unknown type tag %u", nl, c->name, c->type);
	}
	return out->oom ? ssp_oom(err) : true;
}

/* Append a bitmap of n bits where bit i = pred(i). */
static bool
put_bitmap(SspBuf *out, uint32_t n, const bool *bits)
{
	uint8_t     byte = 0;

	for (uint32_t i = 0; i < n; i++)
	{
		if (bits[i])
			byte |= (uint8_t) (1u << (i % 8));
		if (i % 8 == 7)
		{
			ssp_put_u8(out, byte);
			byte = 0;
		}
	}
	if (n % 8)
		ssp_put_u8(out, byte);
	return !out->oom;
}

static bool
check_null(const SspColumn *c, const SspValue *v, SspError *err)
{
	if (v->is_null && !c->nullable)
		return ssp_fail(err, SSP_ERR_INVALID_REQUEST,
						"row: NULL for non-nullable column \"%.*s\"",
						(int) col_name_len(c), c->name);
	return true;
}

bool
ssp_row_encode_full(const SspColumn *cols, uint32_t ncols, const SspValue *vals,
					SspBuf *out, SspError *err)
{
	uint8_t     byte = 0;

	for (uint32_t i = 0; i < ncols; i++)
	{
		if (!check_null(&cols[i], &vals[i], err))
			return false;
		if (vals[i].is_null)
			byte |= (uint8_t) (1u << (i % 8));
		if (i % 8 == 7 || i == ncols - 1)
		{
			ssp_put_u8(out, byte);
			byte = 0;
		}
	}
	for (uint32_t i = 0; i < ncols; i++)
		if (!vals[i].is_null && !write_value(out, &cols[i], &vals[i], err))
			return false;
	return out->oom ? ssp_oom(err) : true;
}

bool
ssp_row_encode_sparse(const SspColumn *cols, uint32_t ncols, uint32_t pk_index,
					  const SspValue *vals, SspBuf *out, SspError *err)
{
	bool       *bits;
	uint32_t    np = 0;
	bool        ok;

	if (pk_index >= ncols)
		return ssp_fail(err, SSP_ERR_INTERNAL, "row: primary key index %u out of range", pk_index);
	if (!vals[pk_index].present)
		return ssp_fail(err, SSP_ERR_INVALID_REQUEST, "sparse row: primary key absent");
	bits = ssp_malloc((size_t) ncols + 1);
	if (bits == NULL)
		return ssp_oom(err);
	for (uint32_t i = 0; i < ncols; i++)
	{
		if (vals[i].present && !check_null(&cols[i], &vals[i], err))
		{
			ssp_free(bits);
			return false;
		}
		bits[i] = vals[i].present;
	}
	put_bitmap(out, ncols, bits);
	for (uint32_t i = 0; i < ncols; i++)
		if (vals[i].present)
			bits[np++] = vals[i].is_null;
	put_bitmap(out, np, bits);
	ssp_free(bits);
	ok = true;
	for (uint32_t i = 0; ok && i < ncols; i++)
		if (vals[i].present && !vals[i].is_null)
			ok = write_value(out, &cols[i], &vals[i], err);
	if (ok && out->oom)
		return ssp_oom(err);
	return ok;
}

bool
ssp_render_pk(const SspColumn *col, const SspValue *val, SspBuf *out,
			  SspError *err)
{
	if (!val->present || val->is_null)
		return ssp_fail(err, SSP_ERR_INVALID_REQUEST, "primary key is absent or NULL");
	switch (col->type)
	{
		case SSP_COL_STRING:
		case SSP_COL_JSON:
			ssp_buf_append(out, val->str.ptr, val->str.len);
			break;
		case SSP_COL_INTEGER:
			if (!ssp_i64_safe(val->i))
				return ssp_fail(err, SSP_ERR_INVALID_REQUEST,
								"primary key integer outside the safe range");
			ssp_buf_printf(out, "%lld", (long long) val->i);
			break;
		case SSP_COL_BOOLEAN:
			if (val->b)
				ssp_buf_append(out, "true", 4);
			else
				ssp_buf_append(out, "false", 5);
			break;
		default:
			return ssp_fail(err, SSP_ERR_INVALID_REQUEST,
							"primary key type %s cannot render as a rowId",
							ssp_column_type_name(col->type) ? ssp_column_type_name(col->type) : "?");
	}
	return out->oom ? ssp_oom(err) : true;
}
