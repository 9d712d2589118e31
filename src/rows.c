/*
 * rows.c — row helpers for a registered table: JSON object <-> full / sparse row codec bytes.
 *
 *   syncular.encode_row(tbl text, row jsonb) RETURNS bytea          full row
 *   syncular.encode_sparse_row(tbl text, row jsonb) RETURNS bytea   sparse row (present = keys)
 *   syncular.decode_row(tbl text, payload bytea) RETURNS jsonb      full row -> {column: value}
 *   syncular.decode_sparse_row(tbl text, payload bytea) RETURNS jsonb  absent columns omitted
 *
 * The JSON mapping is described in rowjson.h; the same helpers serve debug.c.  Bad input raises
 * sync.invalid_request with details {table, column}; an unknown table raises sync.unknown_table.
 */
#include "postgres.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>

#include "common/base64.h"
#include "common/shortest_dec.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"

#include "engine.h"
#include "rowjson.h"

PG_FUNCTION_INFO_V1(syncular_encode_row);
PG_FUNCTION_INFO_V1(syncular_encode_sparse_row);
PG_FUNCTION_INFO_V1(syncular_decode_row);
PG_FUNCTION_INFO_V1(syncular_decode_sparse_row);

/* ---------------------------------------------------------------- errors */

static void
append_json_string(StringInfo buf, const char *s)
{
	escape_json(buf, s);
}

void
sync_append_vformat(StringInfo buf, const char *fmt, va_list args)
{
	/* appendStringInfoVA consumes its va_list and may ask for a retry with more room */
	for (;;)
	{
		va_list		copy;
		int			needed;

		va_copy(copy, args);
		needed = appendStringInfoVA(buf, fmt, copy);
		va_end(copy);
		if (needed == 0)
			break;
		enlargeStringInfo(buf, needed);
	}
}

void
sync_raise_column(const char *code, const char *table, const char *column, const char *fmt,...)
{
	StringInfoData msg;
	StringInfoData details;
	va_list		args;

	initStringInfo(&msg);
	va_start(args, fmt);
	sync_append_vformat(&msg, fmt, args);
	va_end(args);

	initStringInfo(&details);
	appendStringInfoString(&details, "{\"table\":");
	if (table)
		append_json_string(&details, table);
	else
		appendStringInfoString(&details, "null");
	if (column)
	{
		appendStringInfoString(&details, ",\"column\":");
		append_json_string(&details, column);
	}
	appendStringInfoChar(&details, '}');
	sync_raise(code, msg.data, details.data);
}

/* ---------------------------------------------------------------- base64 */

int
sync_base64_decode(const char *s, int len, char **out)
{
	char	   *clean = palloc(len + 1);
	int			n = 0;
	int			i;
	char	   *dst;
	int			res;

	/* PostgreSQL's encode(..., 'base64') wraps lines; pg_b64_decode refuses whitespace */
	for (i = 0; i < len; i++)
		if (s[i] != '\n' && s[i] != '\r' && s[i] != ' ' && s[i] != '\t')
			clean[n++] = s[i];
	dst = palloc(pg_b64_dec_len(n) + 1);
	res = n == 0 ? 0 : pg_b64_decode(clean, n, dst, pg_b64_dec_len(n));
	pfree(clean);
	*out = dst;
	return res;
}

/* ---------------------------------------------------------------- compact JSON from jsonb */

static void
append_jsonb_scalar(StringInfo out, JsonbValue *v)
{
	switch (v->type)
	{
		case jbvNull:
			appendStringInfoString(out, "null");
			break;
		case jbvBool:
			appendStringInfoString(out, v->val.boolean ? "true" : "false");
			break;
		case jbvNumeric:
			appendStringInfoString(out, sync_jsonb_number_text(v));
			break;
		case jbvString:
			{
				char	   *s = pnstrdup(v->val.string.val, v->val.string.len);

				escape_json(out, s);
				pfree(s);
				break;
			}
		default:
			elog(ERROR, "syncular: unexpected jsonb scalar type %d", (int) v->type);
	}
}

/* True when the next item needs a separating comma (output since `start` is open). */
static void
maybe_comma(StringInfo out, int start)
{
	if (out->len > start)
	{
		char		last = out->data[out->len - 1];

		if (last != '[' && last != '{' && last != ':')
			appendStringInfoChar(out, ',');
	}
}

