/*
 * operations.h — remote operations (REMOTE.md revision 1): registered queries and commands
 * served beside SSP2.  ops_bind.c binds a registered query's SQL to the authenticated
 * partition; ops_syql.c picks a query's SYQL statement variant; ops_values.c maps tagged values (ops.h) to and from PostgreSQL values;
 * ops_query.c runs queries, ops_command.c commands; ops_http.c is the SQL entry point of
 * POST /operations, ops_watch.c the batched reruns of live query watches (§6).  Calls point
 * down that list.
 */
#ifndef SYNCULAR_OPERATIONS_H
#define SYNCULAR_OPERATIONS_H

#include "postgres.h"
#include "lib/stringinfo.h"
#include "utils/jsonb.h"
#include "utils/snapshot.h"

#include "engine.h"
#include "ops.h"

#define OPS_CONTENT_TYPE "application/vnd.syncular.operations.v1+json"

/* Declared value types of params and result columns (REMOTE.md §2). */
typedef enum OpsType
{
	OPS_T_STRING,
	OPS_T_INTEGER,
	OPS_T_FLOAT,
	OPS_T_BOOLEAN,
	OPS_T_JSON,
	OPS_T_BYTES,
	OPS_T_INVALID
} OpsType;

extern OpsType ops_type_from_name(const char *name);
extern Oid	ops_type_oid(OpsType t);

/* ops_values.c */
/* A request value as a Datum of declared type t; false when the value does not fit it. */
extern bool ops_value_to_datum(const SspOpValue *v, OpsType t, Datum *out, bool *isnull);
/* A result value of PostgreSQL type `typid` normalized to declared type t; false when it cannot. */
extern bool ops_datum_to_value(Datum d, Oid typid, OpsType t, SspOpValue *out);
/* Any tagged value as jsonb (integers as numbers, bytes as base64 text). */
extern Jsonb *ops_value_to_jsonb(const SspOpValue *v);
/* JSON text as a tagged value (every JSON number a number); false when not representable. */
extern bool ops_json_text_to_value(const char *text, size_t len, SspOpValue *out);
/* Scope text of a covered value (string as is, integer in decimal); NULL for other kinds. */
extern char *ops_scope_text(const SspOpValue *v);

/* Error details {"operationId": id}. */
extern char *ops_details_id(const char *operation_id);

/* Constructors of response trees (palloc'd). */
typedef struct OpsObject
{
	int			n;
	int			cap;
	SspStr	   *keys;
	SspOpValue *items;
} OpsObject;

extern void ops_obj_init(OpsObject *o);
extern SspOpValue *ops_obj_add(OpsObject *o, const char *key);
extern void ops_obj_done(OpsObject *o, SspOpValue *out);
extern void ops_obj_init_message(OpsObject *o, const char *kind);
extern void ops_set_string(SspOpValue *v, const char *s);
extern char *ops_jstr(JsonbContainer *c, const char *key);
extern bool ops_jint(JsonbContainer *c, const char *key, int64 *out);
extern void ops_set_integer(SspOpValue *v, int64 i);

/* The request envelope (REMOTE.md §5). */
typedef struct OpsRequest
{
	bool		command;
	const char *client_id;
	const char *operation_id;
	const char *request_id;		/* commands */
	const SspOpValue *params;
} OpsRequest;

/* ops_query.c: run a registered query; fills `out` with the success object.  The rows and
 * maxCommitSeq are read in `snap` (NULL: a new transaction snapshot). */
extern void ops_query_run(const OpsRequest *req, const char *partition, const char *actor_id,
						  Snapshot snap, SspOpValue *out);
/* ops_command.c: run a registered command; fills `out` with the success object. */
extern void ops_command_run(const OpsRequest *req, const char *partition, const char *actor_id,
							SspOpValue *out);

/* ops_syql.c: the SYQL statement variant of a request and its binds ($nbinds + 1 = partition) */
typedef struct OpsSyqlChoice
{
	char	   *bound_sql;
	int			nbinds;
	Datum	   *values;
	char	   *nulls;
	Oid		   *types;
} OpsSyqlChoice;
extern void ops_syql_select(Jsonb *syql, const SspOpValue *params, const char *partition,
							OpsSyqlChoice *out);

/* ops_http.c: the envelope pieces shared by HTTP and watches (ops_watch.c) */
extern const char *ops_member_text(const SspOpValue *obj, const char *key);
extern void ops_check_client(const char *partition, const char *actor_id, const char *client_id);
extern bytea *ops_encode_response(const SspOpValue *v);
extern bytea *ops_error_response(const SyncErrorInfo *e, const char *message, const char *watch_id);
extern bytea *ops_failure_response(ErrorData *edata, const char *watch_id);

#endif							/* SYNCULAR_OPERATIONS_H */
