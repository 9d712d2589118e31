/*
 * push.c — the per-commit push pipeline (push-and-pull.md §2.2–2.6).
 *
 * For one PUSH_COMMIT:
 *   1. take the partition lock and the next commit_seq (docs/storage.md "The partition lock":
 *      a heavyweight lock and the log's newest commit_seq; before 0.7.0 an update of the
 *      partition's sync_partitions row), in the enclosing transaction so the lock outlives the
 *      commit's subtransaction; a commit that is not applied takes no number;
 *   2. serve-gate seam (sync_gate_check_push);
 *   3. locked idempotency check: a stored result replays (applied -> cached, rejected stays
 *      rejected; an unreadable one -> sync.idempotency_cache_miss, not persisted);
 *   4. in a subtransaction: every operation in order (§2.3 with this project's decisions; the
 *      row validator runs before each row write, hooks.c), then declared-reference enforcement
 *      (references.c; it may append cascade / SET NULL operations through the SyncRowWriter
 *      passed to it) and the whole-commit validator (hooks.c); the first non-applied outcome
 *      terminates the commit;
 *   5. applied: take the reserved commit_seq, append sync_commits + sync_changes (+ scope index,
 *      tombstones) and the applied result (storage.c, one statement for a commit of one
 *      upsert), the reaction planner + _enqueue_reactions (hooks.c; any error there is a
 *      server failure), the commit wake-up, release the subtransaction;
 *      rejected: roll the subtransaction back, store the rejection (first writer wins), re-read
 *      it and replay the winner when another delivery stored first;
 *   6. write PUSH_RESULT (+ PUSH_RESULT_DETAILS) into round->out.
 * A SQLSTATE class 23 error raised by a row write becomes a durable rejection
 * sync.constraint_violation at that opIndex (logged at LOG with a fixed text: the database
 * message names the constraint).  Sizes are checked before a row is written
 * (syncular.max_row_bytes, the key maxima of engine.h) and reject the commit durably with
 * sync.invalid_request; a 54000 (program_limit_exceeded) that still escapes a row write is
 * the same durable rejection.  Any other error rolls the commit back and raises
 * sync.internal_error (the original is logged, never returned).  Rejection details are stored
 * and sent in the codec's normalized form; details that break the PUSH_RESULT_DETAILS rules are
 * dropped.
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/resowner.h"

#include "push_internal.h"
#include "rules.h"
#include "wakeup.h"

/*
 * The serve gate (gate.c), the write rules (sync_validate_row, sync_enforce_references,
 * sync_validate_commit, sync_plan_reactions: hooks.c, references.c) and the CRDT mergers
 * (crdt.c) are called down into; reference enforcement appends operations through the row
 * writer (rules.h) this file passes it, push_apply.c's push_row_writer.
 */

/* ---------------------------------------------------------------- the steps of one commit */

static bool
is_own_error(const ErrorData *edata)
{
	return edata->detail != NULL && strncmp(edata->detail, "{\"code\": \"sync.", 15) == 0;
}

/*
 * Steps 1-3: lock the partition by reserving the next commit_seq (*seq), the push gate, the
 * locked idempotency check.  true when the outcome is already known (a stored result replayed,
 * or the cache miss), the number given back.
 */
static bool
push_known_outcome(PushState *st, int64 *seq, CommitOutcome *outcome)
{
	SyncRound  *round = st->round;
	Jsonb	   *stored;
	bool		fault;

	*seq = sync_storage_reserve_commit_seq(round->partition);
	sync_gate_check_push(round);
	/*
	 * The idempotency fault seam (syncular.inject_fault) is consumed by the same lookup: when
	 * armed, the lookup is unreadable, which §6.3 answers with the retryable
	 * sync.idempotency_cache_miss, nothing applied or persisted.
	 */
	stored = sync_storage_push_result_lookup(round->partition, round->client_id,
											 st->client_commit_id, &fault);
	if (!fault && stored == NULL)
		return false;
	sync_storage_unreserve_commit_seq(round->partition);
	if (fault)
		push_cache_miss(outcome);
	else
		push_replay(stored, outcome);
	return true;
}

/*
 * Step 4: every operation in order, the deferred row writes, then declared references
 * (references.c, appending through push_row_writer) and the whole-commit validator (hooks.c).
 * The opIndex the commit terminated at (st->reject filled), or -1 when every step passed.
 */
