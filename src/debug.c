/*
 * debug.c — canonical JSON rendering of SSP2 messages / SSG2 segments, and its inverse.
 *
 *   syncular.debug_render(message bytea) RETURNS jsonb
 *       SPEC §11 rendering (ssp_render_message / ssp_render_segment; SSG2 is detected by its
 *       magic).  Bytes that do not decode raise the decode error's catalogue code in DETAIL.
 *       A string holding what jsonb cannot store (U+0000, a lone surrogate) keeps its \u escape
 *       as text (see jsonb_safe_text); a value jsonb cannot hold at all (a number beyond
 *       numeric's range) raises sync.invalid_request with details {"sqlstate": ...}.
 *   syncular.debug_encode(doc jsonb) RETURNS bytea
 *       Builds the message (or segment) described by a rendering-shaped document and encodes it.
 *       Field names are the rendering's; bytes are base64; json-typed fields (params,
 *       bootstrapState, details, json column values) are JSON values and are re-serialized
 *       compact.  Hence debug_render(debug_encode(doc)) = doc (as jsonb), but the bytes may
 *       differ from an original whose raw JSON text had spaces or another key order (the golden
 *       vectors' `{"includeArchived": false}` comes back as `{"includeArchived":false}`).
 *       A non-finite float renders as null; on a non-nullable float column of a segment
 *       document null is therefore encoded as NaN.
 *   Invalid documents raise sync.invalid_request with a message naming the field
 *   (details {"field": path}); encoder refusals raise the codec's code.
 */
#include "postgres.h"

#include "access/xact.h"
#include "fmgr.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/json.h"
#include "utils/jsonb.h"

#include "engine.h"
#include "rowjson.h"
#include "storage.h"

PG_FUNCTION_INFO_V1(syncular_debug_render);
PG_FUNCTION_INFO_V1(syncular_debug_encode);

/* ---------------------------------------------------------------- debug_render */

static void
raise_codec_error(const SspError *err)
{
	if (err->code && strcmp(err->code, SSP_ERR_INTERNAL) == 0)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("syncular codec: %s", err->message)));
	sync_raise(err->code ? err->code : SSP_ERR_INVALID_REQUEST, err->message, NULL);
}

