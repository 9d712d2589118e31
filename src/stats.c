/*
 * stats.c — activity counters in shared memory: per database (syncular.stats) and per synced
 * table (syncular.stats_tables), read by set-returning functions, cleared by stats_reset().
 *
 * Conventions follow pg_stat_statements: the area exists only when the library is in
 * shared_preload_libraries (shmem_request_hook / shmem_startup_hook); reading needs superuser or
 * pg_read_all_stats, resetting the owner (EXECUTE is not granted to PUBLIC).  Counters are never
 * rolled back: a round counted here stays counted if the caller's transaction aborts later.
 *
 * A round's figures are gathered in backend memory (`pending`) by the one-line hooks in round.c,
 * push_outcome.c, pull_out.c, pull_boot.c and pull_window.c and added to shared memory once at the end of the round.  A refused round
 * (an error raised out of the round) counts only as refused, under the catalogue code it raised;
 * the figures of its partial work are dropped.  Histograms have fixed buckets (bucket_le_ms).
 *
 * Capacity: STATS_MAX_DATABASES databases and STATS_MAX_TABLES (database, table) pairs; a pair
 * past the capacity is not counted per table (its database's totals still are).  Per database,
 * STATS_MAX_CODES - 1 distinct codes are kept per kind; later codes count under "other".
 */
#include "postgres.h"

#include "catalog/pg_authid.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/hsearch.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "engine.h"
#include "stats.h"

#define STATS_MAX_DATABASES 64
#define STATS_MAX_TABLES	1024
#define STATS_MAX_CODES		32
#define STATS_CODE_LEN		64
#define STATS_LOCAL_TABLES	32
#define STATS_NBUCKETS		13
#define STATS_OTHER_CODE	"other"

/* Upper bounds (ms, inclusive) of the round-time buckets; the last bucket is +Inf. */
static const double bucket_le_ms[STATS_NBUCKETS - 1] =
{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000};

/* Database counters, in the column order of syncular._stats(). */
enum
{
	D_ROUNDS_OK,
	D_ROUNDS_REFUSED,
	D_COMMITS_APPLIED,
	D_COMMITS_CACHED,
	D_COMMITS_REJECTED,
	D_CONFLICTS,
	D_OPERATIONS,
	D_SEC_INCREMENTAL,
	D_SEC_BOOTSTRAP,
	D_SEC_RESET,
	D_SEC_REVOKED,
	D_COMMITS_SERVED,
	D_CHANGES_SERVED,
	D_ROWS_SERVED,
	D_RESPONSE_BYTES,
	D_NCOUNTERS
};

/* Table counters, in the column order of syncular._stats_tables(). */
enum
{
	T_OPERATIONS,
	T_CONFLICTS,
	T_REJECTED,
	T_SEC_INCREMENTAL,
	T_SEC_BOOTSTRAP,
	T_SEC_RESET,
	T_SEC_REVOKED,
	T_COMMITS_SERVED,
	T_CHANGES_SERVED,
	T_ROWS_SERVED,
	T_NCOUNTERS
};

typedef struct CodeCount
{
	char		code[STATS_CODE_LEN];	/* "" = free slot */
	int64		count;
} CodeCount;

typedef struct DbCounters
{
	int64		n[D_NCOUNTERS];
	int64		push_hist[STATS_NBUCKETS];
	int64		pull_hist[STATS_NBUCKETS];
	double		push_ms;
	double		pull_ms;
	CodeCount	refused[STATS_MAX_CODES];
	CodeCount	rejected[STATS_MAX_CODES];
} DbCounters;

typedef struct TableKey
{
	Oid			dbid;
	char		name[NAMEDATALEN];
} TableKey;

typedef struct DbEntry
{
	Oid			dbid;			/* hash key */
	slock_t		mutex;
	DbCounters	c;
} DbEntry;

typedef struct TableEntry
{
	TableKey	key;			/* hash key */
	slock_t		mutex;
	int64		n[T_NCOUNTERS];
} TableEntry;

typedef struct StatsShared
{
	LWLock	   *lock;			/* the hash tables' structure; counters: each entry's mutex */
	TimestampTz reset_at;
} StatsShared;

static StatsShared *shared = NULL;
static HTAB *db_hash = NULL;
static HTAB *table_hash = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* ---------------------------------------------------------------- the round being served */

typedef struct LocalTable
{
	char		name[NAMEDATALEN];
	int64		n[T_NCOUNTERS];
} LocalTable;

