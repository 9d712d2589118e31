/*
 * segurl.c — signed segment URLs, the native scheme of SPEC §5.4:
 *
 *   url = syncular.segment_url_base || segmentId || '?st=' || st
 *   st  = base64url(payloadJson) "." base64url(HMAC-SHA256(key, payloadJson))
 *   payloadJson = {"v":1,"seg":"<segmentId>","sd":"<scopeDigest>","aud":"<aud>","exp":<unix s>}
 *
 * The key is the server secret (segstore.c reads and creates its catalog row: owner-only, created with the
 * extension).  aud = base64url of the first 16 bytes of HMAC-SHA256(key, "aud:" || partition):
 * stable per partition and not derivable by a client (§5.4).  A URL is issued in the pull
 * (right after scope resolution) when the client advertised accept bit 3 and the operator set
 * syncular.segment_url_base; it lives syncular.segment_url_ttl (default 15 min, the SHOULD).
 * sync_segment_url_check verifies a token for the gateway's bare-URL fetch.
 */
#include "postgres.h"

#include <limits.h>

#include "catalog/pg_type.h"
#include "common/hmac.h"
#include "common/sha2.h"
#include "port.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/json.h"
#include "utils/jsonb.h"

#include "segments.h"
#include "urltoken.h"

char	   *sync_segment_url_base = NULL;
int			sync_segment_url_ttl_s = 15 * 60;

#define VERIFY_SKEW_S 60		/* §5.4: at most 60 s of clock skew at verification */

void
sync_segment_url_define_gucs(void)
{
	DefineCustomStringVariable("syncular.segment_url_base",
							   "Base of signed segment URLs (SPEC §5.4); empty: none are issued.",
							   "A descriptor for a client that advertised accept bit 3 carries "
							   "url = this value || segmentId || '?st=' || token; the gateway serves it "
							   "with syncular.segment_url_download.",
							   &sync_segment_url_base,
							   "",
							   PGC_SUSET, 0,
							   NULL, NULL, NULL);
	DefineCustomIntVariable("syncular.segment_url_ttl",
							"Lifetime of a signed segment URL (SPEC §5.4).",
							"urlExpiresAtMs is this long after issuance; it is also the revocation "
							"window of an issued URL; 0 issues URLs that are already "
							"expired (urlExpiresAtMs = the issuing second, SPEC §5.4 truncation), "
							"which a client must not fetch.",
							&sync_segment_url_ttl_s,
							15 * 60, 0, 24 * 60 * 60,
							PGC_SUSET, GUC_UNIT_S,
							NULL, NULL, NULL);
}

/* ---------------------------------------------------------------- primitives */

static void
hmac256(const uint8 *key, int keylen, const char *data, int len, uint8 *mac)
{
	pg_hmac_ctx *ctx = pg_hmac_create(PG_SHA256);

	if (ctx == NULL || pg_hmac_init(ctx, key, keylen) < 0 ||
		pg_hmac_update(ctx, (const uint8 *) data, len) < 0 ||
		pg_hmac_final(ctx, mac, PG_SHA256_DIGEST_LENGTH) < 0)
	{
		if (ctx)
			pg_hmac_free(ctx);
		elog(ERROR, "syncular: HMAC-SHA256 failed");
	}
	pg_hmac_free(ctx);
}

/*
 * The server secret.  It is created with the extension; a missing row (the table emptied) is
 * replaced by 32 bytes from pg_strong_random when the store can be written, else NULL.
 */
static bytea *
read_secret(void)
{
	bytea	   *key = sync_segment_secret_read();
	uint8		fresh[32];
	bytea	   *b;

	if (key != NULL || !sync_segments_writable())
		return key;
	if (!pg_strong_random(fresh, sizeof(fresh)))
		elog(ERROR, "syncular: could not generate a random secret");
	b = palloc(VARHDRSZ + sizeof(fresh));
	SET_VARSIZE(b, VARHDRSZ + sizeof(fresh));
	memcpy(VARDATA(b), fresh, sizeof(fresh));
	return sync_segment_secret_create(b);
}

static char *
audience(const bytea *key, const char *partition)
{
	uint8		mac[PG_SHA256_DIGEST_LENGTH];
	char	   *msg = psprintf("aud:%s", partition);

	hmac256((const uint8 *) VARDATA_ANY(key), VARSIZE_ANY_EXHDR(key), msg, strlen(msg), mac);
	return sync_b64url_encode(mac, 16);
}

/* ---------------------------------------------------------------- the generic token (urltoken.h) */

char *
sync_url_token_mint(const char *payload, int len)
{
	bytea	   *key = read_secret();
	uint8		mac[PG_SHA256_DIGEST_LENGTH];

	if (key == NULL)
		return NULL;
	hmac256((const uint8 *) VARDATA_ANY(key), VARSIZE_ANY_EXHDR(key), payload, len, mac);
	return psprintf("%s.%s", sync_b64url_encode((const uint8 *) payload, len),
					sync_b64url_encode(mac, sizeof(mac)));
}