static int
hex4(const char *p)
{
	int			v = 0;

	for (int i = 0; i < 4; i++)
	{
		char		c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

/*
 * The rendering as text jsonb_in accepts.  SSP2 strings and json-typed fields may carry U+0000 (a
 * NUL byte in a str, a \u0000 escape in JSON text) and json-typed fields lone UTF-16 surrogates
 * (\ud800), and the renderer spells them as \u escapes; jsonb cannot hold either (jsonb_in
 * raises 22P05 or 22P02).  Such an escape gets its backslash escaped, so jsonb keeps the six
 * characters verbatim ("a\u0000b" renders as the string a\u0000b): the rendering is a debugging
 * aid (SPEC §11), it must not fail on a valid message.  The input is the renderer's output, valid
 * JSON, so a backslash only occurs inside a string, where it starts an escape.
 */
static char *
jsonb_safe_text(const char *s, size_t len)
{
	StringInfoData b;
	size_t		i = 0;

	if (memchr(s, '\\', len) == NULL)
		return (char *) s;
	initStringInfo(&b);
	while (i < len)
	{
		int			cp;
		int			low = -1;

		if (s[i] != '\\' || i + 1 >= len)
		{
			appendStringInfoChar(&b, s[i++]);
			continue;
		}
		if (s[i + 1] != 'u' || i + 6 > len || (cp = hex4(s + i + 2)) < 0)
		{
			appendBinaryStringInfo(&b, s + i, 2);	/* \" \\ \/ \b \f \n \r \t */
			i += 2;
			continue;
		}
		if (cp >= 0xD800 && cp <= 0xDBFF && i + 12 <= len && s[i + 6] == '\\' && s[i + 7] == 'u')
			low = hex4(s + i + 8);
		if (low >= 0xDC00 && low <= 0xDFFF)
		{
			appendBinaryStringInfo(&b, s + i, 12);	/* a surrogate pair */
			i += 12;
			continue;
		}
		if (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF))
			appendStringInfoChar(&b, '\\');
		appendBinaryStringInfo(&b, s + i, 6);
		i += 6;
	}
	return b.data;
}

/*
 * False when jsonb_in surely accepts the (jsonb_safe_text) rendering: a UTF-8 database (every \u
 * escape left is representable) and no number with an exponent or more than 1000 digits
 * (numeric's range is the only other refusal).
 */
static bool
may_be_refused(const char *s)
{
	bool		in_string = false;
	int			digits = 0;

	if (GetDatabaseEncoding() != PG_UTF8)
		return true;
	for (; *s; s++)
	{
		if (in_string)
		{
			if (*s == '\\' && s[1])
				s++;
			else if (*s == '"')
				in_string = false;
			continue;
		}
		if (*s == '"')
			in_string = true;
		else if ((*s == 'e' || *s == 'E') && digits > 0)
			return true;		/* an exponent (the e of true / false follows no digit) */
		else if (*s >= '0' && *s <= '9')
		{
			if (++digits > 1000)
				return true;
			continue;
		}
		digits = 0;
	}
	return false;
}

/*
 * jsonb_in over the rendering, guarded: after jsonb_safe_text the only refusals left are values
 * jsonb truly cannot hold (a number beyond numeric's range, a \u escape the database encoding
 * cannot represent).  Those raise sync.invalid_request with the SQLSTATE in the details, not a
 * bare data exception.  Runs in a subtransaction so a refusal leaves nothing behind.
 */
static Datum
rendering_to_jsonb(const char *text)
{
	MemoryContext caller = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	volatile Datum result = (Datum) 0;	/* volatile: set inside PG_TRY */
	ErrorData  *volatile refused = NULL;

	/* the common case needs no subtransaction; a parallel worker may not start one */
	if (!may_be_refused(text) || IsInParallelMode())
		return DirectFunctionCall1(jsonb_in, CStringGetDatum(text));
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(caller);
	PG_TRY();
	{
		result = DirectFunctionCall1(jsonb_in, CStringGetDatum(text));
		sync_subxact_release(caller, owner);
	}
	PG_CATCH();
	{
		ErrorData  *edata = sync_subxact_rollback(caller, owner);

		if (ERRCODE_TO_CATEGORY(edata->sqlerrcode) != ERRCODE_DATA_EXCEPTION)
			ReThrowError(edata);
		refused = edata;
	}
	PG_END_TRY();
	if (refused)
		sync_raise(SSP_ERR_INVALID_REQUEST,
				   psprintf("debug_render: the message holds a value jsonb cannot store: %s",
							refused->message),
				   psprintf("{\"sqlstate\":\"%s\"}", unpack_sql_state(refused->sqlerrcode)));
	return result;
}

Datum
syncular_debug_render(PG_FUNCTION_ARGS)
{
	bytea	   *in = PG_GETARG_BYTEA_PP(0);
	const uint8_t *data = (const uint8_t *) VARDATA_ANY(in);
	size_t		len = VARSIZE_ANY_EXHDR(in);
	SspBuf		out;
	SspError	err;
	bool		ok;
	Datum		result;

	ssp_buf_init(&out);
	if (len >= 4 && memcmp(data, "SSG2", 4) == 0)
	{
		SspSegment	seg;

		memset(&seg, 0, sizeof(seg));
		if (!ssp_segment_decode(data, len, &seg, &err))
			raise_codec_error(&err);
		ok = ssp_render_segment(&seg, &out, &err);
		ssp_segment_free(&seg);
	}
	else
	{
		SspMessage	msg;

		memset(&msg, 0, sizeof(msg));
		if (!ssp_decode_message(data, len, &msg, &err))
			raise_codec_error(&err);
		ok = ssp_render_message(&msg, &out, &err);
		ssp_message_free(&msg);
	}
	if (!ok)
	{
		ssp_buf_free(&out);
		raise_codec_error(&err);
	}
	if (!ssp_buf_append(&out, "", 1))
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	result = rendering_to_jsonb(jsonb_safe_text((char *) out.data, out.len - 1));
	ssp_buf_free(&out);
	PG_RETURN_DATUM(result);
}

/* ---------------------------------------------------------------- debug_encode: document access */

static void raise_field(const char *path, const char *fmt,...) pg_attribute_printf(2, 3) pg_attribute_noreturn();

static void
raise_field(const char *path, const char *fmt,...)
{
	StringInfoData msg;
	StringInfoData det;
	va_list		args;

	initStringInfo(&msg);
	appendStringInfo(&msg, "debug_encode: %s ", path);
	va_start(args, fmt);
	sync_append_vformat(&msg, fmt, args);
	va_end(args);
	initStringInfo(&det);
	appendStringInfoString(&det, "{\"field\":");
	escape_json(&det, path);
	appendStringInfoChar(&det, '}');
	sync_raise(SSP_ERR_INVALID_REQUEST, msg.data, det.data);
}

static char *
path_key(const char *base, const char *key)
{
	return base[0] ? psprintf("%s.%s", base, key) : pstrdup(key);
}

static char *
path_index(const char *base, int i)
{
	return psprintf("%s[%d]", base, i);
}

/* A zeroed C array for the n elements of a document array; never NULL, even when n = 0. */
#define ELEMS(type, n) ((type *) palloc0(sizeof(type) * Max((n), 1)))

static bool
is_object(JsonbValue *v)
{
	return v && v->type == jbvBinary && JsonContainerIsObject(v->val.binary.data);
}

static bool
is_array(JsonbValue *v)
{
	return v && v->type == jbvBinary && JsonContainerIsArray(v->val.binary.data);
}

/* Member `key` of object `obj`, or NULL when absent (JSON null counts as absent). */
static JsonbValue *
member(JsonbContainer *obj, const char *key)
{
	JsonbValue *v = getKeyJsonValueFromContainer(obj, key, strlen(key), NULL);

	if (v && v->type == jbvNull)
		return NULL;
	return v;
}

static JsonbValue *
need(JsonbContainer *obj, const char *base, const char *key)
{
	JsonbValue *v = member(obj, key);

	if (v == NULL)
		raise_field(path_key(base, key), "is required");
	return v;
}

static JsonbContainer *
need_object(JsonbValue *v, const char *path)
{
	if (!is_object(v))
		raise_field(path, "must be a JSON object");
	return v->val.binary.data;
}

/* Object member `key` of obj (required). */
static JsonbContainer *
get_object(JsonbContainer *obj, const char *base, const char *key)
{
	return need_object(need(obj, base, key), path_key(base, key));
}

static SspStr
as_str(JsonbValue *v, const char *path)
{
	SspStr		s;

	if (v == NULL || v->type != jbvString)
		raise_field(path, "must be a string");
	s.ptr = pnstrdup(v->val.string.val, v->val.string.len);
	s.len = (uint32) v->val.string.len;
	return s;
}

static SspStr
get_str(JsonbContainer *obj, const char *base, const char *key)
{
	return as_str(need(obj, base, key), path_key(base, key));
}

/* Optional string: *present tells; absent gives "". */
static SspStr
get_opt_str(JsonbContainer *obj, const char *base, const char *key, bool *present)
{
	JsonbValue *v = member(obj, key);
	SspStr		s = {"", 0};

	*present = (v != NULL);
	if (v)
		s = as_str(v, path_key(base, key));
	return s;
}

static int64
as_int(JsonbValue *v, const char *path, int64 min, int64 max)
{
	int64		i;

	if (v == NULL || v->type != jbvNumeric)
		raise_field(path, "must be a number");
	if (!sync_numeric_text_to_int53(sync_jsonb_number_text(v), &i))
		raise_field(path, "must be an integer within +-(2^53-1)");
	if (i < min || i > max)
		raise_field(path, "is out of range [" INT64_FORMAT ", " INT64_FORMAT "]", min, max);
	return i;
}

static int64
get_int(JsonbContainer *obj, const char *base, const char *key, int64 min, int64 max)
{
	return as_int(need(obj, base, key), path_key(base, key), min, max);
}

/* Optional integer: *present tells; absent gives 0 (the zeroed struct's value). */
static int64
get_opt_int(JsonbContainer *obj, const char *base, const char *key, int64 min, int64 max,
			bool *present)
{
	JsonbValue *v = member(obj, key);

	*present = (v != NULL);
	return v ? as_int(v, path_key(base, key), min, max) : 0;
}

#define I32_MIN ((int64) PG_INT32_MIN)
#define I32_MAX ((int64) PG_INT32_MAX)
#define I64_MIN (-SSP_I64_SAFE_MAX)
#define I64_MAX SSP_I64_SAFE_MAX

static bool
get_bool(JsonbContainer *obj, const char *base, const char *key, bool dflt, bool required)
{
	JsonbValue *v = required ? need(obj, base, key) : member(obj, key);

	if (v == NULL)
		return dflt;
	if (v->type != jbvBool)
		raise_field(path_key(base, key), "must be true or false");
	return v->val.boolean;
}

static SspBytes
as_bytes(JsonbValue *v, const char *path)
{
	SspBytes	b;
	char	   *dst;
	int			n;

	if (v == NULL || v->type != jbvString)
		raise_field(path, "must be a base64 string");
	n = sync_base64_decode(v->val.string.val, v->val.string.len, &dst);
	if (n < 0)
		raise_field(path, "is not valid base64");
	b.ptr = (const uint8_t *) dst;
	b.len = (uint32) n;
	return b;
}

static SspBytes
get_bytes(JsonbContainer *obj, const char *base, const char *key)
{
	return as_bytes(need(obj, base, key), path_key(base, key));
}

/* Optional bytes: *present (when the struct has such a flag) tells; absent gives none. */
static SspBytes
get_opt_bytes(JsonbContainer *obj, const char *base, const char *key, bool *present)
{
	JsonbValue *v = member(obj, key);
	SspBytes	b = {NULL, 0};

	if (present)
		*present = (v != NULL);
	if (v)
		b = as_bytes(v, path_key(base, key));
	return b;
}

/* A json-typed field given as a JSON value, re-serialized compact. */
static SspStr
as_json_text(JsonbValue *v)
{
	StringInfoData buf;
	SspStr		s;

	initStringInfo(&buf);
	sync_jsonb_append_compact(&buf, v);
	s.ptr = buf.data;
	s.len = (uint32) buf.len;
	return s;
}

/* Optional json-typed field: *present tells; absent gives none (any JSON value is accepted). */
static SspStr
get_opt_json(JsonbContainer *obj, const char *key, bool *present)
{
	JsonbValue *v = member(obj, key);
	SspStr		s = {NULL, 0};

	*present = (v != NULL);
	if (v)
		s = as_json_text(v);
	return s;
}

/* Enum given by name (as rendered) or by its wire number. */
static uint8
get_enum(JsonbContainer *obj, const char *base, const char *key, const char *const *names, int nnames)
{
	JsonbValue *v = need(obj, base, key);
	char	   *path = path_key(base, key);
	int			i;

	if (v->type == jbvNumeric)
		return (uint8) as_int(v, path, 0, 255);
	if (v->type != jbvString)
		raise_field(path, "must be a string");
	for (i = 0; i < nnames; i++)
		if (names[i] && (int) strlen(names[i]) == v->val.string.len &&
			memcmp(names[i], v->val.string.val, v->val.string.len) == 0)
			return (uint8) i;
	raise_field(path, "has an unknown value \"%s\"", pnstrdup(v->val.string.val, v->val.string.len));
}

static const char *const op_names[] = {NULL, "upsert", "delete"};
static const char *const push_status_names[] = {NULL, "applied", "cached", "rejected"};
static const char *const result_status_names[] = {NULL, "applied", "conflict", "error"};
static const char *const sub_status_names[] = {NULL, "active", "revoked", "reset"};
static const char *const media_names[] = {NULL, "rows", "sqlite"};

/*
 * A document array read element by element: its container, size and path.  Every list in a
 * document (frames, operations, results, columns, blocks, ...) is read through this, so each
 * element is checked and named in errors the same way.
 */
typedef struct DocArray
{
	JsonbContainer *arr;
	int			n;
	char	   *path;
} DocArray;

static DocArray
as_array(JsonbValue *v, char *path)
{
	DocArray	a;

	if (!is_array(v))
		raise_field(path, "must be a JSON array");
	a.arr = v->val.binary.data;
	a.n = JsonContainerSize(a.arr);
	a.path = path;
	return a;
}

/* Array member `key` of obj (required). */
static DocArray
get_array(JsonbContainer *obj, const char *base, const char *key)
{
	return as_array(need(obj, base, key), path_key(base, key));
}

static JsonbValue *
elem(const DocArray *a, int i)
{
	return getIthJsonbValueFromContainer(a->arr, i);
}

/* Element i, which must be an object; *path gets the element's path. */
static JsonbContainer *
elem_object(const DocArray *a, int i, char **path)
{
	*path = path_index(a->path, i);
	return need_object(elem(a, i), *path);
}

static DocArray
elem_array(const DocArray *a, int i)
{
	return as_array(elem(a, i), path_index(a->path, i));
}

static SspStr
elem_str(const DocArray *a, int i)
{
	return as_str(elem(a, i), path_index(a->path, i));
}

/* Reads one element object (named `path` in errors) into the C element at `out`. */
typedef void (*ObjectReader) (JsonbContainer *obj, const char *path, void *out);

/*
 * Array member `key` of obj whose elements are objects (frames, operations, results, ...):
 * each is read by `read`, in order, into a zeroed C array of elem_size-byte elements (never
 * NULL); *n gets the count.
 */
static void *
get_objects(JsonbContainer *obj, const char *base, const char *key, Size elem_size,
			ObjectReader read, int *n)
{
	DocArray	a = get_array(obj, base, key);
	char	   *elems = palloc0(elem_size * Max(a.n, 1));
	int			i;

	for (i = 0; i < a.n; i++)
	{
		char	   *q;
		JsonbContainer *o = elem_object(&a, i, &q);

		read(o, q, elems + i * elem_size);
	}
	*n = a.n;
	return elems;
}

/*
 * An object member read as a map, pair by pair (scopes, effectiveScopes): its iterator, size and
 * path.  Both map shapes of a document are read through this.
 */
typedef struct DocMap
{
	JsonbIterator *it;
	int			n;
	char	   *path;
} DocMap;

static DocMap
get_map(JsonbContainer *obj, const char *base, const char *key)
{
	DocMap		m;
	JsonbContainer *c = get_object(obj, base, key);

	m.it = JsonbIteratorInit(c);
	m.n = JsonContainerSize(c);
	m.path = path_key(base, key);
	return m;
}

/* The next pair: false at the end; else its key, its value and the value's path. */
static bool
next_pair(DocMap *m, SspStr *k, JsonbValue *v, char **vpath)
{
	JsonbIteratorToken tok;

	while ((tok = JsonbIteratorNext(&m->it, v, true)) != WJB_DONE)
	{
		if (tok == WJB_KEY)
			*k = as_str(v, m->path);	/* a key is always a string */
		else if (tok == WJB_VALUE)
		{
			*vpath = path_key(m->path, k->ptr);
			return true;
		}
	}
	return false;
}

/* {key: [str, ...]} */
static SspScopeMap
get_scope_map(JsonbContainer *obj, const char *base, const char *key)
{
	DocMap		m = get_map(obj, base, key);
	SspScopeMap map = {0, ELEMS(SspScopeEntry, m.n)};
	SspStr		k;
	JsonbValue	v;
	char	   *vpath;

	while (next_pair(&m, &k, &v, &vpath))
	{
		SspScopeEntry *e = &map.entries[map.n++];
		DocArray	vals = as_array(&v, vpath);
		int			i;

		e->key = k;
		e->nvalues = (uint32) vals.n;
		e->values = ELEMS(SspStr, vals.n);
		for (i = 0; i < vals.n; i++)
			e->values[i] = elem_str(&vals, i);
	}
	return map;
}

/* {key: str} */
static SspStrMap
get_str_map(JsonbContainer *obj, const char *base, const char *key)
{
	DocMap		m = get_map(obj, base, key);
	SspStrMap	map = {0, ELEMS(SspStrPair, m.n)};
	SspStr		k;
	JsonbValue	v;
	char	   *vpath;

	while (next_pair(&m, &k, &v, &vpath))
	{
		SspStrPair *e = &map.entries[map.n++];

		e->key = k;
		e->value = as_str(&v, vpath);
	}
	return map;
}

/* ---------------------------------------------------------------- debug_encode: frames */

static uint8
frame_type_of(const char *name, const char *path)
{
	static const uint8 types[] = {
		SSP_FRAME_REQ_HEADER, SSP_FRAME_PUSH_COMMIT, SSP_FRAME_PULL_HEADER, SSP_FRAME_SUBSCRIPTION,
		SSP_FRAME_RESP_HEADER, SSP_FRAME_PUSH_RESULT, SSP_FRAME_SUB_START, SSP_FRAME_COMMIT,
		SSP_FRAME_SEGMENT_REF, SSP_FRAME_SEGMENT_INLINE, SSP_FRAME_SUB_END, SSP_FRAME_LEASE,
		SSP_FRAME_PUSH_RESULT_DETAILS, SSP_FRAME_ERROR
	};
	int			i;

	for (i = 0; i < (int) lengthof(types); i++)
	{
		const char *n = ssp_frame_name(types[i]);

		if (n && strcmp(n, name) == 0)
			return types[i];
	}
	raise_field(path, "names an unknown frame type \"%s\"", name);
}

/* operations[i] of a push commit */
static void
read_push_op(JsonbContainer *oo, const char *op_p, void *out)
{
	SspPushOp  *op = out;

	op->table = get_str(oo, op_p, "table");
	op->row_id = get_str(oo, op_p, "rowId");
	op->op = get_enum(oo, op_p, "op", op_names, lengthof(op_names));
	op->base_version = get_opt_int(oo, op_p, "baseVersion", I64_MIN, I64_MAX,
								   &op->has_base_version);
	op->payload = get_opt_bytes(oo, op_p, "payload", &op->has_payload);
}

/* results[i] of a push result */
static void
read_op_result(JsonbContainer *ro, const char *q, void *out)
{
	SspOpResult *o = out;

	o->op_index = (int32) get_int(ro, q, "opIndex", I32_MIN, I32_MAX);
	o->status = get_enum(ro, q, "status", result_status_names, lengthof(result_status_names));
	if (o->status == SSP_RESULT_CONFLICT || o->status == SSP_RESULT_ERROR)
	{
		o->code = get_str(ro, q, "code");
		o->message = get_str(ro, q, "message");
	}
	if (o->status == SSP_RESULT_CONFLICT)
	{
		o->server_version = get_int(ro, q, "serverVersion", I64_MIN, I64_MAX);
		o->server_row = get_bytes(ro, q, "serverRow");
		/* no presence flag: absent stays empty */
		o->conflict_columns = get_opt_bytes(ro, q, "conflictColumns", NULL);
	}
	if (o->status == SSP_RESULT_ERROR)
		o->retryable = get_bool(ro, q, "retryable", false, true);
}

/* entries[i] of push result details; "detailsJson" is accepted for "details" */
static void
read_details_entry(JsonbContainer *eo, const char *q, void *out)
{
	SspDetailsEntry *e = out;
	JsonbValue *v = member(eo, "details");

	if (v == NULL)
		v = member(eo, "detailsJson");
	if (v == NULL)
		raise_field(path_key(q, "details"), "is required");
	e->op_index = (int32) get_int(eo, q, "opIndex", I32_MIN, I32_MAX);
	e->details_json = v->type == jbvString ? as_str(v, q) : as_json_text(v);
}

/* changes[i] of a commit */
static void
read_change(JsonbContainer *co, const char *q, void *out)
{
	SspChange  *ch = out;

	ch->table_index = (uint16) get_int(co, q, "tableIndex", 0, 65535);
	ch->row_id = get_str(co, q, "rowId");
	ch->op = get_enum(co, q, "op", op_names, lengthof(op_names));
	ch->row_version = get_opt_int(co, q, "rowVersion", I64_MIN, I64_MAX, &ch->has_row_version);
	ch->scopes = get_str_map(co, q, "scopes");
	ch->row = get_opt_bytes(co, q, "row", &ch->has_row);
}

/* frames[i] of a message */
static void
build_frame(JsonbContainer *fo, const char *p, void *out)
{
	SspFrame   *f = out;
	SspStr		type = get_str(fo, p, "type");
	bool		present;
	int			i,
				n;

	memset(f, 0, sizeof(*f));
	if (strcmp(type.ptr, "UNKNOWN") == 0)
	{
		f->type = (uint8) get_int(fo, p, "frameType", 0, 255);
		f->unknown = true;
		f->unknown_frame.payload = get_bytes(fo, p, "payload");
		return;
	}
	f->type = frame_type_of(type.ptr, path_key(p, "type"));

	switch (f->type)
	{
		case SSP_FRAME_REQ_HEADER:
			{
				SspReqHeader *h = &f->req_header;

				h->client_id = get_str(fo, p, "clientId");
				h->schema_version = (int32) get_int(fo, p, "schemaVersion", I32_MIN, I32_MAX);
				h->log_epoch = get_opt_str(fo, p, "logEpoch", &h->has_log_epoch);
				break;
			}
		case SSP_FRAME_PUSH_COMMIT:
			{
				SspPushCommit *c = &f->push_commit;

				c->client_commit_id = get_str(fo, p, "clientCommitId");
				c->ops = get_objects(fo, p, "operations", sizeof(SspPushOp), read_push_op, &n);
				c->nops = (uint32) n;
				break;
			}
		case SSP_FRAME_PULL_HEADER:
			{
				SspPullHeader *h = &f->pull_header;

				h->limit_commits = (int32) get_int(fo, p, "limitCommits", I32_MIN, I32_MAX);
				h->limit_snapshot_rows = (int32) get_int(fo, p, "limitSnapshotRows", I32_MIN, I32_MAX);
				h->max_snapshot_pages = (int32) get_int(fo, p, "maxSnapshotPages", I32_MIN, I32_MAX);
				h->accept = (uint8) get_int(fo, p, "accept", 0, 255);
				break;
			}
		case SSP_FRAME_SUBSCRIPTION:
			{
				SspSubscription *s = &f->subscription;

				s->id = get_str(fo, p, "id");
				s->table = get_str(fo, p, "table");
				s->scopes = get_scope_map(fo, p, "scopes");
				s->params = get_opt_json(fo, "params", &s->has_params);
				s->cursor = get_int(fo, p, "cursor", I64_MIN, I64_MAX);
				s->bootstrap_state = get_opt_json(fo, "bootstrapState", &s->has_bootstrap_state);
				break;
			}
		case SSP_FRAME_RESP_HEADER:
			{
				SspRespHeader *h = &f->resp_header;

				h->required_schema_version = (int32) get_opt_int(fo, p, "requiredSchemaVersion",
																 I32_MIN, I32_MAX,
																 &h->has_required_schema_version);
				h->latest_schema_version = (int32) get_opt_int(fo, p, "latestSchemaVersion",
															   I32_MIN, I32_MAX,
															   &h->has_latest_schema_version);
				h->log_epoch = get_opt_str(fo, p, "logEpoch", &present);
				h->reset_required = get_bool(fo, p, "resetRequired", false, false);
				break;
			}
		case SSP_FRAME_LEASE:
			f->lease.lease_id = get_str(fo, p, "leaseId");
			f->lease.expires_at_ms = get_int(fo, p, "expiresAtMs", I64_MIN, I64_MAX);
			break;
		case SSP_FRAME_PUSH_RESULT:
			{
				SspPushResult *r = &f->push_result;

				r->client_commit_id = get_str(fo, p, "clientCommitId");
				r->status = get_enum(fo, p, "status", push_status_names, lengthof(push_status_names));
				r->commit_seq = get_opt_int(fo, p, "commitSeq", I64_MIN, I64_MAX, &r->has_commit_seq);
				r->results = get_objects(fo, p, "results", sizeof(SspOpResult), read_op_result, &n);
				r->nresults = (uint32) n;
				break;
			}
		case SSP_FRAME_PUSH_RESULT_DETAILS:
			{
				SspPushResultDetails *d = &f->push_result_details;

				d->client_commit_id = get_str(fo, p, "clientCommitId");
				d->entries = get_objects(fo, p, "entries", sizeof(SspDetailsEntry),
										 read_details_entry, &n);
				d->nentries = (uint32) n;
				break;
			}
		case SSP_FRAME_SUB_START:
			{
				SspSubStart *s = &f->sub_start;

				s->id = get_str(fo, p, "id");
				s->status = get_enum(fo, p, "status", sub_status_names, lengthof(sub_status_names));
				s->reason_code = get_str(fo, p, "reasonCode");
				s->effective_scopes = get_scope_map(fo, p, "effectiveScopes");
				s->bootstrap = get_bool(fo, p, "bootstrap", false, true);
				break;
			}
		case SSP_FRAME_COMMIT:
			{
				SspCommit  *c = &f->commit;
				DocArray	tabs;

				c->commit_seq = get_int(fo, p, "commitSeq", I64_MIN, I64_MAX);
				c->created_at_ms = get_int(fo, p, "createdAtMs", I64_MIN, I64_MAX);
				c->actor_id = get_str(fo, p, "actorId");
				tabs = get_array(fo, p, "tables");
				c->ntables = (uint32) tabs.n;
				c->tables = ELEMS(SspStr, tabs.n);
				for (i = 0; i < tabs.n; i++)
					c->tables[i] = elem_str(&tabs, i);
				c->changes = get_objects(fo, p, "changes", sizeof(SspChange), read_change, &n);
				c->nchanges = (uint32) n;
				break;
			}
		case SSP_FRAME_SEGMENT_REF:
			{
				SspSegmentRef *r = &f->segment_ref;

				r->segment_id = get_str(fo, p, "segmentId");
				r->media_type = get_enum(fo, p, "mediaType", media_names, lengthof(media_names));
				r->table = get_str(fo, p, "table");
				r->byte_length = get_int(fo, p, "byteLength", I64_MIN, I64_MAX);
				r->row_count = get_int(fo, p, "rowCount", I64_MIN, I64_MAX);
				r->as_of_commit_seq = get_int(fo, p, "asOfCommitSeq", I64_MIN, I64_MAX);
				r->scope_digest = get_str(fo, p, "scopeDigest");
				r->row_cursor = get_opt_str(fo, p, "rowCursor", &r->has_row_cursor);
				r->next_row_cursor = get_opt_str(fo, p, "nextRowCursor", &r->has_next_row_cursor);
				r->url = get_opt_str(fo, p, "url", &r->has_url);
				r->url_expires_at_ms = get_opt_int(fo, p, "urlExpiresAtMs", I64_MIN, I64_MAX,
												   &r->has_url_expires_at_ms);
				break;
			}
		case SSP_FRAME_SEGMENT_INLINE:
			f->segment_inline.payload = get_bytes(fo, p, "payload");
			break;
		case SSP_FRAME_SUB_END:
			f->sub_end.next_cursor = get_int(fo, p, "nextCursor", I64_MIN, I64_MAX);
			f->sub_end.bootstrap_state = get_opt_json(fo, "bootstrapState",
													  &f->sub_end.has_bootstrap_state);
			break;
		case SSP_FRAME_ERROR:
			{
				SspErrorFrame *e = &f->error;

				e->code = get_str(fo, p, "code");
				e->message = get_str(fo, p, "message");
				e->category = get_str(fo, p, "category");
				e->retryable = get_bool(fo, p, "retryable", false, true);
				e->recommended_action = get_str(fo, p, "recommendedAction");
				e->details = get_opt_json(fo, "details", &e->has_details);
				break;
			}
		default:
			raise_field(path_key(p, "type"), "cannot be encoded");
	}
}

/* ---------------------------------------------------------------- debug_encode: output */

/* The encoder's output as a bytea (messages and segments alike); a refusal raises its code. */
static bytea *
encoded_bytea(bool ok, SspBuf *out, const SspError *err)
{
	bytea	   *result;

	if (!ok)
	{
		ssp_buf_free(out);
		raise_codec_error(err);
	}
	result = (bytea *) palloc(VARHDRSZ + out->len);
	SET_VARSIZE(result, VARHDRSZ + out->len);
	memcpy(VARDATA(result), out->data, out->len);
	ssp_buf_free(out);
	return result;
}

/* ---------------------------------------------------------------- debug_encode: segments */

static uint8
column_type_of(JsonbContainer *co, const char *q)
{
	SspStr		t = get_str(co, q, "type");
	int			tag;

	for (tag = 1; tag <= 8; tag++)
	{
		const char *n = ssp_column_type_name((uint8) tag);

		if (n && strcmp(n, t.ptr) == 0)
			return (uint8) tag;
	}
	raise_field(path_key(q, "type"), "names an unknown column type \"%s\"", t.ptr);
}

static bytea *
encode_segment(JsonbContainer *doc)
{
	SspSegment	seg;
	DocArray	cols;
	DocArray	blocks;
	int			i;
	SspBuf		out;
	SspError	err;
	bool		ok;
	char	   *table;

	memset(&seg, 0, sizeof(seg));
	seg.format_version = (uint16) get_int(doc, "", "formatVersion", 0, 65535);
	seg.table = get_str(doc, "", "table");
	table = (char *) seg.table.ptr;
	seg.schema_version = (int32) get_int(doc, "", "schemaVersion", I32_MIN, I32_MAX);
	/* not get_objects: the count bound is checked before any element, as it always was */
	cols = get_array(doc, "", "columns");
	if (cols.n > 65535)
		raise_field(cols.path, "has more than 65535 entries");
	seg.ncolumns = (uint16) cols.n;
	seg.columns = ELEMS(SspColumn, cols.n);
	for (i = 0; i < cols.n; i++)
	{
		char	   *q;
		JsonbContainer *co = elem_object(&cols, i, &q);
		SspStr		name = get_str(co, q, "name");

		seg.columns[i].name = name.ptr;
		seg.columns[i].name_len = name.len;
		seg.columns[i].type = column_type_of(co, q);
		seg.columns[i].nullable = get_bool(co, q, "nullable", false, true);
	}

	blocks = get_array(doc, "", "blocks");
	seg.nblocks = (uint32) blocks.n;
	seg.blocks = ELEMS(SspSegmentBlock, blocks.n);
	for (i = 0; i < blocks.n; i++)
	{
		DocArray	blk = elem_array(&blocks, i);
		int			r;

		seg.blocks[i].nrows = (uint32) blk.n;
		seg.blocks[i].rows = ELEMS(SspSegmentRow, blk.n);
		for (r = 0; r < blk.n; r++)
		{
			char	   *rpath;
			JsonbContainer *ro = elem_object(&blk, r, &rpath);
			SspSegmentRow *row = &seg.blocks[i].rows[r];
			JsonbContainer *vo = get_object(ro, rpath, "values");
			SspValue   *vals = ELEMS(SspValue, seg.ncolumns);
			SspBuf		rowbuf;
			int			c;

			row->server_version = get_int(ro, rpath, "serverVersion", I64_MIN, I64_MAX);
			for (c = 0; c < seg.ncolumns; c++)
			{
				const SspColumn *col = &seg.columns[c];
				JsonbValue *jv = getKeyJsonValueFromContainer(vo, col->name, col->name_len, NULL);

				if (col->type == SSP_COL_FLOAT && !col->nullable && (jv == NULL || jv->type == jbvNull))
				{
					/* a non-finite float renders as null */
					vals[c].present = true;
					vals[c].f = get_float8_nan();
					continue;
				}
				sync_json_to_value(table, col, jv, SYNC_JSON_TEXT_COMPACT, &vals[c]);
			}
			ssp_buf_init(&rowbuf);
			if (!ssp_row_encode_full(seg.columns, seg.ncolumns, vals, &rowbuf, &err))
				raise_field(rpath, "does not encode: %s", err.message);
			row->raw.ptr = rowbuf.data;
			row->raw.len = (uint32) rowbuf.len;
			row->values = vals;
		}
	}

	ssp_buf_init(&out);
	ok = ssp_segment_encode(&seg, &out, &err);
	return encoded_bytea(ok, &out, &err);
}

/* ---------------------------------------------------------------- debug_encode */

Datum
syncular_debug_encode(PG_FUNCTION_ARGS)
{
	Jsonb	   *doc = PG_GETARG_JSONB_P(0);
	JsonbContainer *root = &doc->root;
	SspStr		magic;
	SspMessage	msg;
	SspStr		kind;
	int			n;
	SspBuf		out;
	SspError	err;
	bool		ok;

	if (!JB_ROOT_IS_OBJECT(doc) || JB_ROOT_IS_SCALAR(doc))
		raise_field("(document)", "must be a JSON object");
	magic = get_str(root, "", "magic");
	if (strcmp(magic.ptr, "SSG2") == 0)
		PG_RETURN_BYTEA_P(encode_segment(root));
	if (strcmp(magic.ptr, "SSP2") != 0)
		raise_field("magic", "must be \"SSP2\" or \"SSG2\"");

	memset(&msg, 0, sizeof(msg));
	msg.wire_version = (uint16) get_int(root, "", "wireVersion", 0, 65535);
	kind = get_str(root, "", "msgKind");
	if (strcmp(kind.ptr, "request") == 0)
		msg.kind = SSP_KIND_REQUEST;
	else if (strcmp(kind.ptr, "response") == 0)
		msg.kind = SSP_KIND_RESPONSE;
	else
		raise_field("msgKind", "must be \"request\" or \"response\"");

	msg.frames = get_objects(root, "", "frames", sizeof(SspFrame), build_frame, &n);
	msg.nframes = (uint32) n;

	ssp_buf_init(&out);
	ok = ssp_encode_message(&msg, &out, &err);
	PG_RETURN_BYTEA_P(encoded_bytea(ok, &out, &err));
}
