/*
 * blobs.c — the blob store (SPEC §5.9; docs/blobs.md).
 *
 *   syncular.blob_upload_begin(partition, actor_id, blob_id, byte_length) RETURNS bigint
 *   syncular.blob_upload_append(upload, chunk bytea) RETURNS bigint
 *   syncular.blob_upload_finish(upload) RETURNS jsonb
 *   syncular.put_blob(partition, actor_id, blob_id, body bytea) RETURNS jsonb
 *   syncular.blob_get(partition, actor_id, blob_id, client_id)
 *       RETURNS TABLE(status, content_type, byte_length, body)
 *   syncular.blob_upload_grant(partition, actor_id, blob_id, byte_length) RETURNS jsonb
 *   syncular.blob_url_upload_begin(blob_id, token, byte_length) RETURNS bigint
 *   syncular.blob_url_get(blob_id, token) RETURNS TABLE(status, content_type, byte_length, body)
 *   sync_blobs_check_row: the push-time existence check (§5.9.6), called by push_values.c
 *
 * Signed blob URLs (§5.9.3 upload grants, §5.9.5 downloads) use the native token of §5.4
 * (urltoken.h: one secret, one scheme) with per-purpose claims
 *   get: {"v":1,"op":"get","blob":<id>,"aud":<partition token>,"exp":<unix s>}
 *   put: {"v":1,"op":"put","blob":<id>,"aud":..,"exp":..,"len":<bytes>,"p":<partition>,"act":<actor>}
 * and are issued only when syncular.blob_url_base is set.
 *
 * Bytes are stored as chunk rows (sync_blob_chunks, at most BLOB_CHUNK_BYTES each) under an
 * upload id; the sync_blobs row (partition, blob_id) names the upload that holds its bytes and
 * is written only after the content address was verified (§5.9.3), in the uploading
 * transaction, so an aborted or refused upload leaves nothing.  The SHA-256 state of an upload
 * in progress lives in this backend for the uploading transaction (pg_cryptohash under the
 * transaction's resource owner): begin, append and finish must run in one transaction, and a
 * transaction that began an upload cannot commit without finishing it.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "common/cryptohash.h"
#include "common/sha2.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/resowner.h"

#include "blobs.h"
#include "storage.h"
#include "urltoken.h"

/* Largest chunk row: a longer append is split.  1 MiB keeps one row's detoast small. */
#define BLOB_CHUNK_BYTES (1024 * 1024)
#define BLOB_ID_LEN (7 + 64)	/* "sha256:" + 64 lowercase hex */

int			sync_blob_max_bytes = 64 * 1024 * 1024;
char	   *sync_blob_url_base = NULL;
int			sync_blob_url_ttl_s = 15 * 60;

void
sync_blobs_define_gucs(void)
{
	DefineCustomIntVariable("syncular.blob_max_bytes",
							"Largest blob an upload may store.",
							"Checked against the declared length at blob_upload_begin and against "
							"the streamed count on every append; over it the upload fails with "
							"blob.too_large (HTTP 413) and nothing is stored (SPEC §5.9.3).",
							&sync_blob_max_bytes,
							64 * 1024 * 1024, 0, INT_MAX,
							PGC_SUSET, GUC_UNIT_BYTE,
							NULL, NULL, NULL);
	DefineCustomStringVariable("syncular.blob_url_base",
							   "Base of signed blob URLs (SPEC §5.9.3, §5.9.5); empty: none are issued.",
							   "When set, blob_upload_grant grants presigned uploads and blob_get "
							   "answers an authorized download with {url, urlExpiresAtMs}; "
							   "url = this value || blobId || '?bt=' || token.",
							   &sync_blob_url_base,
							   "",
							   PGC_SUSET, 0,
							   NULL, NULL, NULL);
	DefineCustomIntVariable("syncular.blob_url_ttl",
							"Lifetime of a signed blob URL (SPEC §5.9.3, §5.9.5).",
							"urlExpiresAtMs is this long after issuance; it is also the revocation "
							"window of an issued download URL; 0 issues URLs that are already "
							"expired (urlExpiresAtMs = the issuing second, SPEC §5.4 truncation), "
							"which a client must not fetch.",
							&sync_blob_url_ttl_s,
							15 * 60, 0, 24 * 60 * 60,
							PGC_SUSET, GUC_UNIT_S,
							NULL, NULL, NULL);
}

