-- pgTAP: who may change the syncular.* settings (README, "Security").
-- Every syncular.* setting is PGC_SUSET but one: syncular.partition (PGC_USERSET), the partition
-- of a row a role writes to a synced table by SQL without naming one; it grants nothing, as that
-- role may write any _sync_partition directly (docs/writing-with-sql.md), and is checked apart.  The tests iterate over every syncular.% row of
-- pg_settings, so a setting added later is covered without touching this file:
--   * a role with EXECUTE on the serving surface only (the gateway of privileges.sql) cannot
--     change any of them: SET, SET LOCAL, set_config() (session and local), a function it
--     creates with a SET clause, ALTER ROLE itself SET; all 42501;
--   * nor by setting the placeholder before the library is loaded in its session: PostgreSQL 15
--     records the role that set it and drops the value with a WARNING when the library defines
--     the variable; the value takes no effect (the op cap is not raised, the checkpoint
--     declaration does not open the serve gate);
--   * a role the operator granted SET ON PARAMETER can, in every one of those ways, and its
--     checkpoint declaration opens the gate; a superuser can; ALTER ROLE ... SET by a
--     superuser stores a value applied at the role's next login.
--
-- First connection: load the library and list the settings (name, a value different from the
-- default); the list travels to the test connection in a psql variable.
LOAD 'syncular';
SELECT string_agg(format('(%L, %L, %L)', name, boot_val,
         CASE vartype
           WHEN 'bool' THEN CASE WHEN boot_val = 'on' THEN 'off' ELSE 'on' END
           WHEN 'integer' THEN CASE WHEN max_val <> boot_val THEN max_val ELSE min_val END
           WHEN 'real' THEN CASE WHEN max_val <> boot_val THEN max_val ELSE min_val END
           WHEN 'enum' THEN (SELECT v FROM unnest(enumvals) v WHERE v <> boot_val LIMIT 1)
           -- the clock seam's string settings take milliseconds
           ELSE CASE WHEN name LIKE 'syncular.clock\_%' THEN '1700000000000' ELSE '[{"partition": "p1", "name": "cp", "schemaVersion": 1}]' END END), ', ' ORDER BY name)
         AS gucs
  FROM pg_settings WHERE name LIKE 'syncular.%' \gset
-- Second connection: the library is not loaded in it until the LOAD below.
\c
BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
SELECT plan(43);

CREATE TEMP TABLE guc (name text PRIMARY KEY, boot_val text NOT NULL, val text NOT NULL);
INSERT INTO guc VALUES :gucs;
-- the one user-context setting (checked after the LOAD below), not part of the other checks
DELETE FROM guc WHERE name = 'syncular.partition';
SELECT cmp_ok((SELECT count(*) FROM guc), '>=', 3::bigint, 'the settings are listed');
SELECT ok((SELECT array_agg(name) FROM guc) @> ARRAY['syncular.checkpoints',
            'syncular.max_cascade_operations_per_commit', 'syncular.max_operations_per_request'],
  'the list holds the checkpoint declarations and the operation caps');
SELECT is((SELECT array_agg(name) FROM guc g
            WHERE (SELECT context FROM pg_settings s WHERE s.name = g.name) IS NOT NULL), NULL,
  'the library is not loaded yet in this connection');

CREATE ROLE gateway NOLOGIN;
CREATE ROLE granted NOLOGIN;
CREATE SCHEMA tap_gateway AUTHORIZATION gateway;
CREATE SCHEMA tap_granted AUTHORIZATION granted;
GRANT SELECT ON guc TO gateway, granted;

-- ---------------------------------------------------------------------------------------------
-- the gateway sets every placeholder before the library is loaded: dropped at load
SET ROLE gateway;
SELECT is(array_agg(set_config(name, val, false) = val), array_agg(true),
  'before the library is loaded, the gateway can give every placeholder a value') FROM guc;
RESET ROLE;
SELECT diag('expected: the LOAD below warns "permission denied to set parameter" once per setting (the dropped placeholders)');
LOAD 'syncular';
SELECT is(array_agg(name), NULL, 'after LOAD, no setting keeps the gateway''s placeholder value')
  FROM guc WHERE (SELECT s.setting FROM pg_settings s WHERE s.name = guc.name) <> boot_val;
SELECT is(array_agg(name), NULL, 'every syncular.* setting but syncular.partition is superuser-settable (PGC_SUSET)')
  FROM pg_settings WHERE name LIKE 'syncular.%' AND name <> 'syncular.partition' AND context <> 'superuser';
SELECT is((SELECT context FROM pg_settings WHERE name = 'syncular.partition'), 'user',
  'syncular.partition (the partition of SQL writes that name none) is user-settable');
