/*
 * storage_log.h — the pull's reads of stored state, as iterators over direct ordered index scans
 * in the active snapshot (no executor, no plan: a round reads what it delivers plus one entry):
 *   - the commit-log window of one subscription (storage_log.c, SPEC §3.6): candidate commits
 *     in commit order, each commit's row, and its changes of one table in idx order;
 *   - bootstrap pages (storage_pages.c, SPEC §3.7): row ids in byte order from the row-scope
 *     index, and each id's synced row.
 * The iterators hand out what is stored, read in place; which entries are delivered (the scope
 * match, limits, the response budget) is the caller's decision.  Index AM calls run in the
 * context current at open (their allocations live as long as the scans); values handed out are
 * valid until the next call on the same iterator, and anything they need allocated goes into
 * the caller's current context.
 */
#ifndef SYNCULAR_STORAGE_LOG_H
#define SYNCULAR_STORAGE_LOG_H

#include "utils/jsonb.h"

/* ---------------------------------------------------------------- the commit-log window */

typedef struct SyncLogWindow SyncLogWindow;

/* A commit row (sync_commits): the fields a COMMIT frame carries besides its changes. */
typedef struct SyncLogCommit
{
	int64		created_at_ms;
	const char *actor_id;		/* not NUL-terminated */
	uint32		actor_len;
} SyncLogCommit;

/*
 * A stored change's fields besides its scopes (sync_changes).  The version and the row are read
 * for an upsert only (what is stored for other ops is not looked at).
 */
typedef struct SyncLogChange
{
	const char *row_id;			/* not NUL-terminated */
	uint32		row_id_len;
	int16		op;				/* as stored (SSP_OP_*) */
	bool		has_row_version;
	int64		row_version;
	const char *payload;		/* NULL: none stored */
	uint32		payload_len;
} SyncLogChange;

/*
 * The window after_seq < commit_seq <= max_seq of `table` in `partition`, its candidates the
 * commits with a scope entry var = one of values[0 .. nvalues).
 */
extern SyncLogWindow *sync_log_window_open(const char *partition, const char *table,
										   const char *var, int nvalues,
										   char *const *values, int64 after_seq,
										   int64 max_seq);
extern void sync_log_window_close(SyncLogWindow *w);
/* The next candidate commit_seq (each once, ascending); -1 at the end of the window. */
extern int64 sync_log_window_next(SyncLogWindow *w);
/* The commit row of `seq` (false: pruned); its fields into *c when c is not NULL. */
extern bool sync_log_commit_read(SyncLogWindow *w, int64 seq, SyncLogCommit *c);
/* The changes of commit `seq` of the window's table, in idx order: begin, then next until false. */
extern void sync_log_changes_begin(SyncLogWindow *w, int64 seq);
/* The next change; *scopes its stored scopes (NULL when none are stored). */
extern bool sync_log_change_next(SyncLogWindow *w, Jsonb **scopes);
/* The current change's other fields. */
extern void sync_log_change_read(SyncLogWindow *w, SyncLogChange *c);

/* ---------------------------------------------------------------- bootstrap pages */

typedef struct SyncRowPager SyncRowPager;

/*
 * Pages of `table` (qualified: its synced table) in `partition`: the rows with a row-scope entry
 * var = one of values[0 .. nvalues), by row id in byte order (COLLATE "C").  Its own memory
 * context is made under parent.
 */
extern SyncRowPager *sync_rowpage_open(MemoryContext parent, const char *partition,
									   const char *table, const char *qualified,
									   const char *var, int nvalues, char *const *values);
extern void sync_rowpage_close(SyncRowPager *p);
/* Start a page after row id `after` (NULL: the table start) that reads at most limit + 1 ids. */
extern void sync_rowpage_start(SyncRowPager *p, const char *after, int64 limit);
/* The next id of the page (each once, ascending); false at the end. */
extern bool sync_rowpage_next(SyncRowPager *p, const char **id, int *id_len);
/* The visible synced row of the current id (false: none). */
extern bool sync_rowpage_find(SyncRowPager *p);
/* The found row's stored scopes (NULL: none); *copied when it must be pfree'd. */
extern Jsonb *sync_rowpage_scopes(SyncRowPager *p, bool *copied);
/* The found row's server version and stored payload; *copied when it must be pfree'd. */
extern bytea *sync_rowpage_payload(SyncRowPager *p, int64 *server_version, bool *copied);
/* Done with the page's rows (releases the last row's buffer). */
extern void sync_rowpage_end(SyncRowPager *p);

/* ---------------------------------------------------------------- a realtime window (SPI) */

/*
 * The commit log of a range as a realtime fan-out reads it (SPEC §8.2): by statement (SPI, in
 * the calling statement's snapshot), everything at once.  Values point into the statement's
 * result (valid until SPI_finish); the arrays are allocated in the caller's context.
 */
typedef struct SyncStoredChange
{
	int64		seq;
	char	   *table;
	char	   *row_id;
	int16		op;
	bool		has_row_version;
	int64		row_version;
	Jsonb	   *scopes;
	bytea	   *payload;		/* NULL: none stored */
} SyncStoredChange;

typedef struct SyncStoredCommit
{
	int64		seq;
	int64		created_at_ms;
	char	   *actor_id;
} SyncStoredCommit;

/* The changes of lo < commit_seq <= hi, newest first (commit_seq, idx), at most limit (<= 0: all). */
extern uint64 sync_log_read_changes(const char *partition, int64 lo, int64 hi, int64 limit,
									SyncStoredChange **out);
/* The commit rows of lo < commit_seq <= hi, oldest first. */
extern uint64 sync_log_read_commits(const char *partition, int64 lo, int64 hi,
									SyncStoredCommit **out);
/* A watch rerun's window: (seq, table, scopes) of lo < commit_seq <= hi, unordered; above max
 * rows the count only (*out NULL). */
extern uint64 sync_log_read_change_scopes(const char *partition, int64 lo, int64 hi, int max,
										  SyncStoredChange **out);

#endif							/* SYNCULAR_STORAGE_LOG_H */
