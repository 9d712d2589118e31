/*
 * ops_values.c — tagged operation values (REMOTE.md §4, src/codec/ops.h) to and from
 * PostgreSQL values: request params as typed Datums, result columns normalized to their
 * declared types (§2: a value that does not fit is operation.query_failed, decided by the
 * caller), and the jsonb form command functions receive.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"

#include "operations.h"

OpsType
ops_type_from_name(const char *name)
{
	if (name == NULL)
		return OPS_T_INVALID;
	if (strcmp(name, "string") == 0)
		return OPS_T_STRING;
	if (strcmp(name, "integer") == 0)
		return OPS_T_INTEGER;
	if (strcmp(name, "float") == 0 || strcmp(name, "number") == 0)
		return OPS_T_FLOAT;
	if (strcmp(name, "boolean") == 0)
		return OPS_T_BOOLEAN;
	if (strcmp(name, "json") == 0)
		return OPS_T_JSON;
	if (strcmp(name, "bytes") == 0)
		return OPS_T_BYTES;
	return OPS_T_INVALID;
}

Oid
ops_type_oid(OpsType t)
{
	switch (t)
	{
		case OPS_T_STRING:
			return TEXTOID;
		case OPS_T_INTEGER:
			return INT8OID;
		case OPS_T_FLOAT:
			return FLOAT8OID;
		case OPS_T_BOOLEAN:
			return BOOLOID;
		case OPS_T_JSON:
			return JSONBOID;
		case OPS_T_BYTES:
			return BYTEAOID;
		default:
			return InvalidOid;
	}
}

/* ---------------------------------------------------------------- constructors */

void
ops_obj_init(OpsObject *o)
{
	o->n = 0;
	o->cap = 8;
	o->keys = palloc0(sizeof(SspStr) * o->cap);
	o->items = palloc0(sizeof(SspOpValue) * o->cap);
}

SspOpValue *
ops_obj_add(OpsObject *o, const char *key)
{
	if (o->n == o->cap)
	{
		o->cap *= 2;
		o->keys = repalloc(o->keys, sizeof(SspStr) * o->cap);
		o->items = repalloc(o->items, sizeof(SspOpValue) * o->cap);
	}
	o->keys[o->n].ptr = key;
	o->keys[o->n].len = (uint32) strlen(key);
	memset(&o->items[o->n], 0, sizeof(SspOpValue));
	return &o->items[o->n++];
}

void
ops_obj_done(OpsObject *o, SspOpValue *out)
{
	memset(out, 0, sizeof(*out));
	out->kind = SSP_OP_OBJECT;
	out->count = (uint32) o->n;
	out->keys = o->keys;
	out->items = o->items;
}

/* A protocol message object: {revision: 1, kind, ...} (REMOTE.md §5, §6), members to follow. */
void
ops_obj_init_message(OpsObject *o, const char *kind)
{
	SspOpValue *v;

	ops_obj_init(o);
	v = ops_obj_add(o, "revision");
	v->kind = SSP_OP_NUMBER;
	v->num = 1;
	ops_set_string(ops_obj_add(o, "kind"), kind);
}

/* The text member `key` of a jsonb object (registration catalog rows); NULL when absent. */
char *
ops_jstr(JsonbContainer *c, const char *key)
{
	JsonbValue *v = c ? getKeyJsonValueFromContainer(c, key, strlen(key), NULL) : NULL;

	return (v && v->type == jbvString) ? pnstrdup(v->val.string.val, v->val.string.len) : NULL;
}

/* The integer member `key` of a jsonb object; false when absent or not a number. */
bool
ops_jint(JsonbContainer *c, const char *key, int64 *out)
{
	JsonbValue *v = c ? getKeyJsonValueFromContainer(c, key, strlen(key), NULL) : NULL;

	if (v == NULL || v->type != jbvNumeric)
		return false;
	*out = DatumGetInt64(DirectFunctionCall1(numeric_int8, NumericGetDatum(v->val.numeric)));
	return true;
}

void
ops_set_string(SspOpValue *v, const char *s)
{
	memset(v, 0, sizeof(*v));
	v->kind = SSP_OP_STRING;
	v->str.ptr = s;
	v->str.len = (uint32) strlen(s);
}

void
ops_set_integer(SspOpValue *v, int64 i)
{
	memset(v, 0, sizeof(*v));
	v->kind = SSP_OP_INTEGER;
	v->i = i;
}

/* ---------------------------------------------------------------- request values */

static bool
number_as_int64(double d, int64 *out)
{
	/* exact integers only (a JS number holding an integer); +-2^53 keeps it exact */
	if (!isfinite(d) || d != floor(d) || fabs(d) > 9007199254740991.0)
		return false;
	*out = (int64) d;
	return true;
}

