/*
 * push_outcome.c — a commit's outcome: its per-operation records, the stored idempotency result
 * (data-model-and-storage.md, sync_push_results) and its replay, and the PUSH_RESULT /
 * PUSH_RESULT_DETAILS frames (push-and-pull.md §2.2, §2.6).
 */
#include "postgres.h"

#include "common/base64.h"
#include "common/pg_prng.h"
#include "port.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "push_internal.h"
#include "rowjson.h"
#include "stats.h"

void
push_set_error(OpRecord *rec, int32 op_index, const char *code, const char *message, bool retryable)
{
	memset(rec, 0, sizeof(*rec));
	rec->op_index = op_index;
	rec->status = SSP_RESULT_ERROR;
	rec->code = pstrdup(code);
	rec->message = pstrdup(message);
	rec->retryable = retryable;
}

/*
 * PUSH_RESULT_DETAILS text in the codec's normalized form (WF §3.4: only fieldPaths, reason,
 * requiredAction, references, in that order, compact, at most 4,096 bytes), or NULL when the
 * text breaks those rules.  Details that fail are dropped, never fatal: a host validator's
 * details must not turn a rejection into a failed round.
 */
static char *
normalize_details(const char *json, size_t len)
{
	SspBuf		b;
	SspError	err;
	char	   *out = NULL;

	ssp_buf_init(&b);
	if (ssp_details_json_normalize(json, len, &b, &err))
		out = pnstrdup((const char *) b.data, b.len);
	ssp_buf_free(&b);
	return out;
}

void
push_set_reject(OpRecord *rec, int32 op_index, const SyncOpReject *r)
{
	push_set_error(rec, op_index, r->code ? r->code : "sync.constraint_violation",
			  r->message ? r->message : "operation rejected", r->retryable);
	if (r->details_json)
	{
		rec->details_json = normalize_details(r->details_json, strlen(r->details_json));
		if (rec->details_json == NULL)
			ereport(LOG,
					(errmsg("syncular: rejection details of code \"%s\" dropped: they break the PUSH_RESULT_DETAILS rules",
							rec->code)));
	}
}

/* The reverse of set_reject: an OpRecord (error) as a seam rejection. */
void
push_record_to_hook(const OpRecord *rec, SyncOpReject *r)
{
	r->op_index = rec->op_index;
	r->code = rec->code;
	r->message = rec->message;
	r->retryable = rec->retryable;
	r->details_json = rec->details_json;
}

void
push_internal_error(const char *what)
{
	sync_raise("sync.internal_error", "internal error while applying a push",
			   psprintf("{\"stage\": \"%s\"}", what));
}

/* ---------------------------------------------------------------- stored results (JSON) */

static void
append_b64(StringInfo buf, const uint8 *p, uint32 len)
{
	int			enc_len = pg_b64_enc_len(len);
	char	   *enc = palloc(enc_len + 1);
	int			n = pg_b64_encode((const char *) p, len, enc, enc_len);

	if (n < 0)
		push_internal_error("base64");
	enc[n] = '\0';
	escape_json(buf, enc);
}

char *
push_new_cache_identity(void)
{
	/*
	 * Unique, not secret (it tells which delivery stored a record first): a generator seeded
	 * once per backend from the strong source instead of a strong-random read per commit.
	 */
	static pg_prng_state prng;
	static bool seeded = false;
	uint8		b[16];
	uint64		hi,
				lo;

	if (!seeded)
	{
		if (!pg_prng_strong_seed(&prng))
			push_internal_error("random");
		seeded = true;
	}
	hi = pg_prng_uint64(&prng);
	lo = pg_prng_uint64(&prng);
	for (int i = 0; i < 8; i++)
	{
		b[i] = (uint8) (hi >> (8 * i));
		b[8 + i] = (uint8) (lo >> (8 * i));
	}
	b[6] = (b[6] & 0x0f) | 0x40;
	b[8] = (b[8] & 0x3f) | 0x80;
	return psprintf("%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
					b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
					b[12], b[13], b[14], b[15]);
}

/* data-model-and-storage.md, sync_push_results: status, commitSeq, recordedAtMs,
 * cacheIdentity, results[]. */