static struct
{
	int			depth;			/* > 0 inside a round (a nested round adds to the outer one) */
	DbCounters	db;
	int			ntables;
	LocalTable	tables[STATS_LOCAL_TABLES];
	int			phase;			/* -1 or SyncStatsPhase */
	instr_time	phase_start;
	double		phase_ms[2];
	bool		phase_seen[2];
}			pending;

static inline bool
counting(void)
{
	return shared != NULL && pending.depth > 0;
}

static void
code_add(CodeCount *slots, const char *code, int64 n)
{
	int			last = STATS_MAX_CODES - 1;

	for (int i = 0; i < last; i++)
	{
		if (slots[i].code[0] == '\0')
			strlcpy(slots[i].code, code, STATS_CODE_LEN);
		if (strncmp(slots[i].code, code, STATS_CODE_LEN - 1) == 0)
		{
			slots[i].count += n;
			return;
		}
	}
	strlcpy(slots[last].code, STATS_OTHER_CODE, STATS_CODE_LEN);
	slots[last].count += n;
}

static int64 *
local_table(const char *name, size_t len)
{
	LocalTable *t;

	len = Min(len, NAMEDATALEN - 1);
	for (int i = 0; i < pending.ntables; i++)
		if (strncmp(pending.tables[i].name, name, len) == 0 && pending.tables[i].name[len] == '\0')
			return pending.tables[i].n;
	if (pending.ntables == STATS_LOCAL_TABLES)
		return NULL;			/* a round over this many tables: the rest count per database */
	t = &pending.tables[pending.ntables++];
	memset(t, 0, sizeof(*t));
	memcpy(t->name, name, len);
	return t->n;
}

static void
table_add(const char *name, size_t len, int counter, int64 n)
{
	int64	   *c = local_table(name, len);

	if (c != NULL)
		c[counter] += n;
}

static void
observe(int64 *hist, double *sum, double ms)
{
	int			b = 0;

	while (b < STATS_NBUCKETS - 1 && ms > bucket_le_ms[b])
		b++;
	hist[b]++;
	*sum += ms;
}

static void
phase_close(void)
{
	instr_time	now;

	if (pending.phase < 0)
		return;
	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, pending.phase_start);
	pending.phase_ms[pending.phase] += INSTR_TIME_GET_MILLISEC(now);
	pending.phase_seen[pending.phase] = true;
	pending.phase = -1;
}

void
sync_stats_round_begin(void)
{
	if (shared == NULL || pending.depth++ > 0)
		return;
	memset(&pending.db, 0, sizeof(pending.db));
	pending.ntables = 0;
	pending.phase = -1;
	pending.phase_ms[0] = pending.phase_ms[1] = 0;
	pending.phase_seen[0] = pending.phase_seen[1] = false;
}

void
sync_stats_phase(SyncStatsPhase phase)
{
	if (!counting())
		return;
	phase_close();
	pending.phase = (int) phase;
	INSTR_TIME_SET_CURRENT(pending.phase_start);
}

/* ---------------------------------------------------------------- adding to shared memory */

/*
 * The entry for `key`, created when missing.  Called with the lock held; takes it exclusively
 * (once) to create.  NULL when the table is full.
 */
static void *
entry_for(HTAB *hash, const void *key, bool *exclusive)
{
	void	   *e = hash_search(hash, key, HASH_FIND, NULL);
	bool		found;

	if (e != NULL)
		return e;
	if (!*exclusive)
	{
		LWLockRelease(shared->lock);
		LWLockAcquire(shared->lock, LW_EXCLUSIVE);
		*exclusive = true;
	}
	e = hash_search(hash, key, HASH_ENTER_NULL, &found);
	if (e != NULL && !found)
	{
		if (hash == db_hash)
		{
			DbEntry    *d = (DbEntry *) e;

			SpinLockInit(&d->mutex);
			memset(&d->c, 0, sizeof(d->c));
		}
		else
		{
			TableEntry *t = (TableEntry *) e;

			SpinLockInit(&t->mutex);
			memset(t->n, 0, sizeof(t->n));
		}
	}
	return e;
}

