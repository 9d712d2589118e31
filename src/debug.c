/*
 * debug.c — canonical JSON rendering of SSP2 messages / SSG2 segments, and its inverse.
 *
 *   syncular.debug_render(message bytea) RETURNS jsonb
 *       SPEC §11 rendering (ssp_render_message / ssp_render_segment; SSG2 is detected by its
 *       magic).  Bytes that do not decode raise the decode error's catalogue code in DETAIL.
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

#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/json.h"
#include "utils/jsonb.h"

#include "engine.h"
#include "rowjson.h"

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
	result = DirectFunctionCall1(jsonb_in, CStringGetDatum((char *) out.data));
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
	for (;;)
	{
		int			needed;

		va_start(args, fmt);
		needed = appendStringInfoVA(&msg, fmt, args);
		va_end(args);
		if (needed == 0)
			break;
		enlargeStringInfo(&msg, needed);
	}
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

static JsonbContainer *
need_array(JsonbValue *v, const char *path)
{
	if (!is_array(v))
		raise_field(path, "must be a JSON array");
	return v->val.binary.data;
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
	if (!sync_numeric_text_to_int53(DatumGetCString(DirectFunctionCall1(numeric_out,
																		NumericGetDatum(v->val.numeric))), &i))
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

/* {key: [str, ...]} */
static SspScopeMap
get_scope_map(JsonbContainer *obj, const char *base, const char *key)
{
	char	   *path = path_key(base, key);
	JsonbContainer *m = need_object(need(obj, base, key), path);
	SspScopeMap map = {0, NULL};
	JsonbIterator *it = JsonbIteratorInit(m);
	JsonbValue	v;
	JsonbIteratorToken tok;
	int			n = JsonContainerSize(m);
	int			i = -1;

	map.entries = palloc0(sizeof(SspScopeEntry) * Max(n, 1));
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_KEY)
		{
			i++;
			map.entries[i].key.ptr = pnstrdup(v.val.string.val, v.val.string.len);
			map.entries[i].key.len = (uint32) v.val.string.len;
		}
		else if (tok == WJB_VALUE)
		{
			char	   *vpath = path_key(path, map.entries[i].key.ptr);
			JsonbContainer *arr = need_array(&v, vpath);
			int			k,
						nv = JsonContainerSize(arr);

			map.entries[i].nvalues = (uint32) nv;
			map.entries[i].values = palloc0(sizeof(SspStr) * Max(nv, 1));
			for (k = 0; k < nv; k++)
				map.entries[i].values[k] = as_str(getIthJsonbValueFromContainer(arr, k),
												  path_index(vpath, k));
		}
	}
	map.n = (uint32) (i + 1);
	return map;
}

/* {key: str} */
static SspStrMap
get_str_map(JsonbContainer *obj, const char *base, const char *key)
{
	char	   *path = path_key(base, key);
	JsonbContainer *m = need_object(need(obj, base, key), path);
	SspStrMap	map = {0, NULL};
	JsonbIterator *it = JsonbIteratorInit(m);
	JsonbValue	v;
	JsonbIteratorToken tok;
	int			i = -1;

	map.entries = palloc0(sizeof(SspStrPair) * Max(JsonContainerSize(m), 1));
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_KEY)
		{
			i++;
			map.entries[i].key.ptr = pnstrdup(v.val.string.val, v.val.string.len);
			map.entries[i].key.len = (uint32) v.val.string.len;
		}
		else if (tok == WJB_VALUE)
			map.entries[i].value = as_str(&v, path_key(path, map.entries[i].key.ptr));
	}
	map.n = (uint32) (i + 1);
	return map;
}

/* Array member `key` of obj: its container and size. */
static JsonbContainer *
get_array(JsonbContainer *obj, const char *base, const char *key, int *n)
{
	JsonbContainer *a = need_array(need(obj, base, key), path_key(base, key));

	*n = JsonContainerSize(a);
	return a;
}

