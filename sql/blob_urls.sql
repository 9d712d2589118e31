-- blob_urls: signed blob URLs (SPEC §5.9.3 presigned upload grants, §5.9.5 presigned downloads;
-- docs/blobs.md) with the native HMAC token of §5.4.  Grants obey the size cap up front; a PUT
-- under a grant is accepted for exactly that blob and length until expiry; tampered, expired,
-- foreign-purpose and other-blob tokens are refused (blob.forbidden) and store nothing; an
-- authorized blob_get issues a URL that blob_url_get serves without host authentication.
\set VERBOSITY terse
SELECT current_database() AS orig_db \gset
SET client_min_messages = warning;
DROP DATABASE IF EXISTS blob_urls;
CREATE DATABASE blob_urls;
\c blob_urls
\i sql/test_helpers.psql

\i sql/blob_fixture.psql

CREATE FUNCTION pg_temp.bid(b bytea) RETURNS text LANGUAGE sql IMMUTABLE AS
$$ SELECT 'sha256:' || encode(sha256(b), 'hex') $$;
-- the bt token of a URL
CREATE FUNCTION pg_temp.tok(url text) RETURNS text LANGUAGE sql IMMUTABLE AS
$$ SELECT substring(url FROM '\?bt=(.*)$') $$;
-- the token with one claim changed (signature kept): a forgery
CREATE FUNCTION pg_temp.forge(t text, k text, v jsonb) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT rtrim(translate(encode(convert_to((convert_from(decode(translate(split_part(t, '.', 1), '-_', '+/')
           || repeat('=', (4 - length(split_part(t, '.', 1)) % 4) % 4), 'base64'), 'UTF8')::jsonb
           || jsonb_build_object(k, v))::text, 'UTF8'), 'base64'), E'+/\n', '-_'), '=')
         || '.' || split_part(t, '.', 2) $$;
-- a download through a URL: "<status> <content_type> <byte_length> <body or error code>"
CREATE FUNCTION pg_temp.get_url(id text, t text) RETURNS text LANGUAGE sql AS $$
  SELECT concat_ws(' ', min(status), min(content_type), min(byte_length),
                   CASE WHEN min(status) = 200 THEN convert_from(string_agg(body, ''::bytea ORDER BY o), 'UTF8')
                        ELSE (SELECT (j ->> 'code') || ': ' || (j ->> 'message') FROM
                                (SELECT convert_from(string_agg(body, ''::bytea ORDER BY o), 'UTF8')::jsonb AS j) e) END)
    FROM syncular.blob_url_get(id, t) WITH ORDINALITY g(status, content_type, byte_length, body, o)
$$;

-- no base: no grants offered (NULL), downloads stream as before
SELECT syncular.blob_upload_grant('p1', 'alice', pg_temp.bid('photo'), 5) IS NULL AS not_offered;
SET syncular.blob_url_base = 'https://gw.example/sync/blobs/';
-- the cap is applied at issuance; bad arguments
SET syncular.blob_max_bytes = 4;
SELECT pg_temp.try($$SELECT syncular.blob_upload_grant('p1', 'alice', pg_temp.bid('photo'), 5)$$) AS over_cap;
RESET syncular.blob_max_bytes;
SELECT pg_temp.try($$SELECT syncular.blob_upload_grant('p1', 'alice', 'sha256:XY', 5)$$) AS bad_id;
SELECT pg_temp.try($$SELECT syncular.blob_upload_grant('p1', 'alice', pg_temp.bid('photo'), -1)$$) AS negative;

-- a grant: url + expiry (ttl 15 min)
SELECT syncular.blob_upload_grant('p1', 'alice', pg_temp.bid('photo'), 5) AS g \gset
SELECT (:'g'::jsonb ->> 'url') LIKE 'https://gw.example/sync/blobs/' || pg_temp.bid('photo') || '?bt=%' AS url_shape,
       (:'g'::jsonb ->> 'urlExpiresAtMs')::bigint - (extract(epoch FROM now()) * 1000)::bigint
         BETWEEN 890000 AND 901000 AS fifteen_minutes;
SELECT pg_temp.tok(:'g'::jsonb ->> 'url') AS put_tok \gset
-- refused: another length, another blob, tampered claims, a bad signature; nothing stored
SELECT pg_temp.try(format('SELECT syncular.blob_url_upload_begin(%L, %L, 6)', pg_temp.bid('photo'), :'put_tok')) AS other_length;
SELECT pg_temp.try(format('SELECT syncular.blob_url_upload_begin(%L, %L, 5)', pg_temp.bid('other'), :'put_tok')) AS other_blob;
SELECT pg_temp.try(format('SELECT syncular.blob_url_upload_begin(%L, %L, 5)', pg_temp.bid('photo'),
       pg_temp.forge(:'put_tok', 'p', '"p2"'))) AS tampered_partition;
SELECT pg_temp.try(format('SELECT syncular.blob_url_upload_begin(%L, %L, 5)', pg_temp.bid('photo'),
       pg_temp.forge(:'put_tok', 'exp', '99999999999'))) AS tampered_expiry;
SELECT pg_temp.try(format('SELECT syncular.blob_url_upload_begin(%L, %L, 5)', pg_temp.bid('photo'),
       :'put_tok' || 'A')) AS bad_signature;
SELECT pg_temp.try(format('SELECT syncular.blob_url_upload_begin(%L, %L, 5)', pg_temp.bid('photo'),
       'garbage')) AS garbage;