static int32
push_apply_commit(PushState *st)
{
	const SspPushCommit *commit = st->commit;
	int32		terminated_at = -1;
	SyncOpReject r = {0};

	push_prefetch_rows(st);
	st->batching = true;
	for (uint32 i = 0; i < commit->nops; i++)
	{
		CHECK_FOR_INTERRUPTS();
		if (!push_apply_op(st, (int32) i, &commit->ops[i]))
		{
			terminated_at = (int32) i;
			break;
		}
	}
	/*
	 * the deferred row writes (push_rows.c), before the rejection stands (an earlier
	 * operation's write may fail first) and before references and hooks read the tables
	 */
	push_rows_flush(st);
	st->batching = false;
	if (terminated_at >= 0)
		return terminated_at;
	if (sync_enforce_references(st->round, &st->cs, &push_row_writer, &r) &&
		sync_validate_commit(st->round, &st->cs, &r))
		return -1;
	push_set_reject(&st->reject, r.op_index, &r);
	return r.op_index;
}

/*
 * The commit, its changes (scope index entries, tombstones) and its applied result, as text
 * (`json`) or as `jsonb` (the other NULL) (storage_append.c: without statements where it can).
 */
static void
push_log_append(PushState *st, int64 seq, int64 now, char *json, Jsonb *jsonb)
{
	SyncRound  *round = st->round;
	SyncCommitRow c;
	SyncChangeRow *rows = palloc(sizeof(SyncChangeRow) * Max(st->nchanges, 1));

	c.partition = round->partition;
	c.commit_seq = seq;
	c.client_id = round->client_id;
	c.client_commit_id = st->client_commit_id;
	c.actor_id = round->actor_id;
	c.created_at_ms = now;
	c.writer_version = (int64) round->schema->version;
	c.result_json = json;
	c.result = jsonb;
	for (int k = 0; k < st->nchanges; k++)
	{
		PendingChange *pc = &st->changes[k];

		rows[k].table = pc->table;
		rows[k].row_id = pc->row_id;
		rows[k].op = pc->op;
		rows[k].has_version = pc->has_version;
		rows[k].row_version = pc->version;
		rows[k].scopes_json = pc->scopes_json;
		rows[k].payload = pc->payload;
		rows[k].payload_len = pc->payload_len;
	}
	sync_storage_commit_append(&c, st->nchanges, rows);
	pfree(rows);
}

/*
 * Step 5, applied: the reserved commit_seq taken, the applied outcome, the log appended with
 * the result (final here: the planner below may only fail the round), the reaction planner
 * (it sees every row of the commit and enqueues in this transaction), the commit wake-up.
 */
static void
push_applied(PushState *st, int64 seq, CommitOutcome *outcome)
{
	const SspPushCommit *commit = st->commit;
	int64		now = sync_now_ms();
	char	   *identity;
	Jsonb	   *result;

	st->cs.created_at_ms = now;
	outcome->status = SSP_PUSH_APPLIED;
	outcome->has_seq = true;
	outcome->commit_seq = seq;
	outcome->nrecords = (int) commit->nops;
	outcome->records = palloc0(sizeof(OpRecord) * Max(commit->nops, 1));
	for (uint32 i = 0; i < commit->nops; i++)
	{
		outcome->records[i].op_index = (int32) i;
		outcome->records[i].status = SSP_RESULT_APPLIED;
	}
	identity = push_new_cache_identity();
	/*
	 * the result as jsonb, which the log's direct append stores as it is (storage makes the
	 * text only where a statement needs it); as text for an outcome push_outcome_jsonb does
	 * not build
	 */
	result = push_outcome_jsonb(outcome, now, identity);
	push_log_append(st, seq, now, result ? NULL : push_outcome_json(outcome, now, identity), result);
	st->planning = true;
	sync_plan_reactions(st->round, &st->cs, seq);
	st->planning = false;
	sync_wakeup_commit(st->round->partition, seq);
}

/*
 * An error raised while the commit was applied, its subtransaction already rolled back: from a
 * row write, a class 23 error is the durable rejection sync.constraint_violation at that
 * opIndex and a 54000 (a size limit of the write) a durable sync.invalid_request; both return
 * true with st->reject filled.  Cancel, shutdown and the engine's own errors (outside the
 * planner) are re-thrown; anything else is logged and raised as sync.internal_error.
 */