void
sync_jsonb_append_compact(StringInfo out, JsonbValue *jv)
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	int			start = out->len;
	bool		raw_scalar = false;

	if (jv->type != jbvBinary)
	{
		append_jsonb_scalar(out, jv);
		return;
	}

	it = JsonbIteratorInit(jv->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &v, false)) != WJB_DONE)
	{
		switch (tok)
		{
			case WJB_BEGIN_ARRAY:
				if (v.val.array.rawScalar)
				{
					raw_scalar = true;
					break;
				}
				maybe_comma(out, start);
				appendStringInfoChar(out, '[');
				break;
			case WJB_BEGIN_OBJECT:
				maybe_comma(out, start);
				appendStringInfoChar(out, '{');
				break;
			case WJB_END_ARRAY:
				if (!raw_scalar)
					appendStringInfoChar(out, ']');
				break;
			case WJB_END_OBJECT:
				appendStringInfoChar(out, '}');
				break;
			case WJB_KEY:
				maybe_comma(out, start);
				append_jsonb_scalar(out, &v);
				appendStringInfoChar(out, ':');
				break;
			case WJB_VALUE:
			case WJB_ELEM:
				maybe_comma(out, start);
				append_jsonb_scalar(out, &v);
				break;
			default:
				break;
		}
	}
}

/* ---------------------------------------------------------------- JSON value -> codec value */

/* jsonb_typeof of a value read from a container (a scalar or jbvBinary); "value" for any other. */
const char *
sync_jsonb_type_label(const JsonbValue *jv)
{
	if (jv->type == jbvBinary)
		return JsonContainerIsArray(jv->val.binary.data) ? "array" : "object";
	switch (jv->type)
	{
		case jbvNull:
			return "null";
		case jbvString:
			return "string";
		case jbvNumeric:
			return "number";
		case jbvBool:
			return "boolean";
		default:
			return "value";
	}
}

/* Numeric text of a jsonb number (never exponent notation); debug.c uses it too. */
char *
sync_jsonb_number_text(JsonbValue *jv)
{
	return DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(jv->val.numeric)));
}

/* Parse numeric text as an integer within +-(2^53-1); "12.000" counts as 12. */
bool
sync_numeric_text_to_int53(const char *s, int64 *out)
{
	const char *p = s;
	bool		neg = false;
	int64		v = 0;

	if (*p == '-')
	{
		neg = true;
		p++;
	}
	if (!isdigit((unsigned char) *p))
		return false;
	while (isdigit((unsigned char) *p))
	{
		v = v * 10 + (*p - '0');
		if (v > SSP_I64_SAFE_MAX)
			return false;
		p++;
	}
	if (*p == '.')
	{
		p++;
		while (*p == '0')
			p++;
	}
	if (*p != '\0')
		return false;
	*out = neg ? -v : v;
	return true;
}

/* Raw JSON text of a jsonb value, in the requested style. */
static char *
jsonb_value_text(JsonbValue *jv, SyncJsonText style, uint32 *len)
{
	StringInfoData buf;

	if (style == SYNC_JSON_TEXT_COMPACT)
	{
		initStringInfo(&buf);
		sync_jsonb_append_compact(&buf, jv);
	}
	else if (jv->type == jbvBinary)
	{
		initStringInfo(&buf);
		JsonbToCString(&buf, jv->val.binary.data, jv->val.binary.len);
	}
	else
	{
		Jsonb	   *j = JsonbValueToJsonb(jv);

		initStringInfo(&buf);
		JsonbToCString(&buf, &j->root, VARSIZE(j));
	}
	*len = (uint32) buf.len;
	return buf.data;
}

/*
 * A blob reference's text: jsonb keeps object keys in its own order, but the wire wants the
 * members in the declared order blobId, byteLength, mediaType, name (WF §4.1 tag 7).  Any other
 * member is kept at the end, so the validity check refuses it.
 */
