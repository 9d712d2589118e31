/*
 * hook_records.c — the rules for what an app hook hands back to the engine, applied in C on the
 * round path (DESIGN.md: the round in C, not PL/pgSQL):
 *
 *   sync_hook_rejection     a row or commit validator's error: a well-formed SY001 rejection
 *                           (push-and-pull.md §2.7; barrier-rfc0007.md §8.4; errors.md §3.1;
 *                           SPEC §6.7–§6.8) or NULL, which the engine answers with the fixed
 *                           sync.constraint_violation.
 *   sync_reactions_enqueue  the reaction planner's records (push-and-pull.md §2.8; SPEC §6.9):
 *                           every record checked before any is written, then one
 *                           sync_reactions row each, through storage.
 *
 * Both are also SQL functions (syncular._validator_rejection, syncular._enqueue_reactions), so
 * the rules can be tested and documented on their own; their COMMENTs state the rules in full.
 * Every function allocates in the caller's memory context and never switches it.
 */
#include "postgres.h"

#include "common/jsonapi.h"
#include "executor/spi.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"

#include "engine.h"
#include "hook_records.h"
#include "rowjson.h"
#include "storage.h"

#define REJECTION_DETAILS_MAX	4096	/* PUSH_RESULT_DETAILS bound (push-and-pull.md §2.4) */
#define REACTIONS_MAX			100
#define REACTION_KEY_MAX		256
#define REACTION_TYPE_MAX		128
#define REACTION_PAYLOAD_MAX	65536
#define REACTION_DEPTH_MAX		16
#define REACTION_ATTEMPTS_DFLT	10
#define REACTION_ATTEMPTS_MAX	100

/* ---------------------------------------------------------------- JSON helpers */

static JsonbValue *
member(JsonbContainer *obj, const char *key, JsonbValue *out)
{
	return getKeyJsonValueFromContainer(obj, key, strlen(key), out);
}

static bool
is_object(const JsonbValue *v)
{
	return v->type == jbvBinary && JsonContainerIsObject(v->val.binary.data);
}

/* v is a JSON number with an integral value in lo..hi (3.0 counts as 3): *out = the value. */
static bool
int_in_range(const JsonbValue *v, int64 lo, int64 hi, int64 *out)
{
	Datum		n;

	if (v->type != jbvNumeric)
		return false;
	n = NumericGetDatum(v->val.numeric);
	if (!DatumGetBool(DirectFunctionCall2(numeric_eq, n,
										  DirectFunctionCall2(numeric_trunc, n, Int32GetDatum(0)))) ||
		DatumGetInt32(DirectFunctionCall2(numeric_cmp, n, NumericGetDatum(int64_to_numeric(lo)))) < 0 ||
		DatumGetInt32(DirectFunctionCall2(numeric_cmp, n, NumericGetDatum(int64_to_numeric(hi)))) > 0)
		return false;
	*out = DatumGetInt64(DirectFunctionCall1(numeric_int8, n));
	return true;
}

/* Bytes of s (len bytes in the server encoding) as UTF-8: the unit of every limit here. */
static int64
utf8_bytes(const char *s, int len)
{
	if (GetDatabaseEncoding() == PG_UTF8)
		return len;
	return strlen(pg_server_to_any(s, len, PG_UTF8));
}

/* Bytes of v's compact JSON text ({"a":[1,"x, y"]}; syncular._compact_json) as UTF-8. */
static int64
compact_bytes(JsonbValue *v)
{
	StringInfoData b;

	initStringInfo(&b);
	sync_jsonb_append_compact(&b, v);
	return utf8_bytes(b.data, b.len);
}

/* Nesting of objects and arrays in v: 0 for a scalar, 1 for {"a":1}. */
static int
nesting(JsonbValue *v)
{
	JsonbIterator *it;
	JsonbValue	x;
	JsonbIteratorToken tok;
	int			depth = 0;
	int			max = 0;

	if (v->type != jbvBinary || JsonContainerIsScalar(v->val.binary.data))
		return 0;
	it = JsonbIteratorInit(v->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &x, false)) != WJB_DONE)
	{
		if (tok == WJB_BEGIN_ARRAY || tok == WJB_BEGIN_OBJECT)
		{
			depth++;
			max = Max(max, depth);
		}
		else if (tok == WJB_END_ARRAY || tok == WJB_END_OBJECT)
			depth--;
	}
	return max;
}