/* ---------------------------------------------------------------- SPI */

static void
connect_spi(void)
{
	MemoryContext cxt = CurrentMemoryContext;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "syncular blobs: SPI_connect failed");
	MemoryContextSwitchTo(cxt);
}

/* ---------------------------------------------------------------- arguments */


/* "sha256:" + 64 lowercase hex (§5.9.1, §5.1). */
static bool
blob_id_valid(const char *id)
{
	if (strlen(id) != BLOB_ID_LEN || strncmp(id, "sha256:", 7) != 0)
		return false;
	for (const char *p = id + 7; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return false;
	return true;
}

static void
raise_too_large(int64 bytes)
{
	sync_raise("blob.too_large", "blob too large",
			   psprintf("{\"byteLength\": " INT64_FORMAT ", \"maxBytes\": %d}",
						bytes, sync_blob_max_bytes));
}

/* ---------------------------------------------------------------- uploads in progress */

typedef struct BlobUpload
{
	int64		id;
	char	   *partition;
	char	   *actor_id;
	char	   *blob_id;
	SubTransactionId subid;		/* begun in this subtransaction */
	bool		present;		/* already stored at begin: hash only, store nothing */
	bool		finished;
	pg_cryptohash_ctx *hash;
	int64		received;
	int32		nchunks;
	struct BlobUpload *next;
} BlobUpload;

/* Uploads of the current transaction (TopTransactionContext); reset at its end. */
static BlobUpload *uploads = NULL;
static bool callback_registered = false;

static void
blob_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PARALLEL_PRE_COMMIT:
		case XACT_EVENT_PRE_PREPARE:
			for (BlobUpload *u = uploads; u != NULL; u = u->next)
				if (!u->finished)
				{
					/* nothing of it may become durable: the transaction aborts instead */
					sync_raise("sync.invalid_request",
							   "blobs: a blob upload was begun and not finished; finish it or roll back",
							   psprintf("{\"upload\": " INT64_FORMAT "}", u->id));
				}
			break;
		default:
			/* the hash contexts belong to the transaction's resource owner, freed with it */
			uploads = NULL;
			break;
	}
}

/* An upload begun in a subtransaction that rolls back is abandoned with it. */
static void
blob_subxact_callback(SubXactEvent event, SubTransactionId sub, SubTransactionId parent,
					  void *arg)
{
	for (BlobUpload *u = uploads; u != NULL; u = u->next)
	{
		if (u->subid != sub)
			continue;
		if (event == SUBXACT_EVENT_COMMIT_SUB)
			u->subid = parent;
		else if (event == SUBXACT_EVENT_ABORT_SUB && !u->finished)
		{
			if (u->hash != NULL)
				pg_cryptohash_free(u->hash);
			u->hash = NULL;
			u->finished = true;
		}
	}
}

static BlobUpload *
upload_find(int64 id)
{
	for (BlobUpload *u = uploads; u != NULL; u = u->next)
		if (u->id == id && !u->finished)
			return u;
	sync_raise("sync.invalid_request",
			   "blobs: no upload in progress with this handle in this transaction",
			   psprintf("{\"upload\": " INT64_FORMAT "}", id));
}

