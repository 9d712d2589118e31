/*
 * storage.h — the engine's reads and writes of sync_* tables (storage.c: partitions, clients,
 * idempotency, the commit log's writes; storage_meta.c: registration state and the writer
 * fence; storage_blobs.c: the blob store; storage_ops.c: remote-operation registrations;
 * storage_capture.c: the SQL-write capture's log statement; storage_reactions.c: enqueued
 * reactions) and of synced rows and declared
 * references (storage_rows.c).  The pull's index-scan readers are in storage_log.h.
 * Every function needs an SPI connection; results are allocated in CurrentMemoryContext.
 */
#ifndef SYNCULAR_STORAGE_H
#define SYNCULAR_STORAGE_H

#include "engine.h"
#include "executor/spi.h"
#include "storage/itemptr.h"
#include "utils/resowner.h"

typedef struct SyncStoredRow
{
	bool		found;
	int64		server_version;
	Jsonb	   *scopes;			/* _sync_scopes */
	bytea	   *payload;		/* full-row codec bytes */
	bytea	   *column_versions;	/* NULL when no column is above version 1 */
} SyncStoredRow;

/* A tombstone as sync_storage_tombstone_get answers it (found = false: none). */
typedef struct SyncTombstone
{
	bool		found;
	int64		commit_seq;
	Jsonb	   *delete_scopes;
} SyncTombstone;

/*
 * Advisory timestamps (sync_partition_registry.last_authenticated_at_ms,
 * sync_clients.updated_at_ms) are rewritten by a round only when they are at least this old:
 * a busy partition or client is not rewritten on every round.
 */
#define SYNC_TOUCH_INTERVAL_MS 1000

/* registry and partitions */
extern char *sync_storage_partition_epoch(const char *partition, int64 now_ms, bool can_write,
										  int64 *touched_ms);
extern void sync_storage_registry_touch(const char *partition, int64 now_ms);
extern void sync_storage_lock_partition(const char *partition);
extern int64 sync_storage_reserve_commit_seq(const char *partition);
extern void sync_storage_unreserve_commit_seq(const char *partition);
extern void sync_storage_read_seqs(const char *partition, int64 *max_seq, int64 *horizon_seq);

/* client records */
typedef struct SyncClientRecord
{
	char	   *actor_id;		/* the bound actor */
	int64		cursor;
	int32		wire_version;
	int64		updated_at_ms;
	Jsonb	   *subscriptions;	/* NULL for a record this round created */
} SyncClientRecord;

extern bool sync_storage_client_get(const char *partition, const char *client_id,
									SyncClientRecord *rec);
extern bool sync_storage_client_claim(const char *partition, const char *client_id,
									  const char *actor_id, int wire_version, int64 now_ms,
									  SyncClientRecord *rec);
extern bool sync_storage_client_ack(const char *partition, const char *actor_id,
									const char *client_id, int64 cursor, const char *epoch,
									int64 now_ms);
/* storage_acks.c: the acks of many clients of one partition in one statement (§8.2) */
extern int64 sync_storage_client_ack_many(const char *partition, Datum actors, Datum clients,
										  Datum cursors, Datum epochs, int64 now_ms);
extern bool sync_storage_client_upsert(const char *partition, const char *client_id,
									   const char *actor_id, int wire_version, int64 cursor,
									   const char *subscriptions_json, int64 now_ms);

/* idempotency records */
extern Jsonb *sync_storage_push_result_lookup(const char *partition, const char *client_id,
											   const char *client_commit_id, bool *fault);
extern Jsonb *sync_storage_push_result_get(const char *partition, const char *client_id,
										   const char *client_commit_id);
extern bool sync_storage_push_result_insert(const char *partition, const char *client_id,
											const char *client_commit_id,
											const char *result_json);

/* rows */
extern bool sync_storage_row_get(const SyncSchema *schema, int table_index,
								 const char *partition, const char *row_id, SyncStoredRow *out);
extern bool sync_storage_table_plain(const SyncSchema *schema, int table_index);
/* The PostgreSQL type of a materialized column of schema type `type` (SSP_COL_*). */
extern Oid	sync_storage_column_oid(uint8 type);
extern void sync_storage_rows_prefetch(const SyncSchema *schema, int table_index,
									   const char *partition, int n, const char **row_ids,
									   SyncStoredRow *out, SyncTombstone *tombs);