SELECT is((SELECT array_agg(name ORDER BY name) FROM pg_settings WHERE name LIKE 'syncular.%'
            AND name <> 'syncular.partition'),
          (SELECT array_agg(name ORDER BY name) FROM guc), 'the first connection listed them all');

-- the engine sees the defaults: the op cap is not raised and the declaration opens no gate
CREATE EXTENSION IF NOT EXISTS syncular;
GRANT EXECUTE ON FUNCTION syncular.handle(bytea, text, text) TO gateway, granted;
SELECT is(syncular.ensure_schema('{"version": 1, "tables": [
  {"name": "todos", "primaryKey": "id", "scopes": ["list:{list_id}"], "columns": [
    {"name": "id", "type": "string", "nullable": false},
    {"name": "list_id", "type": "string", "nullable": false}]}]}') ->> 'action', 'created',
  'the superuser registers the schema');
CREATE FUNCTION public.tap_resolver(actor text, part text, client text) RETURNS jsonb
LANGUAGE sql AS $$ SELECT '{"list_id": "*"}'::jsonb $$;
SELECT lives_ok($$SELECT syncular.set_scope_resolver('public.tap_resolver(text,text,text)')$$,
  'the superuser registers the scope resolver');
-- req(epoch, n): a pull, with n one-op commits when n > 0
CREATE FUNCTION public.tap_req(epoch text, n int) RETURNS bytea LANGUAGE sql AS $$
  SELECT syncular.debug_encode(jsonb_build_object('magic', 'SSP2', 'wireVersion', 3, 'msgKind', 'request',
    'frames', jsonb_build_array(jsonb_strip_nulls(jsonb_build_object('type', 'REQ_HEADER', 'clientId', 'c1',
                                                 'schemaVersion', 1, 'logEpoch', epoch)))
      || coalesce((SELECT jsonb_agg(jsonb_build_object('type', 'PUSH_COMMIT', 'clientCommitId', 'k' || i,
                     'operations', jsonb_build_array(jsonb_build_object('table', 'todos', 'rowId', 'r' || i,
                       'op', 'upsert', 'payload', encode(syncular.encode_sparse_row('todos',
                         jsonb_build_object('id', 'r' || i, 'list_id', 'l1')), 'base64')))))
                     FROM generate_series(1, n) i), '[]')
      || '[{"type": "PULL_HEADER", "limitCommits": 0, "limitSnapshotRows": 0, "maxSnapshotPages": 0, "accept": 1}]'))
$$;
CREATE TABLE public.tap_req (k text PRIMARY KEY, b bytea NOT NULL);
GRANT SELECT ON public.tap_req TO gateway, granted;
INSERT INTO public.tap_req VALUES ('acquire', public.tap_req(NULL, 0));
SELECT ok(syncular.handle((SELECT b FROM public.tap_req WHERE k = 'acquire'), 'p1', 'u1') IS NOT NULL,
  'the partition''s epoch is acquired');
INSERT INTO public.tap_req
  SELECT 'over_cap', public.tap_req(log_epoch, (SELECT boot_val::int + 1 FROM guc WHERE name = 'syncular.max_operations_per_request'))
    FROM syncular.sync_partition_registry WHERE partition = 'p1';
INSERT INTO public.tap_req
  SELECT 'pull', public.tap_req(log_epoch, 0) FROM syncular.sync_partition_registry WHERE partition = 'p1';
SET ROLE gateway;
SELECT throws_ok($$SELECT syncular.handle((SELECT b FROM public.tap_req WHERE k = 'over_cap'), 'p1', 'u1')$$,
  '54000', NULL, 'the op cap the gateway gave the placeholder is not in force: sync.too_many_operations');
RESET ROLE;
SELECT is((SELECT count(*) FROM syncular.sync_clients WHERE client_id = 'c1'), 0::bigint,
  'the refused round left no client record (its clientId claim rolled back with it)');
SELECT is(syncular.declare_checkpoint('p1', 'cp', 1) ->> 'state', 'declared',
  'the superuser declares a checkpoint: a backfill is pending');
SET ROLE gateway;
SELECT throws_ok($$SELECT syncular.handle((SELECT b FROM public.tap_req WHERE k = 'pull'), 'p1', 'u1')$$,
  '55000', NULL, 'the checkpoint the gateway declared in the placeholder does not open the gate');