bool
ops_value_to_datum(const SspOpValue *v, OpsType t, Datum *out, bool *isnull)
{
	int64		i;

	*isnull = false;
	if (v->kind == SSP_OP_NULL)
	{
		*isnull = true;
		*out = (Datum) 0;
		return true;
	}
	switch (t)
	{
		case OPS_T_STRING:
			if (v->kind != SSP_OP_STRING || memchr(v->str.ptr, '\0', v->str.len) != NULL)
				return false;
			*out = PointerGetDatum(cstring_to_text_with_len(v->str.ptr, v->str.len));
			return true;
		case OPS_T_INTEGER:
			if (v->kind == SSP_OP_INTEGER)
				i = v->i;
			else if (v->kind != SSP_OP_NUMBER || !number_as_int64(v->num, &i))
				return false;
			*out = Int64GetDatum(i);
			return true;
		case OPS_T_FLOAT:
			if (v->kind == SSP_OP_NUMBER)
				*out = Float8GetDatum(v->num);
			else if (v->kind == SSP_OP_INTEGER)
				*out = Float8GetDatum((double) v->i);
			else
				return false;
			return true;
		case OPS_T_BOOLEAN:
			if (v->kind != SSP_OP_BOOLEAN)
				return false;
			*out = BoolGetDatum(v->b);
			return true;
		case OPS_T_BYTES:
			{
				bytea	   *b;

				if (v->kind != SSP_OP_BYTES)
					return false;
				b = palloc(VARHDRSZ + v->bytes.len);
				SET_VARSIZE(b, VARHDRSZ + v->bytes.len);
				if (v->bytes.len > 0)
					memcpy(VARDATA(b), v->bytes.ptr, v->bytes.len);
				*out = PointerGetDatum(b);
				return true;
			}
		case OPS_T_JSON:
			{
				Jsonb	   *j = ops_value_to_jsonb(v);

				if (j == NULL)
					return false;
				*out = JsonbPGetDatum(j);
				return true;
			}
		default:
			return false;
	}
}

/* JSON text of a tagged value; false when JSON cannot carry it (U+0000 in a string). */
static bool
append_json(StringInfo b, const SspOpValue *v)
{
	switch (v->kind)
	{
		case SSP_OP_NULL:
			appendStringInfoString(b, "null");
			return true;
		case SSP_OP_BOOLEAN:
			appendStringInfoString(b, v->b ? "true" : "false");
			return true;
		case SSP_OP_NUMBER:
			appendStringInfoString(b, float8out_internal(v->num));
			return true;
		case SSP_OP_INTEGER:
			appendStringInfo(b, INT64_FORMAT, v->i);
			return true;
		case SSP_OP_STRING:
			if (memchr(v->str.ptr, '\0', v->str.len) != NULL)
				return false;
			escape_json(b, v->str.ptr);
			return true;
		case SSP_OP_BYTES:
			{
				SspBuf		buf;

				ssp_buf_init(&buf);
				ssp_base64_encode(&buf, v->bytes.ptr, v->bytes.len);
				appendStringInfoChar(b, '"');
				appendBinaryStringInfo(b, (const char *) buf.data, (int) buf.len);
				appendStringInfoChar(b, '"');
				ssp_buf_free(&buf);
				return true;
			}
		case SSP_OP_ARRAY:
		case SSP_OP_OBJECT:
			appendStringInfoChar(b, v->kind == SSP_OP_ARRAY ? '[' : '{');
			for (uint32 k = 0; k < v->count; k++)
			{
				if (k > 0)
					appendStringInfoChar(b, ',');
				if (v->kind == SSP_OP_OBJECT)
				{
					if (memchr(v->keys[k].ptr, '\0', v->keys[k].len) != NULL)
						return false;
					escape_json(b, v->keys[k].ptr);
					appendStringInfoChar(b, ':');
				}
				if (!append_json(b, &v->items[k]))
					return false;
			}
			appendStringInfoChar(b, v->kind == SSP_OP_ARRAY ? ']' : '}');
			return true;
	}
	return false;
}

Jsonb *
ops_value_to_jsonb(const SspOpValue *v)
{
	StringInfoData b;

	initStringInfo(&b);
	if (!append_json(&b, v))
		return NULL;
	return DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(b.data)));
}

char *
ops_scope_text(const SspOpValue *v)
{
	int64		i;

	if (v->kind == SSP_OP_STRING && memchr(v->str.ptr, '\0', v->str.len) == NULL)
		return pnstrdup(v->str.ptr, v->str.len);
	if (v->kind == SSP_OP_INTEGER)
		return psprintf(INT64_FORMAT, v->i);
	if (v->kind == SSP_OP_NUMBER && number_as_int64(v->num, &i))
		return psprintf(INT64_FORMAT, i);
	return NULL;
}

/* ---------------------------------------------------------------- result values */

static void
from_json(const SspJson *j, SspOpValue *out, bool *ok)
{
	memset(out, 0, sizeof(*out));
	switch (j->kind)
	{
		case SSP_JSON_NULL:
			out->kind = SSP_OP_NULL;
			break;
		case SSP_JSON_TRUE:
		case SSP_JSON_FALSE:
			out->kind = SSP_OP_BOOLEAN;
			out->b = j->kind == SSP_JSON_TRUE;
			break;
		case SSP_JSON_NUMBER:
			out->kind = SSP_OP_NUMBER;
			out->num = j->num;
			if (!isfinite(j->num))
				*ok = false;
			break;
		case SSP_JSON_STRING:
			out->kind = SSP_OP_STRING;
			out->str = j->text;
			break;
		case SSP_JSON_ARRAY:
		case SSP_JSON_OBJECT:
			out->kind = j->kind == SSP_JSON_ARRAY ? SSP_OP_ARRAY : SSP_OP_OBJECT;
			out->count = j->count;
			out->keys = j->keys;
			out->items = palloc0(sizeof(SspOpValue) * Max(j->count, 1));
			for (uint32 k = 0; k < j->count; k++)
				from_json(&j->items[k], &out->items[k], ok);
			break;
	}
}

