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
	uint8		type;			/* wire tag 1..8 (SSP_TYPE_*) */
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
} SyncTable;

typedef struct SyncSchema
{
	int32		version;
	char	   *app_schema;
	int			ntables;
	SyncTable  *tables;
	int			nvariables;		/* union of scope variables, sorted (strcmp) */
	char	  **variables;
} SyncSchema;

/* The schema compiled by ensure_schema, cached per backend; NULL when none is registered. */
extern SyncSchema *sync_schema_get(void);
extern SyncTable *sync_schema_table(SyncSchema *schema, const char *name);

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
/* {"code": code, "details": details_json} as palloc'd text (details omitted when NULL). */
extern char *sync_error_detail_json(const char *code, const char *details_json);

/* ---------------------------------------------------------------- scopes (scopes.c) */

/* Allowed scopes from the resolver: var -> values, or any ("*"). */
typedef struct SyncAllowed
{
	bool		failed;			/* no resolver, or it raised: fail closed */
	int			nvars;
	char	  **vars;
	bool	   *any;
	int		   *nvalues;
	char	 ***values;
} SyncAllowed;

/* Effective scopes of one subscription: sorted keys, sorted de-duplicated values. */
typedef struct SyncEffective
{
	bool		revoked;
	int			nvars;
	char	  **vars;
	int		   *nvalues;
	char	 ***values;
} SyncEffective;

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
extern char *sync_scope_digest(const SyncEffective *effective);	/* lowercase sha256 hex of canonical JSON */
extern bool sync_scopes_match(const SyncEffective *effective, Jsonb *stored_scopes);

/* pull.c; `subscription` is the decoded SUBSCRIPTION frame */
extern void sync_pull_subscription(SyncRound *round, const SspFrame *subscription,
								   const SyncEffective *effective, SyncPullResult *result);

#endif							/* SYNCULAR_ENGINE_H */
