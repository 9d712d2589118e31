/*
 * round.c — one SSP2 round: decode → touch partition → plan (push-and-pull.md §3.3) → pushes →
 * pulls in one snapshot → client record → END.
 *
 * Request-level failures and decode errors are raised with sync_raise (catalogue SQLSTATE,
 * DETAIL {"code","details"}); handle_http turns them into HTTP answers.  Protocol outcomes
 * (schema floor, epoch reset, rejections, revocations) are encoded in the response.
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "engine.h"
#include "leases.h"
#include "stats.h"
#include "storage.h"

#define RESERVED_CLIENT_PREFIX "[\"remote-command\","

static bool
has_nul(const SspStr *s)
{
	return memchr(s->ptr, '\0', s->len) != NULL;
}

static bool
str_eq(const SspStr *s, const char *c)
{
	return s->len == strlen(c) && memcmp(s->ptr, c, s->len) == 0;
}

static void
codec_raise(const SspError *err, const char *what)
{
	if (err->code == NULL || strcmp(err->code, SSP_ERR_INTERNAL) == 0)
		sync_raise("sync.internal_error", "internal error while encoding the response",
				   psprintf("{\"stage\": \"%s\"}", what));
	sync_raise(err->code, err->message, NULL);
}

static void
write_frame(SyncRound *round, const SspFrame *f)
{
	SspError	err;

	if (!ssp_write_frame(round->out, round->wire_version, f, &err))
		codec_raise(&err, "frame");
}

static void
write_resp_header(SyncRound *round, bool floor, bool reset)
{
	SspFrame	f;

	memset(&f, 0, sizeof(f));
	f.type = SSP_FRAME_RESP_HEADER;
	f.resp_header.has_required_schema_version = floor;
	f.resp_header.required_schema_version = round->schema->version;
	f.resp_header.has_latest_schema_version = true;
	f.resp_header.latest_schema_version = round->schema->version;
	f.resp_header.log_epoch.ptr = round->log_epoch;
	f.resp_header.log_epoch.len = strlen(round->log_epoch);
	f.resp_header.reset_required = reset;
	write_frame(round, &f);
}

static int32
clamp(int32 v, int32 lo, int32 hi, int32 zero)
{
	if (v == 0)
		return zero;
	if (v < lo)
		return lo;
	if (v > hi)
		return hi;
	return v;
}

/* The requested registration list stored in sync_clients.subscriptions. */
static char *
subscriptions_json(const SspFrame **subs, int nsubs)
{
	StringInfoData b;

	initStringInfo(&b);
	appendStringInfoChar(&b, '[');
	for (int i = 0; i < nsubs; i++)
	{
		const SspSubscription *s = &subs[i]->subscription;

		if (i > 0)
			appendStringInfoString(&b, ", ");
		appendStringInfoString(&b, "{\"id\": ");
		escape_json(&b, s->id.ptr);
		appendStringInfoString(&b, ", \"table\": ");
		escape_json(&b, s->table.ptr);
		appendStringInfoString(&b, ", \"scopes\": {");
		for (uint32 k = 0; k < s->scopes.n; k++)
		{
			const SspScopeEntry *e = &s->scopes.entries[k];

			if (k > 0)
				appendStringInfoString(&b, ", ");
			escape_json(&b, e->key.ptr);
			appendStringInfoString(&b, ": [");
			for (uint32 j = 0; j < e->nvalues; j++)
			{
				if (j > 0)
					appendStringInfoString(&b, ", ");
				escape_json(&b, e->values[j].ptr);
			}
			appendStringInfoChar(&b, ']');
		}
		appendStringInfoString(&b, "}}");
	}
	appendStringInfoChar(&b, ']');
	return b.data;
}

