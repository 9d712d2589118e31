/*
 * producer_pull.c — syncular._pull_sections(response bytea) RETURNS jsonb: the pull response of
 * syncular.handle as syncular.pull returns it (docs/sql-reference.md "pull"), built in one pass
 * over the decoded message instead of a PL/pgSQL loop over its rendering.
 *
 * One object per subscription section (SUB_START .. SUB_END, SPEC §3.6): the SUB_START fields
 * and then the SUB_END fields of the canonical rendering (SPEC §11; "type" left out, a SUB_END
 * field replaces a SUB_START field of the same name), with
 *   "commits": [{commitSeq, createdAtMs, actorId, changes: [{table, rowId, op, rowVersion?,
 *               scopes, row?}]}]   row: the change's full row decoded against the registered
 *               table (syncular.decode_row's value);
 *   "rows":    [{serverVersion, row}] from the section's inline SSG2 segments (SPEC §5), in
 *               block order, row as the segment's rendering gives it.
 * Other frames (RESP_HEADER, SEGMENT_REF, ...) are not part of the answer.  Memory: the decoded
 * message, each frame's rendering and the answer, in the caller's context.
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "debug_render.h"
#include "engine.h"
#include "rowjson.h"

PG_FUNCTION_INFO_V1(syncular_pull_sections);

/* Whether the jsonb string v is the C string s. */
static bool
key_is(const JsonbValue *v, const char *s)
{
	return s != NULL && v->val.string.len == (int) strlen(s) &&
		memcmp(v->val.string.val, s, v->val.string.len) == 0;
}

/* Push every pair of the object `obj` but those named skip1 / skip2 (NULL: none). */
static void
push_pairs_except(JsonbParseState **ps, JsonbContainer *obj, const char *skip1,
				  const char *skip2)
{
	JsonbIterator *it = JsonbIteratorInit(obj);
	JsonbValue	k;
	JsonbValue	val;
	JsonbIteratorToken tok;

	while ((tok = JsonbIteratorNext(&it, &k, true)) != WJB_DONE)
	{
		if (tok != WJB_KEY)
			continue;			/* WJB_BEGIN_OBJECT / WJB_END_OBJECT */
		(void) JsonbIteratorNext(&it, &val, true);
		if (key_is(&k, skip1) || key_is(&k, skip2))
			continue;
		pushJsonbValue(ps, WJB_KEY, &k);
		pushJsonbValue(ps, WJB_VALUE, &val);
	}
}

/* The member `key` of object `obj` pushed as the value of key `key` (JSON null when absent). */
static void
push_member(JsonbParseState **ps, JsonbContainer *obj, const char *key)
{
	JsonbValue *v = getKeyJsonValueFromContainer(obj, key, strlen(key), NULL);
	JsonbValue	null;

	null.type = jbvNull;
	sync_push_key(ps, key);
	pushJsonbValue(ps, WJB_VALUE, v ? v : &null);
}

/*
 * Whether the rendering keeps string s as it is: no U+0000 (rendered \u0000, which jsonb keeps
 * as six characters) and no WTF-8 surrogate (ED A0..BF: rendered as a \u escape, kept as text).
 * Strings the codec decoded are well-formed UTF-8 / WTF-8 otherwise.
 */
static bool
plain_str(const SspStr *s)
{
	const uint8 *p = (const uint8 *) s->ptr;

	for (uint32 i = 0; i < s->len; i++)
		if (p[i] == 0 || (p[i] == 0xED && i + 1 < s->len && p[i + 1] >= 0xA0))
			return false;
	return true;
}

/* Every string of the commit's changes that the answer carries is plain (plain_str). */
static bool
commit_plain(const SspCommit *c)
{
	if (!plain_str(&c->actor_id))
		return false;
	for (uint32 i = 0; i < c->nchanges; i++)
	{
		const SspChange *ch = &c->changes[i];

		if (!plain_str(&ch->row_id))
			return false;
		for (uint32 k = 0; k < ch->scopes.n; k++)
			if (!plain_str(&ch->scopes.entries[k].key) || !plain_str(&ch->scopes.entries[k].value))
				return false;
	}
	return true;
}

static void
push_str(JsonbParseState **ps, JsonbIteratorToken tok, const SspStr *s)
{
	JsonbValue	v;

	v.type = jbvString;
	v.val.string.val = (char *) s->ptr;
	v.val.string.len = (int) s->len;
	pushJsonbValue(ps, tok, &v);
}

