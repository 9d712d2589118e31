-- syncular install script, part 45: the segment store (SPEC §5.1, §5.4, §5.5).
--
-- Segments are cache, not durable state (§5.1: "servers MAY expire them at any time"), so both
-- tables are UNLOGGED: building a segment writes no WAL, and after a crash PostgreSQL truncates
-- them.  A descriptor issued before the crash then answers 404 sync.not_found, which §5.5 makes
-- legal ("the expired→forgotten transition"), and the client's recovery is a re-pull.  Unlogged
-- tables are not replicated and cannot be read on a hot standby: a standby serves the rows lane
-- inline only (docs/segments.md).  The bytes column is STORAGE EXTERNAL: out of line without
-- pglz, which would spend CPU on every build for a payload the serving hop compresses per
-- response (§5.8) anyway.

-- One entry per content address: segment_id = 'sha256:' || hex(sha256(bytes)) (§5.1).
CREATE UNLOGGED TABLE syncular.sync_segments (
  segment_id     TEXT PRIMARY KEY,
  media_type     SMALLINT NOT NULL CHECK (media_type IN (1, 2)),
  byte_length    BIGINT NOT NULL,
  row_count      BIGINT NOT NULL,
  created_at_ms  BIGINT NOT NULL,
  bytes          BYTEA NOT NULL
);
ALTER TABLE syncular.sync_segments ALTER COLUMN bytes SET STORAGE EXTERNAL;
COMMENT ON TABLE syncular.sync_segments IS
'Segment store (SPEC §5.1): one row per content address (sha256:<hex> of the uncompressed bytes), media type '
'1 = rows (SSG2), 2 = sqlite. UNLOGGED cache: emptied by crash recovery, not readable on a standby. Written by '
'the pull, read by syncular.segment_download, forgotten by syncular.prune_segments.';

-- One publication per descriptor context (§5.1): who may download the bytes, until when.
CREATE UNLOGGED TABLE syncular.sync_segment_publications (
  segment_id       TEXT NOT NULL,
  partition        TEXT NOT NULL,
  log_epoch        TEXT NOT NULL,
  tbl              TEXT NOT NULL,
  schema_version   INTEGER NOT NULL,
  media_type       SMALLINT NOT NULL,
  scope_digest     TEXT NOT NULL,
  grant_digest     TEXT NOT NULL,
  as_of_commit_seq BIGINT NOT NULL,
  row_cursor       TEXT,
  page_rows        INTEGER NOT NULL,
  next_row_cursor  TEXT,
  created_at_ms    BIGINT NOT NULL,
  expires_at_ms    BIGINT NOT NULL,
  CONSTRAINT sync_segment_publications_key UNIQUE NULLS NOT DISTINCT (partition, log_epoch, tbl, schema_version, media_type, scope_digest,
                                                             grant_digest, as_of_commit_seq, row_cursor, page_rows)
);
CREATE INDEX sync_segment_publications_segment ON syncular.sync_segment_publications (segment_id);
CREATE INDEX sync_segment_publications_expiry ON syncular.sync_segment_publications (expires_at_ms);
COMMENT ON TABLE syncular.sync_segment_publications IS
'Publications of stored segments (SPEC §5.1): the reuse key (partition, log epoch, table, schema version, media '
'type, scope digest §3.5, grant digest, asOfCommitSeq, page start and page size) with the page continuation, '
'creation and expiry (syncular.segment_ttl). grant_digest hashes the read restriction on unrequested scope '
'variables, so two actors share a segment only when they may read exactly the same rows. UNLOGGED cache.';

