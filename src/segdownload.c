/*
 * segdownload.c — GET <mount>/segments/{segmentId} as a SQL function (SPEC §5.5):
 *
 *   syncular.segment_download(segment_id, partition, actor_id, requested_scopes,
 *                             if_none_match, accept_encoding, client_id)
 *       RETURNS TABLE(status int, headers jsonb, body bytea)
 *
 * Authorization runs on every call, in the order of barrier-rfc0007.md §9.1:
 *   1. the segment's publications in this partition and its live log epoch; none -> 404
 *      sync.not_found (unknown, forgotten, or published elsewhere: no existence leak);
 *   2. the actor's scopes through the registered resolver; failure -> 403 sync.forbidden;
 *   3. effective scopes of requested_scopes on the publication's table, their scope digest
 *      (§3.5) and grant digest; revoked or no publication with both -> 403 sync.forbidden;
 *   4. TTL: no matching publication unexpired -> 404 sync.segment_expired;
 *   5. the publication's schema version is not the running one -> 404 sync.not_found;
 *   6. an RFC 0007 checkpoint of the partition above its schema version -> 404
 *      sync.segment_expired.
 * Then If-None-Match -> 304, else 200 with the bytes, compressed per Accept-Encoding (§5.8:
 * zstd preferred, gzip, identity; the stored bytes stay uncompressed).  Errors are answered
 * like handle_http: catalogue status and JSON body, anything else 500 sync.internal_error.
 */
#include "postgres.h"

#include <zlib.h>
#include <zstd.h>

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "segments.h"
#include "storage.h"

typedef struct DownloadReply
{
	int			status;
	StringInfoData headers;		/* JSON object text */
	bytea	   *body;
} DownloadReply;

/* ---------------------------------------------------------------- requested scopes */

static int
cmp_entry(const void *a, const void *b)
{
	const SspScopeEntry *x = a;
	const SspScopeEntry *y = b;

	return ssp_utf16_cmp(x->key.ptr, x->key.len, y->key.ptr, y->key.len);
}

static SspStr
str_of(const char *p, int len)
{
	SspStr		s;

	s.ptr = pnstrdup(p, len);
	s.len = (uint32) len;
	return s;
}

/*
 * X-Syncular-Scopes as jsonb -> the wire's scope map (keys in UTF-16 order, as the decoder gives
 * them), checked like a SUBSCRIPTION's (round.c): declared keys only, no '*', no U+0000.
 */
static SspScopeMap
requested_map(Jsonb *jb, const SyncTable *table)
{
	SspScopeMap m = {0, NULL};
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;

	if (!JB_ROOT_IS_OBJECT(jb) || JB_ROOT_IS_SCALAR(jb))
		sync_raise("sync.invalid_request", "requested_scopes must be a JSON object", NULL);
	m.entries = palloc0(sizeof(SspScopeEntry) * Max(JB_ROOT_COUNT(jb), 1));
	it = JsonbIteratorInit(&jb->root);
	JsonbIteratorNext(&it, &v, false);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		SspScopeEntry *e;
		bool		declared = false;

		if (tok != WJB_KEY)
			continue;
		e = &m.entries[m.n++];
		e->key = str_of(v.val.string.val, v.val.string.len);
		for (int d = 0; d < table->nscopes; d++)
			if (strcmp(e->key.ptr, table->scopes[d].variable) == 0)
				declared = true;
		if (!declared || memchr(v.val.string.val, '\0', v.val.string.len))
			sync_raise("sync.invalid_subscription",
					   "requested_scopes names a scope variable the segment's table does not declare",
					   NULL);
		tok = JsonbIteratorNext(&it, &v, true);
		if (v.type == jbvString)
		{
			e->values = palloc(sizeof(SspStr));
			e->values[0] = str_of(v.val.string.val, v.val.string.len);
			e->nvalues = 1;
		}
		else if (v.type == jbvBinary && JsonContainerIsArray(v.val.binary.data))
		{
			int			n = JsonContainerSize(v.val.binary.data);

			e->values = palloc0(sizeof(SspStr) * Max(n, 1));
			for (int i = 0; i < n; i++)
			{
				JsonbValue *x = getIthJsonbValueFromContainer(v.val.binary.data, i);

				if (x == NULL || x->type != jbvString)
					sync_raise("sync.invalid_request",
							   "requested_scopes values must be strings or arrays of strings", NULL);
				e->values[e->nvalues++] = str_of(x->val.string.val, x->val.string.len);
			}
		}
		else
			sync_raise("sync.invalid_request",
					   "requested_scopes values must be strings or arrays of strings", NULL);
		for (uint32 i = 0; i < e->nvalues; i++)
			if ((e->values[i].len == 1 && e->values[i].ptr[0] == '*') ||
				memchr(e->values[i].ptr, '\0', e->values[i].len))
				sync_raise("sync.invalid_subscription",
						   "requested_scopes may not hold '*' or U+0000", NULL);
	}
	qsort(m.entries, m.n, sizeof(SspScopeEntry), cmp_entry);
	return m;
}

