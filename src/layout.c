/*
 * layout.c — small helpers for the synced-table layout and the append-only migration.
 *
 *   syncular._payload_append_nulls(payload bytea, old_ncols int, new_ncols int) RETURNS bytea
 *       Re-encodes a full-row codec payload (shared/reference/wire-format.md §4.2) written for
 *       `old_ncols` columns so that it is valid for `new_ncols` columns, the appended columns
 *       being NULL.  Only the null bitmap changes: it is widened to ceil(new/8) bytes and the
 *       bits old..new-1 are set; the values that follow are copied unchanged.
 *
 *   syncular._fnv1a64_hex(name text) RETURNS text
 *       The 16-hex-digit (lowercase, zero padded) FNV-1a-64 of the UTF-8 bytes of `name`, used
 *       for physical index names longer than 63 bytes (data-model-and-storage.md §6).
 *
 * Both are pure (IMMUTABLE STRICT) and raise plain ereport errors: they are internal helpers of
 * ensure_schema (src/sql/10_schema.sql) and do not depend on the rest of the engine.
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"

#include "schema_compile.h"

PG_FUNCTION_INFO_V1(syncular_payload_append_nulls);
PG_FUNCTION_INFO_V1(syncular_fnv1a64_hex);

Datum
syncular_payload_append_nulls(PG_FUNCTION_ARGS)
{
	bytea	   *in = PG_GETARG_BYTEA_PP(0);
	int32		old_n = PG_GETARG_INT32(1);
	int32		new_n = PG_GETARG_INT32(2);
	const uint8 *src = (const uint8 *) VARDATA_ANY(in);
	int			len = VARSIZE_ANY_EXHDR(in);
	int			old_bm;
	int			new_bm;
	bytea	   *out;
	uint8	   *dst;

	if (old_n < 0 || new_n < old_n || new_n > 65535)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid column counts for a payload re-encoding"),
				 errdetail("old_ncols must be >= 0 and new_ncols between old_ncols and 65535.")));

	old_bm = (old_n + 7) / 8;
	new_bm = (new_n + 7) / 8;

	if (len < old_bm)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("stored payload is shorter than its null bitmap")));
	/* padding bits of the old bitmap must be zero (canonical encoding) */
	if (old_n % 8 != 0 && (src[old_bm - 1] >> (old_n % 8)) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("stored payload has a set null-bitmap padding bit")));

	if (new_n == old_n)
		PG_RETURN_BYTEA_P(in);

	out = (bytea *) palloc(VARHDRSZ + len - old_bm + new_bm);
	SET_VARSIZE(out, VARHDRSZ + len - old_bm + new_bm);
	dst = (uint8 *) VARDATA(out);

	memset(dst, 0, new_bm);
	if (old_bm > 0)
		memcpy(dst, src, old_bm);
	for (int i = old_n; i < new_n; i++)
		dst[i / 8] |= (uint8) (1u << (i % 8));
	if (len > old_bm)
		memcpy(dst + new_bm, src + old_bm, len - old_bm);

	PG_RETURN_BYTEA_P(out);
}

/* The FNV-1a-64 of len bytes as 16 lowercase, zero-padded hex digits and a NUL into hex[17]. */
void
sync_fnv1a64_hex(const char *p, int len, char *hex)
{
	uint64		h = UINT64CONST(0xcbf29ce484222325);

	for (int i = 0; i < len; i++)
	{
		h ^= (uint64) (uint8) p[i];
		h *= UINT64CONST(0x100000001b3);
	}
	snprintf(hex, 17, "%016" INT64_MODIFIER "x", h);
}

Datum
syncular_fnv1a64_hex(PG_FUNCTION_ARGS)
{
	text	   *in = PG_GETARG_TEXT_PP(0);
	char		buf[17];

	sync_fnv1a64_hex(VARDATA_ANY(in), VARSIZE_ANY_EXHDR(in), buf);
	PG_RETURN_TEXT_P(cstring_to_text(buf));
}