static char *
blob_ref_text(JsonbContainer *obj, uint32 *len)
{
	static const char *const order[] = {"blobId", "byteLength", "mediaType", "name"};
	StringInfoData buf;
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	int			nfound = 0;

	initStringInfo(&buf);
	appendStringInfoChar(&buf, '{');
	for (int k = 0; k < (int) lengthof(order); k++)
	{
		JsonbValue	m;

		if (getKeyJsonValueFromContainer(obj, order[k], strlen(order[k]), &m) == NULL)
			continue;
		if (nfound++ > 0)
			appendStringInfoChar(&buf, ',');
		escape_json(&buf, order[k]);
		appendStringInfoChar(&buf, ':');
		sync_jsonb_append_compact(&buf, &m);
	}
	if (nfound != (int) JsonContainerSize(obj))
	{
		/* an unknown member: append it so that ssp_blob_ref_valid refuses the text */
		it = JsonbIteratorInit(obj);
		while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
			if (tok == WJB_KEY)
			{
				appendStringInfoString(&buf, nfound++ > 0 ? "," : "");
				sync_jsonb_append_compact(&buf, &v);
				appendStringInfoString(&buf, ":null");
			}
	}
	appendStringInfoChar(&buf, '}');
	*len = (uint32) buf.len;
	return buf.data;
}

void
sync_json_to_value(const char *table, const SspColumn *col, JsonbValue *jv,
				   SyncJsonText json_text, SspValue *out)
{
	const char *cname = col->name;

	memset(out, 0, sizeof(*out));
	out->present = true;
	if (jv == NULL || jv->type == jbvNull)
	{
		out->is_null = true;
		return;
	}

	switch (col->type)
	{
		case SSP_COL_STRING:
			if (jv->type != jbvString)
				sync_raise_column("sync.invalid_request", table, cname,
								  "column \"%s\" of table \"%s\" is a string column, got a JSON %s",
								  cname, table, sync_jsonb_type_label(jv));
			out->str.ptr = pnstrdup(jv->val.string.val, jv->val.string.len);
			out->str.len = (uint32) jv->val.string.len;
			break;

		case SSP_COL_INTEGER:
			{
				int64		v;

				if (jv->type != jbvNumeric)
					sync_raise_column("sync.invalid_request", table, cname,
									  "column \"%s\" of table \"%s\" is an integer column, got a JSON %s",
									  cname, table, sync_jsonb_type_label(jv));
				if (!sync_numeric_text_to_int53(sync_jsonb_number_text(jv), &v))
					sync_raise_column("sync.invalid_request", table, cname,
									  "column \"%s\" of table \"%s\" needs an integer within +-(2^53-1)",
									  cname, table);
				out->i = v;
				break;
			}

		case SSP_COL_FLOAT:
			{
				char	   *txt;
				char	   *end;
				double		d;

				if (jv->type != jbvNumeric)
					sync_raise_column("sync.invalid_request", table, cname,
									  "column \"%s\" of table \"%s\" is a float column, got a JSON %s",
									  cname, table, sync_jsonb_type_label(jv));
				txt = sync_jsonb_number_text(jv);
				errno = 0;
				d = strtod(txt, &end);
				if (*end != '\0' || isinf(d) || isnan(d))
					sync_raise_column("sync.invalid_request", table, cname,
									  "column \"%s\" of table \"%s\": number is out of the float range",
									  cname, table);
				out->f = d;
				break;
			}

		case SSP_COL_BOOLEAN:
			if (jv->type != jbvBool)
				sync_raise_column("sync.invalid_request", table, cname,
								  "column \"%s\" of table \"%s\" is a boolean column, got a JSON %s",
								  cname, table, sync_jsonb_type_label(jv));
			out->b = jv->val.boolean;
			break;

		case SSP_COL_JSON:
			{
				uint32		len;

				out->str.ptr = jsonb_value_text(jv, json_text, &len);
				out->str.len = len;
				break;
			}

		case SSP_COL_BLOB_REF:
			{
				uint32		len;

				if (jv->type != jbvBinary || !JsonContainerIsObject(jv->val.binary.data))
					sync_raise_column("sync.invalid_request", table, cname,
									  "column \"%s\" of table \"%s\" is a blob_ref column, got a JSON %s",
									  cname, table, sync_jsonb_type_label(jv));
				out->str.ptr = blob_ref_text(jv->val.binary.data, &len);
				out->str.len = len;
				if (!ssp_blob_ref_valid(out->str.ptr, len))
					sync_raise_column("sync.invalid_request", table, cname,
									  "column \"%s\" of table \"%s\": not a valid blob reference",
									  cname, table);
				break;
			}

		case SSP_COL_BYTES:
		case SSP_COL_CRDT:
			{
				int			n;
				char	   *dst;

				if (jv->type != jbvString)
					sync_raise_column("sync.invalid_request", table, cname,
									  "column \"%s\" of table \"%s\" holds bytes as a base64 string, got a JSON %s",
									  cname, table, sync_jsonb_type_label(jv));
				n = sync_base64_decode(jv->val.string.val, jv->val.string.len, &dst);
				if (n < 0)
					sync_raise_column("sync.invalid_request", table, cname,
									  "column \"%s\" of table \"%s\": invalid base64",
									  cname, table);
				out->bytes.ptr = (const uint8_t *) dst;
				out->bytes.len = (uint32) n;
				break;
			}

		default:
			sync_raise_column("sync.invalid_request", table, cname,
							  "column \"%s\" of table \"%s\" has an unknown type tag %d",
							  cname, table, (int) col->type);
	}
}