/* Needs SPI. */
static BlobUpload *
upload_begin(const char *partition, const char *actor_id, const char *blob_id, int64 declared)
{
	MemoryContext old;
	ResourceOwner owner = CurrentResourceOwner;
	BlobUpload *u;

	if (!blob_id_valid(blob_id))
		sync_raise("sync.invalid_request", "blobs: blobId is not \"sha256:\" + 64 lowercase hex",
				   NULL);
	if (declared < -1)
		sync_raise("sync.invalid_request", "blobs: byte_length is negative", NULL);
	if (declared > sync_blob_max_bytes)
		raise_too_large(declared);
	if (!callback_registered)
	{
		RegisterXactCallback(blob_xact_callback, NULL);
		RegisterSubXactCallback(blob_subxact_callback, NULL);
		callback_registered = true;
	}

	old = MemoryContextSwitchTo(TopTransactionContext);
	u = palloc0(sizeof(BlobUpload));
	u->partition = pstrdup(partition);
	u->actor_id = pstrdup(actor_id);
	u->blob_id = pstrdup(blob_id);
	u->subid = GetCurrentSubTransactionId();
	MemoryContextSwitchTo(old);

	u->id = sync_blob_store_next_upload_id();
	u->present = sync_blob_store_exists(partition, blob_id, false);

	/* the transaction's owner, not the statement's: the state spans statements */
	CurrentResourceOwner = TopTransactionResourceOwner;
	u->hash = pg_cryptohash_create(PG_SHA256);
	CurrentResourceOwner = owner;
	if (u->hash == NULL || pg_cryptohash_init(u->hash) < 0)
		elog(ERROR, "syncular blobs: could not initialize SHA-256");
	u->next = uploads;
	uploads = u;
	return u;
}

/* Hash and store len bytes; needs SPI. */
static void
upload_append(BlobUpload *u, const uint8 *data, size_t len)
{
	if ((int64) len > (int64) sync_blob_max_bytes - u->received)
		raise_too_large(u->received + (int64) len);
	if (pg_cryptohash_update(u->hash, data, len) < 0)
		elog(ERROR, "syncular blobs: SHA-256 update failed");
	u->received += len;
	if (u->present)
		return;
	while (len > 0)
	{
		size_t		n = Min(len, (size_t) BLOB_CHUNK_BYTES);
		bytea	   *chunk = palloc(VARHDRSZ + n);

		SET_VARSIZE(chunk, VARHDRSZ + n);
		memcpy(VARDATA(chunk), data, n);
		sync_blob_store_chunk_insert(u->id, u->nchunks, chunk);
		pfree(chunk);
		u->nchunks++;
		data += n;
		len -= n;
	}
}

/* Verify the content address and write the blob row; returns the result JSON.  Needs SPI. */
static Datum
upload_finish(BlobUpload *u)
{
	uint8		digest[PG_SHA256_DIGEST_LENGTH];
	char		id[BLOB_ID_LEN + 1];
	bool		stored = false;
	int32		staged_chunks;
	int64		staged_bytes;
	StringInfoData b;

	if (pg_cryptohash_final(u->hash, digest, sizeof(digest)) < 0)
		elog(ERROR, "syncular blobs: SHA-256 final failed");
	pg_cryptohash_free(u->hash);
	u->hash = NULL;
	u->finished = true;
	memcpy(id, "sha256:", 7);
	hex_encode((const char *) digest, sizeof(digest), id + 7);
	id[BLOB_ID_LEN] = '\0';
	if (strcmp(id, u->blob_id) != 0)
		sync_raise("blob.hash_mismatch", "blob content does not match its id",
				   psprintf("{\"blobId\": \"%s\", \"computed\": \"%s\"}", u->blob_id, id));

	if (!u->present)
	{
		/* an append rolled back by a savepoint would leave a hole: refuse rather than store it */
		sync_blob_store_staged(u->id, &staged_chunks, &staged_bytes);
		if (staged_chunks != u->nchunks || staged_bytes != u->received)
			sync_raise("sync.invalid_request",
					   "blobs: the upload's stored chunks differ from the bytes received "
					   "(an append was rolled back); roll back and upload again", NULL);
		stored = sync_blob_store_insert(u->partition, u->blob_id, u->received, u->actor_id,
										sync_now_ms(), u->id);
		if (!stored)
		{
			/* a concurrent upload of the same bytes committed first: keep its copy */
			sync_blob_store_chunks_delete(u->id);
		}
	}
	initStringInfo(&b);
	appendStringInfo(&b, "{\"blobId\": \"%s\", \"byteLength\": " INT64_FORMAT ", \"stored\": %s}",
					 u->blob_id, u->received, stored ? "true" : "false");
	return DirectFunctionCall1(jsonb_in, CStringGetDatum(b.data));
}