/* What a commit read of the row it writes (the upsert's cheaper forms follow from it). */
typedef enum SyncRowStored
{
	SYNC_ROW_UNKNOWN = 0,		/* not known: the upsert */
	SYNC_ROW_SAME_SCOPES,		/* stored with exactly these scopes: an update */
	SYNC_ROW_ABSENT				/* not stored: an insert */
} SyncRowStored;

extern void sync_storage_row_upsert(const SyncSchema *schema, int table_index,
									const char *partition, const char *row_id,
									int64 server_version, const char *scopes_json,
									const uint8 *payload, size_t payload_len,
									const uint8 *column_versions, size_t column_versions_len,
									const SspValue *values, SyncRowStored stored);
/* One row of sync_storage_rows_upsert (the arguments of sync_storage_row_upsert). */
typedef struct SyncRowWrite
{
	const char *row_id;
	int64		server_version;
	const char *scopes_json;
	const uint8 *payload;
	size_t		payload_len;
	const uint8 *column_versions;	/* NULL: none above version 1 */
	size_t		column_versions_len;
	const SspValue *values;
	SyncRowStored stored;		/* what the commit read of the row */
} SyncRowWrite;

extern void sync_storage_rows_upsert(const SyncSchema *schema, int table_index,
									 const char *partition, int n, const SyncRowWrite *rows);
extern void sync_storage_row_delete(const SyncSchema *schema, int table_index,
									const char *partition, const char *row_id);
extern bool sync_storage_tombstone_get(const char *table, const char *partition,
									   const char *row_id, int64 *commit_seq,
									   Jsonb **delete_scopes);
extern void sync_storage_tombstone_clear(const char *table, const char *partition,
										 const char *row_id);
extern void sync_storage_blob_refs_replace(const char *table, const char *partition,
										   const char *row_id, int nids, char **blob_ids);

/* the commit log */
extern void sync_storage_commit_insert(const char *partition, int64 commit_seq,
									   const char *client_id, const char *client_commit_id,
									   const char *actor_id, int64 created_at_ms,
									   int64 writer_version);
/* One change for sync_storage_changes_insert. */
typedef struct SyncChangeRow
{
	const char *table;
	const char *row_id;
	int16		op;
	bool		has_version;
	int64		row_version;
	const char *scopes_json;
	const uint8 *payload;		/* NULL: no payload (a delete) */
	size_t		payload_len;
} SyncChangeRow;

/* at most this many changes per sync_storage_changes_insert statement */
#define SYNC_CHANGES_PER_STATEMENT 4096

extern void sync_storage_changes_insert(const char *partition, int64 commit_seq,
										int32 first_idx, int n, const SyncChangeRow *changes);

/* storage_plan.c: prepare and keep a statement (cursor_opts 0 or CURSOR_OPT_GENERIC_PLAN) */
extern SPIPlanPtr sync_storage_keep_plan(const char *sql, int nargs, Oid *types, int cursor_opts);

/* registration state (storage_meta.c) */

/* One serve gate read (SPEC §4.2). */
typedef struct SyncGateRead
{
	int64		stored;			/* stored schema version, 0 without a marker */
	char	   *epoch;			/* the partition's log epoch, NULL without a registry row */
	int			npending;		/* pending checkpoints, (partition, name) COLLATE "C" order */
	char	  **pending_partition;
	char	  **pending_name;
} SyncGateRead;

extern void sync_storage_gate_read(const char *partition, int32 running, bool read_only,
								   SyncGateRead *g);
extern bool sync_storage_compiled_version(int32 *version);

/* The settings row as sync_storage_settings_read answers it. */
typedef struct SyncSettingsRow
{
	char	   *key;			/* the row version: xmin:ctid */
	bool		changed;		/* key differs from the known one: the fields below are read */
	Jsonb	   *compiled;		/* NULL: not compiled */
	Oid			hooks[3];		/* scope_resolver, commit_validator, reaction_planner */
} SyncSettingsRow;

extern bool sync_storage_settings_read(const char *known_key, SyncSettingsRow *row);
extern bool sync_storage_settings_version_visible(TransactionId xmin, ItemPointer tid);
extern Oid	sync_storage_crdt_merger(const char *crdt_type, bool *registered);
extern Oid	sync_storage_row_validator(const char *table);

/* An auth lease (SPEC §7.3). */
typedef struct SyncStoredLease
{
	char	   *actor_id;
	Jsonb	   *allowed_scopes;
	int64		expires_at_ms;
	bool		revoked;
} SyncStoredLease;

