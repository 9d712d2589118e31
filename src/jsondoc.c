/*
 * jsondoc.c — field access into a rendering-shaped jsonb document (see jsondoc.h): required and
 * optional members of each JSON type, arrays of objects read element by element into C arrays,
 * and maps (scopes, string maps), each error naming the field's path.
 */
#include "postgres.h"

#include "utils/json.h"
#include "utils/jsonb.h"

#include "engine.h"
#include "jsondoc.h"
#include "rowjson.h"

void
doc_raise_field(const char *path, const char *fmt,...)
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

char *
doc_path_key(const char *base, const char *key)
{
	return base[0] ? psprintf("%s.%s", base, key) : pstrdup(key);
}

char *
doc_path_index(const char *base, int i)
{
	return psprintf("%s[%d]", base, i);
}


bool
doc_is_object(JsonbValue *v)
{
	return v && v->type == jbvBinary && JsonContainerIsObject(v->val.binary.data);
}

bool
doc_is_array(JsonbValue *v)
{
	return v && v->type == jbvBinary && JsonContainerIsArray(v->val.binary.data);
}

/* Member `key` of object `obj`, or NULL when absent (JSON null counts as absent). */
JsonbValue *
doc_member(JsonbContainer *obj, const char *key)
{
	JsonbValue *v = getKeyJsonValueFromContainer(obj, key, strlen(key), NULL);

	if (v && v->type == jbvNull)
		return NULL;
	return v;
}

JsonbValue *
doc_need(JsonbContainer *obj, const char *base, const char *key)
{
	JsonbValue *v = doc_member(obj, key);

	if (v == NULL)
		doc_raise_field(doc_path_key(base, key), "is required");
	return v;
}

JsonbContainer *
doc_need_object(JsonbValue *v, const char *path)
{
	if (!doc_is_object(v))
		doc_raise_field(path, "must be a JSON object");
	return v->val.binary.data;
}

/* Object member `key` of obj (required). */
JsonbContainer *
doc_get_object(JsonbContainer *obj, const char *base, const char *key)
{
	return doc_need_object(doc_need(obj, base, key), doc_path_key(base, key));
}

SspStr
doc_as_str(JsonbValue *v, const char *path)
{
	SspStr		s;

	if (v == NULL || v->type != jbvString)
		doc_raise_field(path, "must be a string");
	s.ptr = pnstrdup(v->val.string.val, v->val.string.len);
	s.len = (uint32) v->val.string.len;
	return s;
}

SspStr
doc_get_str(JsonbContainer *obj, const char *base, const char *key)
{
	return doc_as_str(doc_need(obj, base, key), doc_path_key(base, key));
}

/* Optional string: *present tells; absent gives "". */
SspStr
doc_get_opt_str(JsonbContainer *obj, const char *base, const char *key, bool *present)
{
	JsonbValue *v = doc_member(obj, key);
	SspStr		s = {"", 0};

	*present = (v != NULL);
	if (v)
		s = doc_as_str(v, doc_path_key(base, key));
	return s;
}

int64
doc_as_int(JsonbValue *v, const char *path, int64 min, int64 max)
{
	int64		i;

	if (v == NULL || v->type != jbvNumeric)
		doc_raise_field(path, "must be a number");
	if (!sync_numeric_text_to_int53(sync_jsonb_number_text(v), &i))
		doc_raise_field(path, "must be an integer within +-(2^53-1)");
	if (i < min || i > max)
		doc_raise_field(path, "is out of range [" INT64_FORMAT ", " INT64_FORMAT "]", min, max);
	return i;
}

int64
doc_get_int(JsonbContainer *obj, const char *base, const char *key, int64 min, int64 max)
{
	return doc_as_int(doc_need(obj, base, key), doc_path_key(base, key), min, max);
}

/* Optional integer: *present tells; absent gives 0 (the zeroed struct's value). */
int64
doc_get_opt_int(JsonbContainer *obj, const char *base, const char *key, int64 min, int64 max,
			bool *present)
{
	JsonbValue *v = doc_member(obj, key);

	*present = (v != NULL);
	return v ? doc_as_int(v, doc_path_key(base, key), min, max) : 0;
}


bool
doc_get_bool(JsonbContainer *obj, const char *base, const char *key, bool dflt, bool required)
{
	JsonbValue *v = required ? doc_need(obj, base, key) : doc_member(obj, key);

	if (v == NULL)
		return dflt;
	if (v->type != jbvBool)
		doc_raise_field(doc_path_key(base, key), "must be true or false");
	return v->val.boolean;
}

SspBytes
doc_as_bytes(JsonbValue *v, const char *path)
{
	SspBytes	b;
	char	   *dst;
	int			n;

	if (v == NULL || v->type != jbvString)
		doc_raise_field(path, "must be a base64 string");
	n = sync_base64_decode(v->val.string.val, v->val.string.len, &dst);
	if (n < 0)
		doc_raise_field(path, "is not valid base64");
	b.ptr = (const uint8_t *) dst;
	b.len = (uint32) n;
	return b;
}

SspBytes
doc_get_bytes(JsonbContainer *obj, const char *base, const char *key)
{
	return doc_as_bytes(doc_need(obj, base, key), doc_path_key(base, key));
}

/* Optional bytes: *present (when the struct has such a flag) tells; absent gives none. */
SspBytes
doc_get_opt_bytes(JsonbContainer *obj, const char *base, const char *key, bool *present)
{
	JsonbValue *v = doc_member(obj, key);
	SspBytes	b = {NULL, 0};

	if (present)
		*present = (v != NULL);
	if (v)
		b = doc_as_bytes(v, doc_path_key(base, key));
	return b;
}