static int64
declared_arg(FunctionCallInfo fcinfo, int n)
{
	return (PG_NARGS() > n && !PG_ARGISNULL(n)) ? PG_GETARG_INT64(n) : -1;
}

PG_FUNCTION_INFO_V1(syncular_blob_upload_begin);

Datum
syncular_blob_upload_begin(PG_FUNCTION_ARGS)
{
	char	   *partition = sync_required_text_arg(fcinfo, 0, "blobs", "partition");
	char	   *actor = sync_required_text_arg(fcinfo, 1, "blobs", "actor_id");
	char	   *blob_id = sync_required_text_arg(fcinfo, 2, "blobs", "blob_id");
	int64		declared = declared_arg(fcinfo, 3);
	BlobUpload *u;

	if (declared < 0 && !PG_ARGISNULL(3))
		sync_raise("sync.invalid_request", "blobs: byte_length is negative", NULL);
	connect_spi();
	u = upload_begin(partition, actor, blob_id, declared);
	SPI_finish();
	PG_RETURN_INT64(u->id);
}

PG_FUNCTION_INFO_V1(syncular_blob_upload_append);

Datum
syncular_blob_upload_append(PG_FUNCTION_ARGS)
{
	BlobUpload *u;
	bytea	   *chunk;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		sync_raise("sync.invalid_request", "blobs: an argument is NULL",
				   PG_ARGISNULL(0) ? "{\"argument\": \"upload\"}" : "{\"argument\": \"chunk\"}");
	u = upload_find(PG_GETARG_INT64(0));
	chunk = PG_GETARG_BYTEA_PP(1);
	connect_spi();
	upload_append(u, (const uint8 *) VARDATA_ANY(chunk), VARSIZE_ANY_EXHDR(chunk));
	SPI_finish();
	PG_RETURN_INT64(u->received);
}

PG_FUNCTION_INFO_V1(syncular_blob_upload_finish);

Datum
syncular_blob_upload_finish(PG_FUNCTION_ARGS)
{
	BlobUpload *u;
	Datum		result;

	if (PG_ARGISNULL(0))
		sync_raise("sync.invalid_request", "blobs: an argument is NULL", "{\"argument\": \"upload\"}");
	u = upload_find(PG_GETARG_INT64(0));
	connect_spi();
	result = upload_finish(u);
	SPI_finish();
	PG_RETURN_DATUM(result);
}

PG_FUNCTION_INFO_V1(syncular_put_blob);

Datum
syncular_put_blob(PG_FUNCTION_ARGS)
{
	char	   *partition = sync_required_text_arg(fcinfo, 0, "blobs", "partition");
	char	   *actor = sync_required_text_arg(fcinfo, 1, "blobs", "actor_id");
	char	   *blob_id = sync_required_text_arg(fcinfo, 2, "blobs", "blob_id");
	bytea	   *body;
	BlobUpload *u;
	Datum		result;

	if (PG_ARGISNULL(3))
		sync_raise("sync.invalid_request", "blobs: an argument is NULL", "{\"argument\": \"body\"}");
	body = PG_GETARG_BYTEA_PP(3);
	connect_spi();
	u = upload_begin(partition, actor, blob_id, VARSIZE_ANY_EXHDR(body));
	upload_append(u, (const uint8 *) VARDATA_ANY(body), VARSIZE_ANY_EXHDR(body));
	result = upload_finish(u);
	SPI_finish();
	PG_RETURN_DATUM(result);
}