/* ---------------------------------------------------------------- codec value -> jsonb */

/* WTF-8 lone surrogates (ED A0..BF xx) and U+0000 cannot be held by jsonb. */
static bool
text_fits_jsonb(const char *s, size_t len)
{
	size_t		i;

	for (i = 0; i < len; i++)
	{
		unsigned char c = (unsigned char) s[i];

		if (c == 0)
			return false;
		if (c == 0xED && i + 1 < len && ((unsigned char) s[i + 1] & 0xE0) == 0xA0)
			return false;
	}
	return true;
}

/* A JSON number lexeme numeric_in will surely accept (its exponent limit is 1000). */
static bool
number_fits_numeric(const char *s, size_t len)
{
	const char *e;
	long		exp;

	if (len > 1000)
		return false;
	e = memchr(s, 'e', len);
	if (e == NULL)
		e = memchr(s, 'E', len);
	if (e == NULL)
		return true;
	exp = strtol(e + 1, NULL, 10);
	return exp >= -1000 && exp <= 1000;
}

static bool
dom_fits_jsonb(const SspJson *j, int depth)
{
	uint32		i;

	if (depth > SSP_JSON_MAX_DEPTH)
		return false;
	switch (j->kind)
	{
		case SSP_JSON_STRING:
			return text_fits_jsonb(j->text.ptr, j->text.len);
		case SSP_JSON_NUMBER:
			return number_fits_numeric(j->text.ptr, j->text.len);
		case SSP_JSON_ARRAY:
			for (i = 0; i < j->count; i++)
				if (!dom_fits_jsonb(&j->items[i], depth + 1))
					return false;
			return true;
		case SSP_JSON_OBJECT:
			for (i = 0; i < j->count; i++)
				if (!text_fits_jsonb(j->keys[i].ptr, j->keys[i].len) ||
					!dom_fits_jsonb(&j->items[i], depth + 1))
					return false;
			return true;
		default:
			return true;
	}
}

static void
push_scalar(JsonbParseState **ps, JsonbIteratorToken tok, JsonbValue *v)
{
	pushJsonbValue(ps, tok, v);
}