CREATE FUNCTION syncular.prune_segments(now_ms bigint DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  t     bigint := coalesce(now_ms, syncular.now_ms());
  pubs  bigint;
  segs  bigint;
BEGIN
  DELETE FROM syncular.sync_segment_publications p WHERE p.expires_at_ms <= t;
  GET DIAGNOSTICS pubs = ROW_COUNT;
  DELETE FROM syncular.sync_segments s
   WHERE NOT EXISTS (SELECT 1 FROM syncular.sync_segment_publications p WHERE p.segment_id = s.segment_id);
  GET DIAGNOSTICS segs = ROW_COUNT;
  RETURN jsonb_build_object('publications', pubs, 'segments', segs);
END $$;
COMMENT ON FUNCTION syncular.prune_segments(bigint) IS
'Forgets expired segments (SPEC §5.1, §5.5): deletes every publication whose expiry (ms since the Unix epoch) is at '
'or before now_ms (default: the clock), then every stored segment left without a publication. Returns '
'{"publications": n, "segments": m}. A forgotten segment answers 404 sync.not_found on download, which §5.5 makes '
'equivalent to sync.segment_expired for the client (re-pull). Owner-only; run it from the same scheduler as '
'syncular.prune. No errors of its own.';

CREATE FUNCTION syncular.segment_download(segment_id text, partition text, actor_id text,
                                          requested_scopes jsonb,
                                          if_none_match text DEFAULT NULL,
                                          accept_encoding text DEFAULT NULL,
                                          client_id text DEFAULT NULL)
RETURNS TABLE(status integer, headers jsonb, body bytea)
LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_segment_download';
COMMENT ON FUNCTION syncular.segment_download(text, text, text, jsonb, text, text, text) IS
'GET <mount>/segments/{segmentId} as one row (SPEC §5.5, docs/segments.md). segment_id: the path parameter; '
'partition, actor_id: what the host authenticated; requested_scopes: the X-Syncular-Scopes header parsed as JSON '
'(the owning subscription''s requested scope map); if_none_match, accept_encoding: the request headers (NULL when '
'absent); client_id: passed to the scope resolver (NULL = ''''). Re-authorizes on every call: resolves the actor''s '
'scopes, computes the effective scopes and their digest for the segment''s table, and requires an unexpired '
'publication of the segment in this partition and live log epoch with that digest. Answers: 200 with the bytes '
'(Content-Encoding zstd or gzip per accept_encoding, zstd preferred, identity otherwise), 304 (empty body) when '
'if_none_match names the ETag, 404 sync.not_found (unknown, forgotten, another partition or log epoch), 404 '
'sync.segment_expired (TTL passed, the schema version moved, or an RFC 0007 checkpoint of the partition has a '
'schema version above the segment''s), 403 sync.forbidden (resolver failure, revoked scopes, digest mismatch), '
'400 sync.invalid_request / sync.invalid_subscription (bad requested_scopes), 503 sync.schema_not_ready (no schema, '
'or a hot standby: the store is not readable there). headers: a JSON object {Content-Type, ETag, Cache-Control, '
'Vary, Content-Encoding?}; error bodies are the catalogue JSON {code, category, retryable, recommendedAction, '
'message}. SECURITY DEFINER like syncular.handle.';

CREATE FUNCTION syncular.segments(partition text DEFAULT NULL)
RETURNS TABLE(segment_id text, media_type smallint, tbl text, schema_version integer, scope_digest text,
              as_of_commit_seq bigint, row_cursor text, next_row_cursor text, row_count bigint,
              byte_length bigint, created_at_ms bigint, expires_at_ms bigint)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT p.segment_id, p.media_type, p.tbl, p.schema_version, p.scope_digest, p.as_of_commit_seq,
         p.row_cursor, p.next_row_cursor, s.row_count, s.byte_length, p.created_at_ms, p.expires_at_ms
    FROM syncular.sync_segment_publications p JOIN syncular.sync_segments s USING (segment_id)
   WHERE $1 IS NULL OR p.partition = $1
   ORDER BY p.partition, p.tbl, p.as_of_commit_seq, p.created_at_ms, p.row_cursor NULLS FIRST
$$;
COMMENT ON FUNCTION syncular.segments(text) IS
'The stored segment publications (SPEC §5.1) of one partition (NULL: every partition): descriptor fields, sizes and '
'expiry in ms since the Unix epoch. For operators and tests; owner-only. No errors.';

-- The server secret of signed segment URLs (§5.4): owner-only like every catalog table.
CREATE TABLE syncular.sync_segment_secret (
  id   INTEGER PRIMARY KEY CHECK (id = 1),
  key  BYTEA NOT NULL CHECK (length(key) >= 32)
);
-- 244 random bits from two v4 UUIDs (pg_strong_random), hashed to a 32-byte key
INSERT INTO syncular.sync_segment_secret (id, key)
VALUES (1, sha256(uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid())));
REVOKE ALL ON syncular.sync_segments, syncular.sync_segment_publications, syncular.sync_segment_secret
  FROM PUBLIC;
COMMENT ON TABLE syncular.sync_segment_secret IS
'The HMAC-SHA256 key of signed segment URLs (SPEC §5.4), created with the extension. Owner-only: readable by no '
'role the operator does not grant. Replace it (UPDATE ... SET key = <32 random bytes>) to invalidate every '
'issued URL at once.';

CREATE FUNCTION syncular.segment_url_download(segment_id text, st text,
                                              if_none_match text DEFAULT NULL,
                                              accept_encoding text DEFAULT NULL)
RETURNS TABLE(status integer, headers jsonb, body bytea)
LANGUAGE C VOLATILE PARALLEL UNSAFE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS 'MODULE_PATHNAME', 'syncular_segment_url_download';
COMMENT ON FUNCTION syncular.segment_url_download(text, text, text, text) IS
'A bare signed-URL fetch (SPEC §5.4) as one row, for the gateway route that serves syncular.segment_url_base: no '
'host authentication, the token is the whole grant. segment_id: the path''s segment id; st: the st query '
'parameter; if_none_match, accept_encoding: the request headers. Verifies the HMAC, exp (60 s skew), seg, and that '
'the token''s scope digest was published for the segment in the partition its aud names (live log epoch), then '
'answers like syncular.segment_download: 200 (zstd/gzip/identity), 304, 403 sync.forbidden (malformed or '
'tampered token, another segment), 404 sync.segment_expired (token or publication expired, RFC 0007 checkpoint '
'ahead), 404 sync.not_found (forgotten, rotated epoch), 503 sync.schema_not_ready. SECURITY DEFINER like '
'syncular.handle.';