/* ---------------------------------------------------------------- HTTP details */

/* Does If-None-Match name this ETag (or "*")?  Weak validators compare equal (RFC 9110 §13.1.2). */
static bool
etag_matches(const char *header, const char *etag)
{
	char	   *copy = pstrdup(header);
	char	   *save = NULL;

	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
	{
		char	   *end;

		while (*tok == ' ' || *tok == '\t')
			tok++;
		end = tok + strlen(tok);
		while (end > tok && (end[-1] == ' ' || end[-1] == '\t'))
			*--end = '\0';
		if (strncmp(tok, "W/", 2) == 0)
			tok += 2;
		if (strcmp(tok, "*") == 0 || strcmp(tok, etag) == 0)
			return true;
	}
	return false;
}

typedef enum
{
	ENC_IDENTITY, ENC_GZIP, ENC_ZSTD
} Encoding;

/* zstd when offered, else gzip, else identity; a coding with q=0 is not offered (RFC 9110 §12.5.3). */
static Encoding
choose_encoding(const char *header)
{
	bool		zstd = false;
	bool		gzip = false;
	char	   *copy;
	char	   *save = NULL;

	if (header == NULL)
		return ENC_IDENTITY;
	copy = pstrdup(header);
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
	{
		char	   *params = strchr(tok, ';');
		char	   *end;
		bool		refused = false;

		if (params)
		{
			char	   *q = strstr(params, "q=");

			*params = '\0';
			if (q && strtod(q + 2, NULL) <= 0.0)
				refused = true;
		}
		while (*tok == ' ' || *tok == '\t')
			tok++;
		end = tok + strlen(tok);
		while (end > tok && (end[-1] == ' ' || end[-1] == '\t'))
			*--end = '\0';
		if (refused)
			continue;
		if (pg_strcasecmp(tok, "zstd") == 0 || strcmp(tok, "*") == 0)
			zstd = true;
		else if (pg_strcasecmp(tok, "gzip") == 0 || pg_strcasecmp(tok, "x-gzip") == 0)
			gzip = true;
	}
	return zstd ? ENC_ZSTD : gzip ? ENC_GZIP : ENC_IDENTITY;
}

static bytea *
compress_zstd(const char *src, size_t len)
{
	size_t		cap = ZSTD_compressBound(len);
	bytea	   *out = palloc(VARHDRSZ + cap);
	size_t		n = ZSTD_compress(VARDATA(out), cap, src, len, 3);

	if (ZSTD_isError(n))
		elog(ERROR, "syncular: zstd compression failed: %s", ZSTD_getErrorName(n));
	SET_VARSIZE(out, VARHDRSZ + n);
	return out;
}

