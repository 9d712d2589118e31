/*
 * wakeup.c — commit wake-ups for realtime gateways (SPEC §8.2, §8.3; docs/realtime.md
 * "Commit wake-ups").
 *
 * Every applied push commit wakes the gateways holding sockets on its partition, exactly when
 * the commit becomes visible and never when it rolls back.  Two transports, chosen by the
 * PGC_SUSET setting syncular.commit_wakeup (auto | notify | ring | both):
 *
 *   notify  NOTIFY syncular_commit, payload base64url(partition) ":" commit_seq.  PostgreSQL 15
 *           takes a database-wide lock in PreCommit_Notify and holds it through the commit's
 *           WAL flush, so every notifying commit of the database is serialized.
 *   ring    a ring of wake-ups in shared memory (only when the library is in
 *           shared_preload_libraries): the commit's wake-ups wait in backend memory, are
 *           appended under a short LWLock by the XACT_EVENT_COMMIT callback (after the commit
 *           is durable and visible) and waiters are woken through a ConditionVariable.
 *           syncular.wait_commits(after, timeout_ms) reads them.
 *   auto    ring when preloaded, else notify (the default).  ring / both without the preload
 *           fall back to notify: a wake-up is never dropped.
 *
 * Pending wake-ups follow the subtransactions: a subtransaction that rolls back (a commit
 * rejected inside its push subtransaction) drops its own, one that commits hands them to its
 * parent.  PREPARE TRANSACTION of a transaction holding ring wake-ups is refused, as PostgreSQL
 * refuses it after NOTIFY (a prepared commit would otherwise wake nobody).
 *
 * Ring layout: WAKEUP_SLOTS fixed slots (position, database, commit_seq, arena offset and
 * length) plus a WAKEUP_ARENA-byte arena holding the partition names contiguously, so a
 * partition of any length up to WAKEUP_MAX_PARTITION bytes is kept whole.  A longer one is
 * stored as a "too long" marker that its database's readers see as lost.  Positions grow by
 * one per wake-up and start at the server start time in microseconds, so a position from an
 * earlier server run is beyond the head (or before the tail) and reads as lost.  The oldest
 * wake-ups are overwritten when slots or arena run out: a reader whose `after` is older than the
 * tail is told "lost" and resynchronizes, nothing is dropped silently.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/async.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "portability/instr_time.h"
#include "storage/condition_variable.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "engine.h"
#include "wakeup.h"

#define WAKEUP_SLOTS			4096
#define WAKEUP_ARENA			(512 * 1024)
#define WAKEUP_MAX_PARTITION	(WAKEUP_ARENA / 8)
#define WAKEUP_TOO_LONG			PG_UINT32_MAX	/* slot length of a "too long" marker */
#define WAKEUP_MAX_ROWS			1000	/* wake-up rows of one wait_commits call */

typedef enum
{
	WAKEUP_AUTO,
	WAKEUP_NOTIFY,
	WAKEUP_RING,
	WAKEUP_BOTH
} WakeupSetting;

static const struct config_enum_entry wakeup_options[] = {
	{"auto", WAKEUP_AUTO, false},
	{"notify", WAKEUP_NOTIFY, false},
	{"ring", WAKEUP_RING, false},
	{"both", WAKEUP_BOTH, false},
	{NULL, 0, false}
};

static int	sync_commit_wakeup = WAKEUP_AUTO;

typedef struct WakeSlot
{
	uint64		pos;
	uint64		off;			/* arena offset (monotonic; modulo WAKEUP_ARENA) */
	int64		seq;
	Oid			dbid;
	uint32		len;			/* partition bytes, or WAKEUP_TOO_LONG */
} WakeSlot;

typedef struct WakeShared
{
	LWLock	   *lock;			/* appends exclusive, readers shared */
	ConditionVariable cv;		/* broadcast after every append */
	uint64		next;			/* the position the next wake-up gets */
	uint64		oldest;			/* the oldest position still stored (== next: none) */
	uint64		arena_head;		/* monotonic byte offsets */
	uint64		arena_tail;
	WakeSlot	slots[WAKEUP_SLOTS];
	char		arena[WAKEUP_ARENA];
} WakeShared;

static WakeShared *shared = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* ---------------------------------------------------------------- the mode */

/* the transport this session uses: the setting resolved against the preload */
/*
 * auto picks the ring only where a gateway can read it: this database's syncular has
 * syncular.wait_commits (0.3.0 or later).  A newer library preloaded under an older extension
 * version (before ALTER EXTENSION UPDATE) keeps NOTIFY, which that version's gateways LISTEN to.
 * Two syscache probes, no catalog scan.
 */
