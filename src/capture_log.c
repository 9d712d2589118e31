/*
 * capture_log.c — the commit log side of ordinary SQL writes to synced tables
 * (docs/writing-with-sql.md): the AFTER STATEMENT triggers with transition tables
 * (syncular._capture_log: INSERT, UPDATE, DELETE, the MERGE actions and COPY FROM) and the
 * BEFORE TRUNCATE trigger, the transaction's commits, the settings and the engine bypass.
 *
 * One transaction, one commit per partition (push-and-pull.md §2.5, §4.1): the first captured
 * write to partition P in a transaction takes P's partition lock, passes the RFC 0007
 * serve gate (barrier-rfc0007.md §4.4: a pending checkpoint the session did not declare, or a
 * newer stored schema, refuses the statement with sync.schema_not_ready), takes the next
 * commit_seq and inserts the sync_commits row (writer_version = the schema version, so the
 * writer-fence trigger of sync_commits applies as to a push), exactly as a push commit does;
 * every later statement of the transaction appends its changes to that commit.  The row lock
 * is held until the transaction ends, so commit_seq stays gap-free and commits become visible
 * in commit_seq order (§4.1).  A statement that touches several partitions locks them in
 * byte ("C") order, so two such statements never deadlock on each other's partitions.  The
 * commit wake-up (wakeup.c) is queued when the commit is created and delivered when the
 * top-level transaction commits, never on rollback.
 *
 * What a statement appends, set-based from its transition tables (one statement per partition;
 * rows of the catalog tables to delete are found by a LATERAL key probe per row of the
 * statement, then deleted by ctid: a plan made without statistics never scans a partition's
 * whole row-scope index for a one-row statement, and a row's row-scope entries are probed by
 * primary key from the scopes the row had (the OLD transition table), which they equal; new
 * row-scope entries are probed on that key (row_id COLLATE "C") and inserted in its order,
 * which measured faster than ON CONFLICT DO NOTHING in arbitrary order for a 100,000-row COPY;
 * the partition lock excludes a concurrent writer of the same entries):
 * a delete change (old scopes) for every row that left (deleted, its key changed, or moved
 * out of its scopes: SPEC §3.3 clients of the old scopes lose it) with its tombstone when the
 * row is gone, then an upsert change (new scopes, full payload, row version) for every row
 * written; the scope index (sync_change_scopes), the row-scope index (sync_row_scopes), the
 * blob references of blob_ref columns, and tombstones cleared for re-inserted rows.  The row
 * values, versions and scopes were filled by capture_row.c before the row was stored.  That is
 * the general log statement; capture_scan.c reads the statement's shape first, and a statement
 * that wrote one row (an INSERT, or an UPDATE that kept the row's key and scopes) appends its
 * change with one statement that also writes the commit row after the gate's fast check, an
 * UPDATE whose rows all kept their key and scopes and an INSERT take lean statements that skip
 * what cannot apply to them (storage_capture.c); every shape writes the same rows.
 *
 * Backend state: the transaction's commits (partition -> commit_seq, next change index, the
 * subtransaction that created it) in TopMemoryContext, forgotten at transaction end and, for
 * the commits a rolled-back subtransaction created, at its rollback (the sync_commits row and
 * the commit_seq increment were rolled back with it).
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/proc.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "capture.h"
#include "engine.h"
#include "storage.h"
#include "wakeup.h"

PG_FUNCTION_INFO_V1(syncular_capture_log);
PG_FUNCTION_INFO_V1(syncular_capture_bypass);

int			sync_capture_engine_depth = 0;
char	   *sync_capture_partition = NULL;
bool		sync_capture_validators = false;
static char *capture_actor = NULL;
static char *capture_client = NULL;

/* syncular._capture_bypass(true): the subtransaction that set it (cleared when it ends badly) */
static bool sql_bypass = false;
static SubTransactionId sql_bypass_subid = InvalidSubTransactionId;

typedef struct CaptureCommit
{
	char	   *partition;
	int64		seq;
	int32		next_idx;
	SubTransactionId subid;
} CaptureCommit;

/* a statement of more rows is planned for many (sync_storage_capture_register) */
#define BULK_ROWS 64