static void
flush(void)
{
	bool		exclusive = false;
	DbEntry    *d;
	const DbCounters *p = &pending.db;

	LWLockAcquire(shared->lock, LW_SHARED);
	d = entry_for(db_hash, &MyDatabaseId, &exclusive);
	if (d != NULL)
	{
		SpinLockAcquire(&d->mutex);
		for (int i = 0; i < D_NCOUNTERS; i++)
			d->c.n[i] += p->n[i];
		for (int i = 0; i < STATS_NBUCKETS; i++)
		{
			d->c.push_hist[i] += p->push_hist[i];
			d->c.pull_hist[i] += p->pull_hist[i];
		}
		d->c.push_ms += p->push_ms;
		d->c.pull_ms += p->pull_ms;
		for (int i = 0; i < STATS_MAX_CODES && p->refused[i].code[0]; i++)
			code_add(d->c.refused, p->refused[i].code, p->refused[i].count);
		for (int i = 0; i < STATS_MAX_CODES && p->rejected[i].code[0]; i++)
			code_add(d->c.rejected, p->rejected[i].code, p->rejected[i].count);
		SpinLockRelease(&d->mutex);
	}
	for (int i = 0; i < pending.ntables; i++)
	{
		TableKey	key;
		TableEntry *t;

		memset(&key, 0, sizeof(key));
		key.dbid = MyDatabaseId;
		strlcpy(key.name, pending.tables[i].name, NAMEDATALEN);
		t = entry_for(table_hash, &key, &exclusive);
		if (t == NULL)
			continue;
		SpinLockAcquire(&t->mutex);
		for (int k = 0; k < T_NCOUNTERS; k++)
			t->n[k] += pending.tables[i].n[k];
		SpinLockRelease(&t->mutex);
	}
	LWLockRelease(shared->lock);
}

void
sync_stats_round_done(Size response_bytes)
{
	if (shared == NULL || pending.depth == 0 || --pending.depth > 0)
		return;
	phase_close();
	pending.db.n[D_ROUNDS_OK]++;
	pending.db.n[D_RESPONSE_BYTES] += (int64) response_bytes;
	/* a push phase without commits (a pull-only round) is not a push observation */
	if (pending.phase_seen[SYNC_STATS_PHASE_PUSH] &&
		pending.db.n[D_COMMITS_APPLIED] + pending.db.n[D_COMMITS_CACHED] +
		pending.db.n[D_COMMITS_REJECTED] > 0)
		observe(pending.db.push_hist, &pending.db.push_ms,
				pending.phase_ms[SYNC_STATS_PHASE_PUSH]);
	if (pending.phase_seen[SYNC_STATS_PHASE_PULL])
		observe(pending.db.pull_hist, &pending.db.pull_ms,
				pending.phase_ms[SYNC_STATS_PHASE_PULL]);
	flush();
}

/*
 * The round raised: count it as refused under the catalogue code of its DETAIL
 * ({"code": "<code>", ...}, sync_raise); an error without one counts as sync.internal_error.
 * Runs inside PG_CATCH: the error is copied out of ErrorContext and freed here.
 */
void
sync_stats_round_failed(void)
{
	MemoryContext old;
	ErrorData  *edata;
	char		code[STATS_CODE_LEN];
	const char *d;

	if (shared == NULL || pending.depth == 0 || --pending.depth > 0)
		return;
	old = MemoryContextSwitchTo(TopMemoryContext);
	edata = CopyErrorData();
	MemoryContextSwitchTo(old);
	strlcpy(code, "sync.internal_error", sizeof(code));
	d = edata->detail;
	if (d != NULL && strncmp(d, "{\"code\": \"", 10) == 0)
	{
		const char *q = strchr(d + 10, '"');

		if (q != NULL && q - (d + 10) < STATS_CODE_LEN)
		{
			char	   *c = pnstrdup(d + 10, q - (d + 10));

			if (sync_error_info(c) != NULL)
				strlcpy(code, c, sizeof(code));
			pfree(c);
		}
	}
	FreeErrorData(edata);

	memset(&pending.db, 0, sizeof(pending.db));
	pending.ntables = 0;
	pending.db.n[D_ROUNDS_REFUSED] = 1;
	code_add(pending.db.refused, code, 1);
	flush();
}

/* ---------------------------------------------------------------- push and pull hooks */

void
sync_stats_push_result(const SspPushCommit *commit, uint8 status)
{
	if (!counting())
		return;
	if (status == SSP_PUSH_CACHED)
		pending.db.n[D_COMMITS_CACHED]++;
	else if (status == SSP_PUSH_REJECTED)
		pending.db.n[D_COMMITS_REJECTED]++;
	else
	{
		pending.db.n[D_COMMITS_APPLIED]++;
		pending.db.n[D_OPERATIONS] += commit->nops;
		for (uint32 i = 0; i < commit->nops; i++)
			table_add(commit->ops[i].table.ptr, commit->ops[i].table.len, T_OPERATIONS, 1);
	}
}