static bytea *
compress_gzip(const char *src, size_t len)
{
	z_stream	zs;
	uLong		cap;
	bytea	   *out;
	int			rc;

	memset(&zs, 0, sizeof(zs));
	/* windowBits 15 + 16: a gzip wrapper, as Content-Encoding: gzip requires */
	if (deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		elog(ERROR, "syncular: gzip initialization failed");
	cap = deflateBound(&zs, (uLong) len);
	out = palloc(VARHDRSZ + cap);
	zs.next_in = (Bytef *) src;
	zs.avail_in = (uInt) len;
	zs.next_out = (Bytef *) VARDATA(out);
	zs.avail_out = (uInt) cap;
	rc = deflate(&zs, Z_FINISH);
	deflateEnd(&zs);
	if (rc != Z_STREAM_END)
		elog(ERROR, "syncular: gzip compression failed (%d)", rc);
	SET_VARSIZE(out, VARHDRSZ + zs.total_out);
	return out;
}

static void
header(DownloadReply *r, const char *name, const char *value)
{
	appendStringInfoChar(&r->headers, r->headers.len > 1 ? ',' : ' ');
	escape_json(&r->headers, name);
	appendStringInfoChar(&r->headers, ':');
	escape_json(&r->headers, value);
}

static void
cache_headers(DownloadReply *r, const char *etag)
{
	header(r, "ETag", etag);
	header(r, "Cache-Control", "private, max-age=0");
	header(r, "Vary", "Authorization, X-Syncular-Scopes, Accept-Encoding");
}

/* ---------------------------------------------------------------- authorization */

typedef SyncSegPublication SegPublication;

/*
 * Steps 3 (digest) to 6 over the publications read in step 1: the last live publication with
 * the scope digest `sd` (and the grant digest `gd`, unless NULL), or raise.
 */
static const SegPublication *
select_publication(const SyncRound *round, const SegPublication *pubs, int npubs, const char *sd,
				   const char *gd)
{
	const SegPublication *chosen = NULL;
	bool		digest_ok = false;

	for (int i = 0; i < npubs; i++)
	{
		if (strcmp(pubs[i].scope_digest, sd) != 0 || (gd && strcmp(pubs[i].grant_digest, gd) != 0))
			continue;
		digest_ok = true;
		if (pubs[i].expires_at_ms > round->now_ms)
			chosen = &pubs[i];	/* the last live one */
	}
	if (!digest_ok)
		sync_raise("sync.forbidden", "the requested scopes are not authorized for this segment",
				   NULL);
	if (chosen == NULL)
		sync_raise("sync.segment_expired", "segment TTL elapsed — re-pull (§5.1)", NULL);
	if (chosen->schema_version != round->schema->version)
		sync_raise("sync.not_found", "segment not found", NULL);
	if (sync_segments_checkpoint_ahead(round->partition, chosen->schema_version))
		sync_raise("sync.segment_expired",
				   "segment predates the partition backfill checkpoint — re-pull (§5.1)", NULL);
	return chosen;
}

/*
 * Steps 1-6 of the header comment for the direct endpoint.  The requested map is checked
 * against the first publication's table (every publication of one content address holds the
 * same table: the SSG2 header or the image names it).
 */
static void
authorize(SyncRound *round, const char *segment_id, Jsonb *requested)
{
	SegPublication *pubs;
	int			npubs;
	SyncTable  *table;
	SspScopeMap map;
	SyncEffective *eff;

	npubs = sync_segment_publications(segment_id, round->partition, round->log_epoch, &pubs);
	table = npubs > 0 ? sync_schema_table(round->schema, pubs[0].tbl) : NULL;
	if (table == NULL)
		sync_raise("sync.not_found", "segment not found", NULL);
	map = requested_map(requested, table);
	sync_scopes_resolve(round);
	eff = sync_scopes_effective(round->allowed, table, &map);
	if (eff->revoked || eff->nvars == 0)
		sync_raise("sync.forbidden", "the requested scopes are not authorized for this segment",
				   NULL);
	select_publication(round, pubs, npubs, sync_scope_digest(eff), sync_grant_digest(eff));
}

/* ---------------------------------------------------------------- the endpoints */

/* Common start: the schema, an SPI connection, the round's clock; not on a hot standby. */
static void
begin(SyncRound *round)
{
	MemoryContext caller = CurrentMemoryContext;

	if (RecoveryInProgress())
		sync_raise("sync.schema_not_ready", "server schema is not ready for this request",
				   "{\"hotStandby\": true}");
	round->now_ms = sync_now_ms();
	round->schema = sync_schema_get();
	if (round->schema == NULL)
		sync_raise_no_schema();
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "syncular: SPI_connect failed");
	MemoryContextSwitchTo(caller);	/* SPI_connect leaves its procedure context current */
}

/* After authorization (begin's SPI connection is finished here): 304, or 200 with the bytes in the negotiated encoding (§5.5, §5.8). */
static void
respond(DownloadReply *r, const char *segment_id, const char *if_none_match,
		const char *accept_encoding)
{
	char	   *etag = psprintf("\"%s\"", segment_id);
	bytea	   *bytes;
	Encoding	enc;

	if (if_none_match && etag_matches(if_none_match, etag))
	{
		SPI_finish();
		r->status = 304;
		cache_headers(r, etag);
		r->body = (bytea *) palloc(VARHDRSZ);
		SET_VARSIZE(r->body, VARHDRSZ);
		return;
	}
	bytes = sync_segment_bytes(segment_id);
	SPI_finish();				/* the context current at begin's SPI_connect is current again */
	if (bytes == NULL)
		sync_raise("sync.not_found", "segment not found", NULL);

	enc = choose_encoding(accept_encoding);
	r->status = 200;
	header(r, "Content-Type", "application/octet-stream");
	cache_headers(r, etag);
	if (enc == ENC_ZSTD)
	{
		header(r, "Content-Encoding", "zstd");
		r->body = compress_zstd(VARDATA_ANY(bytes), VARSIZE_ANY_EXHDR(bytes));
	}
	else if (enc == ENC_GZIP)
	{
		header(r, "Content-Encoding", "gzip");
		r->body = compress_gzip(VARDATA_ANY(bytes), VARSIZE_ANY_EXHDR(bytes));
	}
	else
		r->body = bytes;
}

