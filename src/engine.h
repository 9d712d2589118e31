/*
 * engine.h — types shared by the protocol engine (round, push, pull, scopes, storage).
 *
 * The engine runs inside one backend transaction.  Everything here is allocated in the
 * memory context current at the call unless a comment says otherwise; the compiled schema is
 * cached per backend in its own context (see schema.c).
 */
#ifndef SYNCULAR_ENGINE_H
#define SYNCULAR_ENGINE_H

#include "postgres.h"
#include "utils/jsonb.h"
#include "lib/stringinfo.h"
#include "ssp.h"

/* ---------------------------------------------------------------- compiled schema (schema.c) */

typedef struct SyncColumn
{
	char	   *name;
	uint8		type;			/* wire tag 1..8 (SSP_COL_*) */
	bool		nullable;
	bool		encrypted;
	char	   *crdt_type;		/* NULL unless type is crdt */
} SyncColumn;

typedef struct SyncScope
{
	char	   *pattern;		/* "list:{list_id}" */
	char	   *prefix;			/* "list" */
	char	   *variable;		/* "list_id" */
	char	   *column;			/* "list_id" */
	int			column_index;
} SyncScope;

typedef struct SyncReference
{
	char	   *column;
	int			column_index;
	char	   *parent_table;
	char	   *on_delete;		/* "restrict" | "cascade" | "set_null" */
} SyncReference;

/* A declared index of a materialized table: its columns after _sync_partition. */
typedef struct SyncIndex
{
	int			ncolumns;
	int		   *column_index;
} SyncIndex;

typedef struct SyncTable
{
	char	   *name;
	char	   *qualified;		/* quote_identifier(appSchema) "." quote_identifier(name) */
	bool		materialize;
	int			pk_index;
	int			ncolumns;
	SyncColumn *columns;
	SspColumn  *codec_columns;	/* the same columns in the codec's shape */
	int			nscopes;
	SyncScope  *scopes;
	int			nreferences;
	SyncReference *references;
	int			nindexes;		/* declared indexes (materialized tables only) */
	SyncIndex  *indexes;
} SyncTable;

typedef struct SyncSchema
{
	int32		version;
	char	   *app_schema;
	int			ntables;
	SyncTable  *tables;
	int			nvariables;		/* union of scope variables, sorted (strcmp) */
	char	  **variables;
	/* hooks registered in sync_settings (InvalidOid when none) */
	Oid			scope_resolver;
	Oid			commit_validator;
	Oid			reaction_planner;
	uint64		generation;		/* bumped every time the cache is rebuilt */
} SyncSchema;

/*
 * The schema compiled by ensure_schema, cached per backend; NULL when none is registered.
 * Reads syncular.sync_settings through SPI (connects itself when needed).  The returned
 * pointer stays valid until the next call that sees a different settings row.
 */
extern SyncSchema *sync_schema_get(void);
extern SyncTable *sync_schema_table(SyncSchema *schema, const char *name);
extern int	sync_schema_table_index(SyncSchema *schema, const char *name);
/* Generation of the cached schema (0 = never loaded); storage plans follow it. */
extern uint64 sync_schema_generation;

/* ---------------------------------------------------------------- errors (errors.c) */

/* One entry of the Syncular error catalogue (shared/reference/errors.md). */
typedef struct SyncErrorInfo
{
	const char *code;			/* "sync.invalid_request" */
	const char *category;		/* "invalid-request" */
	bool		retryable;
	const char *action;			/* recommendedAction */
	int			http_status;
	int			sqlstate;		/* used when the code is raised with ereport */
} SyncErrorInfo;

extern const SyncErrorInfo *sync_error_info(const char *code);

/*
 * Raise `code` as an ERROR: SQLSTATE from the catalogue, errmsg(message),
 * errdetail('{"code": code, "details": details_json}').  details_json may be NULL.
 */
