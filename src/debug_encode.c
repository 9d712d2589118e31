/*
 * debug_encode.c — syncular.debug_encode: builds the SSP2 message or SSG2 segment a
 * rendering-shaped document describes (the inverse of debug_render.c, SPEC §11).
 *
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
#include "jsondoc.h"

PG_FUNCTION_INFO_V1(syncular_debug_encode);

/* The wire enums by their rendering names (index = wire value; 0 is not a value). */
static const char *const op_names[] = {NULL, "upsert", "delete"};
static const char *const push_status_names[] = {NULL, "applied", "cached", "rejected"};
static const char *const result_status_names[] = {NULL, "applied", "conflict", "error"};
static const char *const sub_status_names[] = {NULL, "active", "revoked", "reset"};
static const char *const media_names[] = {NULL, "rows", "sqlite"};

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
	doc_raise_field(path, "names an unknown frame type \"%s\"", name);
}

/* operations[i] of a push commit */
static void
read_push_op(JsonbContainer *oo, const char *op_p, void *out)
{
	SspPushOp  *op = out;

	op->table = doc_get_str(oo, op_p, "table");
	op->row_id = doc_get_str(oo, op_p, "rowId");
	op->op = doc_get_enum(oo, op_p, "op", op_names, lengthof(op_names));
	op->base_version = doc_get_opt_int(oo, op_p, "baseVersion", I64_MIN, I64_MAX,
								   &op->has_base_version);
	op->payload = doc_get_opt_bytes(oo, op_p, "payload", &op->has_payload);
}

/* results[i] of a push result */
static void
read_op_result(JsonbContainer *ro, const char *q, void *out)
{
	SspOpResult *o = out;

	o->op_index = (int32) doc_get_int(ro, q, "opIndex", I32_MIN, I32_MAX);
	o->status = doc_get_enum(ro, q, "status", result_status_names, lengthof(result_status_names));
	if (o->status == SSP_RESULT_CONFLICT || o->status == SSP_RESULT_ERROR)
	{
		o->code = doc_get_str(ro, q, "code");
		o->message = doc_get_str(ro, q, "message");
	}
	if (o->status == SSP_RESULT_CONFLICT)
	{
		o->server_version = doc_get_int(ro, q, "serverVersion", I64_MIN, I64_MAX);
		o->server_row = doc_get_bytes(ro, q, "serverRow");
		/* no presence flag: absent stays empty */
		o->conflict_columns = doc_get_opt_bytes(ro, q, "conflictColumns", NULL);
	}
	if (o->status == SSP_RESULT_ERROR)
		o->retryable = doc_get_bool(ro, q, "retryable", false, true);
}

/* entries[i] of push result details; "detailsJson" is accepted for "details" */
static void
read_details_entry(JsonbContainer *eo, const char *q, void *out)
{
	SspDetailsEntry *e = out;
	JsonbValue *v = doc_member(eo, "details");

	if (v == NULL)
		v = doc_member(eo, "detailsJson");
	if (v == NULL)
		doc_raise_field(doc_path_key(q, "details"), "is required");
	e->op_index = (int32) doc_get_int(eo, q, "opIndex", I32_MIN, I32_MAX);
	e->details_json = v->type == jbvString ? doc_as_str(v, q) : doc_as_json_text(v);
}

/* changes[i] of a commit */
static void
read_change(JsonbContainer *co, const char *q, void *out)
{
	SspChange  *ch = out;

	ch->table_index = (uint16) doc_get_int(co, q, "tableIndex", 0, 65535);
	ch->row_id = doc_get_str(co, q, "rowId");
	ch->op = doc_get_enum(co, q, "op", op_names, lengthof(op_names));
	ch->row_version = doc_get_opt_int(co, q, "rowVersion", I64_MIN, I64_MAX, &ch->has_row_version);
	ch->scopes = doc_get_str_map(co, q, "scopes");
	ch->row = doc_get_opt_bytes(co, q, "row", &ch->has_row);
}