static bool
ring_readable_here(void)
{
	Oid			nsp = get_namespace_oid("syncular", true);
	Oid			args[2] = {INT8OID, INT4OID};

	return OidIsValid(nsp) &&
		SearchSysCacheExists3(PROCNAMEARGSNSP, CStringGetDatum("wait_commits"),
							  PointerGetDatum(buildoidvector(args, 2)), ObjectIdGetDatum(nsp));
}

static int
effective_mode(void)
{
	if (shared == NULL)
		return WAKEUP_NOTIFY;
	if (sync_commit_wakeup != WAKEUP_AUTO)
		return sync_commit_wakeup;
	return ring_readable_here() ? WAKEUP_RING : WAKEUP_NOTIFY;
}

/* ---------------------------------------------------------------- NOTIFY */

/* NOTIFY syncular_commit, payload base64url(partition) ":" commit_seq (sent at commit). */
static void
notify_commit(const char *partition, int64 commit_seq)
{
	char	   *payload = psprintf("%s:" INT64_FORMAT,
								   sync_b64url_encode((const uint8 *) partition, strlen(partition)),
								   commit_seq);

	Async_Notify("syncular_commit", payload);
}

/* ---------------------------------------------------------------- pending wake-ups */

typedef struct Pending
{
	struct Pending *next;
	SubTransactionId subid;
	int64		seq;
	uint32		len;
	char		partition[FLEXIBLE_ARRAY_MEMBER];
} Pending;

/* in TopTransactionContext, in commit order; NULL outside a transaction that pushed */
static Pending *pending = NULL;
static Pending *pending_tail = NULL;

void
sync_wakeup_commit(const char *partition, int64 commit_seq)
{
	int			mode = effective_mode();
	size_t		len = strlen(partition);
	Pending    *p;

	if (mode == WAKEUP_NOTIFY || mode == WAKEUP_BOTH)
		notify_commit(partition, commit_seq);
	if (mode == WAKEUP_NOTIFY)
		return;
	p = MemoryContextAlloc(TopTransactionContext, offsetof(Pending, partition) + len + 1);
	p->next = NULL;
	p->subid = GetCurrentSubTransactionId();
	p->seq = commit_seq;
	p->len = (uint32) len;
	memcpy(p->partition, partition, len + 1);
	if (pending_tail)
		pending_tail->next = p;
	else
		pending = p;
	pending_tail = p;
}

/* Append one wake-up; the caller holds the lock exclusively. */
static void
ring_append(Oid dbid, const Pending *p)
{
	uint32		len = p->len > WAKEUP_MAX_PARTITION ? WAKEUP_TOO_LONG : p->len;
	uint64		need = len == WAKEUP_TOO_LONG ? 0 : MAXALIGN(len);
	uint64		off = shared->arena_head;
	WakeSlot   *slot;

	/* a name never wraps: skip the arena's end */
	if (need > 0 && off % WAKEUP_ARENA + need > WAKEUP_ARENA)
		off += WAKEUP_ARENA - off % WAKEUP_ARENA;
	/* overwrite the oldest until a slot and the bytes are free */
	while (shared->next - shared->oldest >= WAKEUP_SLOTS ||
		   off + need - shared->arena_tail > WAKEUP_ARENA)
	{
		shared->oldest++;
		shared->arena_tail = shared->oldest == shared->next ? off
			: shared->slots[shared->oldest % WAKEUP_SLOTS].off;
	}
	slot = &shared->slots[shared->next % WAKEUP_SLOTS];
	slot->pos = shared->next;
	slot->off = off;
	slot->seq = p->seq;
	slot->dbid = dbid;
	slot->len = len;
	if (need > 0)
		memcpy(shared->arena + off % WAKEUP_ARENA, p->partition, len);
	shared->arena_head = off + need;
	shared->next++;
}

/*
 * The commit is durable and visible: append its wake-ups (consecutive ones of one partition
 * collapse into the last, which covers them) and wake the waiters.  Nothing here may raise.
 */
static void
ring_publish(void)
{
	LWLockAcquire(shared->lock, LW_EXCLUSIVE);
	for (Pending *p = pending; p; p = p->next)
		if (p->next == NULL || p->next->len != p->len ||
			memcmp(p->next->partition, p->partition, p->len) != 0 || p->next->seq < p->seq)
			ring_append(MyDatabaseId, p);
	LWLockRelease(shared->lock);
	ConditionVariableBroadcast(&shared->cv);
}