static CaptureCommit *commits = NULL;
static int	ncommits = 0;
static int	maxcommits = 0;

/* the compiled schema of the running statement (read once per statement, not per row) */
static SyncSchema *stmt_schema = NULL;
static LocalTransactionId stmt_lxid = InvalidLocalTransactionId;
static CommandId stmt_cid = InvalidCommandId;

/*
 * The compiled schema for the running statement: read once per (transaction, command), shared by
 * the row trigger of every row and the statement trigger; NULL when none is registered.  Within
 * one command the settings row cannot change under us (ensure_schema is a statement of its own).
 */
SyncSchema *
sync_capture_schema(Oid as_user)
{
	CommandId	cid = GetCurrentCommandId(false);

	if (stmt_schema == NULL || stmt_lxid != MyProc->lxid || stmt_cid != cid)
	{
		Oid			save_uid;
		int			save_ctx;
		SyncSchema *volatile schema = NULL;

		/* the settings are the extension owner's to read, not the writing role's */
		GetUserIdAndSecContext(&save_uid, &save_ctx);
		SetUserIdAndSecContext(as_user, save_ctx | SECURITY_LOCAL_USERID_CHANGE);
		PG_TRY();
		{
			schema = sync_schema_get();
		}
		PG_FINALLY();
		{
			SetUserIdAndSecContext(save_uid, save_ctx);
		}
		PG_END_TRY();
		stmt_schema = schema;
		stmt_lxid = MyProc->lxid;
		stmt_cid = cid;
	}
	return stmt_schema;
}

bool
sync_capture_bypassed(void)
{
	return sync_capture_engine_depth > 0 || sql_bypass;
}

/* ---------------------------------------------------------------- transaction state */

static void
forget_commits(void)
{
	for (int i = 0; i < ncommits; i++)
		pfree(commits[i].partition);
	ncommits = 0;
}

static void
capture_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			forget_commits();
			sync_capture_engine_depth = 0;
			sql_bypass = false;
			break;
		default:
			break;
	}
}

static void
capture_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						 SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
	{
		int			k = 0;

		for (int i = 0; i < ncommits; i++)
		{
			if (commits[i].subid == mySubid)
				pfree(commits[i].partition);
			else
				commits[k++] = commits[i];
		}
		ncommits = k;
		/* a bypass set in this subtransaction (or a deeper one) ends with it */
		if (sql_bypass && sql_bypass_subid >= mySubid)
			sql_bypass = false;
	}
	else if (event == SUBXACT_EVENT_COMMIT_SUB)
	{
		for (int i = 0; i < ncommits; i++)
			if (commits[i].subid == mySubid)
				commits[i].subid = parentSubid;
		if (sql_bypass && sql_bypass_subid == mySubid)
			sql_bypass_subid = parentSubid;
	}
}

/* ---------------------------------------------------------------- settings */