/* A change's fields but tableIndex and row, as the rendering gives them (SPEC §11). */
static void
push_change_fields(JsonbParseState **ps, const SspChange *ch)
{
	sync_push_key(ps, "rowId");
	push_str(ps, WJB_VALUE, &ch->row_id);
	sync_push_key(ps, "op");
	sync_push_string(ps, WJB_VALUE, ch->op == SSP_OP_UPSERT ? "upsert" :
					 ch->op == SSP_OP_DELETE ? "delete" : "?");
	if (ch->has_row_version)
	{
		sync_push_key(ps, "rowVersion");
		sync_push_int(ps, WJB_VALUE, ch->row_version);
	}
	sync_push_key(ps, "scopes");
	pushJsonbValue(ps, WJB_BEGIN_OBJECT, NULL);
	for (uint32 k = 0; k < ch->scopes.n; k++)
	{
		push_str(ps, WJB_KEY, &ch->scopes.entries[k].key);
		push_str(ps, WJB_VALUE, &ch->scopes.entries[k].value);
	}
	pushJsonbValue(ps, WJB_END_OBJECT, NULL);
}

/*
 * The fields of each change but tableIndex and row, taken from the rendering of the frame without
 * its rows: for a commit holding a string the rendering does not keep as it is (plain_str).
 */