char *
push_outcome_json(const CommitOutcome *o, int64 recorded_at_ms, const char *cache_identity)
{
	StringInfoData b;

	initStringInfo(&b);
	appendStringInfo(&b, "{\"status\": \"%s\"",
					 o->status == SSP_PUSH_REJECTED ? "rejected" : "applied");
	if (o->has_seq)
		appendStringInfo(&b, ", \"commitSeq\": " INT64_FORMAT, o->commit_seq);
	appendStringInfo(&b, ", \"recordedAtMs\": " INT64_FORMAT ", \"cacheIdentity\": ",
					 recorded_at_ms);
	escape_json(&b, cache_identity);
	appendStringInfoString(&b, ", \"results\": [");
	for (int i = 0; i < o->nrecords; i++)
	{
		const OpRecord *r = &o->records[i];

		if (i > 0)
			appendStringInfoString(&b, ", ");
		appendStringInfo(&b, "{\"opIndex\": %d, \"status\": \"%s\"", r->op_index,
						 r->status == SSP_RESULT_APPLIED ? "applied" :
						 r->status == SSP_RESULT_CONFLICT ? "conflict" : "error");
		if (r->status != SSP_RESULT_APPLIED)
		{
			appendStringInfoString(&b, ", \"code\": ");
			escape_json(&b, r->code);
			appendStringInfoString(&b, ", \"message\": ");
			escape_json(&b, r->message);
		}
		if (r->status == SSP_RESULT_CONFLICT)
		{
			appendStringInfo(&b, ", \"serverVersion\": " INT64_FORMAT ", \"serverRow\": ",
							 r->server_version);
			append_b64(&b, r->server_row, r->server_row_len);
			appendStringInfoString(&b, ", \"conflictColumns\": ");
			append_b64(&b, r->conflict_cols, r->conflict_len);
		}
		if (r->status == SSP_RESULT_ERROR)
		{
			appendStringInfo(&b, ", \"retryable\": %s", r->retryable ? "true" : "false");
			if (r->details_json)
				appendStringInfo(&b, ", \"details\": %s", r->details_json);
		}
		appendStringInfoChar(&b, '}');
	}
	appendStringInfoString(&b, "]}");
	return b.data;
}

/*
 * jsonb_in(push_outcome_json(o, recorded_at_ms, cache_identity)) built without the text and its
 * parse, for an outcome whose records are all applied (an applied commit's: what its log row
 * stores); NULL for any other outcome (the caller parses the text).  The same values reach
 * pushJsonbValue as from the parser, so the value is the parser's, byte for byte.
 */
Jsonb *
push_outcome_jsonb(const CommitOutcome *o, int64 recorded_at_ms, const char *cache_identity)
{
	JsonbParseState *ps = NULL;
	JsonbValue *res;
	const char *status = o->status == SSP_PUSH_REJECTED ? "rejected" : "applied";

	for (int i = 0; i < o->nrecords; i++)
		if (o->records[i].status != SSP_RESULT_APPLIED)
			return NULL;
	pushJsonbValue(&ps, WJB_BEGIN_OBJECT, NULL);
	sync_push_key(&ps, "status");
	sync_push_string(&ps, WJB_VALUE, status);
	if (o->has_seq)
	{
		sync_push_key(&ps, "commitSeq");
		sync_push_int(&ps, WJB_VALUE, o->commit_seq);
	}
	sync_push_key(&ps, "recordedAtMs");
	sync_push_int(&ps, WJB_VALUE, recorded_at_ms);
	sync_push_key(&ps, "cacheIdentity");
	sync_push_string(&ps, WJB_VALUE, cache_identity);
	sync_push_key(&ps, "results");
	pushJsonbValue(&ps, WJB_BEGIN_ARRAY, NULL);
	for (int i = 0; i < o->nrecords; i++)
	{
		pushJsonbValue(&ps, WJB_BEGIN_OBJECT, NULL);
		sync_push_key(&ps, "opIndex");
		sync_push_int(&ps, WJB_VALUE, o->records[i].op_index);
		sync_push_key(&ps, "status");
		sync_push_string(&ps, WJB_VALUE, "applied");
		pushJsonbValue(&ps, WJB_END_OBJECT, NULL);
	}
	pushJsonbValue(&ps, WJB_END_ARRAY, NULL);
	res = pushJsonbValue(&ps, WJB_END_OBJECT, NULL);
	return JsonbValueToJsonb(res);
}

static bool
jget(JsonbContainer *c, const char *key, JsonbValue *v)
{
	return getKeyJsonValueFromContainer(c, key, strlen(key), v) != NULL;
}

