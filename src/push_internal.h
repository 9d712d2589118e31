/*
 * push_internal.h — what the files of the push pipeline share (push.c the commit,
 * push_apply.c the operations, push_rows.c the read-ahead, push_values.c row values and size
 * limits, push_outcome.c the results and their stored JSON, push_conflict.c the conflict step
 * of an upsert).  Calls point down that list: push.c -> push_apply.c -> push_conflict.c /
 * push_rows.c / push_values.c -> push_outcome.c; references.c (called by push.c) appends
 * operations through the SyncRowWriter push.c passes it (push_row_writer), never calling up.
 */
#ifndef SYNCULAR_PUSH_INTERNAL_H
#define SYNCULAR_PUSH_INTERNAL_H

#include "engine.h"
#include "rules.h"
#include "storage.h"

/* ---------------------------------------------------------------- state */

typedef struct OpRecord
{
	int32		op_index;
	uint8		status;			/* SSP_RESULT_* */
	char	   *code;
	char	   *message;
	bool		retryable;
	int64		server_version;
	uint8	   *server_row;
	uint32		server_row_len;
	uint8	   *conflict_cols;
	uint32		conflict_len;
	char	   *details_json;
} OpRecord;

typedef struct CommitOutcome
{
	uint8		status;			/* SSP_PUSH_* */
	bool		has_seq;
	int64		commit_seq;
	int			nrecords;
	OpRecord   *records;
} CommitOutcome;

typedef struct PendingChange
{
	const char *table;
	const char *row_id;
	int16		op;
	bool		has_version;
	int64		version;
	char	   *scopes_json;
	uint8	   *payload;
	size_t		payload_len;
} PendingChange;

/* An upsert deferred into the commit's row-write batch (push_rows.c). */
typedef struct PendingWrite
{
	int32		op_index;		/* charged with an error of the write */
	int			ti;
	SyncRowWrite w;
} PendingWrite;

typedef struct PushState
{
	SyncRound  *round;
	SyncSchema *schema;
	const SspPushCommit *commit;
	char	   *client_commit_id;
	SyncCommitState cs;
	int			nchanges;
	int			maxchanges;
	PendingChange *changes;
	int32		writing_op;		/* opIndex of the row write in progress, else -1 */
	bool		planning;		/* inside the reaction planner / enqueue */
	OpRecord	reject;			/* the terminating record when rejected */
	/* read-ahead of the client ops' rows (prefetch_rows); NULL when not done */
	bool	   *pre_valid;		/* per client op: pre_rows[i] / pre_tombs[i] answer it */
	SyncStoredRow *pre_rows;
	SyncTombstone *pre_tombs;
	/* the row-write batch (push_rows.c): upserts deferred while `batching` */
	bool		batching;
	int			npending;
	int			maxpending;
	PendingWrite *pending;
	int8	   *batchable;		/* per table: 0 not known yet, 1 batchable, -1 not */
} PushState;

/* The PushState a SyncCommitState is embedded in (rules.h services get the latter). */
#define PUSH_STATE(cs) ((PushState *) ((char *) (cs) - offsetof(PushState, cs)))

/* push_outcome.c: records, stored results, the PUSH_RESULT frames */
extern void push_set_error(OpRecord *rec, int32 op_index, const char *code, const char *message,
						   bool retryable);
extern void push_set_reject(OpRecord *rec, int32 op_index, const SyncOpReject *r);
extern void push_record_to_hook(const OpRecord *rec, SyncOpReject *r);
extern void push_internal_error(const char *what) pg_attribute_noreturn();
extern char *push_new_cache_identity(void);
extern char *push_outcome_json(const CommitOutcome *o, int64 recorded_at_ms,
							   const char *cache_identity);
extern Jsonb *push_outcome_jsonb(const CommitOutcome *o, int64 recorded_at_ms,
								 const char *cache_identity);
extern bool push_outcome_from_json(Jsonb *j, CommitOutcome *o, char **identity);
extern void push_cache_miss(CommitOutcome *o);
extern void push_replay(Jsonb *stored, CommitOutcome *o);
extern void push_write_outcome(SyncRound *round, const SspPushCommit *commit,
							   const CommitOutcome *o, MemoryContext out_cxt);

/* push_values.c: row values, column versions, size limits */
extern char *push_scope_text(const SspColumn *col, const SspValue *v);
extern void push_payload_scopes(const SyncTable *t, const SspValue *vals, SyncRowScopes *out,
								bool *complete);
extern char *push_jsonb_text(Jsonb *j);
extern int64 *push_column_versions(const SyncTable *t, const SyncStoredRow *row);
extern bytea *push_encode_column_versions(const SyncTable *t, const int64 *cv);
extern uint8 *push_encode_full(const SyncTable *t, const SspValue *vals, size_t *len);
extern SspValue *push_decode_stored(const SyncTable *t, const SyncStoredRow *stored);
extern int	push_collect_blob_ids(const SyncTable *t, const SspValue *vals, char ***ids_out);
extern bool push_table_has_blob_refs(const SyncTable *t);
extern void push_set_size_reject(OpRecord *rec, int32 op_index, const char *reason,
								 const char *what, size_t bytes, size_t max, const char *field);
extern bool push_check_row_keys(PushState *st, int32 op_index, const SyncTable *t,
								const SspValue *row, bool insert);
extern bool push_check_row_bytes(PushState *st, int32 op_index, size_t payload_len);
extern uint8 *push_new_bitmap(const SyncTable *t, uint32 *len);
extern void push_set_conflict(OpRecord *rec, int32 op_index, const SyncStoredRow *row,
							  uint8 *bitmap, uint32 bitmap_len);

/* push_rows.c: the read-ahead of a commit's rows and the row-write batch */
extern int	push_op_table_index(const SyncSchema *schema, const SspPushOp *op);
extern void push_prefetch_rows(PushState *st);
extern void push_op_row_get(PushState *st, int32 i, int ti, const char *row_id,
							SyncStoredRow *out, SyncTombstone **tomb);
extern bool push_rows_batchable(PushState *st, int ti);
extern void push_rows_queue(PushState *st, int32 op_index, int ti, const SyncRowWrite *w);
extern void push_rows_flush(PushState *st);

/* push_conflict.c: the conflict step of an upsert (SPEC §6.2), wire 2 and wire 3 side by side */
extern bool push_conflict_scope_columns(PushState *st, int32 i, const SyncTable *t,
										SspValue *vals, const SyncRowScopes *stored_scopes);
extern bool push_conflict_update(PushState *st, int32 i, const SspPushOp *op,
								 const SyncTable *t, const SspValue *vals,
								 const SyncStoredRow *stored, int64 **cv);
extern bool push_conflict_insert(PushState *st, int32 i, const SspPushOp *op,
								 const SyncTable *t, const char *row_id,
								 const SyncTombstone *pre_tomb, bool authorized,
								 bool scopes_complete, bool all_present, bool *tomb_absent);

/* push_apply.c: one operation, and the row writer reference enforcement appends through */
extern bool push_apply_op(PushState *st, int32 i, const SspPushOp *op);
extern const SyncRowWriter push_row_writer;

#endif							/* SYNCULAR_PUSH_INTERNAL_H */
