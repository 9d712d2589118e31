/*
 * storage_values.c — a pushed row's column values as the datums of their materialized columns
 * (text, int8, float8, bool, jsonb, bytea: the types ensure_schema gives them), for the
 * row writes of storage_rows.c.
 */
#include "postgres.h"

#include "storage_internal.h"

/*
 * True when jsonb_in cannot refuse this (already JSON.parse-valid) text: a UTF-8 database, no
 * escape sequences, no exponent and no very long number (numeric's range is the only other
 * refusal).  Everything else takes the guarded path below.
 */
static bool
json_surely_accepted(const char *s, uint32 len)
{
	bool		in_string = false;
	int			digits = 0;

	if (GetDatabaseEncoding() != PG_UTF8)
		return false;
	for (uint32 i = 0; i < len; i++)
	{
		char		c = s[i];

		if (c == '\\')
			return false;
		if (c == '"')
		{
			in_string = !in_string;
			continue;
		}
		if (in_string)
			continue;
		if (c == 'e' || c == 'E')
			return false;
		if (c >= '0' && c <= '9')
		{
			if (++digits > 1000)
				return false;
		}
		else
			digits = 0;
	}
	return true;
}

/*
 * jsonb_in of a JSON.parse-valid text (SPEC §5.1 json values), its refusals caught: PostgreSQL
 * refuses some texts JSON.parse accepts (\u0000, lone surrogate escapes, a \u escape the
 * database encoding cannot represent, numbers beyond numeric's range, nesting past the stack
 * limit).  The jsonb datum, or (Datum) 0 with *refused set to the refusal (a SQLSTATE class 22
 * or 54 error, the caller's to free); any other error is re-thrown.  A text that surely passes is converted directly; the others in
 * a subtransaction, so a refusal leaves nothing behind (in a parallel worker, which cannot start
 * one, the refusal is raised as is).
 */
Datum
sync_jsonb_in_guarded(const char *text, uint32 len, ErrorData **refused)
{
	MemoryContext caller = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	char	   *cstr = pnstrdup(text, len);
	volatile Datum result = (Datum) 0;	/* volatile: set inside PG_TRY */

	*refused = NULL;
	if (json_surely_accepted(cstr, len) || IsInParallelMode())
		return DirectFunctionCall1(jsonb_in, CStringGetDatum(cstr));
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(caller);
	PG_TRY();
	{
		result = DirectFunctionCall1(jsonb_in, CStringGetDatum(cstr));
		sync_subxact_release(caller, owner);
	}
	PG_CATCH();
	{
		ErrorData  *edata = sync_subxact_rollback(caller, owner);

		if (ERRCODE_TO_CATEGORY(edata->sqlerrcode) != ERRCODE_DATA_EXCEPTION &&
			ERRCODE_TO_CATEGORY(edata->sqlerrcode) != ERRCODE_PROGRAM_LIMIT_EXCEEDED)
			ReThrowError(edata);
		*refused = edata;
		result = (Datum) 0;
	}
	PG_END_TRY();
	return result;
}

/* A json value as jsonb for the projection: what jsonb_in refuses projects as NULL. */
static Datum
json_projection(const char *text, uint32 len, bool *isnull)
{
	ErrorData  *refused;
	Datum		result;

	if (memchr(text, '\0', len) != NULL)
	{
		*isnull = true;
		return (Datum) 0;		/* a raw NUL byte cannot be valid JSON text anyway */
	}
	result = sync_jsonb_in_guarded(text, len, &refused);
	*isnull = refused != NULL;
	if (refused)
		FreeErrorData(refused);
	return result;
}

/*
 * A column value of a pushed row as the datum of its column's type (column_type_oid): NULL for
 * an absent or null value and for what the projection cannot show.
 */
Datum
sync_storage_column_datum(const SyncColumn *c, const SspValue *val, bool *isnull)
{
	*isnull = false;
	if (!val->present || val->is_null)
	{
		*isnull = true;
		return (Datum) 0;
	}
	switch (c->type)
	{
		case SSP_COL_STRING:
		case SSP_COL_BLOB_REF:
			if (memchr(val->str.ptr, '\0', val->str.len) != NULL)
			{
				*isnull = true;	/* text cannot hold U+0000: projection only */
				return (Datum) 0;
			}
			return PointerGetDatum(cstring_to_text_with_len(val->str.ptr, val->str.len));
		case SSP_COL_INTEGER:
			return Int64GetDatum(val->i);
		case SSP_COL_FLOAT:
			return Float8GetDatum(val->f);
		case SSP_COL_BOOLEAN:
			return BoolGetDatum(val->b);
		case SSP_COL_JSON:
			return json_projection(val->str.ptr, val->str.len, isnull);
		default:
			{
				bytea	   *b = palloc(VARHDRSZ + val->bytes.len);

				SET_VARSIZE(b, VARHDRSZ + val->bytes.len);
				if (val->bytes.len > 0)
					memcpy(VARDATA(b), val->bytes.ptr, val->bytes.len);
				return PointerGetDatum(b);
			}
	}
}