static JsonbContainer *
ith_object(JsonbContainer *arr, int i, const char *path)
{
	return need_object(getIthJsonbValueFromContainer(arr, i), path);
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

	for (i = 0; i < lengthof(types); i++)
	{
		const char *n = ssp_frame_name(types[i]);

		if (n && strcmp(n, name) == 0)
			return types[i];
	}
	raise_field(path, "names an unknown frame type \"%s\"", name);
}

static void
build_frame(JsonbContainer *fo, const char *p, SspFrame *f)
{
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
				JsonbContainer *ops;
				char	   *opath = path_key(p, "operations");

				c->client_commit_id = get_str(fo, p, "clientCommitId");
				ops = get_array(fo, p, "operations", &n);
				c->nops = (uint32) n;
				c->ops = palloc0(sizeof(SspPushOp) * Max(n, 1));
				for (i = 0; i < n; i++)
				{
					char	   *op_p = path_index(opath, i);
					JsonbContainer *oo = ith_object(ops, i, op_p);
					SspPushOp  *op = &c->ops[i];
					JsonbValue *bv;

					op->table = get_str(oo, op_p, "table");
					op->row_id = get_str(oo, op_p, "rowId");
					op->op = get_enum(oo, op_p, "op", op_names, lengthof(op_names));
					if ((bv = member(oo, "baseVersion")) != NULL)
					{
						op->has_base_version = true;
						op->base_version = as_int(bv, path_key(op_p, "baseVersion"), I64_MIN, I64_MAX);
					}
					if (member(oo, "payload"))
					{
						op->has_payload = true;
						op->payload = get_bytes(oo, op_p, "payload");
					}
				}
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
				JsonbValue *v;

				s->id = get_str(fo, p, "id");
				s->table = get_str(fo, p, "table");
				s->scopes = get_scope_map(fo, p, "scopes");
				if ((v = member(fo, "params")) != NULL)
				{
					s->has_params = true;
					s->params = as_json_text(v);
				}
				s->cursor = get_int(fo, p, "cursor", I64_MIN, I64_MAX);
				if ((v = member(fo, "bootstrapState")) != NULL)
				{
					s->has_bootstrap_state = true;
					s->bootstrap_state = as_json_text(v);
				}
				break;
			}
		case SSP_FRAME_RESP_HEADER:
			{
				SspRespHeader *h = &f->resp_header;
				JsonbValue *v;

				if ((v = member(fo, "requiredSchemaVersion")) != NULL)
				{
					h->has_required_schema_version = true;
					h->required_schema_version = (int32) as_int(v, path_key(p, "requiredSchemaVersion"),
																I32_MIN, I32_MAX);
				}
				if ((v = member(fo, "latestSchemaVersion")) != NULL)
				{
					h->has_latest_schema_version = true;
					h->latest_schema_version = (int32) as_int(v, path_key(p, "latestSchemaVersion"),
															  I32_MIN, I32_MAX);
				}
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
				JsonbContainer *res;
				char	   *rpath = path_key(p, "results");
				JsonbValue *v;

				r->client_commit_id = get_str(fo, p, "clientCommitId");
				r->status = get_enum(fo, p, "status", push_status_names, lengthof(push_status_names));
				if ((v = member(fo, "commitSeq")) != NULL)
				{
					r->has_commit_seq = true;
					r->commit_seq = as_int(v, path_key(p, "commitSeq"), I64_MIN, I64_MAX);
				}
				res = get_array(fo, p, "results", &n);
				r->nresults = (uint32) n;
				r->results = palloc0(sizeof(SspOpResult) * Max(n, 1));
				for (i = 0; i < n; i++)
				{
					char	   *q = path_index(rpath, i);
					JsonbContainer *ro = ith_object(res, i, q);
					SspOpResult *o = &r->results[i];

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
						if (member(ro, "conflictColumns"))
							o->conflict_columns = get_bytes(ro, q, "conflictColumns");
					}
					if (o->status == SSP_RESULT_ERROR)
						o->retryable = get_bool(ro, q, "retryable", false, true);
				}
				break;
			}
		case SSP_FRAME_PUSH_RESULT_DETAILS:
			{
				SspPushResultDetails *d = &f->push_result_details;
				JsonbContainer *ents;
				char	   *epath = path_key(p, "entries");

				d->client_commit_id = get_str(fo, p, "clientCommitId");
				ents = get_array(fo, p, "entries", &n);
				d->nentries = (uint32) n;
				d->entries = palloc0(sizeof(SspDetailsEntry) * Max(n, 1));
				for (i = 0; i < n; i++)
				{
					char	   *q = path_index(epath, i);
					JsonbContainer *eo = ith_object(ents, i, q);
					JsonbValue *v = member(eo, "details");

					if (v == NULL)
						v = member(eo, "detailsJson");
					if (v == NULL)
						raise_field(path_key(q, "details"), "is required");
					d->entries[i].op_index = (int32) get_int(eo, q, "opIndex", I32_MIN, I32_MAX);
					d->entries[i].details_json = v->type == jbvString ? as_str(v, q) : as_json_text(v);
				}
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
				JsonbContainer *tabs;
				JsonbContainer *chs;
				char	   *tpath = path_key(p, "tables");
				char	   *cpath = path_key(p, "changes");

				c->commit_seq = get_int(fo, p, "commitSeq", I64_MIN, I64_MAX);
				c->created_at_ms = get_int(fo, p, "createdAtMs", I64_MIN, I64_MAX);
				c->actor_id = get_str(fo, p, "actorId");
				tabs = get_array(fo, p, "tables", &n);
				c->ntables = (uint32) n;
				c->tables = palloc0(sizeof(SspStr) * Max(n, 1));
				for (i = 0; i < n; i++)
					c->tables[i] = as_str(getIthJsonbValueFromContainer(tabs, i), path_index(tpath, i));
				chs = get_array(fo, p, "changes", &n);
				c->nchanges = (uint32) n;
				c->changes = palloc0(sizeof(SspChange) * Max(n, 1));
				for (i = 0; i < n; i++)
				{
					char	   *q = path_index(cpath, i);
					JsonbContainer *co = ith_object(chs, i, q);
					SspChange  *ch = &c->changes[i];
					JsonbValue *v;

					ch->table_index = (uint16) get_int(co, q, "tableIndex", 0, 65535);
					ch->row_id = get_str(co, q, "rowId");
					ch->op = get_enum(co, q, "op", op_names, lengthof(op_names));
					if ((v = member(co, "rowVersion")) != NULL)
					{
						ch->has_row_version = true;
						ch->row_version = as_int(v, path_key(q, "rowVersion"), I64_MIN, I64_MAX);
					}
					ch->scopes = get_str_map(co, q, "scopes");
					if (member(co, "row"))
					{
						ch->has_row = true;
						ch->row = get_bytes(co, q, "row");
					}
				}
				break;
			}
		case SSP_FRAME_SEGMENT_REF:
			{
				SspSegmentRef *r = &f->segment_ref;
				JsonbValue *v;

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
				if ((v = member(fo, "urlExpiresAtMs")) != NULL)
				{
					r->has_url_expires_at_ms = true;
					r->url_expires_at_ms = as_int(v, path_key(p, "urlExpiresAtMs"), I64_MIN, I64_MAX);
				}
				break;
			}
		case SSP_FRAME_SEGMENT_INLINE:
			f->segment_inline.payload = get_bytes(fo, p, "payload");
			break;
		case SSP_FRAME_SUB_END:
			{
				JsonbValue *v;

				f->sub_end.next_cursor = get_int(fo, p, "nextCursor", I64_MIN, I64_MAX);
				if ((v = member(fo, "bootstrapState")) != NULL)
				{
					f->sub_end.has_bootstrap_state = true;
					f->sub_end.bootstrap_state = as_json_text(v);
				}
				break;
			}
		case SSP_FRAME_ERROR:
			{
				SspErrorFrame *e = &f->error;
				JsonbValue *v;

				e->code = get_str(fo, p, "code");
				e->message = get_str(fo, p, "message");
				e->category = get_str(fo, p, "category");
				e->retryable = get_bool(fo, p, "retryable", false, true);
				e->recommended_action = get_str(fo, p, "recommendedAction");
				if ((v = member(fo, "details")) != NULL)
				{
					e->has_details = true;
					e->details = as_json_text(v);
				}
				break;
			}
		default:
			raise_field(path_key(p, "type"), "cannot be encoded");
	}
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
	JsonbContainer *cols;
	JsonbContainer *blocks;
	int			i,
				n;
	SspBuf		out;
	SspError	err;
	bytea	   *result;
	char	   *table;

	memset(&seg, 0, sizeof(seg));
	seg.format_version = (uint16) get_int(doc, "", "formatVersion", 0, 65535);
	seg.table = get_str(doc, "", "table");
	table = (char *) seg.table.ptr;
	seg.schema_version = (int32) get_int(doc, "", "schemaVersion", I32_MIN, I32_MAX);
	cols = get_array(doc, "", "columns", &n);
	if (n > 65535)
		raise_field("columns", "has more than 65535 entries");
	seg.ncolumns = (uint16) n;
	seg.columns = palloc0(sizeof(SspColumn) * Max(n, 1));
	for (i = 0; i < n; i++)
	{
		char	   *q = path_index("columns", i);
		JsonbContainer *co = ith_object(cols, i, q);
		SspStr		name = get_str(co, q, "name");

		seg.columns[i].name = name.ptr;
		seg.columns[i].name_len = name.len;
		seg.columns[i].type = column_type_of(co, q);
		seg.columns[i].nullable = get_bool(co, q, "nullable", false, true);
	}

	blocks = get_array(doc, "", "blocks", &n);
	seg.nblocks = (uint32) n;
	seg.blocks = palloc0(sizeof(SspSegmentBlock) * Max(n, 1));
	for (i = 0; i < n; i++)
	{
		char	   *bpath = path_index("blocks", i);
		JsonbContainer *blk = need_array(getIthJsonbValueFromContainer(blocks, i), bpath);
		int			r,
					nrows = JsonContainerSize(blk);

		seg.blocks[i].nrows = (uint32) nrows;
		seg.blocks[i].rows = palloc0(sizeof(SspSegmentRow) * Max(nrows, 1));
		for (r = 0; r < nrows; r++)
		{
			char	   *rpath = path_index(bpath, r);
			JsonbContainer *ro = ith_object(blk, r, rpath);
			SspSegmentRow *row = &seg.blocks[i].rows[r];
			char	   *vpath = path_key(rpath, "values");
			JsonbContainer *vo = need_object(need(ro, rpath, "values"), vpath);
			SspValue   *vals = palloc0(sizeof(SspValue) * Max(seg.ncolumns, 1));
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
	if (!ssp_segment_encode(&seg, &out, &err))
	{
		ssp_buf_free(&out);
		raise_codec_error(&err);
	}
	result = (bytea *) palloc(VARHDRSZ + out.len);
	SET_VARSIZE(result, VARHDRSZ + out.len);
	memcpy(VARDATA(result), out.data, out.len);
	ssp_buf_free(&out);
	return result;
}

/* ---------------------------------------------------------------- debug_encode */

Datum
syncular_debug_encode(PG_FUNCTION_ARGS)
{
	Jsonb	   *doc = PG_GETARG_JSONB_P(0);
	JsonbContainer *root = &doc->root;
	SspStr		magic;
	SspMessage	msg;
	JsonbContainer *frames;
	SspStr		kind;
	int			i,
				n;
	SspBuf		out;
	SspError	err;
	bytea	   *result;

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

	frames = get_array(root, "", "frames", &n);
	msg.nframes = (uint32) n;
	msg.frames = palloc0(sizeof(SspFrame) * Max(n, 1));
	for (i = 0; i < n; i++)
	{
		char	   *p = path_index("frames", i);

		build_frame(ith_object(frames, i, p), p, &msg.frames[i]);
	}

	ssp_buf_init(&out);
	if (!ssp_encode_message(&msg, &out, &err))
	{
		ssp_buf_free(&out);
		raise_codec_error(&err);
	}
	result = (bytea *) palloc(VARHDRSZ + out.len);
	SET_VARSIZE(result, VARHDRSZ + out.len);
	memcpy(VARDATA(result), out.data, out.len);
	ssp_buf_free(&out);
	PG_RETURN_BYTEA_P(result);
}