extern void sync_raise(const char *code, const char *message, const char *details_json) pg_attribute_noreturn();
extern void sync_raise_hint(const char *code, const char *message, const char *details_json,
							const char *hint) pg_attribute_noreturn();
extern void sync_raise_no_schema(void) pg_attribute_noreturn();
extern char *sync_json_member(const char *name, const char *value);

/* A codec refusal as an ERROR: its catalogue code (out_of_memory for the codec's internal
 * failure). */
extern void sync_raise_codec_error(const SspError *err) pg_attribute_noreturn();

/* The errdetail text of sync_raise, palloc'd: {"code": code, "details": details_json}
 * (details omitted when NULL). */
extern char *sync_error_detail_json(const char *code, const char *details_json);

/* An error of a host function that is the server's failure (classes 40, 53, 57, 58, XX):
 * re-thrown, never stored as the function's verdict. */
extern bool sync_is_server_failure(int sqlerrcode);

/* A required, non-empty text argument of a SQL function (sync.invalid_request otherwise). */
extern char *sync_required_text_arg(FunctionCallInfo fcinfo, int n, const char *who,
									const char *what);

/* The JSON error body of an HTTP answer {code, category, retryable,
 * recommendedAction, message, details?} (details_json may be NULL).  As a bytea body:
 * (bytea *) cstring_to_text(...), text and bytea sharing the varlena layout. */
extern char *sync_http_error_body(const SyncErrorInfo *e, const char *message,
								  const char *details_json);
/* entry.c: whether text argument argno is the media type `expected` (parameters ignored). */
extern bool sync_http_content_type_is(FunctionCallInfo fcinfo, int argno, const char *expected);
/* entry.c: the 415 body (sync.invalid_request "unsupported content type"), and the one
 * (status, content_type, body) row of an HTTP entry point's materialized result. */
extern bytea *sync_http_unsupported_type_body(void);
extern void sync_http_put_answer(FunctionCallInfo fcinfo, int status, const char *ctype,
								 bytea *body);
/* A raised catalogue error (DETAIL exactly sync_error_detail_json's text, the catalogue's
 * SQLSTATE): its entry and raw details text; NULL for any other error. */
extern const SyncErrorInfo *sync_catalogue_error(const ErrorData *edata, char **details);

/* entry.c: an entry point's work run in an internal subtransaction; NULL when it returned, else
 * its error (subtransaction rolled back; cancel and shutdown re-thrown), the caller's memory
 * context and resource owner current either way.  sync_entry_http_error: that error as an HTTP
 * status and JSON body (catalogue error, else logged and 500 sync.internal_error); frees edata. */
typedef void (*SyncEntryWork) (void *arg);
extern ErrorData *sync_entry_run(SyncEntryWork work, void *arg);
extern bytea *sync_entry_http_error(ErrorData *edata, const char *what, int *status);
/* entry.c: an HTTP entry point's whole answer (415 for another content type in argument 3, else
 * work under sync_entry_run; on_error turns a caught error into the body, status and type). */
typedef bytea *(*SyncHttpWork) (FunctionCallInfo fcinfo);
typedef bytea *(*SyncHttpError) (ErrorData *edata, int *status, const char **ctype);
extern void sync_entry_http(FunctionCallInfo fcinfo, const char *content_type, SyncHttpWork work,
							SyncHttpError on_error);

/* ---------------------------------------------------------------- settings (syncular.c) */

extern int	sync_max_operations_per_request;	/* GUC syncular.max_operations_per_request */
extern int	sync_max_request_bytes;	/* GUC syncular.max_request_bytes */
extern char *sync_declared_checkpoints;	/* GUC syncular.checkpoints (JSON array text) */
extern int	sync_max_subscriptions_per_request;	/* GUC syncular.max_subscriptions_per_request */
extern int	sync_max_response_bytes;	/* GUC syncular.max_response_bytes */
extern int	sync_max_row_bytes;		/* GUC syncular.max_row_bytes */
extern bool sync_auto_create_partitions;	/* GUC syncular.auto_create_partitions */