void
sync_capture_init(void)
{
	/*
	 * syncular.partition is PGC_USERSET, unlike every other syncular.* setting: any role that may
	 * write the synced table may write any _sync_partition directly, so it grants nothing the
	 * table's privileges do not.  The actor and client id label the commit log (who wrote it):
	 * PGC_SUSET like the rest, so a role cannot attribute its writes to another actor unless the
	 * operator grants SET ON PARAMETER; by default the actor is the role itself.
	 */
	DefineCustomStringVariable("syncular.partition",
							   "Partition of rows written to synced tables by SQL without a _sync_partition value.",
							   "Empty: such a write fails with sync.invalid_request naming this setting.",
							   &sync_capture_partition, "", PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomStringVariable("syncular.actor_id",
							   "actor_id of the sync commits of SQL writes to synced tables.",
							   "Empty: the name of the session's role (SET ROLE respected).",
							   &capture_actor, "", PGC_SUSET, 0, NULL, NULL, NULL);
	/*
	 * Off by default: a server write is trusted (docs/writing-with-sql.md "Rules").  PGC_SUSET like
	 * the rest: when the operator turns it on, a writing role must not turn it off for itself.
	 */
	DefineCustomBoolVariable("syncular.capture_validators",
							 "Runs the tables' row validators on rows written to synced tables by SQL.",
							 "Off: a server write is trusted. On: each inserted, updated, deleted or truncated "
							 "row is passed to its table's row validator as a push's would be, and a validator "
							 "error fails the statement.",
							 &sync_capture_validators, false, PGC_SUSET, 0, NULL, NULL, NULL);
	DefineCustomStringVariable("syncular.client_id",
							   "client_id of the sync commits of SQL writes to synced tables.",
							   NULL,
							   &capture_client, "syncular:sql", PGC_SUSET, 0, NULL, NULL, NULL);
	RegisterXactCallback(capture_xact_callback, NULL);
	RegisterSubXactCallback(capture_subxact_callback, NULL);
}

/* ---------------------------------------------------------------- commits */

static CaptureCommit *
find_commit(const char *partition)
{
	for (int i = 0; i < ncommits; i++)
		if (strcmp(commits[i].partition, partition) == 0)
			return &commits[i];
	return NULL;
}

/* The commit's actor: syncular.actor_id, else the session's role (SET ROLE respected). */
const char *
sync_capture_actor(void)
{
	return capture_actor && capture_actor[0] ? capture_actor
		: GetUserNameFromId(GetOuterUserId(), false);	/* not the definer */
}

/*
 * syncular.capture_validators: the row validator on each row a DELETE or TRUNCATE removes (the
 * row trigger of capture_row.c covers INSERT and UPDATE), before anything is logged.  `src` is
 * the transition table sync_old or, for TRUNCATE, the table itself.  SPI connected.
 */
static void
validate_removed_rows(SyncSchema *schema, int ti, const char *src)
{
	const SyncTable *t = &schema->tables[ti];
	MemoryContext cxt = CurrentMemoryContext;
	SPITupleTable *tt;
	uint64		n;
	const char *actor = sync_capture_actor();

	if (SPI_execute(psprintf("SELECT _sync_partition, _sync_row_id, _sync_payload FROM %s", src),
					true, 0) != SPI_OK_SELECT)
		elog(ERROR, "syncular: reading the rows to validate failed");
	MemoryContextSwitchTo(cxt);
	tt = SPI_tuptable;			/* the validators' own SPI calls replace SPI_tuptable */
	n = SPI_processed;
	for (uint64 i = 0; i < n; i++)
	{
		bool		isnull;
		bytea	   *p = DatumGetByteaPP(SPI_getbinval(tt->vals[i], tt->tupdesc, 3, &isnull));
		SspValue   *stored = palloc0(sizeof(SspValue) * Max(t->ncolumns, 1));
		SspError	err;

		if (!ssp_row_decode_full(ssp_arena_new(), t->codec_columns, t->ncolumns,
								 (const uint8 *) VARDATA_ANY(p), VARSIZE_ANY_EXHDR(p), stored, &err))
			sync_raise_codec_error(&err);
		sync_validate_captured_row(schema, ti, true, SPI_getvalue(tt->vals[i], tt->tupdesc, 2),
								   NULL, stored, actor, SPI_getvalue(tt->vals[i], tt->tupdesc, 1));
	}
	SPI_freetuptable(tt);
}

static const char *
commit_client_id(void)
{
	return capture_client && capture_client[0] ? capture_client : "syncular:sql";
}

/* the commit's clientCommitId: the writing transaction */
static char *
commit_client_commit_id(void)
{
	return psprintf("xid:%u", XidFromFullTransactionId(GetTopFullTransactionId()));
}

/* Remember the commit the transaction made to `partition` (its row is written). */
static CaptureCommit *
remember_commit(const char *partition, int64 seq)
{
	CaptureCommit *c;

	sync_wakeup_commit(partition, seq);
	if (ncommits == maxcommits)
	{
		maxcommits = Max(4, maxcommits * 2);
		commits = commits ? repalloc(commits, sizeof(CaptureCommit) * maxcommits)
			: MemoryContextAlloc(TopMemoryContext, sizeof(CaptureCommit) * maxcommits);
	}
	c = &commits[ncommits++];
	c->partition = MemoryContextStrdup(TopMemoryContext, partition);
	c->seq = seq;
	c->next_idx = 0;
	c->subid = GetCurrentSubTransactionId();
	return c;
}

/* The transaction's commit to `partition`, created (locked, gated, numbered) when missing. */
static CaptureCommit *
commit_for(const char *partition, const SyncSchema *schema)
{
	CaptureCommit *c = find_commit(partition);
	int64		seq;

	if (c != NULL)
		return c;
	/* lock and number in one update; the gate refuses by raising (nothing to give back) */
	seq = sync_storage_reserve_commit_seq(partition);
	sync_gate_check_write(partition, schema->version);
	sync_storage_commit_insert(partition, seq, commit_client_id(), commit_client_commit_id(),
							   sync_capture_actor(), sync_now_ms(), (int64) schema->version);
	return remember_commit(partition, seq);
}

/* The commit row of r's new commit (the gate passed), then r's change by its statement. */
static void
commit_then_change(SyncCaptureRow *r)
{
	sync_storage_commit_insert(r->partition, r->commit_seq, r->client_id, r->client_commit_id,
							   r->actor_id, r->created_at_ms, (int64) r->schema_version);
	r->new_commit = false;
	sync_storage_capture_one(r);
}

/*
 * A statement that wrote one row (capture_scan.c "one"): when the transaction has no commit for
 * the partition yet, the lock, the serve gate and the commit's row with the change in it, without
 * a statement where the row allows (sync_storage_capture_commit_one, _fresh_rows); else the
 * change appended to the commit by the one-row statement (sync_storage_capture_one).  The same
 * rows as commit_for + the general log statement.
 */
static void
append_one(const SyncSchema *schema, int ti, const SyncCaptureScan *scan, bool fresh)
{
	const char *partition = scan->parts[0];
	CaptureCommit *c = find_commit(partition);
	SyncCaptureRow r;

	memset(&r, 0, sizeof(r));
	r.partition = partition;
	r.table = schema->tables[ti].name;
	r.row_id = scan->row_id;
	r.version = scan->version;
	r.scopes = scan->scopes;
	r.payload = scan->payload;
	r.fresh = fresh;
	r.schema_version = schema->version;
	r.new_commit = c == NULL;
	if (c != NULL)
	{
		r.commit_seq = c->seq;
		r.idx = c->next_idx;
	}
	else
	{
		r.commit_seq = sync_storage_reserve_commit_seq(partition);
		r.client_id = commit_client_id();
		r.client_commit_id = commit_client_commit_id();
		r.actor_id = sync_capture_actor();
		r.created_at_ms = sync_now_ms();
	}
	if (r.new_commit)
	{
		/*
		 * one row written in its own commit (an admin panel's edit, a job's insert): the gate in
		 * C, then the commit row with the change in it (and an inserted row's row-scope
		 * entries) without a statement where the row allows
		 */
		sync_gate_check_write(partition, schema->version);
		if (!sync_storage_capture_commit_one(&r))
			commit_then_change(&r);
		else if (fresh && !sync_storage_capture_fresh_rows(&schema->tables[ti], &r))
			sync_storage_capture_fresh_rest(&r);	/* e.g. a re-inserted row's tombstone */
	}
	else
		sync_storage_capture_one(&r);
	if (c == NULL)
		c = remember_commit(partition, r.commit_seq);
	if (c->next_idx == PG_INT32_MAX)
		sync_raise("sync.invalid_request", "a commit holds at most 2^31-1 changes", NULL);
	c->next_idx++;
}

/* ---------------------------------------------------------------- the triggers */

/*
 * syncular._capture_log() — AFTER INSERT / UPDATE / DELETE FOR EACH STATEMENT with transition
 * tables sync_new / sync_old, and BEFORE TRUNCATE FOR EACH STATEMENT; the one argument is the
 * synced table's name.
 */
Datum
syncular_capture_log(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	SyncSchema *schema;
	int			ti;
	SyncCaptureEvent ev;
	int			nparts;
	char	  **parts;
	const SyncTable *t;
	SyncCaptureScan scan;
	SyncCaptureShape shape;

	if (!CALLED_AS_TRIGGER(fcinfo) || TRIGGER_FIRED_FOR_ROW(td->tg_event) ||
		td->tg_trigger->tgnargs != 1)
		elog(ERROR, "syncular._capture_log: must be a statement trigger ensure_schema installs");
	if (sync_capture_bypassed())
		return PointerGetDatum(NULL);
	if (TRIGGER_FIRED_BY_INSERT(td->tg_event))
		ev = SYNC_EV_INSERT;
	else if (TRIGGER_FIRED_BY_UPDATE(td->tg_event))
		ev = SYNC_EV_UPDATE;
	else if (TRIGGER_FIRED_BY_DELETE(td->tg_event))
		ev = SYNC_EV_DELETE;
	else
		ev = SYNC_EV_TRUNCATE;

	schema = sync_capture_schema(GetUserId());	/* SECURITY DEFINER: the owner already */
	ti = schema ? sync_schema_table_index(schema, td->tg_trigger->tgargs[0]) : -1;
	if (ti < 0)
		sync_raise("sync.storage.schema_not_registered",
				   "the table is not a synced table of the registered schema", NULL);
	t = &schema->tables[ti];

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "syncular: SPI_connect failed");
	/* the statement's partitions, in byte order: the lock order; and its shape */
	if (ev != SYNC_EV_TRUNCATE)
	{
		sync_capture_scan(td, ev, &scan);
		sync_storage_capture_register(td, Max(scan.nnew, scan.nold) > BULK_ROWS);
		nparts = scan.nparts;
		parts = scan.parts;
		if (scan.one && sync_storage_capture_lean_ok(t))
			shape = SYNC_SHAPE_COUNT;	/* the one-row statement */
		else if (!sync_storage_capture_lean_ok(t))
			shape = Max(scan.nnew, scan.nold) > BULK_ROWS ? SYNC_SHAPE_GENERAL_BULK
				: SYNC_SHAPE_GENERAL;
		else if (ev == SYNC_EV_INSERT)
			shape = SYNC_SHAPE_INSERT;
		else if (scan.in_place)
			shape = SYNC_SHAPE_IN_PLACE;
		else
			shape = Max(scan.nnew, scan.nold) > BULK_ROWS ? SYNC_SHAPE_GENERAL_BULK
				: SYNC_SHAPE_GENERAL;
	}
	else
	{
		nparts = sync_storage_capture_partitions(t->qualified, &parts);
		shape = SYNC_SHAPE_GENERAL_BULK;
	}

	if (sync_capture_validators && (ev == SYNC_EV_DELETE || ev == SYNC_EV_TRUNCATE) &&
		sync_has_row_validator(schema, ti))
		validate_removed_rows(schema, ti, ev == SYNC_EV_DELETE ? "sync_old" : t->qualified);

	if (shape == SYNC_SHAPE_COUNT)
	{
		append_one(schema, ti, &scan, ev == SYNC_EV_INSERT);
		nparts = 0;
	}
	for (int i = 0; i < nparts; i++)
		(void) commit_for(parts[i], schema);
	for (int i = 0; i < nparts; i++)
	{
		CaptureCommit *c = find_commit(parts[i]);
		int64		n = -1;

		if (shape == SYNC_SHAPE_INSERT || shape == SYNC_SHAPE_IN_PLACE)
			n = sync_storage_capture_lean_direct(t, td->tg_newtable,
												 RelationGetDescr(td->tg_relation), parts[i],
												 c->seq, c->next_idx, shape == SYNC_SHAPE_INSERT);
		if (n < 0)
			n = sync_storage_capture_append(schema, ti, ev, shape, parts[i], c->seq, c->next_idx);

		if (n > PG_INT32_MAX - c->next_idx)
			sync_raise("sync.invalid_request", "a commit holds at most 2^31-1 changes", NULL);
		c->next_idx += (int32) n;
	}
	SPI_finish();				/* the caller's context is current again */
	return PointerGetDatum(NULL);
}

/*
 * syncular._capture_bypass(on boolean) — the engine's own SQL writes to synced tables (the
 * schema bump's row rewrite) are not captured.  Internal; superuser / owner only (no grant).
 */
Datum
syncular_capture_bypass(PG_FUNCTION_ARGS)
{
	sql_bypass = PG_GETARG_BOOL(0);
	sql_bypass_subid = GetCurrentSubTransactionId();
	PG_RETURN_VOID();
}