static bool
jget_str(JsonbContainer *c, const char *key, char **out)
{
	JsonbValue	v;

	if (!jget(c, key, &v) || v.type != jbvString)
		return false;
	*out = pnstrdup(v.val.string.val, v.val.string.len);
	return true;
}

static bool
jget_int(JsonbContainer *c, const char *key, int64 *out)
{
	JsonbValue	v;
	char	   *s;
	char	   *end;

	if (!jget(c, key, &v) || v.type != jbvNumeric)
		return false;
	s = DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(v.val.numeric)));
	errno = 0;
	*out = strtoll(s, &end, 10);
	return errno == 0 && *end == '\0';
}

static bool
jget_b64(JsonbContainer *c, const char *key, uint8 **out, uint32 *len)
{
	char	   *s;
	int			dlen;
	int			n;

	if (!jget_str(c, key, &s))
		return false;
	dlen = pg_b64_dec_len(strlen(s));
	*out = palloc(Max(dlen, 1));
	n = pg_b64_decode(s, strlen(s), (char *) *out, dlen);
	if (n < 0)
		return false;
	*len = (uint32) n;
	return true;
}

/* Parse a stored result; false when unreadable.  *identity gets its cacheIdentity. */
bool
push_outcome_from_json(Jsonb *j, CommitOutcome *o, char **identity)
{
	JsonbContainer *root;
	JsonbValue	v;
	char	   *status;
	JsonbContainer *arr;
	int			n;

	memset(o, 0, sizeof(*o));
	*identity = NULL;
	if (j == NULL || !JB_ROOT_IS_OBJECT(j))
		return false;
	root = &j->root;
	if (!jget_str(root, "status", &status))
		return false;
	(void) jget_str(root, "cacheIdentity", identity);
	if (strcmp(status, "applied") == 0)
	{
		o->status = SSP_PUSH_CACHED;
		o->has_seq = true;
		if (!jget_int(root, "commitSeq", &o->commit_seq) || o->commit_seq < 1)
			return false;
	}
	else if (strcmp(status, "rejected") == 0)
		o->status = SSP_PUSH_REJECTED;
	else
		return false;
	if (!jget(root, "results", &v) || v.type != jbvBinary || !JsonContainerIsArray(v.val.binary.data))
		return false;
	arr = v.val.binary.data;
	n = JsonContainerSize(arr);
	o->nrecords = n;
	o->records = palloc0(sizeof(OpRecord) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		JsonbValue *e = getIthJsonbValueFromContainer(arr, i);
		JsonbContainer *rc;
		OpRecord   *r = &o->records[i];
		char	   *rs;
		int64		idx;

		if (e == NULL || e->type != jbvBinary || !JsonContainerIsObject(e->val.binary.data))
			return false;
		rc = e->val.binary.data;
		if (!jget_int(rc, "opIndex", &idx) || idx < 0 || idx > PG_INT32_MAX ||
			!jget_str(rc, "status", &rs))
			return false;
		r->op_index = (int32) idx;
		if (strcmp(rs, "applied") == 0)
		{
			r->status = SSP_RESULT_APPLIED;
			continue;
		}
		if (!jget_str(rc, "code", &r->code) || !jget_str(rc, "message", &r->message))
			return false;
		if (strcmp(rs, "conflict") == 0)
		{
			r->status = SSP_RESULT_CONFLICT;
			if (!jget_int(rc, "serverVersion", &r->server_version) ||
				!jget_b64(rc, "serverRow", &r->server_row, &r->server_row_len))
				return false;
			if (!jget_b64(rc, "conflictColumns", &r->conflict_cols, &r->conflict_len))
			{
				r->conflict_cols = NULL;
				r->conflict_len = 0;
			}
		}
		else if (strcmp(rs, "error") == 0)
		{
			r->status = SSP_RESULT_ERROR;
			if (!jget(rc, "retryable", &v) || v.type != jbvBool)
				return false;
			r->retryable = v.val.boolean;
			if (jget(rc, "details", &v) && v.type == jbvBinary)
			{
				Jsonb	   *d = JsonbValueToJsonb(&v);
				char	   *text = JsonbToCString(NULL, &d->root, VARSIZE(d));

				/* normalized again, so a replay writes the same bytes as the first answer */
				r->details_json = normalize_details(text, strlen(text));
			}
		}
		else
			return false;
	}
	return true;
}