-- ---------------------------------------------------------------------------------------------
-- the gateway, with the library loaded: every way to set a parameter is refused
-- attempt(how, name, value): NULL when the change was refused for lack of privilege (42501,
-- "permission denied to set parameter"), else what happened
CREATE FUNCTION pg_temp.attempt(how text, name text, val text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
  CASE how
    WHEN 'set' THEN EXECUTE format('SET %s = %L', name, val);
    WHEN 'set_local' THEN EXECUTE format('SET LOCAL %s = %L', name, val);
    WHEN 'set_config' THEN PERFORM set_config(name, val, false);
    WHEN 'set_config_local' THEN PERFORM set_config(name, val, true);
    WHEN 'function' THEN
      EXECUTE format('CREATE FUNCTION %I.f_%s() RETURNS text LANGUAGE sql SET %s = %L AS %L',
                     'tap_' || current_user, md5(name), name, val,
                     format('SELECT setting FROM pg_catalog.pg_settings WHERE name = %L', name));
      EXECUTE format('SELECT %I.f_%s()', 'tap_' || current_user, md5(name)) INTO val;
      RETURN 'created, call sees ' || val;
    WHEN 'alter_role' THEN
      EXECUTE format('ALTER ROLE %I SET %s = %L', current_user, name, val);
      RETURN 'stored';
  END CASE;
  RETURN 'set, now ' || (SELECT s.setting FROM pg_settings s WHERE s.name = attempt.name);
EXCEPTION WHEN insufficient_privilege THEN
  IF SQLERRM LIKE 'permission denied to set parameter%' THEN
    RETURN NULL;
  END IF;
  RETURN SQLERRM;
END $$;
RESET ROLE;
GRANT EXECUTE ON FUNCTION pg_temp.attempt(text, text, text) TO gateway, granted;
CREATE TEMP TABLE how (how text PRIMARY KEY);
INSERT INTO how VALUES ('set'), ('set_local'), ('set_config'), ('set_config_local'), ('function'), ('alter_role');
GRANT SELECT ON how TO gateway, granted;

SET ROLE gateway;
SELECT is(array_agg(format('%s %s: %s', h.how, g.name, r.res)) FILTER (WHERE r.res IS NOT NULL), NULL,
          'the gateway can change no setting by ' || h.how)
  FROM how h CROSS JOIN guc g
  LEFT JOIN LATERAL (SELECT pg_temp.attempt(h.how, g.name, g.val) AS res) r ON true
 GROUP BY h.how ORDER BY h.how;
SELECT is(array_agg(name), NULL, 'and every setting still has its default')
  FROM guc WHERE (SELECT s.setting FROM pg_settings s WHERE s.name = guc.name) <> boot_val;
RESET ROLE;
SELECT is((SELECT count(*) FROM pg_db_role_setting WHERE setrole = 'gateway'::regrole), 0::bigint,
  'ALTER ROLE gateway SET stored nothing');

-- ---------------------------------------------------------------------------------------------
-- a role the operator granted SET ON PARAMETER on every setting can use every way
DO $$
DECLARE n text;
BEGIN
  FOR n IN SELECT name FROM guc LOOP
    EXECUTE format('GRANT SET ON PARAMETER %s TO granted', n);
  END LOOP;
END $$;
SET ROLE granted;
SELECT is(array_agg(format('%s %s: %s', h.how, g.name, r.res)) FILTER (WHERE r.res IS NULL
                OR r.res NOT IN ('set, now ' || g.val, 'created, call sees ' || g.val, 'stored')), NULL,
          'the granted role changes every setting by ' || h.how)
  FROM how h CROSS JOIN guc g
  LEFT JOIN LATERAL (SELECT pg_temp.attempt(h.how, g.name, g.val) AS res) r ON true
 WHERE h.how <> 'set_local' AND h.how <> 'set_config_local'
 GROUP BY h.how ORDER BY h.how;
RESET ROLE;
SELECT is((SELECT count(*) FROM pg_db_role_setting, unnest(setconfig) c
            WHERE setrole = 'granted'::regrole AND c LIKE 'syncular.%'),
          (SELECT count(*) FROM guc), 'ALTER ROLE granted SET stored every setting');
-- the granted gateway declares the pending checkpoint and is served past it
SET ROLE granted;
RESET ALL;
SELECT throws_ok($$SELECT syncular.handle((SELECT b FROM public.tap_req WHERE k = 'pull'), 'p1', 'u1')$$,
  '55000', NULL, 'the checkpoint is pending: refused without the declaration');
SET syncular.checkpoints = '[{"partition": "p1", "name": "cp", "schemaVersion": 1}]';
SELECT ok(syncular.handle((SELECT b FROM public.tap_req WHERE k = 'pull'), 'p1', 'u1') IS NOT NULL,
  'a role granted SET ON PARAMETER syncular.checkpoints declares it and is served');
RESET syncular.checkpoints;
RESET ROLE;

-- ---------------------------------------------------------------------------------------------
-- SET LOCAL inside the granted role's transaction (a subtransaction here) and a superuser
SET ROLE granted;
SELECT is(array_agg(format('%s %s: %s', h.how, g.name, r.res)) FILTER (WHERE r.res IS NULL
                OR r.res <> 'set, now ' || g.val), NULL,
          'the granted role changes every setting by ' || h.how)
  FROM how h CROSS JOIN guc g
  LEFT JOIN LATERAL (SELECT pg_temp.attempt(h.how, g.name, g.val) AS res) r ON true
 WHERE h.how IN ('set_local', 'set_config_local')
 GROUP BY h.how ORDER BY h.how;
RESET ROLE;
RESET ALL;
SELECT is(array_agg(format('%s: %s', g.name, r.res)) FILTER (WHERE r.res IS DISTINCT FROM 'set, now ' || g.val),
          NULL, 'a superuser SETs every setting')
  FROM guc g LEFT JOIN LATERAL (SELECT pg_temp.attempt('set', g.name, g.val) AS res) r ON true;
RESET ALL;

-- the operator's two ways for a gateway that declares checkpoints during a backfill (README)
ALTER ROLE gateway SET syncular.checkpoints = '[{"partition": "p1", "name": "cp", "schemaVersion": 1}]';
GRANT SET ON PARAMETER syncular.checkpoints TO gateway;
SELECT is((SELECT setconfig FROM pg_db_role_setting WHERE setrole = 'gateway'::regrole AND setdatabase = 0),
  ARRAY['syncular.checkpoints=[{"partition": "p1", "name": "cp", "schemaVersion": 1}]'],
  'a superuser stores the gateway''s declaration (applied at its next login)');
SET ROLE gateway;
SELECT lives_ok($$SET syncular.checkpoints = '[{"partition": "p1", "name": "cp", "schemaVersion": 1}]'$$,
  'after GRANT SET ON PARAMETER the gateway declares the checkpoint itself');
SELECT ok(syncular.handle((SELECT b FROM public.tap_req WHERE k = 'pull'), 'p1', 'u1') IS NOT NULL,
  'and is served past it');
SELECT throws_ok($$SET syncular.max_operations_per_request = 100000$$, '42501',
  'permission denied to set parameter "syncular.max_operations_per_request"',
  'the grant covers that parameter only');
RESET ROLE;

-- ---------------------------------------------------------------------------------------------
-- the README's grants, verbatim
CREATE ROLE app_owner NOLOGIN;
CREATE ROLE sync_gateway NOLOGIN;
-- the database owner (not a superuser) tunes the caps and may hand them on
GRANT SET ON PARAMETER syncular.max_operations_per_request,
                       syncular.max_cascade_operations_per_commit TO app_owner WITH GRANT OPTION;
-- a gateway that serves during a backfill declares the checkpoint itself ...
GRANT SET ON PARAMETER syncular.checkpoints TO sync_gateway;
-- ... or the operator declares it for the gateway's sessions (applied at each new login) and
-- removes it after activation
ALTER ROLE sync_gateway SET syncular.checkpoints =
  '[{"partition": "acme", "name": "todos_notes_v2", "schemaVersion": 2}]';
SELECT is((SELECT setconfig FROM pg_db_role_setting WHERE setrole = 'sync_gateway'::regrole),
  ARRAY['syncular.checkpoints=[{"partition": "acme", "name": "todos_notes_v2", "schemaVersion": 2}]'],
  'README: ALTER ROLE sync_gateway SET stores the declaration');
ALTER ROLE sync_gateway RESET syncular.checkpoints;
SELECT is((SELECT count(*) FROM pg_db_role_setting WHERE setrole = 'sync_gateway'::regrole), 0::bigint,
  'README: ALTER ROLE sync_gateway RESET removes it');
SELECT ok(has_parameter_privilege('app_owner', 'syncular.max_operations_per_request', 'SET WITH GRANT OPTION')
          AND has_parameter_privilege('app_owner', 'syncular.max_cascade_operations_per_commit', 'SET')
          AND NOT has_parameter_privilege('app_owner', 'syncular.checkpoints', 'SET'),
  'README: the database owner may set (and grant) the caps, not the declarations');
SELECT ok(has_parameter_privilege('sync_gateway', 'syncular.checkpoints', 'SET')
          AND NOT has_parameter_privilege('sync_gateway', 'syncular.max_operations_per_request', 'SET'),
  'README: the gateway may declare checkpoints only');
SET ROLE app_owner;
SELECT lives_ok($$SET syncular.max_operations_per_request = 1000$$, 'the granted database owner raises the op cap');
SELECT lives_ok($$GRANT SET ON PARAMETER syncular.max_operations_per_request TO sync_gateway$$,
  'and hands the privilege on');
RESET ROLE;
RESET ALL;

SELECT * FROM finish();
ROLLBACK;
