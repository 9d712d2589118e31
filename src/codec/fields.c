/*
 * fields.c — the field writers every frame encoder uses (WF §1: little-endian integers, u32
 * length-prefixed UTF-8 strings and bytes, presence-flagged optionals, maps in UTF-16 key
 * order), each refusing what the decoder would refuse (invalid UTF-8, unsafe integers, enums out
 * of range, duplicate map keys) with the field's name.  Shared by wire_write.c and commit.c so a
 * field's layout is written in one place.
 */
#include "ssp_internal.h"

#include <string.h>


bool
ssp_wr_str(SspBuf *out, const SspStr *s, const char *field, SspError *err)
{
	if (s->len && s->ptr == NULL)
		return ssp_fail(err, SSP_ERR_INTERNAL, "%s: NULL pointer with length %u", field, s->len);
	if (!ssp_utf8_valid(s->ptr, s->len))
		return ssp_fail(err, INV, "%s is not valid UTF-8", field);
	ssp_put_str(out, s->ptr, s->len);
	return true;
}

bool
ssp_wr_nonempty(SspBuf *out, const SspStr *s, const char *field, SspError *err)
{
	if (s->len == 0)
		return ssp_fail(err, INV, "%s must not be empty", field);
	return ssp_wr_str(out, s, field, err);
}

bool
ssp_wr_json(SspBuf *out, const SspStr *s, const char *field, SspError *err)
{
	if (s->len && s->ptr == NULL)
		return ssp_fail(err, SSP_ERR_INTERNAL, "%s: NULL pointer", field);
	if (!ssp_json_valid(s->ptr, s->len))
		return ssp_fail(err, INV, "%s is not valid JSON", field);
	ssp_put_str(out, s->ptr, s->len);
	return true;
}

bool
ssp_wr_i64(SspBuf *out, int64_t v, const char *field, SspError *err)
{
	if (!ssp_i64_safe(v))
		return ssp_fail(err, INV, "%s outside the safe integer range", field);
	ssp_put_i64(out, v);
	return true;
}

bool
ssp_wr_bytes(SspBuf *out, const SspBytes *b, const char *field, SspError *err)
{
	if (b->len && b->ptr == NULL)
		return ssp_fail(err, SSP_ERR_INTERNAL, "%s: NULL pointer with length %u", field, b->len);
	ssp_put_bytes(out, b->ptr, b->len);
	return true;
}

bool
ssp_wr_enum(SspBuf *out, uint8_t v, uint8_t max, const char *field, SspError *err)
{
	if (v < 1 || v > max)
		return ssp_fail(err, INV, "%s value %u out of range", field, v);
	ssp_put_u8(out, v);
	return true;
}

bool
ssp_wr_opt_str(SspBuf *out, bool has, const SspStr *s, const char *field, SspError *err)
{
	ssp_put_bool(out, has);
	return !has || ssp_wr_str(out, s, field, err);
}

bool
ssp_wr_opt_json(SspBuf *out, bool has, const SspStr *s, const char *field, SspError *err)
{
	ssp_put_bool(out, has);
	return !has || ssp_wr_json(out, s, field, err);
}

bool
ssp_wr_opt_i64(SspBuf *out, bool has, int64_t v, const char *field, SspError *err)
{
	ssp_put_bool(out, has);
	return !has || ssp_wr_i64(out, v, field, err);
}

bool
ssp_wr_opt_i32(SspBuf *out, bool has, int32_t v)
{
	ssp_put_bool(out, has);
	if (has)
		ssp_put_i32(out, v);
	return true;
}

/* Maps up to this many entries are sorted in a buffer on the caller's stack. */
#define SMALL_MAP 16

static void
map_index_free(uint32_t *idx, uint32_t *small)
{
	if (idx != small)
		ssp_free(idx);
}

static const SspStr *
key_at(const void *base, size_t stride, uint32_t i)
{
	return (const SspStr *) ((const char *) base + (size_t) i * stride);
}