extern bool sync_storage_lease_issue(const char *partition, const char *client_id,
									 const char *new_id, const char *actor_id,
									 const char *allowed_json, int64 now_ms, int64 ttl_ms,
									 bool reissue, char **lease_id, int64 *expires_at_ms);
extern bool sync_storage_lease_get(const char *partition, const char *client_id,
								   SyncStoredLease *lease);

/* An applied pushed commit: its sync_commits row, with its stored result (sync_commits.result). */
typedef struct SyncCommitRow
{
	const char *partition;
	int64		commit_seq;
	const char *client_id;
	const char *client_commit_id;
	const char *actor_id;
	int64		created_at_ms;
	int64		writer_version;
	/* the stored result as text, or as jsonb (as jsonb_in makes it): one of them, the other NULL */
	const char *result_json;
	Jsonb	   *result;
} SyncCommitRow;

extern void sync_storage_commit_append(const SyncCommitRow *c, int nchanges,
									   const SyncChangeRow *changes);

/* One validated reaction record (hook_records.c) as storage_reactions.c writes it. */
typedef struct SyncReactionRecord
{
	char	   *key;
	char	   *idempotency_key;	/* ["<partition>","<client>","<commit>","<key>"] */
	char	   *type;
	int32		version;
	Jsonb	   *payload;
	int32		max_attempts;
} SyncReactionRecord;

extern int64 sync_storage_reactions_insert(const char *partition, const char *client_id,
										   const char *client_commit_id, int64 commit_seq,
										   int64 now_ms, int n, const SyncReactionRecord *recs);

/* the commit log of SQL writes (storage_capture.c; capture_log.c runs them) */
typedef enum SyncCaptureEvent
{
	SYNC_EV_INSERT,
	SYNC_EV_UPDATE,
	SYNC_EV_DELETE,
	SYNC_EV_TRUNCATE,
	SYNC_EV_COUNT
} SyncCaptureEvent;

/*
 * Which log statement appends a statement's changes: the general one (old and new rows joined by
 * rowId; planned for a few rows or, BULK, for many), or a lean one for an UPDATE whose rows all
 * kept their partition, rowId and scopes (IN_PLACE) or an INSERT (every row new).
 */
typedef enum SyncCaptureShape
{
	SYNC_SHAPE_GENERAL,
	SYNC_SHAPE_GENERAL_BULK,
	SYNC_SHAPE_IN_PLACE,
	SYNC_SHAPE_INSERT,
	SYNC_SHAPE_COUNT
} SyncCaptureShape;

/* One row written by one statement, appended as one upsert change (sync_storage_capture_one). */
typedef struct SyncCaptureRow
{
	const char *partition;
	const char *table;
	int64		commit_seq;
	int32		idx;			/* the change's index in its commit */
	const char *row_id;
	int64		version;
	Datum		scopes;			/* jsonb: the row's _sync_scopes */
	Datum		payload;		/* bytea: the row's _sync_payload */
	bool		fresh;			/* inserted: clear its tombstone, write its row-scope entries */
	/* a new commit: its row, with the change in it, is written by sync_storage_capture_commit_one */
	bool		new_commit;
	int32		schema_version; /* the running schema: the gate's and the writer_version */
	const char *client_id;
	const char *client_commit_id;
	const char *actor_id;
	int64		created_at_ms;
} SyncCaptureRow;

extern int	sync_storage_capture_partitions(const char *qualified, char ***partitions);
/*
 * A new commit of SQL writes whose first change is r (an upsert with one scope pair): its commit
 * row with the change in it, without the statement (storage_append.c; the caller holds the lock
 * and passed the gate); false, nothing written, when the statement must write it.
 */
extern bool sync_storage_capture_commit_one(const SyncCaptureRow *r);
/*
 * A one-row INSERT's new commit written that way: the row's row-scope entries without the
 * statement (storage_capture_direct.c); false, nothing written, when the statement must write
 * them (sync_storage_capture_fresh_rest).
 */
extern bool sync_storage_capture_fresh_rows(const SyncTable *t, const SyncCaptureRow *r);
extern bool sync_storage_capture_lean_ok(const SyncTable *t);
extern void sync_storage_capture_register(struct TriggerData *td, bool bulk);
/*
 * The log of the rows of `partition` of a statement that inserted rows (inserted) or updated
 * them in place (nts: its NEW transition table, desc: the synced table's) without the statement
 * (storage_capture_direct.c): the number of changes appended, or -1 with nothing written when
 * the statement must make it.
 */