void
push_cache_miss(CommitOutcome *o)
{
	memset(o, 0, sizeof(*o));
	o->status = SSP_PUSH_REJECTED;
	o->nrecords = 1;
	o->records = palloc0(sizeof(OpRecord));
	push_set_error(&o->records[0], 0, "sync.idempotency_cache_miss",
			  "the stored push result is unreadable", true);
}

void
push_replay(Jsonb *stored, CommitOutcome *o)
{
	char	   *identity;

	if (!push_outcome_from_json(stored, o, &identity))
		push_cache_miss(o);
}

/* ---------------------------------------------------------------- output */

void
push_write_outcome(SyncRound *round, const SspPushCommit *commit, const CommitOutcome *o,
			  MemoryContext out_cxt)
{
	SspFrame	f;
	SspError	err;
	SspOpResult *res = palloc0(sizeof(SspOpResult) * Max(o->nrecords, 1));
	int			ndetails = 0;
	MemoryContext old;

	memset(&f, 0, sizeof(f));
	f.type = SSP_FRAME_PUSH_RESULT;
	f.push_result.client_commit_id = commit->client_commit_id;
	f.push_result.status = o->status;
	f.push_result.has_commit_seq = o->has_seq;
	f.push_result.commit_seq = o->commit_seq;
	f.push_result.nresults = (uint32) o->nrecords;
	f.push_result.results = res;
	sync_stats_push_result(commit, o->status);
	for (int i = 0; i < o->nrecords; i++)
	{
		const OpRecord *r = &o->records[i];

		res[i].op_index = r->op_index;
		res[i].status = r->status;
		if (r->status == SSP_RESULT_APPLIED)
			continue;
		sync_stats_push_failure(commit, r->op_index, r->status, r->code);
		res[i].code.ptr = r->code;
		/* the wire-2 catalogue has no declared references: their FK-like rejection is the
		 * constraint code it lists for unique/FK/not-null failures (SPEC v2 §10.2) */
		if (round->wire_version < 3 && strcmp(r->code, "sync.reference_violation") == 0)
			res[i].code.ptr = "sync.constraint_violation";
		res[i].code.len = strlen(res[i].code.ptr);
		res[i].message.ptr = r->message;
		res[i].message.len = strlen(r->message);
		if (r->status == SSP_RESULT_CONFLICT)
		{
			res[i].server_version = r->server_version;
			res[i].server_row.ptr = r->server_row;
			res[i].server_row.len = r->server_row_len;
			if (round->wire_version >= 3)
			{
				res[i].conflict_columns.ptr = r->conflict_cols;
				res[i].conflict_columns.len = r->conflict_len;
			}
		}
		else
		{
			res[i].retryable = r->retryable;
			if (r->details_json)
				ndetails++;
		}
	}
	old = MemoryContextSwitchTo(out_cxt);
	if (!ssp_write_frame(round->out, round->wire_version, &f, &err))
		sync_raise("sync.internal_error", "could not encode a push result",
				   psprintf("{\"reason\": \"%s\"}", err.code));
	MemoryContextSwitchTo(old);

	if (ndetails > 0 && o->status == SSP_PUSH_REJECTED)
	{
		SspFrame	d;
		SspDetailsEntry *e = palloc0(sizeof(SspDetailsEntry) * ndetails);
		int			k = 0;

		memset(&d, 0, sizeof(d));
		d.type = SSP_FRAME_PUSH_RESULT_DETAILS;
		d.push_result_details.client_commit_id = commit->client_commit_id;
		for (int i = 0; i < o->nrecords; i++)
		{
			const OpRecord *r = &o->records[i];

			if (r->status != SSP_RESULT_ERROR || r->details_json == NULL)
				continue;
			e[k].op_index = r->op_index;
			e[k].details_json.ptr = r->details_json;
			e[k].details_json.len = strlen(r->details_json);
			k++;
		}
		d.push_result_details.nentries = (uint32) k;
		d.push_result_details.entries = e;
		old = MemoryContextSwitchTo(out_cxt);
		if (!ssp_write_frame(round->out, round->wire_version, &d, &err))
			sync_raise("sync.internal_error", "could not encode push result details",
					   psprintf("{\"reason\": \"%s\"}", err.code));
		MemoryContextSwitchTo(old);
	}
}
