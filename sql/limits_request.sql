-- limits_request: request-level operator limits (README "Security", limits).  A request over
-- syncular.max_request_bytes or syncular.max_subscriptions_per_request, or naming a partition,
-- clientId or clientCommitId over 256 bytes, is refused before anything is read or written, with
-- sync.invalid_request (retryable false, HTTP 400) and the limit in the details.  The limits are
-- PGC_SUSET: a gateway role with EXECUTE cannot raise them unless granted SET on the parameter.
\set testdb syncular_t_limits_request
\i sql/push_helpers.psql

SELECT count(*) FROM pg_temp.acquire('p1', 'u1', 'A');
-- the defaults
SELECT name, setting, unit, context FROM pg_settings
 WHERE name IN ('syncular.max_request_bytes', 'syncular.max_subscriptions_per_request',
                'syncular.max_response_bytes', 'syncular.max_row_bytes') ORDER BY name;

-- 1. request bytes: 2,000 bytes against a 1 kB limit, in every entry point
SELECT pg_temp.req('p1', 'A', jsonb_build_array(pg_temp.pc('c1',
  pg_temp.up('todos', jsonb_build_object('id', 'big', 'list_id', 'l1', 'title', null, 'done', null, 'n', null,
                      'meta', jsonb_build_object('k', repeat('x', 1900)), 'doc', null, 'att', null))))) AS big \gset
SELECT octet_length(:'big'::bytea) AS request_bytes;
SET syncular.max_request_bytes = '1kB';
SELECT pg_temp.try(format('SELECT syncular.handle(%L::bytea, ''p1'', ''u1'')', :'big'));
SELECT status, content_type, convert_from(body, 'UTF8')::jsonb AS body
  FROM syncular.handle_http(:'big'::bytea, 'p1', 'u1', 'application/vnd.syncular.sync.v2');
SELECT count(*) FROM (SELECT set_config('limits.big', :'big', false)) x;
DO $$
DECLARE r bytea;
BEGIN
  CALL syncular.sync(current_setting('limits.big')::bytea, 'p1', 'u1', r);
EXCEPTION WHEN others THEN
  RAISE WARNING 'sync: % %', SQLSTATE, SQLERRM;
END $$;
-- nothing was written
SELECT count(*) AS commits FROM syncular.sync_commits;
-- under the limit it is served
RESET syncular.max_request_bytes;
SELECT pg_temp.show('p1', syncular.handle(:'big'::bytea, 'p1', 'u1'));
SELECT count(*) AS commits FROM syncular.sync_commits;

-- 2. subscriptions per request: 3 against a limit of 2
SET syncular.max_subscriptions_per_request = 2;
SELECT pg_temp.req('p1', 'A', jsonb_build_array(
  pg_temp.sub('s1', 'todos', '{"list_id": ["l1"]}'), pg_temp.sub('s2', 'todos', '{"list_id": ["l2"]}'),
  pg_temp.sub('s3', 'counters', '{"list_id": ["l1"]}'))) AS subs3 \gset
SELECT pg_temp.try(format('SELECT syncular.handle(%L::bytea, ''p1'', ''u1'')', :'subs3'));
SELECT status, convert_from(body, 'UTF8')::jsonb ->> 'code' AS code,
       convert_from(body, 'UTF8')::jsonb -> 'retryable' AS retryable,
       convert_from(body, 'UTF8')::jsonb -> 'details' AS details
  FROM syncular.handle_http(:'subs3'::bytea, 'p1', 'u1', 'application/vnd.syncular.sync.v2');
-- two are served
SELECT count(*) FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(
  pg_temp.sub('s1', 'todos', '{"list_id": ["l1"]}'), pg_temp.sub('s2', 'todos', '{"list_id": ["l2"]}')));
RESET syncular.max_subscriptions_per_request;

-- 3. identifiers that become btree keys: partition, clientId, clientCommitId over 256 bytes
SELECT pg_temp.try(format('SELECT syncular.handle(%L::bytea, %L, ''u1'')',
  pg_temp.req('p1', 'A', jsonb_build_array(pg_temp.sub('s1', 'todos', '{"list_id": ["l1"]}'))), repeat('p', 257)));
SELECT pg_temp.try(format('SELECT syncular.handle(%L::bytea, ''p1'', ''u1'')',
  pg_temp.req('p1', repeat('c', 257), jsonb_build_array(pg_temp.sub('s1', 'todos', '{"list_id": ["l1"]}')))));
SELECT pg_temp.try(format('SELECT syncular.handle(%L::bytea, ''p1'', ''u1'')',
  pg_temp.req('p1', 'A', jsonb_build_array(pg_temp.pc(repeat('k', 257), pg_temp.del('todos', 'x'))))));
SELECT count(*) FROM pg_temp.round('p1', 'u1', 'A', jsonb_build_array(pg_temp.pc(repeat('k', 256), pg_temp.del('todos', 'x'))));

-- 4. who may change the limits: not a role with EXECUTE only; a role granted SET may
SET client_min_messages = warning;
DROP ROLE IF EXISTS syncular_limits_gw;
CREATE ROLE syncular_limits_gw NOLOGIN;
GRANT USAGE ON SCHEMA syncular TO syncular_limits_gw;
GRANT EXECUTE ON FUNCTION syncular.handle(bytea, text, text) TO syncular_limits_gw;
SET ROLE syncular_limits_gw;
SELECT pg_temp.try('SELECT set_config(''syncular.max_request_bytes'', ''1GB'', false)');
SELECT pg_temp.try('SELECT set_config(''syncular.max_subscriptions_per_request'', ''100000'', false)');
SELECT pg_temp.try('SELECT set_config(''syncular.max_response_bytes'', ''512MB'', false)');
SELECT pg_temp.try('SELECT set_config(''syncular.max_row_bytes'', ''256MB'', false)');
RESET ROLE;
GRANT SET ON PARAMETER syncular.max_response_bytes TO syncular_limits_gw;
SET ROLE syncular_limits_gw;
SELECT pg_temp.try('SELECT set_config(''syncular.max_response_bytes'', ''1MB'', false)');
RESET ROLE;
RESET syncular.max_response_bytes;
REVOKE SET ON PARAMETER syncular.max_response_bytes FROM syncular_limits_gw;
REVOKE ALL ON FUNCTION syncular.handle(bytea, text, text) FROM syncular_limits_gw;
REVOKE ALL ON SCHEMA syncular FROM syncular_limits_gw;
DROP ROLE syncular_limits_gw;

\i sql/push_done.psql