/*
 * Fixed key maxima (bytes), checked before a row is written so that no btree entry can pass
 * PostgreSQL's index-tuple limit (~2.7 kB on 8 kB pages): a rowId, one scope value, one
 * blob_ref id, and the values of one declared index or reference column together.  Identifiers
 * a request carries (partition, clientId, clientCommitId) are bounded by SYNC_MAX_ID_BYTES.
 */
#define SYNC_MAX_ROW_ID_BYTES		1024
#define SYNC_MAX_SCOPE_VALUE_BYTES	1024
#define SYNC_MAX_INDEX_KEY_BYTES	1536
#define SYNC_MAX_ID_BYTES			256

/* Raise sync.invalid_request (not retryable) when a request is over syncular.max_request_bytes. */
extern void sync_check_request_bytes(Size request_bytes);

/* ---------------------------------------------------------------- scopes (scopes.c) */

/* Allowed scopes from the resolver: var -> values, or any ("*"). */
typedef struct SyncAllowed
{
	bool		failed;			/* no resolver, or it raised: fail closed */
	bool		leased;			/* taken from the client's auth lease (§7.3.3 outage) */
	int			nvars;
	char	  **vars;
	bool	   *any;
	int		   *nvalues;
	char	 ***values;
} SyncAllowed;

/*
 * What one subscription may receive: every declared scope variable of its table with the values
 * a row may hold there.  Entries [0, nvars) are the requested variables, sorted: requested ∩
 * allowed, the effective map echoed in SUB_START (§3.2, §4.4) and hashed by the scope digest
 * (§3.5).  Entries [nvars, nall) are the table's other declared variables, which the
 * subscription did not request: the grant's values there, or any value (`any`) when the grant
 * says "*".  A row matches when its stored value of every entry is allowed (this project's read
 * rule: reads never exceed what the same actor may write, §3.4).  Values sorted, de-duplicated.
 */
typedef struct SyncEffective
{
	bool		revoked;
	int			nvars;			/* requested variables (the echoed effective map) */
	int			nall;			/* every declared variable of the table (>= nvars) */
	char	  **vars;
	bool	   *any;			/* "*" granted (only for entries >= nvars) */
	int		   *nvalues;
	char	 ***values;
} SyncEffective;

/* Stored scopes of one row: variable -> one value (sorted by variable, strcmp). */
typedef struct SyncRowScopes
{
	int			n;
	char	  **vars;
	char	  **values;
} SyncRowScopes;

/* ---------------------------------------------------------------- the round (round.c) */

typedef struct SyncRound
{
	SyncSchema *schema;
	const char *partition;
	const char *actor_id;
	const char *client_id;
	uint16		wire_version;
	char	   *log_epoch;		/* the partition's current epoch */
	SyncAllowed *allowed;		/* resolved at most once per round */
	int64		max_seq;		/* read once after the pushes */
	int64		horizon_seq;
	int32		limit_commits;	/* clamped PULL_HEADER values */
	int32		limit_snapshot_rows;
	int32		max_snapshot_pages;
	uint8		accept;
	SspBuf	   *out;			/* the response being written */
	/* added by round.c; pull.c may read them */
	const SspMessage *request;	/* the decoded request */
	int64		now_ms;			/* server clock at the start of the round */
	bool		nonatomic;		/* procedure form outside a transaction block */
	bool		has_pull;		/* the request carries a PULL_HEADER */
	int64		gate_stored;	/* gate.c: the token read at entry: stored schema version */
	char	   *gate_epoch;		/* ... and the partition's log epoch */
	/* pull.c: the response budget (syncular.max_response_bytes), see pull.c "Budget" */
	bool		data_delivered;	/* a bootstrap row or a commit is in the response */
	bool		budget_spent;	/* an item did not fit: later sections carry no data */
} SyncRound;