/* Request-level subscription validation (§3.3 step 8). */
static void
validate_subscriptions(SyncSchema *schema, const SspFrame **subs, int nsubs)
{
	for (int i = 0; i < nsubs; i++)
	{
		const SspSubscription *s = &subs[i]->subscription;
		const SyncTable *t;

		if (has_nul(&s->id))
			sync_raise("sync.invalid_subscription", "subscription ids must not contain U+0000",
					   NULL);
		for (int j = 0; j < i; j++)
		{
			const SspSubscription *o = &subs[j]->subscription;

			if (o->id.len == s->id.len && memcmp(o->id.ptr, s->id.ptr, s->id.len) == 0)
				sync_raise("sync.invalid_subscription", "duplicate subscription id", NULL);
		}
		t = has_nul(&s->table) ? NULL : sync_schema_table(schema, s->table.ptr);
		if (t == NULL)
			sync_raise("sync.unknown_table", "a subscription names a table that is not served",
					   sync_json_member("table", has_nul(&s->table) ? "" : s->table.ptr));
		for (uint32 k = 0; k < s->scopes.n; k++)
		{
			const SspScopeEntry *e = &s->scopes.entries[k];
			bool		declared = false;

			for (int d = 0; d < t->nscopes && !has_nul(&e->key); d++)
				if (str_eq(&e->key, t->scopes[d].variable))
					declared = true;
			if (!declared)
				sync_raise("sync.invalid_subscription",
						   "a subscription requests a scope variable its table does not declare",
						   NULL);
			for (uint32 j = 0; j < e->nvalues; j++)
			{
				if (str_eq(&e->values[j], "*"))
					sync_raise("sync.invalid_subscription",
							   "a subscription may not request the '*' scope value", NULL);
				if (has_nul(&e->values[j]))
					sync_raise("sync.invalid_subscription",
							   "scope values must not contain U+0000", NULL);
			}
		}
	}
}

/*
 * The client record at the end of the round (push-and-pull.md §1.3).  The binding was claimed at
 * the start; only a rotate_log_epoch that deleted the record mid-round (the procedure form
 * commits between pushes) lets another actor claim it meanwhile: refuse then, never rebind.
 */
static void
client_record(SyncRound *round, int64 cursor, const char *subscriptions)
{
	if (!sync_storage_client_upsert(round->partition, round->client_id, round->actor_id,
									round->wire_version, cursor, subscriptions, sync_now_ms()))
		sync_raise("sync.invalid_client_id", "the clientId is bound to another actor", NULL);
}

/*
 * A push-only round would rewrite its client record with the same binding, cursor and
 * subscriptions: only wire_version and updated_at_ms could change.  Skip that write when they
 * are current (same wire version, updated within SYNC_TOUCH_INTERVAL_MS), as long as the round
 * runs in one transaction: the record claimed at the start is then still there (a
 * rotate_log_epoch that deletes it takes the partition lock first, and a push that got the lock
 * after it is refused by the gate).  The procedure form commits between pushes and always writes.
 */
static bool
client_record_current(const SyncRound *round, const SyncClientRecord *client)
{
	return !round->nonatomic && client->actor_id != NULL &&
		client->wire_version == (int32) round->wire_version &&
		client->updated_at_ms >= round->now_ms - SYNC_TOUCH_INTERVAL_MS;
}

/*
 * A pull round's record is the same as the stored one (cursor, subscriptions, wire version,
 * written within SYNC_TOUCH_INTERVAL_MS; see client_record_current): nothing to write, so a
 * client polling without news does not commit a write.
 */
static bool
pull_record_current(const SyncRound *round, const SyncClientRecord *client, int64 cursor,
					const char *subscriptions)
{
	Jsonb	   *subs;

	if (!client_record_current(round, client) || client->cursor != cursor ||
		client->subscriptions == NULL)
		return false;
	subs = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(subscriptions)));
	return compareJsonbContainers(&subs->root, &client->subscriptions->root) == 0;
}

/*
 * syncular.max_request_bytes: checked on the byte count alone, before anything is decoded
 * (and by the SQL entry points before the argument is copied).
 */