/* ---------------------------------------------------------------- download (§5.9.5) */

/* What blob_authorized's walk of the referencing rows checks each row against. */
typedef struct RefCheck
{
	SyncSchema *schema;
	const char *partition;
	SyncAllowed *allowed;
} RefCheck;

/* One referencing row: does it pass the §3.4 stored-row check under the actor's grant? */
static bool
ref_authorized(const char *tbl, const char *row_id, void *arg)
{
	RefCheck   *c = (RefCheck *) arg;
	int			ti = sync_schema_table_index(c->schema, tbl);
	SyncStoredRow stored;
	SyncRowScopes rs;

	if (ti < 0 || !sync_storage_row_get(c->schema, ti, c->partition, row_id, &stored))
		return false;
	sync_row_scopes_from_jsonb(stored.scopes, &rs);
	return sync_scopes_authorize_write(c->allowed, &c->schema->tables[ti], &rs);
}

/*
 * May the actor download the blob?  At least one referencing row of the partition passes the
 * §3.4 stored-row check under the actor's grant (resolved once).  Refs are read a page at a
 * time, and the first row that passes ends the walk.
 */
static bool
blob_authorized(const char *partition, const char *actor, const char *client,
				const char *blob_id)
{
	SyncRound	round;
	RefCheck	c;

	c.schema = sync_schema_get();
	if (c.schema == NULL)
		return false;
	memset(&round, 0, sizeof(round));
	round.schema = c.schema;
	round.partition = partition;
	round.actor_id = actor;
	round.client_id = client;
	round.wire_version = 3;
	round.now_ms = sync_now_ms();
	c.allowed = sync_scopes_resolve(&round);
	if (c.allowed == NULL || c.allowed->failed)
		return false;
	c.partition = partition;
	return sync_blob_store_refs_any(partition, blob_id, ref_authorized, &c);
}

