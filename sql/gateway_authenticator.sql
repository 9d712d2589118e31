-- gateway_authenticator: syncular.set_authenticator / authenticate / handle_http_authenticated,
-- the SQL host authentication syncular-gateway uses without a JWT key (SPEC §1.1; docs/gateway.md).
-- Works in a private database: it registers hooks and must not leave them to other tests.
SELECT current_database() AS orig_db \gset
CREATE DATABASE syncular_t_gateway_authenticator;
\c syncular_t_gateway_authenticator
\i sql/test_helpers.psql
\set VERBOSITY terse

-- nothing registered: nobody is authenticated
SELECT syncular.authenticate('POST', '/sync-api/sync', '{}', '{}') IS NULL AS refused;

-- the example of docs/gateway.md: a static API-key table
CREATE SCHEMA app;
CREATE TABLE app.api_keys (key text PRIMARY KEY, actor_id text NOT NULL, tenant text NOT NULL);
INSERT INTO app.api_keys VALUES ('k-alice', 'alice', 'tenant-1'), ('k-bob', 'bob', 'tenant-1');
CREATE FUNCTION app.authenticate(method text, path text, headers jsonb, query jsonb) RETURNS jsonb
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT jsonb_build_object('actorId', k.actor_id, 'partition', k.tenant)
    FROM app.api_keys k
   WHERE k.key = coalesce(headers ->> 'x-api-key', query ->> 'apiKey')
$$;
SELECT syncular.set_authenticator('app.authenticate(text, text, jsonb, jsonb)');

SELECT syncular.authenticate('POST', '/sync-api/sync', '{"x-api-key": "k-alice"}', '{}');
SELECT syncular.authenticate('GET', '/sync-api/realtime', '{}', '{"apiKey": "k-bob", "clientId": "c1"}');
SELECT syncular.authenticate('POST', '/sync-api/sync', '{"x-api-key": "nope"}', '{}') IS NULL AS refused;
SELECT syncular.authenticate('POST', '/sync-api/sync', NULL, NULL) IS NULL AS refused;

-- a refused request: 401 with the catalogue body; the round never runs
SELECT status, content_type, convert_from(body, 'UTF8')::jsonb AS body
  FROM syncular.handle_http_authenticated('\x00'::bytea, 'POST', '/sync-api/sync', '{}', '{}');

-- an authenticated request reaches handle_http, which answers: these bytes are a decode error (400)
SELECT status, content_type, convert_from(body, 'UTF8')::jsonb ->> 'code' AS code
  FROM syncular.handle_http_authenticated('\x00'::bytea, 'POST', '/sync-api/sync',
                                          '{"x-api-key": "k-alice"}', '{}');
-- the content type is still judged by handle_http
SELECT status, convert_from(body, 'UTF8')::jsonb ->> 'code' AS code
  FROM syncular.handle_http_authenticated('\x00'::bytea, 'POST', '/sync-api/sync',
                                          '{"x-api-key": "k-alice"}', '{}', 'text/plain');

-- a malformed answer and an authenticator that raises: 500 with a fixed message, no database text
CREATE FUNCTION app.bad_auth(method text, path text, headers jsonb, query jsonb) RETURNS jsonb
LANGUAGE sql AS $$ SELECT jsonb_build_object('actorId', 'x') $$;
SELECT syncular.set_authenticator('app.bad_auth(text, text, jsonb, jsonb)');
SELECT pg_temp.try($$SELECT syncular.authenticate('GET', '/', '{}', '{}')$$);
SELECT status, convert_from(body, 'UTF8')::jsonb AS body
  FROM syncular.handle_http_authenticated('\x00'::bytea, 'POST', '/sync-api/sync', '{}', '{}');
CREATE FUNCTION app.raising_auth(method text, path text, headers jsonb, query jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'secret table app.keys is gone'; END $$;
SELECT syncular.set_authenticator('app.raising_auth(text, text, jsonb, jsonb)');
SELECT status, convert_from(body, 'UTF8')::jsonb AS body
  FROM syncular.handle_http_authenticated('\x00'::bytea, 'POST', '/sync-api/sync', '{}', '{}');

-- signature checks: wrong argument types, wrong return type
CREATE FUNCTION app.wrong_args(method text, path text, headers text, query jsonb) RETURNS jsonb
LANGUAGE sql AS $$ SELECT NULL::jsonb $$;
CREATE FUNCTION app.wrong_ret(method text, path text, headers jsonb, query jsonb) RETURNS text
LANGUAGE sql AS $$ SELECT NULL::text $$;
SELECT pg_temp.try($$SELECT syncular.set_authenticator('app.wrong_args(text, text, text, jsonb)')$$);
SELECT pg_temp.try($$SELECT syncular.set_authenticator('app.wrong_ret(text, text, jsonb, jsonb)')$$);

-- unregister
SELECT syncular.set_authenticator(NULL);
SELECT authenticator IS NULL AS unregistered FROM syncular.sync_settings;

-- privileges: the serving entry points are not PUBLIC; registration is owner-only
SELECT p.proname, has_function_privilege('public', p.oid, 'EXECUTE') AS public_execute
  FROM pg_proc p WHERE p.pronamespace = 'syncular'::regnamespace
   AND p.proname IN ('set_authenticator', 'authenticate', 'handle_http_authenticated')
 ORDER BY 1;

\c :orig_db
DROP DATABASE syncular_t_gateway_authenticator;