/*
 * Round ↔ pull seam.  round.c validates the request, resolves scopes once, computes each
 * subscription's effective scopes, then (after the pushes) pushes ONE snapshot for every pull
 * read, reads max_seq/horizon_seq in it, and calls sync_pull_subscription per SUBSCRIPTION
 * frame in request order.  pull.c writes SUB_START .. SUB_END into round->out using SPI with
 * read_only = true (so every read uses that active snapshot).
 */
typedef struct SyncPullResult
{
	bool		active;			/* section status active (bootstrapping included) */
	int64		next_cursor;	/* SUB_END.nextCursor */
} SyncPullResult;

/* scopes.c */
extern SyncAllowed *sync_scopes_resolve(SyncRound *round);	/* calls the resolver at most once per round */
extern bool sync_scopes_allows(const SyncAllowed *allowed, const char *var, const char *value);
/* Lowercase SHA-256 hex (64 characters + NUL written to hex) of len bytes. */
extern void sync_sha256_hex(const uint8 *data, size_t len, char *hex);
/* UTF-16 code-unit order of two char * (qsort/bsearch), and sort + de-duplicate in that order. */
extern int	sync_cmp_utf16(const void *a, const void *b);
extern int	sync_sort_unique(char **v, int n);
extern char *sync_scope_digest(const SyncEffective *effective);	/* lowercase sha256 hex of canonical JSON */
extern bool sync_scopes_match(const SyncEffective *effective, Jsonb *stored_scopes);

/* The subscription's effective scopes and grant restriction on `table` (§3.2, read rule). */
extern SyncEffective *sync_scopes_effective(const SyncAllowed *allowed, const SyncTable *table,
											const SspScopeMap *requested);
/* Write authorization (§3.4): every declared variable of `table` has an allowed value. */
extern bool sync_scopes_authorize_write(const SyncAllowed *allowed, const SyncTable *table,
										const SyncRowScopes *scopes);
extern const char *sync_row_scopes_lookup(const SyncRowScopes *scopes, const char *var);
extern char *sync_row_scopes_json(const SyncRowScopes *scopes);	/* {"var":"value",...} */
extern Jsonb *sync_row_scopes_jsonb(const SyncRowScopes *scopes);	/* the same, as jsonb */
extern void sync_row_scopes_from_jsonb(Jsonb *jb, SyncRowScopes *out);
/* Canonical JSON of an effective map (the digest input). */
extern char *sync_effective_json(const SyncEffective *effective);
/* Deep copy of n (variable, "*", values) entries of a SyncAllowed or SyncEffective. */
extern void sync_scope_entries_copy(int n, char *const *vars, const bool *any, const int *nvalues,
									char **const *values, char ***vars_out, bool **any_out,
									int **nvalues_out, char ****values_out);

/* push.c: process one PUSH_COMMIT and write its PUSH_RESULT (+ DETAILS) into round->out. */
extern void sync_push_commit(SyncRound *round, const SspPushCommit *commit);

/*
 * What the push calls for each commit: the serve gate (gate.c), the write rules (hooks.c,
 * references.c) and the CRDT mergers (crdt.c).
 */
typedef struct SyncOpReject
{
	int32		op_index;		/* client opIndex the rejection is attributed to */
	const char *code;
	const char *message;
	bool		retryable;
	const char *details_json;	/* PUSH_RESULT_DETAILS object (WF §3.4) or NULL */
} SyncOpReject;

/* Evidence of one applied operation of the commit being pushed (row validators, §6.8). */
typedef struct SyncOpEvidence
{
	int32		op_index;
	uint8		op;				/* SSP_OP_* */
	int			table_index;
	const char *row_id;
	const SspValue *row;		/* the row that persists (ncolumns values); NULL for a delete */
	const SspValue *stored;		/* the stored row; NULL when there was none */
	bool		has_stored_version;
	int64		stored_version;
	bool		has_next_version;
	int64		next_version;
} SyncOpEvidence;