static void
put_row(ReturnSetInfo *rsinfo, int status, const char *ctype, bool has_length, int64 length,
		Datum body)
{
	Datum		values[4];
	bool		nulls[4] = {false, false, !has_length, false};

	values[0] = Int32GetDatum(status);
	values[1] = CStringGetTextDatum(ctype);
	values[2] = Int64GetDatum(length);
	values[3] = body;
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

static void
put_error(ReturnSetInfo *rsinfo, const char *code, const char *message)
{
	const SyncErrorInfo *e = sync_error_info(code);
	char	   *json = sync_http_error_body(e, message, NULL);
	size_t		len = strlen(json);
	bytea	   *b = palloc(VARHDRSZ + len);

	SET_VARSIZE(b, VARHDRSZ + len);
	memcpy(VARDATA(b), json, len);
	put_row(rsinfo, e->http_status, "application/json", false, 0, PointerGetDatum(b));
}

/* put_chunks' row of one chunk. */
typedef struct ChunkRows
{
	ReturnSetInfo *rsinfo;
	int64		length;
} ChunkRows;

static void
put_chunk(bytea *chunk, void *arg)
{
	ChunkRows  *c = (ChunkRows *) arg;

	put_row(c->rsinfo, 200, "application/octet-stream", true, c->length, PointerGetDatum(chunk));
}

/* The stored bytes as 200 rows, one chunk detoasted at a time (the result store spills). */
static void
put_chunks(ReturnSetInfo *rsinfo, int64 upload_id, int64 length)
{
	ChunkRows	c = {rsinfo, length};

	if (sync_blob_store_chunks_each(upload_id, put_chunk, &c) == 0)
	{
		bytea	   *empty = palloc(VARHDRSZ);

		SET_VARSIZE(empty, VARHDRSZ);
		put_row(rsinfo, 200, "application/octet-stream", true, length, PointerGetDatum(empty));
	}
}

/* ---------------------------------------------------------------- signed URLs (§5.9.3, §5.9.5) */

static int64 url_expires_ms;	/* of the last blob_url */

/*
 * url = syncular.blob_url_base || blob_id || "?bt=" || token, for op "get" or "put" (claims in
 * the header comment); NULL when no secret can be had.  Needs SPI.
 */
static char *
blob_url(const char *partition, const char *actor, const char *blob_id, const char *op, int64 len)
{
	char	   *aud = sync_url_token_audience(partition);
	int64		exp_s = sync_now_ms() / 1000 + sync_blob_url_ttl_s;
	StringInfoData payload;
	char	   *token;

	if (aud == NULL)
		return NULL;
	initStringInfo(&payload);
	appendStringInfo(&payload, "{\"v\":1,\"op\":\"%s\",\"blob\":", op);
	escape_json(&payload, blob_id);
	appendStringInfoString(&payload, ",\"aud\":");
	escape_json(&payload, aud);
	appendStringInfo(&payload, ",\"exp\":" INT64_FORMAT, exp_s);
	if (strcmp(op, "put") == 0)
	{
		/* the grant must name where the bytes go and who uploads them (no host auth on the PUT) */
		appendStringInfo(&payload, ",\"len\":" INT64_FORMAT ",\"p\":", len);
		escape_json(&payload, partition);
		appendStringInfoString(&payload, ",\"act\":");
		escape_json(&payload, actor);
	}
	appendStringInfoChar(&payload, '}');
	token = sync_url_token_mint(payload.data, payload.len);
	if (token == NULL)
		return NULL;
	url_expires_ms = exp_s * 1000;
	return psprintf("%s%s?bt=%s", sync_blob_url_base, blob_id, token);
}

/* {"url": url, "urlExpiresAtMs": url_expires_ms} */
static char *
url_json(const char *url)
{
	StringInfoData j;

	initStringInfo(&j);
	appendStringInfoString(&j, "{\"url\": ");
	escape_json(&j, url);
	appendStringInfo(&j, ", \"urlExpiresAtMs\": " INT64_FORMAT "}", url_expires_ms);
	return j.data;
}

static void
put_json_row(ReturnSetInfo *rsinfo, const char *url)
{
	char	   *json = url_json(url);
	size_t		len = strlen(json);
	bytea	   *b = palloc(VARHDRSZ + len);

	SET_VARSIZE(b, VARHDRSZ + len);
	memcpy(VARDATA(b), json, len);
	put_row(rsinfo, 200, "application/json", false, 0, PointerGetDatum(b));
}

/*
 * Check a token for (op, blob_id): the MAC, op, blob, exp (no skew: issued and verified against
 * the same database clock), and aud.  NULL with *message set when refused (blob.forbidden);
 * otherwise the partition, with the put grant's actor and length.  Needs SPI.
 */
static char *
blob_url_verify(const char *op, const char *blob_id, const char *token, char **actor, int64 *len,
				const char **message)
{
	Jsonb	   *claims = sync_url_token_open(token);
	char	   *c_op;
	char	   *c_blob;
	char	   *aud;
	int64		exp_s;

	*message = "the signed URL is not valid";
	if (claims == NULL)
		return NULL;
	c_op = sync_url_token_text(claims, "op");
	c_blob = sync_url_token_text(claims, "blob");
	aud = sync_url_token_text(claims, "aud");
	if (c_op == NULL || c_blob == NULL || aud == NULL || !sync_url_token_int(claims, "exp", &exp_s) ||
		strcmp(c_op, op) != 0)
		return NULL;
	if (strcmp(c_blob, blob_id) != 0)
	{
		*message = "the signed URL is for another blob";
		return NULL;
	}
	if (sync_now_ms() / 1000 > exp_s)
	{
		*message = "the signed URL has expired: request a fresh one (§5.9.3, §5.9.5)";
		return NULL;
	}
	if (strcmp(op, "put") == 0)
	{
		char	   *partition = sync_url_token_text(claims, "p");
		char	   *aud_p;

		*actor = sync_url_token_text(claims, "act");
		if (partition == NULL || *actor == NULL || !sync_url_token_int(claims, "len", len) ||
			(aud_p = sync_url_token_audience(partition)) == NULL || strcmp(aud_p, aud) != 0)
			return NULL;
		return partition;
	}
	else
	{
		/* the partitions that store this blob; aud selects one */
		char	  **partitions;
		int			n = sync_blob_store_partitions(blob_id, &partitions);

		for (int i = 0; i < n; i++)
		{
			char	   *partition = partitions[i];
			char	   *aud_p = sync_url_token_audience(partition);

			if (aud_p != NULL && strcmp(aud_p, aud) == 0)
				return partition;
		}
		*message = "blob not found";
		return NULL;
	}
}

PG_FUNCTION_INFO_V1(syncular_blob_get);

Datum
syncular_blob_get(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *partition = sync_required_text_arg(fcinfo, 0, "blobs", "partition");
	char	   *actor = sync_required_text_arg(fcinfo, 1, "blobs", "actor_id");
	char	   *blob_id = sync_required_text_arg(fcinfo, 2, "blobs", "blob_id");
	char	   *client = PG_ARGISNULL(3) ? "" : text_to_cstring(PG_GETARG_TEXT_PP(3));
	int64		length;
	int64		upload_id;

	InitMaterializedSRF(fcinfo, 0);
	connect_spi();
	if (!blob_id_valid(blob_id) || !sync_blob_store_get(partition, blob_id, &length, &upload_id))
	{
		put_error(rsinfo, "blob.not_found", "blob not found");
		SPI_finish();
		return (Datum) 0;
	}
	if (!blob_authorized(partition, actor, client, blob_id))
	{
		put_error(rsinfo, "blob.forbidden", "blob access forbidden");
		SPI_finish();
		return (Datum) 0;
	}

	if (sync_blob_url_base[0] != '\0')
	{
		char	   *url = blob_url(partition, actor, blob_id, "get", 0);

		/* §5.9.5 always-issue: the URL, not the bytes (no secret on a standby: the bytes) */
		if (url != NULL)
		{
			put_json_row(rsinfo, url);
			SPI_finish();
			return (Datum) 0;
		}
	}
	put_chunks(rsinfo, upload_id, length);
	SPI_finish();
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(syncular_blob_upload_grant);

Datum
syncular_blob_upload_grant(PG_FUNCTION_ARGS)
{
	char	   *partition = sync_required_text_arg(fcinfo, 0, "blobs", "partition");
	char	   *actor = sync_required_text_arg(fcinfo, 1, "blobs", "actor_id");
	char	   *blob_id = sync_required_text_arg(fcinfo, 2, "blobs", "blob_id");
	int64		len;
	char	   *url;
	char	   *json;

	if (!blob_id_valid(blob_id))
		sync_raise("sync.invalid_request", "blobs: blobId is not \"sha256:\" + 64 lowercase hex", NULL);
	if (PG_ARGISNULL(3) || PG_GETARG_INT64(3) < 0)
		sync_raise("sync.invalid_request", "blobs: byteLength >= 0 is required",
				   "{\"argument\": \"byte_length\"}");
	len = PG_GETARG_INT64(3);
	/* §5.9.3: the cap is applied here, before a URL is minted */
	if (len > sync_blob_max_bytes)
		raise_too_large(len);
	if (sync_blob_url_base[0] == '\0')
		PG_RETURN_NULL();
	connect_spi();
	if (sync_blob_store_exists(partition, blob_id, false))
		json = "{\"present\": true}";
	else if ((url = blob_url(partition, actor, blob_id, "put", len)) != NULL)
		json = url_json(url);
	else
		json = NULL;
	SPI_finish();
	if (json == NULL)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(json)));
}

