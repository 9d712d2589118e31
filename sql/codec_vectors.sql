-- Golden vectors (shared/vectors, or $SYNCULAR_VECTORS): for every case of every manifest,
-- debug_render(bin) equals the .json (jsonb equality) and debug_encode(json) renders back to the
-- same JSON; every invalid file is rejected with the manifest's code in the error DETAIL.
-- Skips with a message when the folder is absent (alternative expected file codec_vectors_1.out);
-- scripts/test.sh reports that skip in its closing line.  With SYNCULAR_REQUIRE_VECTORS set (the
-- test scripts set it when ../shared/vectors exists) an unreadable or wrong folder fails instead.
-- Every vector set of the folder (a sub-folder with a manifest) is listed: a set this test does
-- not run (push/: bare sparse rows, run by test/codec) shows as run_here = f.
\getenv require SYNCULAR_REQUIRE_VECTORS
\getenv vecdir SYNCULAR_VECTORS
\if :{?vecdir}
\else
\getenv pwd PWD
\set vecdir :pwd '/../shared/vectors'
\endif
SELECT (pg_stat_file(:'vecdir' || '/request/manifest.json', true)).size IS NOT NULL AS have_vectors \gset
\if :have_vectors

SELECT d AS vector_set, d IN ('request', 'response', 'segment') AS run_here
  FROM pg_ls_dir(:'vecdir') d
 WHERE CASE WHEN (pg_stat_file(:'vecdir' || '/' || d)).isdir
            THEN (pg_stat_file(:'vecdir' || '/' || d || '/manifest.json', true)).size IS NOT NULL END
 ORDER BY d;

CREATE TEMP TABLE vec AS
SELECT k.kind, c.ord, c.v->>'name' AS name,
       pg_read_binary_file(:'vecdir' || '/' || k.kind || '/' || (c.v->>'bin')) AS bin,
       pg_read_file(:'vecdir' || '/' || k.kind || '/' || (c.v->>'json'))::jsonb AS js
  FROM (VALUES ('request'), ('response'), ('segment')) k(kind),
       jsonb_array_elements(pg_read_file(:'vecdir' || '/' || k.kind || '/manifest.json')::jsonb->'cases')
         WITH ORDINALITY c(v, ord);

CREATE TEMP TABLE bad AS
SELECT k.kind, c.ord, c.v->>'name' AS name, c.v->>'error' AS error,
       pg_read_binary_file(:'vecdir' || '/' || k.kind || '/' || (c.v->>'bin')) AS bin
  FROM (VALUES ('request'), ('response'), ('segment')) k(kind),
       jsonb_array_elements(pg_read_file(:'vecdir' || '/' || k.kind || '/manifest.json')::jsonb->'invalid')
         WITH ORDINALITY c(v, ord);

-- The catalogue code carried in the DETAIL of an error raised by debug_render, or 'accepted'.
CREATE FUNCTION pg_temp.render_code(b bytea) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  d text;
BEGIN
  PERFORM syncular.debug_render(b);
  RETURN 'accepted';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL;
  RETURN d::jsonb->>'code';
END $$;

SELECT count(*) > 0 AS have_cases FROM vec;

-- 1. rendering equals the golden JSON
SELECT kind, name, syncular.debug_render(bin) = js AS render_equal
  FROM vec ORDER BY kind, ord;

-- 2. debug_encode(json) renders back to the same JSON.  The bytes are equal too, except where a
--    json-typed field's raw text had spaces: it is rendered parsed and re-encoded compact
--    (pull-bootstrap: params and bootstrapState; bootstrap-segments: bootstrapState;
--    error-mid-stream: details; rows-two-blocks: a json column value).
SELECT kind, name,
       syncular.debug_render(syncular.debug_encode(js)) = js AS roundtrip_equal,
       syncular.debug_encode(js) = bin AS bytes_equal
  FROM vec ORDER BY kind, ord;

-- 3. every invalid file is rejected with the named code
SELECT kind, name, error AS expected, pg_temp.render_code(bin) AS got,
       pg_temp.render_code(bin) = error AS ok
  FROM bad ORDER BY kind, ord;

\elif :{?require}
\echo 'FAILED: golden vectors required (SYNCULAR_REQUIRE_VECTORS) but no request/manifest.json under' :'vecdir'
\else
\echo 'golden vectors not found (no ../shared/vectors beside this clone, SYNCULAR_VECTORS unset); skipping codec_vectors'
\endif