/* frames[i] of a message */
static void
build_frame(JsonbContainer *fo, const char *p, void *out)
{
	SspFrame   *f = out;
	SspStr		type = doc_get_str(fo, p, "type");
	bool		present;
	int			i,
				n;

	memset(f, 0, sizeof(*f));
	if (strcmp(type.ptr, "UNKNOWN") == 0)
	{
		f->type = (uint8) doc_get_int(fo, p, "frameType", 0, 255);
		f->unknown = true;
		f->unknown_frame.payload = doc_get_bytes(fo, p, "payload");
		return;
	}
	f->type = frame_type_of(type.ptr, doc_path_key(p, "type"));

	switch (f->type)
	{
		case SSP_FRAME_REQ_HEADER:
			{
				SspReqHeader *h = &f->req_header;

				h->client_id = doc_get_str(fo, p, "clientId");
				h->schema_version = (int32) doc_get_int(fo, p, "schemaVersion", I32_MIN, I32_MAX);
				h->log_epoch = doc_get_opt_str(fo, p, "logEpoch", &h->has_log_epoch);
				break;
			}
		case SSP_FRAME_PUSH_COMMIT:
			{
				SspPushCommit *c = &f->push_commit;

				c->client_commit_id = doc_get_str(fo, p, "clientCommitId");
				c->ops = doc_get_objects(fo, p, "operations", sizeof(SspPushOp), read_push_op, &n);
				c->nops = (uint32) n;
				break;
			}
		case SSP_FRAME_PULL_HEADER:
			{
				SspPullHeader *h = &f->pull_header;

				h->limit_commits = (int32) doc_get_int(fo, p, "limitCommits", I32_MIN, I32_MAX);
				h->limit_snapshot_rows = (int32) doc_get_int(fo, p, "limitSnapshotRows", I32_MIN, I32_MAX);
				h->max_snapshot_pages = (int32) doc_get_int(fo, p, "maxSnapshotPages", I32_MIN, I32_MAX);
				h->accept = (uint8) doc_get_int(fo, p, "accept", 0, 255);
				break;
			}
		case SSP_FRAME_SUBSCRIPTION:
			{
				SspSubscription *s = &f->subscription;

				s->id = doc_get_str(fo, p, "id");
				s->table = doc_get_str(fo, p, "table");
				s->scopes = doc_get_scope_map(fo, p, "scopes");
				s->params = doc_get_opt_json(fo, "params", &s->has_params);
				s->cursor = doc_get_int(fo, p, "cursor", I64_MIN, I64_MAX);
				s->bootstrap_state = doc_get_opt_json(fo, "bootstrapState", &s->has_bootstrap_state);
				break;
			}
		case SSP_FRAME_RESP_HEADER:
			{
				SspRespHeader *h = &f->resp_header;

				h->required_schema_version = (int32) doc_get_opt_int(fo, p, "requiredSchemaVersion",
																 I32_MIN, I32_MAX,
																 &h->has_required_schema_version);
				h->latest_schema_version = (int32) doc_get_opt_int(fo, p, "latestSchemaVersion",
															   I32_MIN, I32_MAX,
															   &h->has_latest_schema_version);
				h->log_epoch = doc_get_opt_str(fo, p, "logEpoch", &present);
				h->reset_required = doc_get_bool(fo, p, "resetRequired", false, false);
				break;
			}
		case SSP_FRAME_LEASE:
			f->lease.lease_id = doc_get_str(fo, p, "leaseId");
			f->lease.expires_at_ms = doc_get_int(fo, p, "expiresAtMs", I64_MIN, I64_MAX);
			break;
		case SSP_FRAME_PUSH_RESULT:
			{
				SspPushResult *r = &f->push_result;

				r->client_commit_id = doc_get_str(fo, p, "clientCommitId");
				r->status = doc_get_enum(fo, p, "status", push_status_names, lengthof(push_status_names));
				r->commit_seq = doc_get_opt_int(fo, p, "commitSeq", I64_MIN, I64_MAX, &r->has_commit_seq);
				r->results = doc_get_objects(fo, p, "results", sizeof(SspOpResult), read_op_result, &n);
				r->nresults = (uint32) n;
				break;
			}
		case SSP_FRAME_PUSH_RESULT_DETAILS:
			{
				SspPushResultDetails *d = &f->push_result_details;

				d->client_commit_id = doc_get_str(fo, p, "clientCommitId");
				d->entries = doc_get_objects(fo, p, "entries", sizeof(SspDetailsEntry),
										 read_details_entry, &n);
				d->nentries = (uint32) n;
				break;
			}
		case SSP_FRAME_SUB_START:
			{
				SspSubStart *s = &f->sub_start;

				s->id = doc_get_str(fo, p, "id");
				s->status = doc_get_enum(fo, p, "status", sub_status_names, lengthof(sub_status_names));
				s->reason_code = doc_get_str(fo, p, "reasonCode");
				s->effective_scopes = doc_get_scope_map(fo, p, "effectiveScopes");
				s->bootstrap = doc_get_bool(fo, p, "bootstrap", false, true);
				break;
			}
		case SSP_FRAME_COMMIT:
			{
				SspCommit  *c = &f->commit;
				DocArray	tabs;

				c->commit_seq = doc_get_int(fo, p, "commitSeq", I64_MIN, I64_MAX);
				c->created_at_ms = doc_get_int(fo, p, "createdAtMs", I64_MIN, I64_MAX);
				c->actor_id = doc_get_str(fo, p, "actorId");
				tabs = doc_get_array(fo, p, "tables");
				c->ntables = (uint32) tabs.n;
				c->tables = ELEMS(SspStr, tabs.n);
				for (i = 0; i < tabs.n; i++)
					c->tables[i] = doc_elem_str(&tabs, i);
				c->changes = doc_get_objects(fo, p, "changes", sizeof(SspChange), read_change, &n);
				c->nchanges = (uint32) n;
				break;
			}
		case SSP_FRAME_SEGMENT_REF:
			{
				SspSegmentRef *r = &f->segment_ref;

				r->segment_id = doc_get_str(fo, p, "segmentId");
				r->media_type = doc_get_enum(fo, p, "mediaType", media_names, lengthof(media_names));
				r->table = doc_get_str(fo, p, "table");
				r->byte_length = doc_get_int(fo, p, "byteLength", I64_MIN, I64_MAX);
				r->row_count = doc_get_int(fo, p, "rowCount", I64_MIN, I64_MAX);
				r->as_of_commit_seq = doc_get_int(fo, p, "asOfCommitSeq", I64_MIN, I64_MAX);
				r->scope_digest = doc_get_str(fo, p, "scopeDigest");
				r->row_cursor = doc_get_opt_str(fo, p, "rowCursor", &r->has_row_cursor);
				r->next_row_cursor = doc_get_opt_str(fo, p, "nextRowCursor", &r->has_next_row_cursor);
				r->url = doc_get_opt_str(fo, p, "url", &r->has_url);
				r->url_expires_at_ms = doc_get_opt_int(fo, p, "urlExpiresAtMs", I64_MIN, I64_MAX,
												   &r->has_url_expires_at_ms);
				break;
			}
		case SSP_FRAME_SEGMENT_INLINE:
			f->segment_inline.payload = doc_get_bytes(fo, p, "payload");
			break;
		case SSP_FRAME_SUB_END:
			f->sub_end.next_cursor = doc_get_int(fo, p, "nextCursor", I64_MIN, I64_MAX);
			f->sub_end.bootstrap_state = doc_get_opt_json(fo, "bootstrapState",
													  &f->sub_end.has_bootstrap_state);
			break;
		case SSP_FRAME_ERROR:
			{
				SspErrorFrame *e = &f->error;

				e->code = doc_get_str(fo, p, "code");
				e->message = doc_get_str(fo, p, "message");
				e->category = doc_get_str(fo, p, "category");
				e->retryable = doc_get_bool(fo, p, "retryable", false, true);
				e->recommended_action = doc_get_str(fo, p, "recommendedAction");
				e->details = doc_get_opt_json(fo, "details", &e->has_details);
				break;
			}
		default:
			doc_raise_field(doc_path_key(p, "type"), "cannot be encoded");
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
		sync_raise_codec_error(err);
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
	SspStr		t = doc_get_str(co, q, "type");
	int			tag;

	for (tag = 1; tag <= 8; tag++)
	{
		const char *n = ssp_column_type_name((uint8) tag);

		if (n && strcmp(n, t.ptr) == 0)
			return (uint8) tag;
	}
	doc_raise_field(doc_path_key(q, "type"), "names an unknown column type \"%s\"", t.ptr);
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
	seg.format_version = (uint16) doc_get_int(doc, "", "formatVersion", 0, 65535);
	seg.table = doc_get_str(doc, "", "table");
	table = (char *) seg.table.ptr;
	seg.schema_version = (int32) doc_get_int(doc, "", "schemaVersion", I32_MIN, I32_MAX);
	/* not get_objects: the count bound is checked before any element, as it always was */
	cols = doc_get_array(doc, "", "columns");
	if (cols.n > 65535)
		doc_raise_field(cols.path, "has more than 65535 entries");
	seg.ncolumns = (uint16) cols.n;
	seg.columns = ELEMS(SspColumn, cols.n);
	for (i = 0; i < cols.n; i++)
	{
		char	   *q;
		JsonbContainer *co = doc_elem_object(&cols, i, &q);
		SspStr		name = doc_get_str(co, q, "name");

		seg.columns[i].name = name.ptr;
		seg.columns[i].name_len = name.len;
		seg.columns[i].type = column_type_of(co, q);
		seg.columns[i].nullable = doc_get_bool(co, q, "nullable", false, true);
	}

	blocks = doc_get_array(doc, "", "blocks");
	seg.nblocks = (uint32) blocks.n;
	seg.blocks = ELEMS(SspSegmentBlock, blocks.n);
	for (i = 0; i < blocks.n; i++)
	{
		DocArray	blk = doc_elem_array(&blocks, i);
		int			r;

		seg.blocks[i].nrows = (uint32) blk.n;
		seg.blocks[i].rows = ELEMS(SspSegmentRow, blk.n);
		for (r = 0; r < blk.n; r++)
		{
			char	   *rpath;
			JsonbContainer *ro = doc_elem_object(&blk, r, &rpath);
			SspSegmentRow *row = &seg.blocks[i].rows[r];
			JsonbContainer *vo = doc_get_object(ro, rpath, "values");
			SspValue   *vals = ELEMS(SspValue, seg.ncolumns);
			SspBuf		rowbuf;
			int			c;

			row->server_version = doc_get_int(ro, rpath, "serverVersion", I64_MIN, I64_MAX);
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
				doc_raise_field(rpath, "does not encode: %s", err.message);
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
		doc_raise_field("(document)", "must be a JSON object");
	magic = doc_get_str(root, "", "magic");
	if (strcmp(magic.ptr, "SSG2") == 0)
		PG_RETURN_BYTEA_P(encode_segment(root));
	if (strcmp(magic.ptr, "SSP2") != 0)
		doc_raise_field("magic", "must be \"SSP2\" or \"SSG2\"");

	memset(&msg, 0, sizeof(msg));
	msg.wire_version = (uint16) doc_get_int(root, "", "wireVersion", 0, 65535);
	kind = doc_get_str(root, "", "msgKind");
	if (strcmp(kind.ptr, "request") == 0)
		msg.kind = SSP_KIND_REQUEST;
	else if (strcmp(kind.ptr, "response") == 0)
		msg.kind = SSP_KIND_RESPONSE;
	else
		doc_raise_field("msgKind", "must be \"request\" or \"response\"");

	msg.frames = doc_get_objects(root, "", "frames", sizeof(SspFrame), build_frame, &n);
	msg.nframes = (uint32) n;

	ssp_buf_init(&out);
	ok = ssp_encode_message(&msg, &out, &err);
	PG_RETURN_BYTEA_P(encoded_bytea(ok, &out, &err));
}