SELECT count(*) AS stored_after_refusals FROM syncular.sync_blobs;
-- accepted: the bytes land in the granted partition for the granting actor
BEGIN;
SELECT u AS upload FROM syncular.blob_url_upload_begin(pg_temp.bid('photo'), :'put_tok', 5) u \gset
SELECT syncular.blob_upload_append(:upload, 'photo') AS received;
SELECT syncular.blob_upload_finish(:upload) ->> 'stored' AS stored;
COMMIT;
SELECT partition, uploader, byte_length FROM syncular.sync_blobs;
-- the blob is now present: a new grant says so
SELECT syncular.blob_upload_grant('p1', 'alice', pg_temp.bid('photo'), 5) AS present;

-- downloads: reference the blob from a row of org o1
SELECT r ->> 'status' AS pushed FROM jsonb_array_elements(syncular.push('p1', 'alice', 'c-alice', jsonb_build_array(
  jsonb_build_object('clientCommitId', 'k1', 'operations', jsonb_build_array(
    jsonb_build_object('table', 'files', 'op', 'upsert', 'row',
      jsonb_build_object('id', 'f1', 'org', 'o1', 'thumb', NULL,
                         'att', jsonb_build_object('blobId', pg_temp.bid('photo'), 'byteLength', 5)))))))) r;
-- bob (org o2) is still forbidden: no URL
SELECT status, convert_from(body, 'UTF8')::jsonb ->> 'code' AS code FROM syncular.blob_get('p1', 'bob', pg_temp.bid('photo'));
-- alice gets a URL, not the bytes
SELECT status, content_type, byte_length, convert_from(body, 'UTF8')::jsonb ? 'urlExpiresAtMs' AS has_expiry
  FROM syncular.blob_get('p1', 'alice', pg_temp.bid('photo'));
SELECT pg_temp.tok(convert_from(body, 'UTF8')::jsonb ->> 'url') AS get_tok
  FROM syncular.blob_get('p1', 'alice', pg_temp.bid('photo')) \gset
SELECT pg_temp.get_url(pg_temp.bid('photo'), :'get_tok') AS presigned_get;
SELECT pg_temp.get_url(pg_temp.bid('other'), :'get_tok') AS other_blob;
SELECT pg_temp.get_url(pg_temp.bid('photo'), pg_temp.forge(:'get_tok', 'exp', '99999999999')) AS tampered;
SELECT pg_temp.get_url(pg_temp.bid('photo'), pg_temp.forge(:'get_tok', 'op', '"put"')) AS tampered_op;
-- purposes do not mix: the upload grant does not download, the download URL does not upload
SELECT pg_temp.get_url(pg_temp.bid('photo'), :'put_tok') AS grant_as_download;
SELECT pg_temp.try(format('SELECT syncular.blob_url_upload_begin(%L, %L, 5)', pg_temp.bid('photo'), :'get_tok')) AS url_as_grant;

-- expiry on the engine's clock (syncular.clock_override_ms pins it; verified against the same
-- clock, no skew): ttl 1 s from the issuing second
SET syncular.clock_override_ms = '1700000000500';
SET syncular.blob_url_ttl = 1;
SELECT pg_temp.tok(convert_from(body, 'UTF8')::jsonb ->> 'url') AS short_get,
       convert_from(body, 'UTF8')::jsonb ->> 'urlExpiresAtMs' AS get_expires_at_ms
  FROM syncular.blob_get('p1', 'alice', pg_temp.bid('photo')) \gset
SELECT syncular.blob_upload_grant('p1', 'alice', pg_temp.bid('fresh'), 5) AS short_grant \gset
SELECT pg_temp.tok(:'short_grant'::jsonb ->> 'url') AS short_put \gset
SELECT :'get_expires_at_ms' AS get_expires_at_ms, :'short_grant'::jsonb ->> 'urlExpiresAtMs' AS put_expires_at_ms;
SELECT pg_temp.get_url(pg_temp.bid('photo'), :'short_get') AS before_expiry;
SET syncular.clock_override_ms = '1700000001999';
SELECT pg_temp.get_url(pg_temp.bid('photo'), :'short_get') AS within_the_expiry_second;
SET syncular.clock_override_ms = '1700000002000';
SELECT pg_temp.get_url(pg_temp.bid('photo'), :'short_get') AS expired_get;
SELECT pg_temp.try(format('SELECT syncular.blob_url_upload_begin(%L, %L, 5)', pg_temp.bid('fresh'), :'short_put')) AS expired_put;
SELECT count(*) AS stored_total FROM syncular.sync_blobs;
-- ttl 0: issued already expired (urlExpiresAtMs is the issuing second, before now)
SET syncular.blob_url_ttl = 0;
SELECT (convert_from(body, 'UTF8')::jsonb ->> 'urlExpiresAtMs')::bigint AS ttl0_expires_at_ms,
       (convert_from(body, 'UTF8')::jsonb ->> 'urlExpiresAtMs')::bigint <= syncular.now_ms() AS already_expired
  FROM syncular.blob_get('p1', 'alice', pg_temp.bid('photo'));
RESET syncular.clock_override_ms;
RESET syncular.blob_url_ttl;
RESET syncular.blob_url_base;
-- the direct path is back once the base is empty
SELECT status, content_type FROM syncular.blob_get('p1', 'alice', pg_temp.bid('photo'));

\c :orig_db
DROP DATABASE blob_urls;