static void
dom_push(JsonbParseState **ps, JsonbIteratorToken tok, const SspJson *j)
{
	JsonbValue	v;
	uint32		i;

	check_stack_depth();
	switch (j->kind)
	{
		case SSP_JSON_NULL:
			v.type = jbvNull;
			push_scalar(ps, tok, &v);
			break;
		case SSP_JSON_FALSE:
		case SSP_JSON_TRUE:
			v.type = jbvBool;
			v.val.boolean = (j->kind == SSP_JSON_TRUE);
			push_scalar(ps, tok, &v);
			break;
		case SSP_JSON_NUMBER:
			{
				char	   *lex = pnstrdup(j->text.ptr, j->text.len);

				v.type = jbvNumeric;
				v.val.numeric = DatumGetNumeric(DirectFunctionCall3(numeric_in,
																	CStringGetDatum(lex),
																	ObjectIdGetDatum(InvalidOid),
																	Int32GetDatum(-1)));
				push_scalar(ps, tok, &v);
				break;
			}
		case SSP_JSON_STRING:
			v.type = jbvString;
			v.val.string.val = pnstrdup(j->text.ptr, j->text.len);
			v.val.string.len = (int) j->text.len;
			push_scalar(ps, tok, &v);
			break;
		case SSP_JSON_ARRAY:
			pushJsonbValue(ps, WJB_BEGIN_ARRAY, NULL);
			for (i = 0; i < j->count; i++)
				dom_push(ps, WJB_ELEM, &j->items[i]);
			pushJsonbValue(ps, WJB_END_ARRAY, NULL);
			break;
		case SSP_JSON_OBJECT:
			pushJsonbValue(ps, WJB_BEGIN_OBJECT, NULL);
			for (i = 0; i < j->count; i++)
			{
				JsonbValue	k;

				k.type = jbvString;
				k.val.string.val = pnstrdup(j->keys[i].ptr, j->keys[i].len);
				k.val.string.len = (int) j->keys[i].len;
				pushJsonbValue(ps, WJB_KEY, &k);
				dom_push(ps, WJB_VALUE, &j->items[i]);
			}
			pushJsonbValue(ps, WJB_END_OBJECT, NULL);
			break;
	}
}

void
sync_push_string(JsonbParseState **ps, JsonbIteratorToken tok, const char *s)
{
	JsonbValue	v;

	v.type = jbvString;
	v.val.string.val = (char *) s;
	v.val.string.len = strlen(s);
	pushJsonbValue(ps, tok, &v);
}

void
sync_push_key(JsonbParseState **ps, const char *key)
{
	sync_push_string(ps, WJB_KEY, key);
}

void
sync_push_int(JsonbParseState **ps, JsonbIteratorToken tok, int64 i)
{
	JsonbValue	v;

	v.type = jbvNumeric;
	v.val.numeric = int64_to_numeric(i);
	pushJsonbValue(ps, tok, &v);
}

void
sync_push_json_text(JsonbParseState **ps, JsonbIteratorToken tok, const char *s, size_t len)
{
	SspArena   *arena = ssp_arena_new();
	SspJson    *dom = NULL;
	SspError	err;
	bool		ok;

	if (arena == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	ok = ssp_json_parse(arena, s, len, &dom, &err) && dom_fits_jsonb(dom, 0);
	if (ok)
	{
		/* a container at the top needs no special case: BEGIN tokens nest under tok's parent */
		PG_TRY();
		{
			dom_push(ps, tok, dom);
		}
		PG_FINALLY();
		{
			ssp_arena_free(arena);
		}
		PG_END_TRY();
	}
	else
	{
		JsonbValue	v;

		ssp_arena_free(arena);
		v.type = jbvNull;
		pushJsonbValue(ps, tok, &v);
	}
}

void
sync_push_value(JsonbParseState **ps, JsonbIteratorToken tok, const char *table,
				const SspColumn *col, const SspValue *val)
{
	JsonbValue	v;

	if (val->is_null)
	{
		v.type = jbvNull;
		pushJsonbValue(ps, tok, &v);
		return;
	}
	switch (col->type)
	{
		case SSP_COL_STRING:
			if (!text_fits_jsonb(val->str.ptr, val->str.len))
				sync_raise_column("sync.invalid_request", table, col->name,
								  "column \"%s\" of table \"%s\": the string holds U+0000, which jsonb cannot hold",
								  col->name, table);
			v.type = jbvString;
			v.val.string.val = pnstrdup(val->str.ptr, val->str.len);
			v.val.string.len = (int) val->str.len;
			break;
		case SSP_COL_INTEGER:
			v.type = jbvNumeric;
			v.val.numeric = int64_to_numeric(val->i);
			break;
		case SSP_COL_FLOAT:
			if (isnan(val->f) || isinf(val->f))
				v.type = jbvNull;
			else
			{
				char		buf[DOUBLE_SHORTEST_DECIMAL_LEN];

				double_to_shortest_decimal_buf(val->f, buf);
				v.type = jbvNumeric;
				v.val.numeric = DatumGetNumeric(DirectFunctionCall3(numeric_in,
																	CStringGetDatum(buf),
																	ObjectIdGetDatum(InvalidOid),
																	Int32GetDatum(-1)));
			}
			break;
		case SSP_COL_BOOLEAN:
			v.type = jbvBool;
			v.val.boolean = val->b;
			break;
		case SSP_COL_JSON:
		case SSP_COL_BLOB_REF:
			sync_push_json_text(ps, tok, val->str.ptr, val->str.len);
			return;
		case SSP_COL_BYTES:
		case SSP_COL_CRDT:
			{
				int			cap = pg_b64_enc_len((int) val->bytes.len);
				char	   *dst = palloc(cap + 1);
				int			n = val->bytes.len == 0 ? 0 :
					pg_b64_encode((const char *) val->bytes.ptr, (int) val->bytes.len, dst, cap);

				if (n < 0)
					elog(ERROR, "syncular: base64 encoding failed");
				v.type = jbvString;
				v.val.string.val = dst;
				v.val.string.len = n;
				break;
			}
		default:
			sync_raise_column("sync.invalid_request", table, col->name,
							  "column \"%s\" of table \"%s\" has an unknown type tag %d",
							  col->name, table, (int) col->type);
	}
	pushJsonbValue(ps, tok, &v);
}

/* ---------------------------------------------------------------- the SQL functions */

static SyncTable *
lookup_table(const char *name)
{
	SyncSchema *schema = sync_schema_get();
	SyncTable  *t = schema ? sync_schema_table(schema, name) : NULL;

	if (t == NULL)
		sync_raise_column("sync.unknown_table", name, NULL,
						  "table \"%s\" is not registered in the synced schema", name);
	return t;
}

static void
raise_codec(const SyncTable *t, const SspError *err)
{
	if (err->code && strcmp(err->code, SSP_ERR_INTERNAL) == 0)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("syncular codec: %s", err->message)));
	sync_raise_column(err->code ? err->code : "sync.invalid_request", t->name, NULL,
					  "table \"%s\": %s", t->name, err->message);
}

