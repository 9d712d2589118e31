/*
 * ops_http.c — the SQL entry point of remote operations (REMOTE.md revision 1 §5):
 *
 *   syncular.operations_http(request bytea, partition text, actor_id text, content_type text)
 *       RETURNS TABLE(status int, content_type text, body bytea)
 *
 * answers exactly what POST <mount>/operations answers.  The request is one encoded object
 * value (§4); the answer is an encoded success object, or an encoded {kind: "error", code,
 * message, retryable} with HTTP 200 (the client decodes operation failures from the body; §5
 * reserves other statuses for host authentication and 415 for another content type).  The
 * operation runs in a subtransaction of the caller's transaction: a failure writes nothing.
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/xact.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/resowner.h"

#include "operations.h"
#include "realtime.h"
#include "storage.h"

static bool
str_is(const SspStr *s, const char *lit)
{
	return s->len == strlen(lit) && memcmp(s->ptr, lit, s->len) == 0;
}

/* A required, non-empty string member without U+0000 (operation.invalid_request otherwise). */
const char *
ops_member_text(const SspOpValue *obj, const char *key)
{
	const SspOpValue *v = ssp_op_member(obj, key);

	if (v == NULL || v->kind != SSP_OP_STRING || v->str.len == 0 ||
		memchr(v->str.ptr, '\0', v->str.len) != NULL)
		sync_raise("operation.invalid_request",
				   psprintf("%s must be a non-empty string", key), NULL);
	if (v->str.len > SYNC_MAX_ID_BYTES)
		sync_raise("operation.invalid_request", psprintf("%s is too long", key),
				   psprintf("{\"field\": \"%s\", \"maxBytes\": %d}", key, SYNC_MAX_ID_BYTES));
	return pnstrdup(v->str.ptr, v->str.len);
}

/* Decode and check the envelope (§5 request shapes; unknown members are refused). */
static void
decode_request(bytea *body, OpsRequest *req)
{
	SspArena   *a = ssp_arena_new();
	SspOpValue *root;
	SspError	err;
	const SspOpValue *rev;
	const SspOpValue *kind;

	if (a == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	if (!ssp_op_decode(a, VARDATA_ANY(body), VARSIZE_ANY_EXHDR(body), &root, &err))
		sync_raise(err.code && strcmp(err.code, SSP_ERR_INTERNAL) == 0 ? "operation.execution_failed"
				   : "operation.invalid_request", err.message, NULL);
	if (root->kind != SSP_OP_OBJECT)
		sync_raise("operation.invalid_request", "the request must be an object", NULL);
	rev = ssp_op_member(root, "revision");
	if (rev == NULL || !((rev->kind == SSP_OP_INTEGER && rev->i == 1) ||
						 (rev->kind == SSP_OP_NUMBER && rev->num == 1)))
		sync_raise("operation.invalid_request", "revision must be 1", NULL);
	kind = ssp_op_member(root, "kind");
	if (kind == NULL || kind->kind != SSP_OP_STRING ||
		!(str_is(&kind->str, "query") || str_is(&kind->str, "command")))
		sync_raise("operation.invalid_request", "kind must be \"query\" or \"command\"", NULL);
	req->command = str_is(&kind->str, "command");
	req->client_id = ops_member_text(root, "clientId");
	req->operation_id = ops_member_text(root, "operationId");
	req->request_id = req->command ? ops_member_text(root, "requestId") : NULL;
	req->params = ssp_op_member(root, "params");
	for (uint32 k = 0; k < root->count; k++)
	{
		const SspStr *key = &root->keys[k];

		if (!(str_is(key, "revision") || str_is(key, "kind") || str_is(key, "clientId") ||
			  str_is(key, "operationId") || str_is(key, "params") ||
			  (req->command && str_is(key, "requestId"))))
			sync_raise("operation.invalid_request", "the request carries an unknown member", NULL);
	}
}

/* REMOTE.md §1: the reserved prefix, and a clientId bound to another actor. */
void
ops_check_client(const char *partition, const char *actor_id, const char *client_id)
{
	SyncClientRecord rec;
	MemoryContext cxt = CurrentMemoryContext;
	bool		known;

	if (strncmp(client_id, SYNC_RESERVED_CLIENT_PREFIX, strlen(SYNC_RESERVED_CLIENT_PREFIX)) == 0)
		sync_raise("sync.invalid_client_id", "this clientId namespace is reserved", NULL);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "syncular: SPI_connect failed");
	MemoryContextSwitchTo(cxt);	/* SPI_connect leaves its procedure context current */
	known = sync_storage_client_get(partition, client_id, &rec);
	if (known && strcmp(rec.actor_id, actor_id) != 0)
		sync_raise("sync.invalid_client_id", "the clientId is bound to another actor", NULL);
	SPI_finish();				/* cxt, current at SPI_connect, is current again */
}