void
sync_stats_push_failure(const SspPushCommit *commit, int32 op_index, uint8 result_status,
						const char *code)
{
	bool		conflict = (result_status == SSP_RESULT_CONFLICT);

	if (!counting())
		return;
	code_add(pending.db.rejected, code ? code : "sync.internal_error", 1);
	if (conflict)
		pending.db.n[D_CONFLICTS]++;
	if (op_index >= 0 && (uint32) op_index < commit->nops)
	{
		const SspStr *t = &commit->ops[op_index].table;

		table_add(t->ptr, t->len, T_REJECTED, 1);
		if (conflict)
			table_add(t->ptr, t->len, T_CONFLICTS, 1);
	}
}

void
sync_stats_section(const char *table, uint8 status, bool bootstrap)
{
	int			k;

	if (!counting())
		return;
	k = status == SSP_SUB_REVOKED ? 3 : status == SSP_SUB_RESET ? 2 : bootstrap ? 1 : 0;
	pending.db.n[D_SEC_INCREMENTAL + k]++;
	table_add(table, strlen(table), T_SEC_INCREMENTAL + k, 1);
}

void
sync_stats_commit_served(const char *table, int nchanges)
{
	if (!counting())
		return;
	pending.db.n[D_COMMITS_SERVED]++;
	pending.db.n[D_CHANGES_SERVED] += nchanges;
	table_add(table, strlen(table), T_COMMITS_SERVED, 1);
	table_add(table, strlen(table), T_CHANGES_SERVED, nchanges);
}

void
sync_stats_rows_served(const char *table, uint64 rows)
{
	if (!counting())
		return;
	pending.db.n[D_ROWS_SERVED] += (int64) rows;
	table_add(table, strlen(table), T_ROWS_SERVED, (int64) rows);
}

/* ---------------------------------------------------------------- shared memory */

static Size
stats_memsize(void)
{
	return add_size(MAXALIGN(sizeof(StatsShared)),
					add_size(hash_estimate_size(STATS_MAX_DATABASES, sizeof(DbEntry)),
							 hash_estimate_size(STATS_MAX_TABLES, sizeof(TableEntry))));
}

static void
stats_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(stats_memsize());
	RequestNamedLWLockTranche("syncular_stats", 1);
}

static void
stats_shmem_startup(void)
{
	bool		found;
	HASHCTL		info;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	shared = ShmemInitStruct("syncular_stats", sizeof(StatsShared), &found);
	if (!found)
	{
		shared->lock = &(GetNamedLWLockTranche("syncular_stats"))->lock;
		shared->reset_at = GetCurrentTimestamp();
	}
	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(Oid);
	info.entrysize = sizeof(DbEntry);
	db_hash = ShmemInitHash("syncular_stats databases", STATS_MAX_DATABASES,
							STATS_MAX_DATABASES, &info, HASH_ELEM | HASH_BLOBS);
	info.keysize = sizeof(TableKey);
	info.entrysize = sizeof(TableEntry);
	table_hash = ShmemInitHash("syncular_stats tables", STATS_MAX_TABLES, STATS_MAX_TABLES,
							   &info, HASH_ELEM | HASH_BLOBS);
	LWLockRelease(AddinShmemInitLock);
}

void
sync_stats_init(void)
{
	pending.phase = -1;
	if (!process_shared_preload_libraries_in_progress)
		return;
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = stats_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = stats_shmem_startup;
}

/* ---------------------------------------------------------------- SQL functions */

static void
not_preloaded(void)
{
	ereport(NOTICE,
			(errmsg("syncular statistics are not collected: the library is not in shared_preload_libraries"),
			 errhint("Add syncular to shared_preload_libraries and restart the server (docs/operations.md).")));
}

static void
check_read_privilege(void)
{
	if (!has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS))
		sync_raise("sync.forbidden", "reading syncular statistics needs superuser or pg_read_all_stats",
				   NULL);
}

static Datum
codes_jsonb(const CodeCount *slots)
{
	StringInfoData b;

	initStringInfo(&b);
	appendStringInfoChar(&b, '{');
	for (int i = 0; i < STATS_MAX_CODES && slots[i].code[0]; i++)
	{
		if (i > 0)
			appendStringInfoString(&b, ", ");
		escape_json(&b, slots[i].code);
		appendStringInfo(&b, ": " INT64_FORMAT, slots[i].count);
	}
	appendStringInfoChar(&b, '}');
	return DirectFunctionCall1(jsonb_in, CStringGetDatum(b.data));
}