static void
wakeup_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_PREPARE:
			if (pending)
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("cannot PREPARE a transaction that applied sync commits with ring commit wake-ups"),
						 errhint("Set syncular.commit_wakeup = notify for such sessions; PostgreSQL refuses PREPARE after NOTIFY too.")));
			break;
		case XACT_EVENT_COMMIT:
			if (pending && shared)
				ring_publish();
			pending = pending_tail = NULL;
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PREPARE:
		case XACT_EVENT_PARALLEL_ABORT:
			pending = pending_tail = NULL;
			break;
		default:
			break;
	}
}

static void
wakeup_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
						SubTransactionId parentSubid, void *arg)
{
	Pending   **pp = &pending;

	if (event != SUBXACT_EVENT_COMMIT_SUB && event != SUBXACT_EVENT_ABORT_SUB)
		return;
	pending_tail = NULL;
	while (*pp)
	{
		Pending    *p = *pp;

		if (p->subid == mySubid && event == SUBXACT_EVENT_ABORT_SUB)
		{
			*pp = p->next;		/* freed with TopTransactionContext */
			continue;
		}
		if (p->subid == mySubid)
			p->subid = parentSubid;
		pending_tail = p;
		pp = &p->next;
	}
}

/* ---------------------------------------------------------------- shared memory */

static void
wakeup_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(WakeShared)));
	RequestNamedLWLockTranche("syncular_wakeup", 1);
}

static void
wakeup_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	shared = ShmemInitStruct("syncular_wakeup", sizeof(WakeShared), &found);
	if (!found)
	{
		shared->lock = &(GetNamedLWLockTranche("syncular_wakeup"))->lock;
		ConditionVariableInit(&shared->cv);
		/* a position of an earlier server run reads as lost (see the top comment) */
		shared->next = shared->oldest = (uint64) GetCurrentTimestamp();
		shared->arena_head = shared->arena_tail = 0;
	}
	LWLockRelease(AddinShmemInitLock);
}

void
sync_wakeup_init(void)
{
	DefineCustomEnumVariable("syncular.commit_wakeup",
							 "How applied push commits wake realtime gateways (SPEC 8.2).",
							 "auto: the shared-memory ring read by syncular.wait_commits when the "
							 "library is in shared_preload_libraries and the database's syncular "
							 "has wait_commits (0.3.0 or later), else NOTIFY syncular_commit; "
							 "notify: NOTIFY only; ring: the ring only; both: the ring and NOTIFY. "
							 "ring and both fall back to notify without the preload.",
							 &sync_commit_wakeup,
							 WAKEUP_AUTO, wakeup_options,
							 PGC_SUSET, 0,
							 NULL, NULL, NULL);
	RegisterXactCallback(wakeup_xact_callback, NULL);
	RegisterSubXactCallback(wakeup_subxact_callback, NULL);
	if (!process_shared_preload_libraries_in_progress)
		return;
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = wakeup_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = wakeup_shmem_startup;
}

/* ---------------------------------------------------------------- SQL functions */

PG_FUNCTION_INFO_V1(syncular_commit_wakeup_mode);

/* syncular.commit_wakeup_mode() RETURNS text: notify, ring or both (this session's transport) */
Datum
syncular_commit_wakeup_mode(PG_FUNCTION_ARGS)
{
	int			mode = effective_mode();

	PG_RETURN_TEXT_P(cstring_to_text(mode == WAKEUP_RING ? "ring" : mode == WAKEUP_BOTH ? "both"
									 : "notify"));
}

typedef struct WakeRow
{
	uint64		pos;
	int64		seq;
	char	   *partition;
} WakeRow;

/*
 * One look at the ring for the current database: the wake-ups after `after` into rows (at most
 * WAKEUP_MAX_ROWS; consecutive ones of one partition collapse into the last).  Returns the final
 * row's kind ("head", "more", "lost") and sets *last to its position.
 */