extern int64 sync_storage_capture_lean_direct(const SyncTable *t, struct Tuplestorestate *nts,
											  struct TupleDescData *desc, const char *partition,
											  int64 commit_seq, int32 first_idx, bool inserted);
extern int64 sync_storage_capture_append(const SyncSchema *schema, int ti, SyncCaptureEvent ev,
										 SyncCaptureShape shape, const char *partition,
										 int64 commit_seq, int32 first_idx);
extern void sync_storage_capture_one(const SyncCaptureRow *r);
extern void sync_storage_capture_fresh_rest(const SyncCaptureRow *r);

/* storage_meta.c: ensure_schema's registration state (schema_ensure.c; SPEC §4, RFC 0007) */
extern void sync_storage_schema_lock(void);
extern char *sync_storage_settings_app_schema(void);
extern bool sync_storage_schema_meta_read(int64 *version, char **layouts);
extern void sync_storage_settings_write(const char *app_schema, Jsonb *compiled);
extern void sync_storage_schema_meta_write(int32 version, Jsonb *compiled);
extern void sync_storage_forget_table(const char *tbl);

/* storage_meta.c: the partition's writer fence (RFC 0007); true with *required when fenced */
extern bool sync_storage_writer_fence_read(Datum partition, int32 *required);
extern void sync_storage_writer_fence_check(Datum partition, bool partition_null, Datum writer,
											bool writer_null);

/* remote-operation registrations (storage_ops.c; REMOTE.md §2, §3, §5) */
typedef struct SyncOpsQueryRow
{
	char	   *bound_sql;
	Jsonb	   *params;			/* [{name, type}] */
	Jsonb	   *columns;		/* [{name, type, nullable}] */
	bool		privileged;
	Oid			authorize;		/* InvalidOid: none */
	int32		max_rows;
	Jsonb	   *coverage;
	Jsonb	   *syql;			/* NULL: one statement */
} SyncOpsQueryRow;

extern bool sync_storage_ops_command(const char *operation_id, Oid *authorize, Oid *command);
extern bool sync_storage_ops_query(const char *operation_id, SyncOpsQueryRow *row);
extern bool sync_storage_ops_watch(const char *operation_id, bool *privileged, Jsonb **tables,
								   Jsonb **coverage);

/* the blob store (storage_blobs.c; SPEC §5.9) */
extern int64 sync_blob_store_next_upload_id(void);
extern bool sync_blob_store_exists(const char *partition, const char *blob_id, bool lock);
extern void sync_blob_store_chunk_insert(int64 upload_id, int32 seq, bytea *chunk);
extern void sync_blob_store_staged(int64 upload_id, int32 *nchunks, int64 *bytes);
extern bool sync_blob_store_insert(const char *partition, const char *blob_id, int64 byte_length,
								   const char *uploader, int64 created_at_ms, int64 upload_id);
extern void sync_blob_store_chunks_delete(int64 upload_id);
extern bool sync_blob_store_get(const char *partition, const char *blob_id, int64 *byte_length,
								int64 *upload_id);
extern bool sync_blob_store_refs_any(const char *partition, const char *blob_id,
									 bool (*fn) (const char *tbl, const char *row_id, void *arg),
									 void *arg);
extern int64 sync_blob_store_chunks_each(int64 upload_id, void (*fn) (bytea *chunk, void *arg),
										 void *arg);
extern int	sync_blob_store_partitions(const char *blob_id, char ***partitions);

/*
 * Internal subtransactions (no SPI needed): release on success, or in PG_CATCH roll back and
 * get the error (copied into cxt); either way cxt and owner are current again.  What to
 * re-throw stays the caller's decision.
 */
extern void sync_subxact_release(MemoryContext cxt, ResourceOwner owner);
extern ErrorData *sync_subxact_rollback(MemoryContext cxt, ResourceOwner owner);

/*
 * jsonb_in of JSON.parse-valid text (len bytes, no NUL), what jsonb refuses (SQLSTATE class 22
 * or 54) caught: the datum, or (Datum) 0 with *refused set (storage_values.c).
 */
extern Datum sync_jsonb_in_guarded(const char *text, uint32 len, ErrorData **refused);

#endif							/* SYNCULAR_STORAGE_H */