/* ---------------------------------------------------------------- validator rejections */

static const char *const reserved_prefixes[] = {"sync.", "blob.", "operation.", "presence.", "client."};

/* detail parsed as a JSON object, or NULL when it is not one (never raises on bad JSON). */
static Jsonb *
detail_object(const char *detail)
{
	JsonLexContext *lex = makeJsonLexContextCstringLen((char *) detail, strlen(detail),
													   GetDatabaseEncoding(), true);
	Jsonb	   *d;

	if (pg_parse_json(lex, &nullSemAction) != JSON_SUCCESS)
		return NULL;
	d = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(detail)));
	return JsonContainerIsObject(&d->root) ? d : NULL;
}

/* The code member: a non-empty string outside the reserved namespaces, else NULL. */
static JsonbValue *
rejection_code(Jsonb *d, JsonbValue *code)
{
	if (member(&d->root, "code", code) == NULL || code->type != jbvString ||
		code->val.string.len == 0)
		return NULL;
	for (int i = 0; i < (int) lengthof(reserved_prefixes); i++)
	{
		int			n = strlen(reserved_prefixes[i]);

		if (code->val.string.len >= n && memcmp(code->val.string.val, reserved_prefixes[i], n) == 0)
			return NULL;
	}
	return code;
}

Jsonb *
sync_hook_rejection(const char *sqlstate, const char *detail, const char *message)
{
	JsonbParseState *st = NULL;
	JsonbValue	code, msg, det, idx;
	bool		has_msg, has_det, has_idx;
	int64		op_index = 0;
	Jsonb	   *d;

	if (sqlstate == NULL || strcmp(sqlstate, "SY001") != 0 || detail == NULL ||
		(d = detail_object(detail)) == NULL || rejection_code(d, &code) == NULL)
		return NULL;
	has_msg = member(&d->root, "message", &msg) != NULL && msg.type != jbvNull;
	if (has_msg && msg.type != jbvString)
		return NULL;
	has_det = member(&d->root, "details", &det) != NULL && det.type != jbvNull;
	if (has_det && (!is_object(&det) || compact_bytes(&det) > REJECTION_DETAILS_MAX))
		return NULL;
	has_idx = member(&d->root, "opIndex", &idx) != NULL && idx.type != jbvNull;
	if (has_idx && !int_in_range(&idx, 0, PG_INT32_MAX, &op_index))
		return NULL;

	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	sync_push_key(&st, "code");
	pushJsonbValue(&st, WJB_VALUE, &code);
	sync_push_key(&st, "message");
	if (has_msg && msg.val.string.len > 0)
		pushJsonbValue(&st, WJB_VALUE, &msg);
	else if (message != NULL && message[0] != '\0')
		sync_push_string(&st, WJB_VALUE, message);
	else
		pushJsonbValue(&st, WJB_VALUE, &code);
	if (has_det)
	{
		sync_push_key(&st, "details");
		pushJsonbValue(&st, WJB_VALUE, &det);
	}
	if (has_idx)
	{
		sync_push_key(&st, "opIndex");
		sync_push_int(&st, WJB_VALUE, op_index);
	}
	return JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
}

PG_FUNCTION_INFO_V1(syncular_validator_rejection);

/*
 * syncular._validator_rejection(sqlstate text, detail text, message text DEFAULT NULL)
 * RETURNS jsonb — sync_hook_rejection as SQL (NULL when not a well-formed rejection).
 */
Datum
syncular_validator_rejection(PG_FUNCTION_ARGS)
{
	Jsonb	   *r;

	r = sync_hook_rejection(PG_ARGISNULL(0) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(0)),
							PG_ARGISNULL(1) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(1)),
							PG_NARGS() < 3 || PG_ARGISNULL(2) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(2)));
	if (r == NULL)
		PG_RETURN_NULL();
	PG_RETURN_JSONB_P(r);
}

/* ---------------------------------------------------------------- reaction records */