/* Map a JSON object onto values for every column; sparse: present = keys in the object. */
static SspValue *
values_from_object(SyncTable *t, Jsonb *row, bool sparse)
{
	SspValue   *vals;
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	int			i;

	if (!JB_ROOT_IS_OBJECT(row) || JB_ROOT_IS_SCALAR(row))
		sync_raise_column("sync.invalid_request", t->name, NULL,
						  "a row of table \"%s\" must be a JSON object", t->name);

	/* unknown keys are an error (a typo would silently drop a value otherwise) */
	it = JsonbIteratorInit(&row->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_KEY)
		{
			bool		found = false;

			for (i = 0; i < t->ncolumns; i++)
				if ((int) strlen(t->columns[i].name) == v.val.string.len &&
					memcmp(t->columns[i].name, v.val.string.val, v.val.string.len) == 0)
				{
					found = true;
					break;
				}
			if (!found)
			{
				char	   *k = pnstrdup(v.val.string.val, v.val.string.len);

				sync_raise_column("sync.invalid_request", t->name, k,
								  "table \"%s\" has no column \"%s\"", t->name, k);
			}
		}
	}

	vals = palloc0(sizeof(SspValue) * Max(t->ncolumns, 1));
	for (i = 0; i < t->ncolumns; i++)
	{
		const SspColumn *col = &t->codec_columns[i];
		JsonbValue	buf;
		JsonbValue *jv = getKeyJsonValueFromContainer(&row->root, t->columns[i].name,
													  strlen(t->columns[i].name), &buf);

		if (jv == NULL && sparse)
		{
			if (i == t->pk_index)
				sync_raise_column("sync.invalid_request", t->name, t->columns[i].name,
								  "a sparse row of table \"%s\" needs its primary key \"%s\"",
								  t->name, t->columns[i].name);
			vals[i].present = false;
			continue;
		}
		sync_json_to_value(t->name, col, jv, SYNC_JSON_TEXT_PG, &vals[i]);
		if (vals[i].is_null && !col->nullable)
			sync_raise_column("sync.invalid_request", t->name, t->columns[i].name,
							  "column \"%s\" of table \"%s\" is not nullable",
							  t->columns[i].name, t->name);
	}
	return vals;
}

