-- Blob store throughput (docs/blobs.md): upload and download MB/s through the SQL functions next
-- to a plain bytea insert / select of the same bytes, same run, same session.  Run by
-- bench/blobs.sh.  Every case is timed inside the server (clock_timestamp), so the client link
-- is not measured; reads force the bytes to be detoasted (a plain SELECT of length() would not).
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS syncular;
SET syncular.blob_max_bytes = '128MB';
CREATE TABLE IF NOT EXISTS public.plain_blobs (id text PRIMARY KEY, b bytea NOT NULL);
ALTER TABLE public.plain_blobs ALTER COLUMN b SET STORAGE EXTERNAL;   -- as sync_blob_chunks
CREATE TABLE IF NOT EXISTS public.src (mb int PRIMARY KEY, b bytea NOT NULL);
-- incompressible bytes (chained SHA-256), built once per size
INSERT INTO public.src
SELECT mb, (SELECT string_agg(sha256(int4send(i) || int4send(mb)), ''::bytea ORDER BY i)
              FROM generate_series(1, mb * 32768) i)
  FROM unnest(ARRAY[1, 16, 100]) mb ON CONFLICT DO NOTHING;

CREATE OR REPLACE FUNCTION public.bench_case(mb int, iters int, which text) RETURNS numeric
LANGUAGE plpgsql AS $$
DECLARE
  body bytea := (SELECT s.b FROM public.src s WHERE s.mb = bench_case.mb);
  bid text := 'sha256:' || encode(sha256(body), 'hex');
  t0 timestamptz;
  secs numeric := 0;
  u bigint;
  n bigint;
BEGIN
  FOR k IN 1 .. iters LOOP
    DELETE FROM syncular.sync_blob_chunks WHERE upload_id IN
      (SELECT upload_id FROM syncular.sync_blobs WHERE partition = 'bench' AND blob_id = bid);
    DELETE FROM syncular.sync_blobs WHERE partition = 'bench' AND blob_id = bid;
    DELETE FROM public.plain_blobs;
    IF which LIKE 'get%' OR which LIKE 'select%' THEN
      PERFORM syncular.put_blob('bench', 'u', bid, body);
      INSERT INTO public.plain_blobs VALUES (bid, body);
    END IF;
    t0 := clock_timestamp();
    CASE which
      WHEN 'put_blob' THEN
        PERFORM syncular.put_blob('bench', 'u', bid, body);
      WHEN 'stream 256k' THEN
        u := syncular.blob_upload_begin('bench', 'u', bid, length(body));
        FOR off IN 0 .. length(body) - 1 BY 262144 LOOP
          PERFORM syncular.blob_upload_append(u, substr(body, off + 1, 262144));
        END LOOP;
        PERFORM syncular.blob_upload_finish(u);
      WHEN 'insert bytea' THEN
        INSERT INTO public.plain_blobs VALUES (bid, body);
      WHEN 'get' THEN
        SELECT sum(length(g.body)) INTO n FROM syncular.blob_get('bench', 'u', bid) g;
      WHEN 'select bytea' THEN
        SELECT length(p.b || ''::bytea) INTO n FROM public.plain_blobs p WHERE p.id = bid;
    END CASE;
    secs := secs + extract(epoch FROM clock_timestamp() - t0);
  END LOOP;
  RETURN round(mb * iters / secs, 1);
END $$;

-- downloads authorize from a referencing row: one registered table, one row referencing each blob
SELECT syncular.ensure_schema('{"version": 1, "tables": [{"name": "files", "primaryKey": "id",
  "scopes": ["user:{owner}"], "columns": [{"name": "id", "type": "string", "nullable": false},
  {"name": "owner", "type": "string", "nullable": false},
  {"name": "att", "type": "blob_ref", "nullable": true}]}]}') IS NOT NULL AS registered
 WHERE NOT EXISTS (SELECT 1 FROM syncular.sync_settings);
CREATE OR REPLACE FUNCTION public.allow(a text, p text, c text) RETURNS jsonb LANGUAGE sql
  AS $$ SELECT '{"owner": "*"}'::jsonb $$;
SELECT syncular.set_scope_resolver('public.allow(text,text,text)') IS NULL AS resolver;
SELECT syncular.put_blob('bench', 'u', 'sha256:' || encode(sha256(b), 'hex'), b) IS NOT NULL FROM public.src;
SELECT syncular.push('bench', 'u', 'bench-client', jsonb_agg(jsonb_build_object(
         'clientCommitId', 'ref-' || mb, 'operations', jsonb_build_array(jsonb_build_object(
           'table', 'files', 'op', 'upsert', 'row', jsonb_build_object('id', 'f' || mb, 'owner', 'u',
             'att', jsonb_build_object('blobId', 'sha256:' || encode(sha256(b), 'hex'), 'byteLength', length(b)))))))
       ) -> 0 ->> 'status' AS referenced FROM public.src;

\pset footer off
SELECT mb AS "MiB", iters AS runs,
       public.bench_case(mb, iters, 'put_blob') AS "put_blob MB/s",
       public.bench_case(mb, iters, 'stream 256k') AS "begin/append 256k/finish MB/s",
       public.bench_case(mb, iters, 'insert bytea') AS "INSERT bytea MB/s",
       public.bench_case(mb, iters, 'get') AS "blob_get MB/s",
       public.bench_case(mb, iters, 'select bytea') AS "SELECT bytea MB/s"
  FROM (VALUES (1, 20), (16, 4), (100, 2)) v(mb, iters);