bool
ops_json_text_to_value(const char *text, size_t len, SspOpValue *out)
{
	SspArena   *a = ssp_arena_new();
	SspJson    *j;
	SspError	err;
	bool		ok = true;

	if (a == NULL || !ssp_json_parse(a, text, len, &j, &err))
		return false;
	from_json(j, out, &ok);
	return ok;				/* the arena lives as long as the caller's memory context */
}

static bool
int64_from_text(const char *s, int64 *out)
{
	/* numeric_out never uses an exponent: "12", "-3", "12.000" */
	const char *dot = strchr(s, '.');
	size_t		n = dot ? (size_t) (dot - s) : strlen(s);

	if (dot)
		for (const char *p = dot + 1; *p; p++)
			if (*p != '0')
				return false;
	return ssp_int64_parse_canonical(s, n, out);
}

bool
ops_datum_to_value(Datum d, Oid typid, OpsType t, SspOpValue *out)
{
	memset(out, 0, sizeof(*out));
	switch (t)
	{
		case OPS_T_STRING:
			{
				char	   *s;
				Oid			fn;
				bool		varlena;

				if (typid == TEXTOID || typid == VARCHAROID || typid == BPCHAROID)
					s = TextDatumGetCString(d);
				else
				{
					getTypeOutputInfo(typid, &fn, &varlena);
					s = OidOutputFunctionCall(fn, d);
				}
				ops_set_string(out, s);
				return true;
			}
		case OPS_T_INTEGER:
			out->kind = SSP_OP_INTEGER;
			if (typid == INT8OID)
				out->i = DatumGetInt64(d);
			else if (typid == INT4OID)
				out->i = DatumGetInt32(d);
			else if (typid == INT2OID)
				out->i = DatumGetInt16(d);
			else if (typid == NUMERICOID)
				return int64_from_text(DatumGetCString(DirectFunctionCall1(numeric_out, d)), &out->i);
			else if (typid == FLOAT8OID || typid == FLOAT4OID)
				return number_as_int64(typid == FLOAT8OID ? DatumGetFloat8(d) : DatumGetFloat4(d), &out->i);
			else
				return false;
			return true;
		case OPS_T_FLOAT:
			out->kind = SSP_OP_NUMBER;
			if (typid == FLOAT8OID)
				out->num = DatumGetFloat8(d);
			else if (typid == FLOAT4OID)
				out->num = DatumGetFloat4(d);
			else if (typid == INT8OID)
				out->num = (double) DatumGetInt64(d);
			else if (typid == INT4OID)
				out->num = DatumGetInt32(d);
			else if (typid == INT2OID)
				out->num = DatumGetInt16(d);
			else if (typid == NUMERICOID)
				out->num = DatumGetFloat8(DirectFunctionCall1(numeric_float8, d));
			else
				return false;
			return isfinite(out->num);
		case OPS_T_BOOLEAN:
			out->kind = SSP_OP_BOOLEAN;
			if (typid == BOOLOID)
				out->b = DatumGetBool(d);
			else if (typid == INT4OID || typid == INT8OID || typid == INT2OID)
			{
				/* SQLite has no boolean: 0 / 1 integers are the portable form */
				int64		v = typid == INT8OID ? DatumGetInt64(d) :
					typid == INT4OID ? DatumGetInt32(d) : DatumGetInt16(d);

				if (v != 0 && v != 1)
					return false;
				out->b = v == 1;
			}
			else
				return false;
			return true;
		case OPS_T_BYTES:
			{
				bytea	   *b;

				if (typid != BYTEAOID)
					return false;
				b = DatumGetByteaPP(d);
				out->kind = SSP_OP_BYTES;
				out->bytes.ptr = (const uint8 *) VARDATA_ANY(b);
				out->bytes.len = VARSIZE_ANY_EXHDR(b);
				return true;
			}
		case OPS_T_JSON:
			{
				char	   *s;

				if (typid == JSONBOID)
					s = JsonbToCString(NULL, &DatumGetJsonbP(d)->root, VARSIZE_ANY(DatumGetPointer(d)));
				else if (typid == JSONOID || typid == TEXTOID)
					s = TextDatumGetCString(d);
				else
					return false;
				return ops_json_text_to_value(s, strlen(s), out);
			}
		default:
			return false;
	}
}

char *
ops_details_id(const char *operation_id)
{
	StringInfoData b;

	initStringInfo(&b);
	appendStringInfoString(&b, "{\"operationId\": ");
	escape_json(&b, operation_id);
	appendStringInfoChar(&b, '}');
	return b.data;
}