void
sync_check_request_bytes(Size request_bytes)
{
	if (request_bytes > (Size) sync_max_request_bytes)
		sync_raise("sync.invalid_request", "the request is larger than the server accepts",
				   psprintf("{\"maxRequestBytes\": %d, \"requestBytes\": " UINT64_FORMAT "}",
							sync_max_request_bytes, (uint64) request_bytes));
}

/* An identifier that becomes part of a btree key (SYNC_MAX_ID_BYTES). */
static void
check_id_bytes(const char *what, size_t len)
{
	if (len > SYNC_MAX_ID_BYTES)
		sync_raise("sync.invalid_request", psprintf("%s is too long", what),
				   psprintf("{\"field\": \"%s\", \"maxBytes\": %d, \"bytes\": %zu}",
							what, SYNC_MAX_ID_BYTES, len));
}

/* ---------------------------------------------------------------- one round, step by step */

/* What the steps of one round share besides the SyncRound (all in the round's context). */
typedef struct RoundWork
{
	SyncRound  *round;
	SspMessage	msg;
	const SspReqHeader *hdr;
	const SspPullHeader *pull;
	const SspFrame **commits;	/* the PUSH_COMMIT frames, in request order */
	const SspFrame **subs;		/* the SUBSCRIPTION frames, in request order */
	int			ncommits;
	int			nsubs;
	int64		total_ops;
	bool		can_write;		/* false on a hot standby */
	bool		known_client;	/* the client record existed at the start */
	SyncClientRecord client;
	int64		touched_ms;		/* the registry row's last touch */
	SyncEffective **effective;	/* per subscription */
} RoundWork;

/* The request's frames by kind; unknown ones are skipped (wire-format.md, unknown frame types). */
static void
sort_frames(RoundWork *w)
{
	w->commits = palloc0(sizeof(SspFrame *) * Max(w->msg.nframes, 1));
	w->subs = palloc0(sizeof(SspFrame *) * Max(w->msg.nframes, 1));
	for (uint32 i = 0; i < w->msg.nframes; i++)
	{
		const SspFrame *f = &w->msg.frames[i];

		if (f->unknown)
			continue;
		switch (f->type)
		{
			case SSP_FRAME_REQ_HEADER:
				w->hdr = &f->req_header;
				break;
			case SSP_FRAME_PUSH_COMMIT:
				w->commits[w->ncommits++] = f;
				w->total_ops += f->push_commit.nops;
				break;
			case SSP_FRAME_PULL_HEADER:
				w->pull = &f->pull_header;
				break;
			case SSP_FRAME_SUBSCRIPTION:
				w->subs[w->nsubs++] = f;
				break;
			default:
				break;
		}
	}
}

/*
 * 1. Decode (DESIGN "Data flow of a round"): the arguments and the request's size, the message
 * (a request of wire version 2 or 3), its frames sorted into pushes and subscriptions, a
 * REQ_HEADER, the subscription limit; a hot standby refuses a round that pushes.
 */
static void
round_decode(RoundWork *w, bytea *request, const char *partition, const char *actor_id)
{
	SspError	err;

	if (partition[0] == '\0' || actor_id[0] == '\0')
		sync_raise("sync.invalid_request", "partition and actor_id must be non-empty", NULL);
	sync_check_request_bytes(VARSIZE_ANY_EXHDR(request));
	check_id_bytes("partition", strlen(partition));
	if (!ssp_decode_message((const uint8 *) VARDATA_ANY(request), VARSIZE_ANY_EXHDR(request),
							&w->msg, &err))
	{
		if (err.code == NULL || strcmp(err.code, SSP_ERR_INTERNAL) == 0)
			sync_raise("sync.internal_error", "internal error while decoding the request", NULL);
		sync_raise(err.code, err.message, NULL);
	}
	if (w->msg.kind != SSP_KIND_REQUEST)
		sync_raise("sync.invalid_request", "a response message was sent as a request", NULL);
	if (w->msg.wire_version < 2)
		sync_raise("sync.invalid_request", "unsupported wire version",
				   psprintf("{\"wireVersion\": %u}", (unsigned) w->msg.wire_version));
	sort_frames(w);
	if (w->hdr == NULL)
		sync_raise("sync.invalid_request", "the request has no REQ_HEADER", NULL);
	if (w->nsubs > sync_max_subscriptions_per_request)
		sync_raise("sync.invalid_request", "the request carries too many subscriptions",
				   psprintf("{\"maxSubscriptions\": %d, \"subscriptions\": %d}",
							sync_max_subscriptions_per_request, w->nsubs));

	/*
	 * A hot standby serves pull-only rounds (DESIGN.md "Scale"); a round that pushes cannot be
	 * served here and is refused before anything is read, as retryable: the gateway sends it to
	 * the primary.
	 */
	if (!w->can_write && w->ncommits > 0)
		sync_raise("sync.schema_not_ready", "server schema is not ready for this request",
				   "{\"hotStandby\": true}");
}