/*
 * sync.storage.invalid_reaction: details {index (when idx >= 0), field, reason} plus the integer
 * members extra_keys[i] = extra[i] (in jsonb's key order, as every catalogue DETAIL).
 */
static void pg_attribute_noreturn()
invalid_reaction(int idx, const char *field, const char *reason, int nextra,
				 const char *const *extra_keys, const int64 *extra)
{
	JsonbParseState *st = NULL;
	Jsonb	   *j;

	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	if (idx >= 0)
	{
		sync_push_key(&st, "index");
		sync_push_int(&st, WJB_VALUE, idx);
	}
	sync_push_key(&st, "field");
	sync_push_string(&st, WJB_VALUE, field);
	sync_push_key(&st, "reason");
	sync_push_string(&st, WJB_VALUE, reason);
	for (int i = 0; i < nextra; i++)
	{
		sync_push_key(&st, extra_keys[i]);
		sync_push_int(&st, WJB_VALUE, extra[i]);
	}
	j = JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
	sync_raise("sync.storage.invalid_reaction", "invalid reaction record",
			   JsonbToCString(NULL, &j->root, VARSIZE(j)));
}

static void pg_attribute_noreturn()
invalid(int idx, const char *field, const char *reason)
{
	invalid_reaction(idx, field, reason, 0, NULL, NULL);
}

static void pg_attribute_noreturn()
invalid_limit(int idx, const char *field, const char *reason, const char *k1, int64 v1,
			  const char *k2, int64 v2)
{
	const char *const keys[2] = {k1, k2};
	const int64 vals[2] = {v1, v2};

	invalid_reaction(idx, field, reason, k2 ? 2 : 1, keys, vals);
}

/* A record member that is not one of the five: the first in byte order, as unknown_field. */
static void
check_members(JsonbContainer *rec, int idx)
{
	static const char *const known[] = {"key", "type", "version", "payload", "maxAttempts"};
	JsonbIterator *it = JsonbIteratorInit(rec);
	JsonbValue	v;
	JsonbIteratorToken tok;
	char	   *first = NULL;

	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		bool		ok = false;
		char	   *k;

		if (tok != WJB_KEY)
			continue;
		k = pnstrdup(v.val.string.val, v.val.string.len);
		for (int i = 0; i < (int) lengthof(known); i++)
			ok = ok || strcmp(k, known[i]) == 0;
		if (!ok && (first == NULL || strcmp(k, first) < 0))
			first = k;
	}
	if (first != NULL)
		invalid(idx, first, "unknown_field");
}

/* The string member field: present, a string, non-empty, at most max UTF-8 bytes. */
static char *
record_text(JsonbContainer *rec, int idx, const char *field, int max)
{
	JsonbValue	v;
	int64		bytes;

	if (member(rec, field, &v) == NULL)
		invalid(idx, field, "missing");
	if (v.type != jbvString)
		invalid(idx, field, "not_string");
	if (v.val.string.len == 0)
		invalid(idx, field, "empty");
	bytes = utf8_bytes(v.val.string.val, v.val.string.len);
	if (bytes > max)
		invalid_limit(idx, field, "too_long", "bytes", bytes, "limit", max);
	return pnstrdup(v.val.string.val, v.val.string.len);
}

/* Check record idx (rec) against the keys of the records before it; fill slot idx. */
static void
check_record(JsonbContainer *rec, int idx, SyncReactionRecord *out)
{
	JsonbValue	v;
	int64		n;

	check_members(rec, idx);
	out[idx].key = record_text(rec, idx, "key", REACTION_KEY_MAX);
	for (int i = 0; i < idx; i++)
		if (strcmp(out[i].key, out[idx].key) == 0)
			invalid(idx, "key", "duplicate");
	out[idx].type = record_text(rec, idx, "type", REACTION_TYPE_MAX);
	if (member(rec, "version", &v) == NULL)
		invalid(idx, "version", "missing");
	if (!int_in_range(&v, 1, PG_INT32_MAX, &n))
		invalid(idx, "version", "not_positive_i32");
	out[idx].version = (int32) n;
	if (member(rec, "payload", &v) == NULL)
		invalid(idx, "payload", "missing");
	if ((n = compact_bytes(&v)) > REACTION_PAYLOAD_MAX)
		invalid_limit(idx, "payload", "too_large", "bytes", n, "limit", REACTION_PAYLOAD_MAX);
	if (nesting(&v) > REACTION_DEPTH_MAX)
		invalid_limit(idx, "payload", "too_deep", "limit", REACTION_DEPTH_MAX, NULL, 0);
	out[idx].payload = JsonbValueToJsonb(&v);
	n = REACTION_ATTEMPTS_DFLT;
	if (member(rec, "maxAttempts", &v) != NULL && v.type != jbvNull &&
		!int_in_range(&v, 1, REACTION_ATTEMPTS_MAX, &n))
		invalid_limit(idx, "maxAttempts", "out_of_range", "min", 1, "max", REACTION_ATTEMPTS_MAX);
	out[idx].max_attempts = (int32) n;
}