static JsonbValue **
rendered_changes(uint16 wire, const SspFrame *f, JsonbValue **actor)
{
	const SspCommit *c = &f->commit;
	SspFrame	bare = *f;
	SspChange  *changes = palloc(sizeof(SspChange) * Max(c->nchanges, 1));
	JsonbValue **out = palloc0(sizeof(JsonbValue *) * Max(c->nchanges, 1));
	JsonbValue *list;
	Jsonb	   *r;
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	uint32		i = 0;

	memcpy(changes, c->changes, sizeof(SspChange) * c->nchanges);
	for (uint32 k = 0; k < c->nchanges; k++)
		changes[k].has_row = false;
	bare.commit.changes = changes;
	r = sync_render_frame_jsonb(wire, &bare);
	list = getKeyJsonValueFromContainer(&r->root, "changes", 7, NULL);
	it = JsonbIteratorInit(list->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
		if (tok == WJB_ELEM && i < c->nchanges)
		{
			out[i] = palloc(sizeof(JsonbValue));
			*out[i++] = v;
		}
	*actor = getKeyJsonValueFromContainer(&r->root, "actorId", 7, NULL);
	return out;
}

/*
 * One COMMIT frame as {commitSeq, createdAtMs, actorId, changes: [{table, ...fields, row?}]}:
 * each row decoded from its bytes against the registered table (decode_row's value).  The
 * fields are pushed from the decoded frame where the rendering keeps every string as it is, else
 * taken from the rendering (rendered_changes).
 */
static void
push_commit(JsonbParseState **ps, uint16 wire, const SspFrame *f)
{
	const SspCommit *c = &f->commit;
	JsonbValue *actor = NULL;
	JsonbValue **rendered = commit_plain(c) ? NULL : rendered_changes(wire, f, &actor);
	char	  **names = palloc(sizeof(char *) * Max(c->ntables, 1));

	/* the answer points at these strings until it is flattened: kept, one per table */
	for (uint32 k = 0; k < c->ntables; k++)
		names[k] = pnstrdup(c->tables[k].ptr, c->tables[k].len);
	pushJsonbValue(ps, WJB_BEGIN_OBJECT, NULL);
	sync_push_key(ps, "commitSeq");
	sync_push_int(ps, WJB_VALUE, c->commit_seq);
	sync_push_key(ps, "createdAtMs");
	sync_push_int(ps, WJB_VALUE, c->created_at_ms);
	sync_push_key(ps, "actorId");
	if (rendered == NULL)
		push_str(ps, WJB_VALUE, &c->actor_id);
	else
		pushJsonbValue(ps, WJB_VALUE, actor);
	sync_push_key(ps, "changes");
	pushJsonbValue(ps, WJB_BEGIN_ARRAY, NULL);
	for (uint32 i = 0; i < c->nchanges; i++)
	{
		const SspChange *ch = &c->changes[i];

		pushJsonbValue(ps, WJB_BEGIN_OBJECT, NULL);
		sync_push_key(ps, "table");
		sync_push_string(ps, WJB_VALUE, names[ch->table_index]);
		if (rendered == NULL)
			push_change_fields(ps, ch);
		else
			push_pairs_except(ps, rendered[i]->val.binary.data, "tableIndex", "row");
		if (ch->has_row)
		{
			sync_push_key(ps, "row");
			(void) sync_push_row_object(ps, names[ch->table_index], ch->row.ptr, ch->row.len,
										false);
		}
		pushJsonbValue(ps, WJB_END_OBJECT, NULL);
	}
	pushJsonbValue(ps, WJB_END_ARRAY, NULL);
	pushJsonbValue(ps, WJB_END_OBJECT, NULL);
}

/* The rows of one inline SSG2 segment, each {serverVersion, row}, as elements of "rows". */
static void
push_segment_rows(JsonbParseState **ps, const SspSegmentInline *s)
{
	Jsonb	   *seg = sync_render_jsonb(s->payload.ptr, s->payload.len);
	JsonbValue *blocks = getKeyJsonValueFromContainer(&seg->root, "blocks", 6, NULL);
	JsonbIterator *bi;
	JsonbValue	blk;
	JsonbIteratorToken btok;

	if (blocks == NULL || blocks->type != jbvBinary)
		return;
	bi = JsonbIteratorInit(blocks->val.binary.data);
	while ((btok = JsonbIteratorNext(&bi, &blk, true)) != WJB_DONE)
	{
		JsonbIterator *ri;
		JsonbValue	row;
		JsonbIteratorToken tok;

		if (btok != WJB_ELEM || blk.type != jbvBinary)
			continue;
		ri = JsonbIteratorInit(blk.val.binary.data);
		while ((tok = JsonbIteratorNext(&ri, &row, true)) != WJB_DONE)
		{
			JsonbValue *values;
			JsonbValue	null;

			if (tok != WJB_ELEM || row.type != jbvBinary)
				continue;
			null.type = jbvNull;
			pushJsonbValue(ps, WJB_BEGIN_OBJECT, NULL);
			push_member(ps, row.val.binary.data, "serverVersion");
			values = getKeyJsonValueFromContainer(row.val.binary.data, "values", 6, NULL);
			sync_push_key(ps, "row");
			pushJsonbValue(ps, WJB_VALUE, values ? values : &null);
			pushJsonbValue(ps, WJB_END_OBJECT, NULL);
		}
	}
}

/* Frames [from, to) of the message that have wire type `type` (known frames only). */
#define FOR_FRAMES(msg, from, to, k, typ) \
	for (uint32 k = (from); k < (to); k++) \
		if (!(msg)->frames[k].unknown && (msg)->frames[k].type == (typ))

/* One section: SUB_START at `start`, its SUB_END at `end`. */
static void
push_section(JsonbParseState **ps, const SspMessage *msg, uint32 start, uint32 end)
{
	Jsonb	   *head = sync_render_frame_jsonb(msg->wire_version, &msg->frames[start]);
	Jsonb	   *tail = sync_render_frame_jsonb(msg->wire_version, &msg->frames[end]);

	pushJsonbValue(ps, WJB_BEGIN_OBJECT, NULL);
	push_pairs_except(ps, &head->root, "type", NULL);
	sync_push_key(ps, "commits");
	pushJsonbValue(ps, WJB_BEGIN_ARRAY, NULL);
	FOR_FRAMES(msg, start + 1, end, k, SSP_FRAME_COMMIT)
		push_commit(ps, msg->wire_version, &msg->frames[k]);
	pushJsonbValue(ps, WJB_END_ARRAY, NULL);
	sync_push_key(ps, "rows");
	pushJsonbValue(ps, WJB_BEGIN_ARRAY, NULL);
	FOR_FRAMES(msg, start + 1, end, k, SSP_FRAME_SEGMENT_INLINE)
		push_segment_rows(ps, &msg->frames[k].segment_inline);
	pushJsonbValue(ps, WJB_END_ARRAY, NULL);
	/* pushed last, so a SUB_END field wins over a SUB_START field of the same name */
	push_pairs_except(ps, &tail->root, "type", NULL);
	pushJsonbValue(ps, WJB_END_OBJECT, NULL);
}

Datum
syncular_pull_sections(PG_FUNCTION_ARGS)
{
	bytea	   *in = PG_GETARG_BYTEA_PP(0);
	SspMessage	msg;
	SspError	err;
	JsonbParseState *ps = NULL;
	Jsonb	   *res = NULL;

	memset(&msg, 0, sizeof(msg));
	if (!ssp_decode_message((const uint8_t *) VARDATA_ANY(in), VARSIZE_ANY_EXHDR(in), &msg, &err))
		sync_raise_codec_error(&err);
	PG_TRY();
	{
		int64		start = -1;

		pushJsonbValue(&ps, WJB_BEGIN_ARRAY, NULL);
		for (uint32 k = 0; k < msg.nframes; k++)
		{
			if (msg.frames[k].unknown)
				continue;
			if (msg.frames[k].type == SSP_FRAME_SUB_START)
				start = k;
			else if (msg.frames[k].type == SSP_FRAME_SUB_END && start >= 0)
			{
				push_section(&ps, &msg, (uint32) start, k);
				start = -1;
			}
		}
		/* built before the message is freed: decoded values may point into it */
		res = JsonbValueToJsonb(pushJsonbValue(&ps, WJB_END_ARRAY, NULL));
	}
	PG_FINALLY();
	{
		ssp_message_free(&msg);
	}
	PG_END_TRY();
	PG_RETURN_JSONB_P(res);
}