/*
 * 2-4. Gate: the compiled schema, the round's SPI connection, the partition touched (its
 * registry row and log epoch), the entry gate (RFC 0007), and the response begun.
 */
static void
round_gate(RoundWork *w, const char *partition, const char *actor_id, bool nonatomic)
{
	MemoryContext cxt = CurrentMemoryContext;
	SyncRound  *round = palloc0(sizeof(SyncRound));
	SspError	err;

	w->round = round;
	round->schema = sync_schema_get();
	if (round->schema == NULL)
		sync_raise_no_schema();
	round->partition = partition;
	round->actor_id = actor_id;
	round->wire_version = w->msg.wire_version;
	round->request = &w->msg;
	round->now_ms = sync_now_ms();
	round->nonatomic = nonatomic;
	round->has_pull = (w->pull != NULL);

	if (SPI_connect_ext(nonatomic ? SPI_OPT_NONATOMIC : 0) != SPI_OK_CONNECT)
		elog(ERROR, "syncular: SPI_connect failed");
	/* SPI_connect made its procedure context current (SPI_finish frees it): back to ours */
	MemoryContextSwitchTo(cxt);

	/* touchPartition: the registry row (created with a random epoch on first sight) */
	round->log_epoch = sync_storage_partition_epoch(partition, round->now_ms, w->can_write,
													&w->touched_ms);
	if (round->log_epoch == NULL)
		sync_raise("sync.internal_error", "the partition is not registered on this server",
				   NULL);
	/* the entry gate (RFC 0007): before any planning */
	sync_gate_check_entry(round);

	/* the response buffer lives in the round context (it survives the procedure's commits) */
	round->out = palloc0(sizeof(SspBuf));
	ssp_buf_init(round->out);
	if (!ssp_buf_append(round->out, "", 1))
		elog(ERROR, "syncular: out of memory");
	ssp_buf_reset(round->out);
	if (!ssp_write_message_header(round->out, w->msg.wire_version, SSP_KIND_RESPONSE, &err))
		codec_raise(&err, "header");
}

/*
 * 5a. The epoch and floor checks (push-and-pull.md §3.3, in the reference order): a schema
 * version other than the server's (the floor, which wins) or a log epoch other than the
 * partition's (a reset) is answered by a header-only successful response.  true when answered.
 */
static bool
round_header_only(RoundWork *w)
{
	SyncRound  *round = w->round;
	bool		floor;
	bool		reset;

	if (!w->hdr->has_log_epoch && w->ncommits > 0)
		sync_raise("sync.invalid_request", "a request without logEpoch must not carry pushes",
				   NULL);
	reset = !w->hdr->has_log_epoch || !str_eq(&w->hdr->log_epoch, round->log_epoch);
	floor = w->hdr->schema_version != round->schema->version;
	if (floor || reset)
		write_resp_header(round, floor, reset);
	return floor || reset;
}

/*
 * 5b. The client check: the clientId is bound to the actor before anything is written
 * (push-and-pull.md §1.3, §3.3 step 5.5): a concurrent first round of the same clientId by
 * another actor waits for this one and is then refused.  A hot standby cannot write: it only
 * reads the binding.
 */