/* The idempotency key: compact JSON ["<partition>","<client>","<commit>","<key>"]. */
static char *
idempotency_key(const char *partition, const char *client_id, const char *client_commit_id,
				const char *key)
{
	StringInfoData b;

	initStringInfo(&b);
	appendStringInfoChar(&b, '[');
	escape_json(&b, partition);
	appendStringInfoChar(&b, ',');
	escape_json(&b, client_id);
	appendStringInfoChar(&b, ',');
	escape_json(&b, client_commit_id);
	appendStringInfoChar(&b, ',');
	escape_json(&b, key);
	appendStringInfoChar(&b, ']');
	return b.data;
}

int64
sync_reactions_enqueue(const char *partition, const char *client_id, const char *client_commit_id,
					   int64 commit_seq, Jsonb *records, int64 now_ms)
{
	SyncReactionRecord *recs;
	int			n;

	if (records == NULL || (JsonContainerIsScalar(&records->root) &&
							JsonContainerSize(&records->root) == 1 &&
							getIthJsonbValueFromContainer(&records->root, 0)->type == jbvNull))
		return 0;
	if (!JsonContainerIsArray(&records->root) || JsonContainerIsScalar(&records->root))
		invalid(-1, "records", "not_array");
	n = JsonContainerSize(&records->root);
	if (n > REACTIONS_MAX)
		invalid_limit(-1, "records", "too_many", "count", n, "limit", REACTIONS_MAX);
	if (n == 0)
		return 0;
	recs = palloc0(sizeof(SyncReactionRecord) * n);
	for (int i = 0; i < n; i++)
	{
		JsonbValue *v = getIthJsonbValueFromContainer(&records->root, i);

		if (!is_object(v))
			invalid(i, "record", "not_object");
		check_record(v->val.binary.data, i, recs);
		recs[i].idempotency_key = idempotency_key(partition, client_id, client_commit_id,
												  recs[i].key);
	}
	return sync_storage_reactions_insert(partition, client_id, client_commit_id, commit_seq,
										 now_ms, n, recs);
}

PG_FUNCTION_INFO_V1(syncular_enqueue_reactions);

/*
 * syncular._enqueue_reactions(partition text, client_id text, client_commit_id text,
 *                             commit_seq bigint, records jsonb, now_ms bigint DEFAULT NULL)
 * RETURNS integer — sync_reactions_enqueue as SQL; now_ms NULL = the engine's clock.
 */
Datum
syncular_enqueue_reactions(PG_FUNCTION_ARGS)
{
	static const char *const fields[] = {"partition", "clientId", "clientCommitId", "commitSeq"};
	int64		n;

	for (int i = 0; i < 4; i++)
		if (PG_ARGISNULL(i))
			invalid(-1, fields[i], "missing");
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "syncular: SPI_connect failed");
	n = sync_reactions_enqueue(text_to_cstring(PG_GETARG_TEXT_PP(0)),
							   text_to_cstring(PG_GETARG_TEXT_PP(1)),
							   text_to_cstring(PG_GETARG_TEXT_PP(2)), PG_GETARG_INT64(3),
							   PG_ARGISNULL(4) ? NULL : PG_GETARG_JSONB_P(4),
							   PG_NARGS() < 6 || PG_ARGISNULL(5) ? sync_now_ms() : PG_GETARG_INT64(5));
	SPI_finish();
	PG_RETURN_INT32((int32) n);
}