bytea *
ops_encode_response(const SspOpValue *v)
{
	SspBuf		buf;
	SspError	err;
	bytea	   *out;

	ssp_buf_init(&buf);
	if (!ssp_op_encode(&buf, v, &err))
		sync_raise("operation.query_failed", err.message, NULL);
	out = palloc(VARHDRSZ + buf.len);
	SET_VARSIZE(out, VARHDRSZ + buf.len);
	memcpy(VARDATA(out), buf.data, buf.len);
	ssp_buf_free(&buf);
	return out;
}

/* {revision: 1, kind: "error", code, message, retryable}, or with a watch id the §6 watch
 * failure {revision: 1, kind: "watch_error", watchId, code, message, retryable} */
bytea *
ops_error_response(const SyncErrorInfo *e, const char *message, const char *watch_id)
{
	OpsObject	o;
	SspOpValue	v;
	SspOpValue *f;

	ops_obj_init_message(&o, watch_id ? "watch_error" : "error");
	if (watch_id)
		ops_set_string(ops_obj_add(&o, "watchId"), watch_id);
	ops_set_string(ops_obj_add(&o, "code"), e->code);
	ops_set_string(ops_obj_add(&o, "message"), message);
	f = ops_obj_add(&o, "retryable");
	f->kind = SSP_OP_BOOLEAN;
	f->b = e->retryable;
	ops_obj_done(&o, &v);
	return ops_encode_response(&v);
}

/*
 * The answer to an operation that raised (after its subtransaction was rolled back): a
 * catalogue error as its encoded failure; anything else is operation code or infrastructure
 * (§7), whose cause goes to the server log only (sync_entry_run re-raised cancellation and
 * shutdown already).  Frees edata.
 */
bytea *
ops_failure_response(ErrorData *edata, const char *watch_id)
{
	const SyncErrorInfo *e;
	char	   *details;
	bytea	   *body;

	e = sync_catalogue_error(edata, &details);
	if (e != NULL)
		body = ops_error_response(e, edata->message, watch_id);
	else
	{
		ereport(LOG,
				(errmsg("syncular: remote operation failed: %s", edata->message),
				 edata->detail ? errdetail_internal("%s", edata->detail) : 0,
				 errcode(edata->sqlerrcode)));
		body = ops_error_response(sync_error_info("operation.execution_failed"),
								  "the operation failed on the server", watch_id);
	}
	FreeErrorData(edata);
	return body;
}

static bytea *
serve(FunctionCallInfo fcinfo)
{
	bytea	   *body;
	char	   *partition;
	char	   *actor_id;
	OpsRequest	req;
	SspOpValue	out;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		sync_raise("operation.invalid_request", "request, partition and actor_id must not be NULL",
				   NULL);
	if (toast_raw_datum_size(PG_GETARG_DATUM(0)) - VARHDRSZ > (Size) sync_max_request_bytes)
		sync_raise("operation.invalid_request", "the request is larger than the server accepts",
				   psprintf("{\"maxRequestBytes\": %d}", sync_max_request_bytes));
	body = PG_GETARG_BYTEA_PP(0);
	partition = text_to_cstring(PG_GETARG_TEXT_PP(1));
	actor_id = text_to_cstring(PG_GETARG_TEXT_PP(2));
	if (partition[0] == '\0' || actor_id[0] == '\0' || strlen(partition) > SYNC_MAX_ID_BYTES)
		sync_raise("operation.invalid_request", "partition and actor_id must be non-empty", NULL);
	memset(&req, 0, sizeof(req));
	decode_request(body, &req);
	ops_check_client(partition, actor_id, req.client_id);
	if (req.command)
		ops_command_run(&req, partition, actor_id, &out);
	else
		ops_query_run(&req, partition, actor_id, NULL, &out);
	return ops_encode_response(&out);
}

/* operations_http's answer to a caught error: the encoded failure, status 200 (REMOTE.md §7). */
static bytea *
ops_http_error(ErrorData *edata, int *status, const char **ctype)
{
	return ops_failure_response(edata, NULL);
}

PG_FUNCTION_INFO_V1(syncular_operations_http);

Datum
syncular_operations_http(PG_FUNCTION_ARGS)
{
	sync_entry_http(fcinfo, OPS_CONTENT_TYPE, serve, ops_http_error);
	return (Datum) 0;
}