Jsonb *
sync_url_token_open(const char *token)
{
	const char *dot = strchr(token, '.');
	bytea	   *key = read_secret();
	uint8	   *payload;
	uint8	   *sig;
	int			plen;
	int			slen;
	uint8		mac[PG_SHA256_DIGEST_LENGTH];
	JsonbValue	v;
	Jsonb	   *claims;

	if (key == NULL || dot == NULL ||
		(payload = sync_b64url_decode(token, dot - token, &plen)) == NULL ||
		(sig = sync_b64url_decode(dot + 1, strlen(dot + 1), &slen)) == NULL || slen != (int) sizeof(mac))
		return NULL;
	hmac256((const uint8 *) VARDATA_ANY(key), VARSIZE_ANY_EXHDR(key), (const char *) payload, plen, mac);
	if (timingsafe_bcmp(mac, sig, sizeof(mac)) != 0)
		return NULL;
	/* signed by this server: the payload is its own JSON object */
	claims = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(pnstrdup((char *) payload, plen))));
	if (!JB_ROOT_IS_OBJECT(claims) ||
		getKeyJsonValueFromContainer(&claims->root, "v", 1, &v) == NULL || v.type != jbvNumeric)
		return NULL;
	return claims;
}

char *
sync_url_token_audience(const char *partition)
{
	bytea	   *key = read_secret();

	return key == NULL ? NULL : audience(key, partition);
}

char *
sync_url_token_text(Jsonb *claims, const char *key)
{
	JsonbValue	v;

	if (getKeyJsonValueFromContainer(&claims->root, key, strlen(key), &v) == NULL || v.type != jbvString)
		return NULL;
	return pnstrdup(v.val.string.val, v.val.string.len);
}

bool
sync_url_token_int(Jsonb *claims, const char *key, int64 *out)
{
	JsonbValue	v;

	if (getKeyJsonValueFromContainer(&claims->root, key, strlen(key), &v) == NULL || v.type != jbvNumeric)
		return false;
	*out = DatumGetInt64(DirectFunctionCall1(numeric_int8, NumericGetDatum(v.val.numeric)));
	return true;
}

/* ---------------------------------------------------------------- issuance */

bool
sync_segment_signed_url(const char *segment_id, const char *scope_digest, const char *partition,
						int64 now_ms, char **url, int64 *expires_at_ms)
{
	char	   *aud;
	char	   *st;
	StringInfoData payload;
	int64		exp_s;

	if (sync_segment_url_base == NULL || sync_segment_url_base[0] == '\0')
		return false;
	aud = sync_url_token_audience(partition);
	if (aud == NULL)
		return false;
	exp_s = now_ms / 1000 + sync_segment_url_ttl_s;
	initStringInfo(&payload);
	appendStringInfoString(&payload, "{\"v\":1,\"seg\":");
	escape_json(&payload, segment_id);
	appendStringInfoString(&payload, ",\"sd\":");
	escape_json(&payload, scope_digest);
	appendStringInfoString(&payload, ",\"aud\":");
	escape_json(&payload, aud);
	appendStringInfo(&payload, ",\"exp\":" INT64_FORMAT "}", exp_s);
	st = sync_url_token_mint(payload.data, payload.len);
	if (st == NULL)
		return false;
	*url = psprintf("%s%s?st=%s", sync_segment_url_base, segment_id, st);
	*expires_at_ms = exp_s * 1000;
	return true;
}

/* ---------------------------------------------------------------- verification */

/*
 * Check the token `st` for `segment_id` (§5.4): the MAC, then exp (with VERIFY_SKEW_S), seg,
 * and (sd, aud) against the segment's publications.  Raises sync.forbidden for a malformed,
 * tampered or foreign token and sync.segment_expired for an expired one; on success returns the
 * partition the token's aud names, and the publication's scope digest in *scope_digest.
 */
char *
sync_segment_url_check(const char *segment_id, const char *st, int64 now_ms, char **scope_digest)
{
	bytea	   *key = read_secret();
	Jsonb	   *claims = sync_url_token_open(st);
	char	   *seg;
	char	   *sd;
	char	   *aud;
	int64		exp_s;
	char	  **parts;
	int			nparts;

	if (claims == NULL)
		sync_raise("sync.forbidden", "the signed URL is not valid", NULL);
	seg = sync_url_token_text(claims, "seg");
	sd = sync_url_token_text(claims, "sd");
	aud = sync_url_token_text(claims, "aud");
	if (!sync_url_token_int(claims, "exp", &exp_s) || seg == NULL || sd == NULL || aud == NULL)
		sync_raise("sync.forbidden", "the signed URL is not valid", NULL);
	if (strcmp(seg, segment_id) != 0)
		sync_raise("sync.forbidden", "the signed URL is for another segment", NULL);
	if (now_ms / 1000 > exp_s + VERIFY_SKEW_S)
		sync_raise("sync.segment_expired", "the signed URL has expired — re-pull (§5.4)", NULL);

	/* the partitions whose publications of this segment recorded the digest; aud selects one */
	nparts = sync_segment_publication_partitions(segment_id, sd, &parts);
	for (int i = 0; i < nparts; i++)
	{
		if (strcmp(audience(key, parts[i]), aud) == 0)
		{
			*scope_digest = sd;
			return parts[i];
		}
	}
	sync_raise("sync.not_found", "segment not found", NULL);
}