static char *
opt_text(FunctionCallInfo fcinfo, int i)
{
	return PG_ARGISNULL(i) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(i));
}

/* segment_download(segment_id, partition, actor_id, requested_scopes, inm, ae, client_id) */
static void
serve_direct(FunctionCallInfo fcinfo, DownloadReply *r)
{
	SyncRound	round;
	int64		touched;		/* the registry's last touch: unused here */
	char	   *segment_id;

	for (int i = 0; i < 4; i++)
		if (PG_ARGISNULL(i))
			sync_raise("sync.invalid_request",
					   "segment_id, partition, actor_id and requested_scopes must not be NULL",
					   NULL);
	memset(&round, 0, sizeof(round));
	segment_id = text_to_cstring(PG_GETARG_TEXT_PP(0));
	round.partition = text_to_cstring(PG_GETARG_TEXT_PP(1));
	round.actor_id = text_to_cstring(PG_GETARG_TEXT_PP(2));
	round.client_id = PG_ARGISNULL(6) ? "" : text_to_cstring(PG_GETARG_TEXT_PP(6));
	begin(&round);
	round.log_epoch = sync_storage_partition_epoch(round.partition, round.now_ms, false, &touched);
	if (round.log_epoch == NULL)
		sync_raise("sync.not_found", "segment not found", NULL);
	authorize(&round, segment_id, PG_GETARG_JSONB_P(3));
	respond(r, segment_id, opt_text(fcinfo, 4), opt_text(fcinfo, 5));
}

/* segment_url_download(segment_id, st, inm, ae): the bare-URL fetch, the token is the grant */
static void
serve_url(FunctionCallInfo fcinfo, DownloadReply *r)
{
	SyncRound	round;
	int64		touched;		/* the registry's last touch: unused here */
	char	   *segment_id;
	char	   *sd;
	SegPublication *pubs;
	int			npubs;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		sync_raise("sync.forbidden", "the signed URL is not valid", NULL);
	memset(&round, 0, sizeof(round));
	segment_id = text_to_cstring(PG_GETARG_TEXT_PP(0));
	begin(&round);
	round.partition = sync_segment_url_check(segment_id, text_to_cstring(PG_GETARG_TEXT_PP(1)),
											 round.now_ms, &sd);
	round.log_epoch = sync_storage_partition_epoch(round.partition, round.now_ms, false, &touched);
	npubs = round.log_epoch ? sync_segment_publications(segment_id, round.partition, round.log_epoch, &pubs) : 0;
	if (npubs == 0)
		sync_raise("sync.not_found", "segment not found", NULL);
	select_publication(&round, pubs, npubs, sd, NULL);
	respond(r, segment_id, opt_text(fcinfo, 2), opt_text(fcinfo, 3));
}


/* A download's work (sync_entry_run): serve fills the reply. */
typedef struct Download
{
	FunctionCallInfo fcinfo;
	void		(*serve) (FunctionCallInfo, DownloadReply *);
	DownloadReply *r;
} Download;

static void
download_work(void *arg)
{
	Download   *d = (Download *) arg;

	d->serve(d->fcinfo, d->r);
}

/*
 * One HTTP answer as a row: `serve` runs in a subtransaction; a catalogue error becomes its
 * status and JSON body, anything else 500 sync.internal_error (the cause goes to the server log),
 * as handle_http answers.
 */
static Datum
answer(FunctionCallInfo fcinfo, void (*serve) (FunctionCallInfo, DownloadReply *))
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	DownloadReply *r = palloc0(sizeof(DownloadReply));
	Download	d = {fcinfo, serve, r};
	ErrorData  *edata;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};

	InitMaterializedSRF(fcinfo, 0);
	initStringInfo(&r->headers);
	appendStringInfoChar(&r->headers, '{');

	edata = sync_entry_run(download_work, &d);
	if (edata != NULL)
	{
		resetStringInfo(&r->headers);
		appendStringInfoChar(&r->headers, '{');
		header(r, "Content-Type", "application/json");
		r->body = sync_entry_http_error(edata, "segment download", &r->status);
	}

	appendStringInfoChar(&r->headers, '}');
	values[0] = Int32GetDatum(r->status);
	values[1] = DirectFunctionCall1(jsonb_in, CStringGetDatum(r->headers.data));
	values[2] = PointerGetDatum(r->body);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(syncular_segment_download);

Datum
syncular_segment_download(PG_FUNCTION_ARGS)
{
	return answer(fcinfo, serve_direct);
}

PG_FUNCTION_INFO_V1(syncular_segment_url_download);

Datum
syncular_segment_url_download(PG_FUNCTION_ARGS)
{
	return answer(fcinfo, serve_url);
}