/*
 * Sorted index of map entries by key (UTF-16 order), bottom-up merge sort.
 * The key must be the first member of the entry struct.  Fails on a
 * duplicate key.  small: room for 2 * SMALL_MAP indexes, used when the map is
 * that small (a change record's scopes: no allocation per record); the
 * caller frees *idx_out with map_index_free.
 */
static bool
sort_map(const void *base, size_t stride, uint32_t n, uint32_t *small, uint32_t **idx_out,
		 const char *field, SspError *err)
{
	uint32_t   *idx,
			   *tmp;

	*idx_out = NULL;
	if (n == 0)
		return true;
	if (base == NULL)
		return ssp_fail(err, SSP_ERR_INTERNAL, "%s: NULL entries", field);
	idx = n <= SMALL_MAP ? small : ssp_malloc((size_t) n * 2 * sizeof(uint32_t));
	if (idx == NULL)
		return ssp_oom(err);
	tmp = idx + n;
	for (uint32_t i = 0; i < n; i++)
		idx[i] = i;
	for (uint32_t w = 1; w < n; w *= 2)
	{
		for (uint32_t lo = 0; lo < n; lo += 2 * w)
		{
			uint32_t    mid = lo + w < n ? lo + w : n;
			uint32_t    hi = mid + w < n ? mid + w : n;
			uint32_t    a = lo,
						b = mid,
						k = lo;

			while (a < mid && b < hi)
			{
				const SspStr *ka = key_at(base, stride, idx[a]);
				const SspStr *kb = key_at(base, stride, idx[b]);

				tmp[k++] = ssp_utf16_cmp(ka->ptr, ka->len, kb->ptr, kb->len) <= 0 ? idx[a++] : idx[b++];
			}
			while (a < mid)
				tmp[k++] = idx[a++];
			while (b < hi)
				tmp[k++] = idx[b++];
		}
		memcpy(idx, tmp, (size_t) n * sizeof(uint32_t));
		if (w > UINT32_MAX / 2)
			break;
	}
	for (uint32_t i = 1; i < n; i++)
	{
		const SspStr *ka = key_at(base, stride, idx[i - 1]);
		const SspStr *kb = key_at(base, stride, idx[i]);

		if (ssp_utf16_cmp(ka->ptr, ka->len, kb->ptr, kb->len) == 0)
		{
			map_index_free(idx, small);
			return ssp_fail(err, INV, "%s: duplicate map key", field);
		}
	}
	*idx_out = idx;
	return true;
}

bool
ssp_wr_scope_map(SspBuf *out, const SspScopeMap *m, const char *field, SspError *err)
{
	uint32_t    small[2 * SMALL_MAP];
	uint32_t   *idx;
	bool        ok = true;

	TRY(sort_map(m->entries, sizeof(SspScopeEntry), m->n, small, &idx, field, err));
	ssp_put_u32(out, m->n);
	for (uint32_t i = 0; ok && i < m->n; i++)
	{
		const SspScopeEntry *e = &m->entries[idx[i]];

		ok = ssp_wr_str(out, &e->key, field, err);
		if (ok && e->nvalues && e->values == NULL)
			ok = ssp_fail(err, SSP_ERR_INTERNAL, "%s: NULL value list", field);
		if (ok)
			ssp_put_u32(out, e->nvalues);
		for (uint32_t j = 0; ok && j < e->nvalues; j++)
			ok = ssp_wr_str(out, &e->values[j], field, err);
	}
	map_index_free(idx, small);
	return ok;
}

bool
ssp_wr_str_map(SspBuf *out, const SspStrMap *m, const char *field, SspError *err)
{
	uint32_t    small[2 * SMALL_MAP];
	uint32_t   *idx;
	bool        ok = true;

	TRY(sort_map(m->entries, sizeof(SspStrPair), m->n, small, &idx, field, err));
	ssp_put_u32(out, m->n);
	for (uint32_t i = 0; ok && i < m->n; i++)
	{
		const SspStrPair *e = &m->entries[idx[i]];

		ok = ssp_wr_str(out, &e->key, field, err) && ssp_wr_str(out, &e->value, field, err);
	}
	map_index_free(idx, small);
	return ok;
}