PG_FUNCTION_INFO_V1(syncular_blob_url_upload_begin);

Datum
syncular_blob_url_upload_begin(PG_FUNCTION_ARGS)
{
	char	   *blob_id = sync_required_text_arg(fcinfo, 0, "blobs", "blob_id");
	char	   *token = sync_required_text_arg(fcinfo, 1, "blobs", "token");
	char	   *actor = NULL;
	char	   *partition;
	int64		granted = -1;
	const char *message;
	BlobUpload *u;

	connect_spi();
	partition = blob_url_verify("put", blob_id, token, &actor, &granted, &message);
	if (partition == NULL)
		sync_raise("blob.forbidden", message, NULL);
	/* §5.9.3: the grant binds the declared length */
	if (PG_ARGISNULL(2) || PG_GETARG_INT64(2) != granted)
		sync_raise("blob.forbidden", "the upload is not the granted length",
				   psprintf("{\"grantedByteLength\": " INT64_FORMAT "}", granted));
	u = upload_begin(partition, actor, blob_id, granted);
	SPI_finish();
	PG_RETURN_INT64(u->id);
}

PG_FUNCTION_INFO_V1(syncular_blob_url_get);

Datum
syncular_blob_url_get(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *blob_id = sync_required_text_arg(fcinfo, 0, "blobs", "blob_id");
	char	   *token = sync_required_text_arg(fcinfo, 1, "blobs", "token");
	char	   *partition;
	const char *message;
	int64		length;
	int64		upload_id;

	InitMaterializedSRF(fcinfo, 0);
	connect_spi();
	partition = blob_url_verify("get", blob_id, token, NULL, NULL, &message);
	if (partition == NULL)
		put_error(rsinfo, strcmp(message, "blob not found") == 0 ? "blob.not_found" : "blob.forbidden",
				  message);
	else if (!sync_blob_store_get(partition, blob_id, &length, &upload_id))
		put_error(rsinfo, "blob.not_found", "blob not found");
	else
	{
		/* authorized at issuance (§5.9.5): the token is a short-TTL grant to these bytes */
		put_chunks(rsinfo, upload_id, length);
	}
	SPI_finish();
	return (Datum) 0;
}