/* A json-typed field given as a JSON value, re-serialized compact. */
SspStr
doc_as_json_text(JsonbValue *v)
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
SspStr
doc_get_opt_json(JsonbContainer *obj, const char *key, bool *present)
{
	JsonbValue *v = doc_member(obj, key);
	SspStr		s = {NULL, 0};

	*present = (v != NULL);
	if (v)
		s = doc_as_json_text(v);
	return s;
}

/* Enum given by name (as rendered) or by its wire number. */
uint8
doc_get_enum(JsonbContainer *obj, const char *base, const char *key, const char *const *names, int nnames)
{
	JsonbValue *v = doc_need(obj, base, key);
	char	   *path = doc_path_key(base, key);
	int			i;

	if (v->type == jbvNumeric)
		return (uint8) doc_as_int(v, path, 0, 255);
	if (v->type != jbvString)
		doc_raise_field(path, "must be a string");
	for (i = 0; i < nnames; i++)
		if (names[i] && (int) strlen(names[i]) == v->val.string.len &&
			memcmp(names[i], v->val.string.val, v->val.string.len) == 0)
			return (uint8) i;
	doc_raise_field(path, "has an unknown value \"%s\"", pnstrdup(v->val.string.val, v->val.string.len));
}



DocArray
doc_as_array(JsonbValue *v, char *path)
{
	DocArray	a;

	if (!doc_is_array(v))
		doc_raise_field(path, "must be a JSON array");
	a.arr = v->val.binary.data;
	a.n = JsonContainerSize(a.arr);
	a.path = path;
	return a;
}

/* Array member `key` of obj (required). */
DocArray
doc_get_array(JsonbContainer *obj, const char *base, const char *key)
{
	return doc_as_array(doc_need(obj, base, key), doc_path_key(base, key));
}

JsonbValue *
doc_elem(const DocArray *a, int i)
{
	return getIthJsonbValueFromContainer(a->arr, i);
}

/* Element i, which must be an object; *path gets the element's path. */
JsonbContainer *
doc_elem_object(const DocArray *a, int i, char **path)
{
	*path = doc_path_index(a->path, i);
	return doc_need_object(doc_elem(a, i), *path);
}

DocArray
doc_elem_array(const DocArray *a, int i)
{
	return doc_as_array(doc_elem(a, i), doc_path_index(a->path, i));
}

SspStr
doc_elem_str(const DocArray *a, int i)
{
	return doc_as_str(doc_elem(a, i), doc_path_index(a->path, i));
}


/*
 * Array member `key` of obj whose elements are objects (frames, operations, results, ...):
 * each is read by `read`, in order, into a zeroed C array of elem_size-byte elements (never
 * NULL); *n gets the count.
 */
void *
doc_get_objects(JsonbContainer *obj, const char *base, const char *key, Size elem_size,
			ObjectReader read, int *n)
{
	DocArray	a = doc_get_array(obj, base, key);
	char	   *elems = palloc0(elem_size * Max(a.n, 1));
	int			i;

	for (i = 0; i < a.n; i++)
	{
		char	   *q;
		JsonbContainer *o = doc_elem_object(&a, i, &q);

		read(o, q, elems + i * elem_size);
	}
	*n = a.n;
	return elems;
}


DocMap
doc_get_map(JsonbContainer *obj, const char *base, const char *key)
{
	DocMap		m;
	JsonbContainer *c = doc_get_object(obj, base, key);

	m.it = JsonbIteratorInit(c);
	m.n = JsonContainerSize(c);
	m.path = doc_path_key(base, key);
	return m;
}

/* The next pair: false at the end; else its key, its value and the value's path. */
bool
doc_next_pair(DocMap *m, SspStr *k, JsonbValue *v, char **vpath)
{
	JsonbIteratorToken tok;

	while ((tok = JsonbIteratorNext(&m->it, v, true)) != WJB_DONE)
	{
		if (tok == WJB_KEY)
			*k = doc_as_str(v, m->path);	/* a key is always a string */
		else if (tok == WJB_VALUE)
		{
			*vpath = doc_path_key(m->path, k->ptr);
			return true;
		}
	}
	return false;
}

/* {key: [str, ...]} */
SspScopeMap
doc_get_scope_map(JsonbContainer *obj, const char *base, const char *key)
{
	DocMap		m = doc_get_map(obj, base, key);
	SspScopeMap map = {0, ELEMS(SspScopeEntry, m.n)};
	SspStr		k;
	JsonbValue	v;
	char	   *vpath;

	while (doc_next_pair(&m, &k, &v, &vpath))
	{
		SspScopeEntry *e = &map.entries[map.n++];
		DocArray	vals = doc_as_array(&v, vpath);
		int			i;

		e->key = k;
		e->nvalues = (uint32) vals.n;
		e->values = ELEMS(SspStr, vals.n);
		for (i = 0; i < vals.n; i++)
			e->values[i] = doc_elem_str(&vals, i);
	}
	return map;
}

/* {key: str} */
SspStrMap
doc_get_str_map(JsonbContainer *obj, const char *base, const char *key)
{
	DocMap		m = doc_get_map(obj, base, key);
	SspStrMap	map = {0, ELEMS(SspStrPair, m.n)};
	SspStr		k;
	JsonbValue	v;
	char	   *vpath;

	while (doc_next_pair(&m, &k, &v, &vpath))
	{
		SspStrPair *e = &map.entries[map.n++];

		e->key = k;
		e->value = doc_as_str(&v, vpath);
	}
	return map;
}