static const char *
ring_read(bool have_after, uint64 after, WakeRow *rows, int *nrows, uint64 *last)
{
	const char *kind = "head";
	uint64		p;

	*nrows = 0;
	LWLockAcquire(shared->lock, LW_SHARED);
	*last = shared->next - 1;
	if (!have_after)
		;						/* a fresh reader starts at the head */
	else if (after > shared->next - 1 || after + 1 < shared->oldest)
		kind = "lost";
	else
	{
		for (p = after + 1; p < shared->next && *nrows < WAKEUP_MAX_ROWS; p++)
		{
			WakeSlot   *s = &shared->slots[p % WAKEUP_SLOTS];
			WakeRow    *prev = *nrows > 0 ? &rows[*nrows - 1] : NULL;

			if (s->dbid != MyDatabaseId)
				continue;
			if (s->len == WAKEUP_TOO_LONG)
			{
				kind = "lost";	/* its partition is unknown: resynchronize everything */
				break;
			}
			if (prev && strlen(prev->partition) == s->len &&
				memcmp(prev->partition, shared->arena + s->off % WAKEUP_ARENA, s->len) == 0)
			{
				prev->pos = p;
				prev->seq = Max(prev->seq, s->seq);
				continue;
			}
			rows[*nrows].pos = p;
			rows[*nrows].seq = s->seq;
			rows[*nrows].partition = palloc(s->len + 1);
			memcpy(rows[*nrows].partition, shared->arena + s->off % WAKEUP_ARENA, s->len);
			rows[*nrows].partition[s->len] = '\0';
			(*nrows)++;
		}
		if (strcmp(kind, "lost") == 0)
			*last = p;
		else
		{
			*last = p - 1;
			if (p < shared->next)
				kind = "more";
		}
	}
	LWLockRelease(shared->lock);
	return kind;
}

PG_FUNCTION_INFO_V1(syncular_wait_commits);

/*
 * syncular.wait_commits(after bigint, timeout_ms integer)
 *   RETURNS TABLE(kind text, position bigint, partition text, commit_seq bigint)
 * Rows 'commit' (a wake-up of the current database), then exactly one final row: 'head' (caught
 * up), 'more' (row limit reached: call again at once) or 'lost' (wake-ups after `after` are
 * unknown: resynchronize every partition).  Its position is the `after` of the next call.
 * Sleeps up to timeout_ms while there is nothing to return (interruptible).
 */
Datum
syncular_wait_commits(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bool		have_after = !PG_ARGISNULL(0);
	int64		after = have_after ? PG_GETARG_INT64(0) : 0;
	int32		timeout_ms;
	WakeRow    *rows;
	int			nrows = 0;
	uint64		last = 0;
	const char *kind = NULL;
	instr_time	start;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};

	if (shared == NULL)
	{
		const SyncErrorInfo *e = sync_error_info("sync.storage.wakeup_unavailable");

		ereport(ERROR,
				(errcode(e->sqlstate),
				 errmsg("commit wake-ups are not available: the syncular library is not in shared_preload_libraries"),
				 errdetail("%s", sync_error_detail_json("sync.storage.wakeup_unavailable", NULL)),
				 errhint("Add syncular to shared_preload_libraries and restart the server, or LISTEN syncular_commit "
						 "(docs/realtime.md \"Wake-up source\").")));
	}
	if (PG_ARGISNULL(1) || PG_GETARG_INT32(1) < 0)
		sync_raise("sync.invalid_request", "wait_commits: timeout_ms must be 0 or more",
				   "{\"argument\": \"timeout_ms\"}");
	timeout_ms = PG_GETARG_INT32(1);
	InitMaterializedSRF(fcinfo, 0);
	rows = palloc(sizeof(WakeRow) * WAKEUP_MAX_ROWS);

	INSTR_TIME_SET_CURRENT(start);
	ConditionVariablePrepareToSleep(&shared->cv);
	for (;;)
	{
		instr_time	now;
		long		left;

		kind = ring_read(have_after, (uint64) after, rows, &nrows, &last);
		if (nrows > 0 || strcmp(kind, "head") != 0 || !have_after)
			break;
		INSTR_TIME_SET_CURRENT(now);
		INSTR_TIME_SUBTRACT(now, start);
		left = timeout_ms - (long) INSTR_TIME_GET_MILLISEC(now);
		if (left <= 0)
			break;
		/* CHECK_FOR_INTERRUPTS inside: pg_cancel_backend and statement_timeout end the wait */
		ConditionVariableTimedSleep(&shared->cv, left, PG_WAIT_EXTENSION);
	}
	ConditionVariableCancelSleep();

	for (int i = 0; i < nrows; i++)
	{
		values[0] = CStringGetTextDatum("commit");
		values[1] = Int64GetDatum((int64) rows[i].pos);
		values[2] = CStringGetTextDatum(rows[i].partition);
		values[3] = Int64GetDatum(rows[i].seq);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	values[0] = CStringGetTextDatum(kind);
	values[1] = Int64GetDatum((int64) last);
	nulls[2] = nulls[3] = true;
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	return (Datum) 0;
}