static void
round_client(RoundWork *w)
{
	SyncRound  *round = w->round;

	if (has_nul(&w->hdr->client_id))
		sync_raise("sync.invalid_request", "clientId must not contain U+0000", NULL);
	check_id_bytes("clientId", w->hdr->client_id.len);
	round->client_id = pnstrdup(w->hdr->client_id.ptr, w->hdr->client_id.len);
	if (strncmp(round->client_id, RESERVED_CLIENT_PREFIX, strlen(RESERVED_CLIENT_PREFIX)) == 0)
		sync_raise("sync.invalid_client_id", "this clientId namespace is reserved", NULL);
	if (w->can_write)
		w->known_client = sync_storage_client_claim(round->partition, round->client_id,
													round->actor_id, round->wire_version,
													round->now_ms, &w->client);
	else
		w->known_client = sync_storage_client_get(round->partition, round->client_id, &w->client);
	if (w->known_client && strcmp(w->client.actor_id, round->actor_id) != 0)
		sync_raise("sync.invalid_client_id", "the clientId is bound to another actor", NULL);
}

/*
 * 5c. The request's limits and subscriptions (§3.3 steps 6-8), then the actor's scopes resolved
 * once and each subscription's effective scopes.
 */
static void
round_plan(RoundWork *w)
{
	SyncRound  *round = w->round;

	if (w->total_ops > sync_max_operations_per_request)
		sync_raise("sync.too_many_operations", "the request carries too many operations",
				   psprintf("{\"maxOperations\": %d, \"operations\": " INT64_FORMAT "}",
							sync_max_operations_per_request, w->total_ops));
	if (w->pull != NULL &&
		(w->pull->accept & (SSP_ACCEPT_INLINE_ROWS | SSP_ACCEPT_EXTERNAL_ROWS)) == 0)
		sync_raise("sync.invalid_request",
				   "PULL_HEADER.accept must allow inline or external rows segments", NULL);
	for (int i = 0; i < w->ncommits; i++)
	{
		if (has_nul(&w->commits[i]->push_commit.client_commit_id))
			sync_raise("sync.invalid_request", "clientCommitId must not contain U+0000", NULL);
		/* the idempotency key: a longer one could not be stored, not even as a rejection */
		check_id_bytes("clientCommitId", w->commits[i]->push_commit.client_commit_id.len);
	}
	validate_subscriptions(round->schema, w->subs, w->nsubs);
	sync_scopes_resolve(round);
	w->effective = palloc0(sizeof(SyncEffective *) * Max(w->nsubs, 1));
	for (int i = 0; i < w->nsubs; i++)
		w->effective[i] = sync_scopes_effective(round->allowed,
												sync_schema_table(round->schema,
																  w->subs[i]->subscription.table.ptr),
												&w->subs[i]->subscription.scopes);
}

/*
 * 6a. Pushes: each commit (push.c) writes its PUSH_RESULT; the procedure form commits each one
 * on its own.
 */
static void
round_pushes(RoundWork *w)
{
	sync_stats_phase(SYNC_STATS_PHASE_PUSH);
	for (int i = 0; i < w->ncommits; i++)
	{
		sync_push_commit(w->round, &w->commits[i]->push_commit);
		if (w->round->nonatomic)
			SPI_commit();
	}
}

/*
 * 6b. Pulls, in ONE snapshot after the pushes: the pull gate, maxSeq and the horizon, then each
 * subscription in request order (pull.c).  The new cursor: the lowest of the active sections'
 * (the stored one when none is active).
 */