typedef struct SyncCommitState
{
	const SspPushCommit *commit;
	const char *client_commit_id;
	int			nops;			/* evidence entries so far */
	SyncOpEvidence *ops;
	int64		created_at_ms;	/* set when commit_seq is allocated (the planner reads it) */
} SyncCommitState;

extern bool sync_has_row_validator(SyncSchema *schema, int ti);
/* §6.7 per-table row validator: false + *reject to refuse.  Runs before the row write. */
extern bool sync_validate_row(SyncRound *round, SyncCommitState *state,
							  const SyncOpEvidence *op, SyncOpReject *reject);
/* The row validator on a row written by SQL (capture_row.c, capture_log.c): its error is the
 * statement's.  SPI connected; row NULL for a delete, stored NULL for an insert. */
extern void sync_validate_captured_row(SyncSchema *schema, int ti, bool is_delete,
									   const char *row_id, const SspValue *row,
									   const SspValue *stored, const char *actor,
									   const char *partition);
/* §6.11 declared-reference enforcement: rules.h (sync_enforce_references). */
/* §6.8 whole-commit validator. */
extern bool sync_validate_commit(SyncRound *round, SyncCommitState *state, SyncOpReject *reject);
/* §6.9 reaction planner: runs for an applied commit once commit_seq is known; raising aborts. */
extern void sync_plan_reactions(SyncRound *round, SyncCommitState *state, int64 commit_seq);
/* crdt merge (§5.10.6): false + *reject when no merger exists or it fails. */
extern bool sync_crdt_merge(SyncRound *round, const SyncTable *table, int column,
							const SspValue *stored, const SspValue *incoming, SspValue *merged,
							SyncOpReject *reject);

/* round.c: serve one round; returns the response bytes (palloc'd in the caller's context). */
extern bytea *sync_round_serve(bytea *request, const char *partition, const char *actor_id,
							   bool nonatomic);

/* b64url.c: base64url without padding, palloc'd and NUL-terminated; decode gives NULL (and
 * leaves *outlen alone) when s is not base64url. */
extern char *sync_b64url_encode(const uint8 *data, int len);
extern uint8 *sync_b64url_decode(const char *s, int len, int *outlen);

/*
 * clock.c: the current time in milliseconds since the Unix epoch (SPEC timestamps), through the
 * clock seam (syncular.clock_override_ms / syncular.clock_offset_ms).
 */
extern int64 sync_now_ms(void);
extern void sync_clock_define_gucs(void);

/* backend_memory.c: syncular.malloc_trim_threshold (the C library's heap trimming) */
extern void sync_backend_memory_define_gucs(void);

/* gate.c: the serve gate inside each push commit, after the partition lock (RFC 0007). */
extern void sync_gate_check_push(SyncRound *round);
/* gate.c: the same gate for a commit of SQL writes (capture_log.c), after its partition lock */
extern void sync_gate_check_write(const char *partition, int32 schema_version);

/* pull.c; `subscription` is the decoded SUBSCRIPTION frame */
extern void sync_pull_subscription(SyncRound *round, const SspFrame *subscription,
								   const SyncEffective *effective, SyncPullResult *result);

/* pull.c: the wire forms a section is written with (realtime.c writes the same frames) */
extern SspScopeMap sync_pull_effective_map(const SyncEffective *effective);
extern SspStrMap sync_pull_stored_scopes(Jsonb *stored_scopes);

/* realtime.c: load-time GUCs (syncular.realtime_*) */
extern void sync_realtime_define_gucs(void);

/* gate.c: the RFC 0007 serve gate; all raise sync.schema_not_ready (55000) when refused */
extern void sync_gate_check_entry(SyncRound *round);
/* in the pull's snapshot (round.c pushes it first), before any subscription is served */
extern void sync_gate_check_pull(SyncRound *round);

#endif							/* SYNCULAR_ENGINE_H */