static bool
push_failure_rejects(PushState *st, ErrorData *edata)
{
	int32		writing = st->writing_op;

	if (writing >= 0 && ERRCODE_TO_CATEGORY(edata->sqlerrcode) ==
		ERRCODE_INTEGRITY_CONSTRAINT_VIOLATION)
	{
		/* fixed text: the database message names the constraint / index, never shown */
		ereport(LOG,
				(errmsg("syncular: commit \"%s\" rejected at opIndex %d: write violates a relational constraint (SQLSTATE %s)",
						st->client_commit_id, writing, unpack_sql_state(edata->sqlerrcode))));
		push_set_error(&st->reject, writing, "sync.constraint_violation",
					   "write violates a relational constraint", false);
		FreeErrorData(edata);
		return true;
	}
	if (writing >= 0 && edata->sqlerrcode == ERRCODE_PROGRAM_LIMIT_EXCEEDED)
	{
		/*
		 * A size limit of the row write (an index entry past the btree maximum, a value past a
		 * type's limit): the same data fails the same way on every retry, so it is a durable
		 * rejection of this commit, not a round failure.
		 */
		ereport(LOG,
				(errmsg("syncular: commit \"%s\" rejected at opIndex %d: the row exceeds a storage limit: %s",
						st->client_commit_id, writing, edata->message)));
		push_set_error(&st->reject, writing, "sync.invalid_request",
					   "the row exceeds a storage limit", false);
		st->reject.details_json = pstrdup("{\"reason\":\"value_too_large\"}");
		FreeErrorData(edata);
		return true;
	}
	if (edata->sqlerrcode == ERRCODE_QUERY_CANCELED ||
		edata->sqlerrcode == ERRCODE_ADMIN_SHUTDOWN ||
		(is_own_error(edata) && !st->planning))
		ReThrowError(edata);
	ereport(LOG,
			(errmsg("syncular: %s of commit \"%s\" failed: %s",
					st->planning ? "reaction planning" : "push",
					st->client_commit_id, edata->message),
			 edata->detail ? errdetail_internal("%s", edata->detail) : 0,
			 errcode(edata->sqlerrcode)));
	sync_raise("sync.internal_error", "internal error while applying a push", NULL);
	return false;				/* not reached */
}

/*
 * Step 5, rejected: the number given back, the rejection stored (first writer wins), then the
 * stored winner re-read: another delivery's result is replayed instead.
 */
static void
push_rejected(PushState *st, CommitOutcome *outcome)
{
	SyncRound  *round = st->round;
	char	   *identity = push_new_cache_identity();
	Jsonb	   *canonical;
	char	   *canonical_identity;
	CommitOutcome other;

	sync_storage_unreserve_commit_seq(round->partition);
	outcome->status = SSP_PUSH_REJECTED;
	outcome->has_seq = false;
	outcome->nrecords = 1;
	outcome->records = palloc(sizeof(OpRecord));
	outcome->records[0] = st->reject;
	(void) sync_storage_push_result_insert(round->partition, round->client_id,
										   st->client_commit_id,
										   push_outcome_json(outcome, sync_now_ms(), identity));
	canonical = sync_storage_push_result_get(round->partition, round->client_id,
											 st->client_commit_id);
	if (canonical == NULL || !push_outcome_from_json(canonical, &other, &canonical_identity))
		push_cache_miss(outcome);
	else if (canonical_identity == NULL || strcmp(canonical_identity, identity) != 0)
		*outcome = other;		/* another delivery won: replay its result */
}

/*
 * Steps 4-5 in the commit's own internal subtransaction.  Applied: released, the outcome
 * filled; rejected (an operation, a rule, or a write's constraint): rolled back, then stored.
 */
static void
push_in_subxact(PushState *st, int64 seq, CommitOutcome *outcome)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	volatile bool applied = false;
	volatile bool rejected = false;

	BeginInternalSubTransaction(NULL);
	/* BeginInternalSubTransaction made the subtransaction's context current: back to ours */
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		if (push_apply_commit(st) < 0)
		{
			push_applied(st, seq, outcome);
			ReleaseCurrentSubTransaction();
			applied = true;
		}
		else
		{
			RollbackAndReleaseCurrentSubTransaction();
			rejected = true;
		}
		/* both leave the parent transaction's context current */
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		/* restores cxt and owner */
		rejected = push_failure_rejects(st, sync_subxact_rollback(cxt, owner));
	}
	PG_END_TRY();

	if (rejected)
		push_rejected(st, outcome);
	else if (!applied)
		push_internal_error("outcome");
}

/* ---------------------------------------------------------------- one commit */

void
sync_push_commit(SyncRound *round, const SspPushCommit *commit)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "syncular push commit",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	PushState	st;
	CommitOutcome outcome;
	int64		seq;

	memset(&st, 0, sizeof(st));
	memset(&outcome, 0, sizeof(outcome));
	st.round = round;
	st.schema = round->schema;
	st.commit = commit;
	st.client_commit_id = pnstrdup(commit->client_commit_id.ptr, commit->client_commit_id.len);
	st.cs.commit = commit;
	st.cs.client_commit_id = st.client_commit_id;
	st.writing_op = -1;

	if (!push_known_outcome(&st, &seq, &outcome))
		push_in_subxact(&st, seq, &outcome);
	push_write_outcome(round, commit, &outcome, old);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
}