static int64
round_pulls(RoundWork *w)
{
	SyncRound  *round = w->round;
	int64		cursor = -1;
	bool		any_active = false;

	sync_stats_phase(SYNC_STATS_PHASE_PULL);
	round->accept = w->pull->accept;
	round->limit_commits = clamp(w->pull->limit_commits, 1, 1000, 1000);
	round->limit_snapshot_rows = clamp(w->pull->limit_snapshot_rows, 1, 50000, 1000);
	round->max_snapshot_pages = clamp(w->pull->max_snapshot_pages, 1, 50, 4);

	CommandCounterIncrement();
	PushActiveSnapshot(GetTransactionSnapshot());
	/* the serve gate in this same snapshot, before any subscription is served (RFC 0007) */
	sync_gate_check_pull(round);
	sync_storage_read_seqs(round->partition, &round->max_seq, &round->horizon_seq);
	for (int i = 0; i < w->nsubs; i++)
	{
		SyncPullResult res;

		memset(&res, 0, sizeof(res));
		CHECK_FOR_INTERRUPTS();
		sync_pull_subscription(round, w->subs[i], w->effective[i], &res);
		if (res.active)
		{
			if (!any_active || res.next_cursor < cursor)
				cursor = res.next_cursor;
			any_active = true;
		}
	}
	PopActiveSnapshot();
	if (!any_active)
		cursor = w->known_client ? w->client.cursor : -1;
	return cursor;
}

/* 6. Stream: RESP_HEADER, the auth lease (§7.3.2), push results, sections, the client record. */
static void
round_stream(RoundWork *w)
{
	SyncRound  *round = w->round;

	write_resp_header(round, false, false);
	sync_leases_round(round);
	round_pushes(w);
	if (w->pull != NULL)
	{
		int64		cursor = round_pulls(w);

		if (w->can_write)
		{
			char	   *subs_json = subscriptions_json(w->subs, w->nsubs);

			if (!w->known_client || !pull_record_current(round, &w->client, cursor, subs_json))
				client_record(round, cursor, subs_json);
		}
	}
	else if (w->can_write && !client_record_current(round, &w->client))
		client_record(round, w->known_client ? w->client.cursor : -1, NULL);
}

/*
 * Encode the end: the registry touched at most every SYNC_TOUCH_INTERVAL_MS, END, the round's
 * SPI connection finished.  The response, in the round's context.
 */
static SspBuf *
round_end(RoundWork *w)
{
	SyncRound  *round = w->round;
	SspError	err;

	if (w->can_write && w->touched_ms < round->now_ms - SYNC_TOUCH_INTERVAL_MS)
		sync_storage_registry_touch(round->partition, round->now_ms);
	if (!ssp_write_end(round->out, &err))
		codec_raise(&err, "end");
	SPI_finish();
	if (round->out->len > MaxAllocSize - VARHDRSZ)
		sync_raise("sync.internal_error", "the response is too large", NULL);
	return round->out;
}

/*
 * Serve one round (DESIGN "Data flow of a round"): decode, gate, the epoch / floor / client
 * checks, pushes, pulls, encode.  `nonatomic`: the procedure form outside a transaction block;
 * every pushed commit is then committed on its own (the partition lock is released between
 * commits).  The response is palloc'd in the caller's context.
 */
bytea *
sync_round_serve(bytea *request, const char *partition, const char *actor_id, bool nonatomic)
{
	MemoryContext rcxt = AllocSetContextCreate(nonatomic ? PortalContext : CurrentMemoryContext,
											   "syncular round", ALLOCSET_DEFAULT_SIZES);
	MemoryContext caller = MemoryContextSwitchTo(rcxt);
	RoundWork  *w = palloc0(sizeof(RoundWork));
	SspBuf	   *out;
	bytea	   *result;

	w->can_write = !RecoveryInProgress();
	w->client.cursor = -1;
	round_decode(w, request, partition, actor_id);
	round_gate(w, partition, actor_id, nonatomic);
	if (!round_header_only(w))
	{
		round_client(w);
		round_plan(w);
		round_stream(w);
	}
	out = round_end(w);

	MemoryContextSwitchTo(caller);
	result = palloc(VARHDRSZ + out->len);
	SET_VARSIZE(result, VARHDRSZ + out->len);
	memcpy(VARDATA(result), out->data, out->len);
	MemoryContextDelete(rcxt);
	return result;
}