static Datum
int8_array(const int64 *v, int n)
{
	Datum	   *d = palloc(sizeof(Datum) * n);

	for (int i = 0; i < n; i++)
		d[i] = Int64GetDatum(v[i]);
	return PointerGetDatum(construct_array(d, n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

static Datum
bounds_array(void)
{
	Datum		d[STATS_NBUCKETS];

	for (int i = 0; i < STATS_NBUCKETS - 1; i++)
		d[i] = Float8GetDatum(bucket_le_ms[i]);
	d[STATS_NBUCKETS - 1] = Float8GetDatum(get_float8_infinity());
	return PointerGetDatum(construct_array(d, STATS_NBUCKETS, FLOAT8OID, 8, FLOAT8PASSBYVAL,
										   TYPALIGN_DOUBLE));
}

#define STATS_COLS (2 + D_NCOUNTERS + 8)

PG_FUNCTION_INFO_V1(syncular_stats);

/*
 * syncular._stats(): one row per database with counters (syncular.stats is the view over it);
 * not preloaded: one row for the current database, preloaded = false, every figure NULL.
 */
Datum
syncular_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum		values[STATS_COLS];
	bool		nulls[STATS_COLS];
	HASH_SEQ_STATUS seq;
	DbEntry    *e;
	TimestampTz reset_at;

	check_read_privilege();
	InitMaterializedSRF(fcinfo, 0);
	if (shared == NULL)
	{
		not_preloaded();
		memset(nulls, true, sizeof(nulls));
		values[0] = BoolGetDatum(false);
		nulls[0] = false;
		values[1] = ObjectIdGetDatum(MyDatabaseId);
		nulls[1] = false;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		return (Datum) 0;
	}
	memset(nulls, false, sizeof(nulls));
	LWLockAcquire(shared->lock, LW_SHARED);
	reset_at = shared->reset_at;
	hash_seq_init(&seq, db_hash);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		DbCounters	c;
		int			k = 0;

		SpinLockAcquire(&e->mutex);
		c = e->c;
		SpinLockRelease(&e->mutex);
		values[k++] = BoolGetDatum(true);
		values[k++] = ObjectIdGetDatum(e->dbid);
		for (int i = 0; i < D_NCOUNTERS; i++)
			values[k++] = Int64GetDatum(c.n[i]);
		values[k++] = codes_jsonb(c.refused);
		values[k++] = codes_jsonb(c.rejected);
		values[k++] = bounds_array();
		values[k++] = int8_array(c.push_hist, STATS_NBUCKETS);
		values[k++] = Float8GetDatum(c.push_ms);
		values[k++] = int8_array(c.pull_hist, STATS_NBUCKETS);
		values[k++] = Float8GetDatum(c.pull_ms);
		values[k++] = TimestampTzGetDatum(reset_at);
		Assert(k == STATS_COLS);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	LWLockRelease(shared->lock);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(syncular_stats_tables);

/* syncular._stats_tables(): one row per (database, synced table) with counters. */
Datum
syncular_stats_tables(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum		values[2 + T_NCOUNTERS];
	bool		nulls[2 + T_NCOUNTERS];
	HASH_SEQ_STATUS seq;
	TableEntry *e;

	check_read_privilege();
	InitMaterializedSRF(fcinfo, 0);
	if (shared == NULL)
	{
		not_preloaded();
		return (Datum) 0;
	}
	memset(nulls, false, sizeof(nulls));
	LWLockAcquire(shared->lock, LW_SHARED);
	hash_seq_init(&seq, table_hash);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		int64		n[T_NCOUNTERS];

		SpinLockAcquire(&e->mutex);
		memcpy(n, e->n, sizeof(n));
		SpinLockRelease(&e->mutex);
		values[0] = ObjectIdGetDatum(e->key.dbid);
		values[1] = CStringGetTextDatum(e->key.name);
		for (int i = 0; i < T_NCOUNTERS; i++)
			values[2 + i] = Int64GetDatum(n[i]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	LWLockRelease(shared->lock);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(syncular_stats_reset);

/* syncular.stats_reset(): forget every counter of every database; records the reset time. */
Datum
syncular_stats_reset(PG_FUNCTION_ARGS)
{
	HASH_SEQ_STATUS seq;
	void	   *e;

	if (shared == NULL)
	{
		not_preloaded();
		PG_RETURN_VOID();
	}
	LWLockAcquire(shared->lock, LW_EXCLUSIVE);
	hash_seq_init(&seq, db_hash);
	while ((e = hash_seq_search(&seq)) != NULL)
		hash_search(db_hash, e, HASH_REMOVE, NULL);
	hash_seq_init(&seq, table_hash);
	while ((e = hash_seq_search(&seq)) != NULL)
		hash_search(table_hash, e, HASH_REMOVE, NULL);
	shared->reset_at = GetCurrentTimestamp();
	LWLockRelease(shared->lock);
	PG_RETURN_VOID();
}