static Datum
encode_common(PG_FUNCTION_ARGS, bool sparse)
{
	char	   *tname = text_to_cstring(PG_GETARG_TEXT_PP(0));
	Jsonb	   *row = PG_GETARG_JSONB_P(1);
	SyncTable  *t = lookup_table(tname);
	SspValue   *vals = values_from_object(t, row, sparse);
	SspBuf		out;
	SspError	err;
	bool		ok;
	bytea	   *result;

	ssp_buf_init(&out);
	if (sparse)
		ok = ssp_row_encode_sparse(t->codec_columns, (uint32) t->ncolumns, (uint32) t->pk_index,
								   vals, &out, &err);
	else
		ok = ssp_row_encode_full(t->codec_columns, (uint32) t->ncolumns, vals, &out, &err);
	if (!ok || out.oom)
	{
		ssp_buf_free(&out);
		if (ok)
		{
			err.code = SSP_ERR_INTERNAL;
			strlcpy(err.message, "out of memory", sizeof(err.message));
		}
		raise_codec(t, &err);
	}
	result = (bytea *) palloc(VARHDRSZ + out.len);
	SET_VARSIZE(result, VARHDRSZ + out.len);
	if (out.len > 0)
		memcpy(VARDATA(result), out.data, out.len);
	ssp_buf_free(&out);
	PG_RETURN_BYTEA_P(result);
}

/*
 * Push the row `data` of table `tname` (full, or sparse: the columns it carries) as one jsonb
 * object {column: value}: decode_row's value, also pushed by the SQL pull producer
 * (producer_pull.c) for each change of a commit.  Errors as decode_row's.  Returns what the
 * closing pushJsonbValue returns (the object itself when it is the outermost value).
 */
JsonbValue *
sync_push_row_object(JsonbParseState **ps, const char *tname, const uint8 *data, size_t len,
					 bool sparse)
{
	SyncTable  *t = lookup_table(tname);
	SspArena   *arena = ssp_arena_new();
	SspValue   *vals = palloc0(sizeof(SspValue) * Max(t->ncolumns, 1));
	SspError	err;
	bool		ok;
	JsonbValue *res = NULL;

	if (arena == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	if (sparse)
		ok = ssp_row_decode_sparse(arena, t->codec_columns, (uint32) t->ncolumns,
								   (uint32) t->pk_index, data, len, vals, &err);
	else
		ok = ssp_row_decode_full(arena, t->codec_columns, (uint32) t->ncolumns, data, len,
								 vals, &err);
	if (!ok)
	{
		ssp_arena_free(arena);
		raise_codec(t, &err);
	}

	PG_TRY();
	{
		pushJsonbValue(ps, WJB_BEGIN_OBJECT, NULL);
		for (int i = 0; i < t->ncolumns; i++)
		{
			if (sparse && !vals[i].present)
				continue;
			sync_push_key(ps, t->columns[i].name);
			sync_push_value(ps, WJB_VALUE, t->name, &t->codec_columns[i], &vals[i]);
		}
		res = pushJsonbValue(ps, WJB_END_OBJECT, NULL);
	}
	PG_FINALLY();
	{
		ssp_arena_free(arena);
	}
	PG_END_TRY();
	pfree(vals);
	return res;
}

static Datum
decode_common(PG_FUNCTION_ARGS, bool sparse)
{
	char	   *tname = text_to_cstring(PG_GETARG_TEXT_PP(0));
	bytea	   *payload = PG_GETARG_BYTEA_PP(1);
	JsonbParseState *ps = NULL;
	JsonbValue *res = sync_push_row_object(&ps, tname, (const uint8 *) VARDATA_ANY(payload),
										   VARSIZE_ANY_EXHDR(payload), sparse);

	PG_RETURN_JSONB_P(JsonbValueToJsonb(res));
}

Datum
syncular_encode_row(PG_FUNCTION_ARGS)
{
	return encode_common(fcinfo, false);
}

Datum
syncular_encode_sparse_row(PG_FUNCTION_ARGS)
{
	return encode_common(fcinfo, true);
}

Datum
syncular_decode_row(PG_FUNCTION_ARGS)
{
	return decode_common(fcinfo, false);
}

Datum
syncular_decode_sparse_row(PG_FUNCTION_ARGS)
{
	return decode_common(fcinfo, true);
}