/* ---------------------------------------------------------------- the push-time check */

/* The blobId member of a BlobRef text (validated by the row codec at decode), or NULL. */
static char *
blob_ref_id(const SspValue *v)
{
	SspJson    *j;
	SspError	err;

	if (!ssp_json_parse(ssp_arena_new(), v->str.ptr, v->str.len, &j, &err) ||
		j->kind != SSP_JSON_OBJECT)
		return NULL;
	for (uint32 k = 0; k < j->count; k++)
		if (j->keys[k].len == 6 && memcmp(j->keys[k].ptr, "blobId", 6) == 0 &&
			j->items[k].kind == SSP_JSON_STRING &&
			memchr(j->items[k].text.ptr, '\0', j->items[k].text.len) == NULL)
			return pnstrdup(j->items[k].text.ptr, j->items[k].text.len);
	return NULL;
}

bool
sync_blobs_check_row(const char *partition, const SyncTable *t, const SspValue *row,
					 int32 op_index, SyncOpReject *reject)
{
	for (int i = 0; i < t->ncolumns; i++)
	{
		char	   *id;
		StringInfoData d;

		if (t->columns[i].type != SSP_COL_BLOB_REF || !row[i].present || row[i].is_null)
			continue;
		id = blob_ref_id(&row[i]);
		if (id != NULL && sync_blob_store_exists(partition, id, true))
			continue;
		initStringInfo(&d);
		appendStringInfoString(&d, "{\"fieldPaths\":[");
		escape_json(&d, t->columns[i].name);
		appendStringInfoString(&d, "],\"reason\":\"missing_blob\"}");
		memset(reject, 0, sizeof(*reject));
		reject->op_index = op_index;
		reject->code = "blob.not_found";
		reject->message = "blob not found";
		reject->retryable = false;
		reject->details_json = d.data;
		return false;
	}
	return true;
}
