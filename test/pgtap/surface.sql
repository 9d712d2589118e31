-- pgTAP: the SQL surface of schema syncular as src/sql/*.sql defines it and src/sql/90_grants.sql,
-- README "Security" and the routine COMMENTs describe it.  The expectations below are written from
-- the source, not read from the catalog: one row per public routine (name not starting with "_"),
-- with its exact argument types (pgTAP spelling: regtype output), its result (pgTAP spelling:
-- "setof " for a set-returning routine), whether it is SECURITY DEFINER, and its proconfig.
--
-- proconfig: every routine that reads or writes the catalog pins search_path = pg_catalog, pg_temp
-- (60_barrier.sql "Conventions", README "Security").  Deliberate exceptions:
--   * ensure_schema: no SET clause so that current_schema() is the caller's (10_schema.sql); its
--     one statement calls syncular._ensure_schema, which pins the path (asserted below);
--   * sync: a procedure with a SET clause cannot COMMIT, and the procedure form commits after
--     every pushed commit (30_engine.sql);
--   * the C codec helpers (encode_*/decode_*, debug_*, error_catalog) write nothing.
-- PUBLIC: no EXECUTE on any routine of the extension, public or internal (90_grants.sql: "Nothing is
-- executable by PUBLIC by default"; operators grant per role); USAGE on the schema is public; the
-- views are owner-only until granted.
BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS syncular;
SELECT plan(499);

CREATE TEMP TABLE spec (ord int, name name, args text[], returns text, definer boolean, config text[]);
INSERT INTO spec VALUES
  -- 03 seams: the engine's clock (C) and the superuser-only fault seam (invoker, checks superuser)
  (65, 'now_ms',                     '{}',                                                     'bigint',       false, NULL),
  (66, 'inject_fault',               '{text,text,text}',                                       'void',         false, '{"search_path=pg_catalog, pg_temp"}'),
  -- 05 errors
  ( 1, 'error_catalog',              '{}',                                                     'setof record', false, NULL),
  -- 10 schema
  ( 2, 'ensure_schema',              '{jsonb,jsonb,text}',                                     'jsonb',        false, NULL),
  -- 12 unregister
  (39, 'unregister_schema',          '{text,boolean}',                                         'jsonb',        false, '{"search_path=pg_catalog, pg_temp"}'),
  -- 20/25 hooks
  ( 3, 'set_scope_resolver',         '{regprocedure}',                                         'void',         false, '{"search_path=pg_catalog, pg_temp"}'),
  ( 4, 'set_row_validator',          '{text,regprocedure}',                                    'void',         false, '{"search_path=pg_catalog, pg_temp"}'),
  ( 5, 'set_commit_validator',       '{regprocedure}',                                         'void',         false, '{"search_path=pg_catalog, pg_temp"}'),
  ( 6, 'set_reaction_planner',       '{regprocedure}',                                         'void',         false, '{"search_path=pg_catalog, pg_temp"}'),
  -- 30 engine
  ( 7, 'handle',                     '{bytea,text,text}',                                      'bytea',        true,  '{"search_path=pg_catalog, pg_temp"}'),
  ( 8, 'handle_http',                '{bytea,text,text,text}',                                 'setof record', true,  '{"search_path=pg_catalog, pg_temp"}'),
  ( 9, 'sync',                       '{bytea,text,text,bytea}',                                'record',       false, NULL),
  -- 35 rows, 36 debug
  (10, 'encode_row',                 '{text,jsonb}',                                           'bytea',        false, NULL),
  (11, 'encode_sparse_row',          '{text,jsonb}',                                           'bytea',        false, NULL),
  (12, 'decode_row',                 '{text,bytea}',                                           'jsonb',        false, NULL),
  (13, 'decode_sparse_row',          '{text,bytea}',                                           'jsonb',        false, NULL),
  (14, 'debug_render',               '{bytea}',                                                'jsonb',        false, NULL),
  (15, 'debug_encode',               '{jsonb}',                                                'bytea',        false, NULL),
  -- 40 maintenance
  (16, 'prune',                      '{text,jsonb}',                                           'jsonb',        false, '{"search_path=pg_catalog, pg_temp"}'),
  (17, 'rotate_log_epoch',           '{text}',                                                 'text',         false, '{"search_path=pg_catalog, pg_temp"}'),
  -- 45 segments: the download is the gateway's surface (SECURITY DEFINER like handle)
  (56, 'prune_segments',             '{bigint}',                                               'jsonb',        false, '{"search_path=pg_catalog, pg_temp"}'),
  (58, 'segment_download',           '{text,text,text,jsonb,text,text,text}',                  'setof record', true,  '{"search_path=pg_catalog, pg_temp"}'),
  (59, 'segment_url_download',       '{text,text,text,text}',                                  'setof record', true,  '{"search_path=pg_catalog, pg_temp"}'),
  (57, 'segments',                   '{text}',                                                 'setof record', false, '{"search_path=pg_catalog, pg_temp"}'),
  -- 50 producers (SECURITY DEFINER: 90_grants.sql, README "Security")
  (18, 'push',                       '{text,text,text,jsonb}',                                 'jsonb',        true,  '{"search_path=pg_catalog, pg_temp"}'),
  (19, 'pull',                       '{text,text,text,jsonb,jsonb}',                           'jsonb',        true,  '{"search_path=pg_catalog, pg_temp"}'),
  -- 00 catalog (the writer-fence trigger), 60 barrier
  (20, 'syncular_writer_fence',      '{}',                                                     'trigger',      false, '{"search_path=pg_catalog, pg_temp"}'),
  (21, 'declare_checkpoint',         '{text,text,integer}',                                    'jsonb',        false, '{"search_path=pg_catalog, pg_temp"}'),
  (22, 'claim_checkpoint',           '{text,text,integer}',                                    'jsonb',        false, '{"search_path=pg_catalog, pg_temp"}'),
  (23, 'advance_checkpoint',         '{text,text,bigint,bigint,bigint}',                       'boolean',      false, '{"search_path=pg_catalog, pg_temp"}'),
  (24, 'activate_checkpoint',        '{text,text,bigint,bigint,text[]}',                       'text',         false, '{"search_path=pg_catalog, pg_temp"}'),
  (25, 'checkpoints',                '{text}',                                                 'setof jsonb',  false, '{"search_path=pg_catalog, pg_temp"}'),
  (26, 'source_coverage_seq',        '{text,text[]}',                                          'bigint',       false, '{"search_path=pg_catalog, pg_temp"}'),
  (27, 'serve_gate',                 '{text,jsonb,integer}',                                   'jsonb',        false, '{"search_path=pg_catalog, pg_temp"}'),
  (28, 'readiness',                  '{jsonb}',                                                'jsonb',        true,  '{"search_path=pg_catalog, pg_temp"}'),
  -- 70 reactions: the four worker functions are SECURITY DEFINER
  (29, 'claim_reactions',            '{text,text,integer,bigint,bigint}',                      'setof syncular.sync_reactions', true, '{"search_path=pg_catalog, pg_temp"}'),
  (30, 'renew_reaction_lease',       '{text,text,text,bigint,bigint}',                         'boolean',      true,  '{"search_path=pg_catalog, pg_temp"}'),
  (31, 'complete_reaction',          '{text,text,text,bigint}',                                'boolean',      true,  '{"search_path=pg_catalog, pg_temp"}'),
  (32, 'fail_reaction',              '{text,text,text,jsonb,boolean,bigint,bigint,bigint}',    'text',         true,  '{"search_path=pg_catalog, pg_temp"}'),
  (33, 'retry_dead_letter_reaction', '{text,text,bigint}',                                     'boolean',      false, '{"search_path=pg_catalog, pg_temp"}'),
  (34, 'prune_reactions',            '{text,bigint,bigint,integer,bigint}',                    'integer',      false, '{"search_path=pg_catalog, pg_temp"}'),
  -- 55 realtime: the gateway's surface, SECURITY DEFINER like handle
  (35, 'realtime_connect',           '{text,text,text}',                                       'jsonb',        true,  '{"search_path=pg_catalog, pg_temp"}'),
  (36, 'realtime_fanout',            '{text,bigint,jsonb}',                                    'setof record', true,  '{"search_path=pg_catalog, pg_temp"}'),
  (74, 'realtime_fanout_arrays',     '{text,bigint,bigint[],bigint[],text[]}',                 'setof record', true,  '{"search_path=pg_catalog, pg_temp"}'),
  -- the calling backend's registration cache: backend memory only, no catalog access
  (75, 'realtime_registration_cache', '{}',                                                    'record',       false, NULL),
  (37, 'realtime_ack',               '{text,text,text,bigint,text}',                           'boolean',      true,  '{"search_path=pg_catalog, pg_temp"}'),
  (73, 'realtime_ack_many',          '{text,text[],text[],bigint[],text[]}',                   'bigint',       true,  '{"search_path=pg_catalog, pg_temp"}'),
  (38, 'presence_authorize',         '{text,text,text,text[]}',                                'text[]',       true,  '{"search_path=pg_catalog, pg_temp"}'),
  -- 58 blobs: the gateway's blob routes (definers) and the owner-only sweep
  (46, 'blob_upload_begin',          '{text,text,text,bigint}',                                'bigint',       true,  '{"search_path=pg_catalog, pg_temp"}'),
  (47, 'blob_upload_append',         '{bigint,bytea}',                                         'bigint',       true,  '{"search_path=pg_catalog, pg_temp"}'),
  (48, 'blob_upload_finish',         '{bigint}',                                               'jsonb',        true,  '{"search_path=pg_catalog, pg_temp"}'),
  (49, 'put_blob',                   '{text,text,text,bytea}',                                 'jsonb',        true,  '{"search_path=pg_catalog, pg_temp"}'),
  (50, 'blob_get',                   '{text,text,text,text}',                                  'setof record', true,  '{"search_path=pg_catalog, pg_temp"}'),
  (51, 'blob_gc',                    '{text,bigint,integer}',                                  'jsonb',        false, '{"search_path=pg_catalog, pg_temp"}'),
  -- 58 signed blob URLs: grant issuance and the two bare-URL verifiers (definers)
  (60, 'blob_upload_grant',          '{text,text,text,bigint}',                                'jsonb',        true,  '{"search_path=pg_catalog, pg_temp"}'),
  (61, 'blob_url_upload_begin',      '{text,text,bigint}',                                     'bigint',       true,  '{"search_path=pg_catalog, pg_temp"}'),
  (62, 'blob_url_get',               '{text,text}',                                            'setof record', true,  '{"search_path=pg_catalog, pg_temp"}'),
  -- 59 leases: revocation is the host's (owner-only)
  (52, 'revoke_lease',               '{text,text}',                                            'boolean',      false, '{"search_path=pg_catalog, pg_temp"}'),
  (53, 'revoke_leases',              '{text,text}',                                            'integer',      false, '{"search_path=pg_catalog, pg_temp"}'),
  (54, 'clear_lease',                '{text,text}',                                            'boolean',      false, '{"search_path=pg_catalog, pg_temp"}'),
  -- 80 cluster: the shard side of the router's cluster-wide calls, owner-only
  (40, 'cluster_call',               '{text,jsonb,boolean}',                                   'jsonb',        false, '{"search_path=pg_catalog, pg_temp"}'),
  -- 22 authenticator: registration is owner-only; the two serving entry points are SECURITY DEFINER
  (41, 'set_authenticator',          '{regprocedure}',                                         'void',         false, '{"search_path=pg_catalog, pg_temp"}'),
  (42, 'authenticate',               '{text,text,jsonb,jsonb}',                                'jsonb',        true,  '{"search_path=pg_catalog, pg_temp"}'),
  (43, 'handle_http_authenticated',  '{bytea,text,text,jsonb,jsonb,text}',                     'setof record', true,  '{"search_path=pg_catalog, pg_temp"}'),
  -- 26 crdt
  (44, 'set_crdt_merger',            '{text,regprocedure}',                                    'void',         false, '{"search_path=pg_catalog, pg_temp"}'),
  (45, 'crdt_merge',                 '{text,bytea,bytea}',                                     'bytea',        false, '{"search_path=pg_catalog, pg_temp"}'),
  -- 45 stats: a C function, owner-only (pg_stat_statements' reset convention)
  (55, 'stats_reset',                '{}',                                                     'void',         false, NULL),
  -- 56 commit wake-ups: C functions without catalog access, granted to the gateway role
  (63, 'commit_wakeup_mode',         '{}',                                                     'text',         false, NULL),
  (64, 'wait_commits',               '{bigint,integer}',                                       'setof record', false, NULL),
  -- 65 remote operations: registration owner-only; the serving entry point SECURITY DEFINER
  (67, 'register_query',            '{text,text,jsonb,text[],jsonb,text,jsonb,regprocedure,integer}', 'jsonb', false, '{"search_path=pg_catalog, pg_temp"}'),
  (68, 'register_queries',           '{jsonb,integer,jsonb}',                                  'jsonb',        false, '{"search_path=pg_catalog, pg_temp"}'),
  (69, 'register_command',           '{text,regprocedure,regprocedure}',                       'jsonb',        false, '{"search_path=pg_catalog, pg_temp"}'),
  (70, 'operations_http',            '{bytea,text,text,text}',                                 'setof record', true,  '{"search_path=pg_catalog, pg_temp"}'),
  (71, 'operation_get_row',          '{text,text}',                                            'jsonb',        false, '{"search_path=pg_catalog, pg_temp"}'),
  (72, 'operations_watch_rerun',     '{text,jsonb}',                                           'setof record', true,  '{"search_path=pg_catalog, pg_temp"}');
CREATE TEMP VIEW spec_sig AS
SELECT s.*, format('syncular.%s(%s)', s.name, array_to_string(s.args, ', ')) AS sig,
       to_regprocedure(format('syncular.%I(%s)', s.name, array_to_string(s.args, ','))) AS fn
  FROM spec s;

-- ---------------------------------------------------------------------------------------------
-- the public routines are exactly these (a new one must be added here, with its design)
SELECT set_eq(
  $$SELECT p.proname::text, array_to_string(p.proargtypes::regtype[], ',')
      FROM pg_proc p WHERE p.pronamespace = 'syncular'::regnamespace AND p.proname !~ '^_'$$,
  $$SELECT name::text, array_to_string(args, ',') FROM spec$$,
  'the public routines of schema syncular are exactly the 75 of src/sql/*.sql (one signature each)');
SELECT is_procedure('syncular', 'sync', ARRAY['bytea', 'text', 'text', 'bytea'], 'syncular.sync is a procedure');

-- 75 x 6: exists with exact argument types; result; definer; proconfig; COMMENT; no PUBLIC EXECUTE
SELECT has_function('syncular', name, args::name[], sig || ' exists') FROM spec_sig ORDER BY ord;
SELECT function_returns('syncular', name, args::name[], returns, sig || ' returns ' || returns)
  FROM spec_sig ORDER BY ord;
SELECT CASE WHEN definer THEN is_definer('syncular', name, args::name[], sig || ' is SECURITY DEFINER')
            ELSE isnt_definer('syncular', name, args::name[], sig || ' is SECURITY INVOKER') END
  FROM spec_sig WHERE name NOT IN ('push', 'pull') ORDER BY ord;
SELECT is_definer('syncular', name, args::name[], sig || ' is SECURITY DEFINER')
  FROM spec_sig WHERE name IN ('push', 'pull') ORDER BY ord;
SELECT is((SELECT p.proconfig FROM pg_proc p WHERE p.oid = fn), config,
          sig || CASE WHEN config IS NULL THEN ' has no SET clause' ELSE ' pins search_path = pg_catalog, pg_temp' END)
  FROM spec_sig ORDER BY ord;
SELECT ok(obj_description(fn, 'pg_proc') IS NOT NULL, sig || ' has a COMMENT') FROM spec_sig ORDER BY ord;
SELECT ok(NOT has_function_privilege('public', fn, 'EXECUTE'), 'PUBLIC cannot EXECUTE ' || sig)
  FROM spec_sig ORDER BY ord;

-- ---------------------------------------------------------------------------------------------
-- the same rules over every routine of the schema, internal ones included
SELECT is_empty(
  $$SELECT p.oid::regprocedure::text FROM pg_proc p
     WHERE p.pronamespace = 'syncular'::regnamespace
       AND (p.proacl IS NULL OR EXISTS (SELECT 1 FROM aclexplode(p.proacl) a
                                          WHERE a.grantee = 0 AND a.privilege_type = 'EXECUTE'))$$,
  'no routine of schema syncular is executable by PUBLIC (a NULL proacl would mean the default grant)');
SELECT is_empty(
  $$SELECT p.oid::regprocedure::text FROM pg_proc p
     WHERE p.pronamespace = 'syncular'::regnamespace AND p.prosecdef
       AND p.proconfig IS DISTINCT FROM '{"search_path=pg_catalog, pg_temp"}'$$,
  'every SECURITY DEFINER routine pins search_path = pg_catalog, pg_temp');
SELECT is_empty(
  $$SELECT p.oid::regprocedure::text FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
     WHERE p.pronamespace = 'syncular'::regnamespace AND l.lanname IN ('plpgsql', 'sql')
       AND p.oid <> 'syncular.ensure_schema(jsonb,jsonb,text)'::regprocedure
       AND p.proconfig IS DISTINCT FROM '{"search_path=pg_catalog, pg_temp"}'$$,
  'every plpgsql/sql routine but ensure_schema (internal _ helpers included) pins search_path = pg_catalog, pg_temp');
SELECT is((SELECT proconfig FROM pg_proc WHERE oid = 'syncular._ensure_schema(jsonb,jsonb,text,text)'::regprocedure),
          '{"search_path=pg_catalog, pg_temp"}'::text[],
          'syncular._ensure_schema (the body of ensure_schema) pins search_path = pg_catalog, pg_temp');
SELECT ok(has_schema_privilege('public', 'syncular', 'USAGE'), 'PUBLIC has USAGE on schema syncular');
-- the DDL guard (33_ddl_guard.sql): two enabled event triggers of the extension
SELECT set_eq(
  $$SELECT e.evtname || ' ' || e.evtevent || ' ' || e.evtenabled::text || ' ' || e.evtfoid::regprocedure::text
      FROM pg_event_trigger e JOIN pg_depend d ON d.classid = 'pg_event_trigger'::regclass AND d.objid = e.oid
                                              AND d.deptype = 'e'
     WHERE d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'syncular')$$,
  ARRAY['syncular_guard_alter ddl_command_start O syncular._guard_synced_ddl()',
        'syncular_guard_drop sql_drop O syncular._guard_synced_ddl()'],
  'the extension''s event triggers are syncular_guard_alter and syncular_guard_drop, enabled');

-- ---------------------------------------------------------------------------------------------
-- views: exist, are commented, are owner-only
SELECT set_eq(
  $$SELECT c.relname::text FROM pg_class c WHERE c.relnamespace = 'syncular'::regnamespace AND c.relkind = 'v'$$,
  ARRAY['partitions', 'clients', 'commits', 'changes', 'reactions', 'stats', 'stats_tables', 'partition_lag', 'client_lag', 'push_results'],
  'the views of schema syncular are partitions, clients, commits, changes, reactions, stats, stats_tables, partition_lag, client_lag, push_results');
SELECT has_view('syncular', v, 'view syncular.' || v || ' exists')
  FROM unnest(ARRAY['partitions', 'clients', 'commits', 'changes', 'reactions', 'stats', 'stats_tables', 'partition_lag', 'client_lag', 'push_results']::name[]) v;
SELECT ok(obj_description(to_regclass('syncular.' || v), 'pg_class') IS NOT NULL, 'view syncular.' || v || ' has a COMMENT')
  FROM unnest(ARRAY['partitions', 'clients', 'commits', 'changes', 'reactions', 'stats', 'stats_tables', 'partition_lag', 'client_lag', 'push_results']) v;
SELECT ok(NOT has_table_privilege('public', 'syncular.' || v, 'SELECT'), 'PUBLIC cannot SELECT syncular.' || v)
  FROM unnest(ARRAY['partitions', 'clients', 'commits', 'changes', 'reactions', 'stats', 'stats_tables', 'partition_lag', 'client_lag', 'push_results']) v;

-- the statistics follow pg_stat_statements: pg_read_all_stats reads them (views and their C
-- functions), nobody else but the owner; the lag views are owner-only like the others
SELECT ok(has_table_privilege('pg_read_all_stats', 'syncular.' || v, 'SELECT'), 'pg_read_all_stats can SELECT syncular.' || v)
  FROM unnest(ARRAY['stats', 'stats_tables']) v;
SELECT ok(has_function_privilege('pg_read_all_stats', f, 'EXECUTE'), 'pg_read_all_stats can EXECUTE ' || f)
  FROM unnest(ARRAY['syncular._stats()', 'syncular._stats_tables()']) f;
SELECT ok(NOT has_function_privilege('pg_read_all_stats', 'syncular.stats_reset()', 'EXECUTE'),
          'pg_read_all_stats cannot EXECUTE syncular.stats_reset()');
SELECT ok(NOT has_table_privilege('pg_read_all_stats', 'syncular.' || v, 'SELECT'), 'pg_read_all_stats cannot SELECT syncular.' || v)
  FROM unnest(ARRAY['partition_lag', 'client_lag', 'push_results']) v;

-- every catalog table and view says what it holds (\dt+ / \dv+ syncular.*)
SELECT is_empty(
  $$SELECT c.relname::text FROM pg_class c
     WHERE c.relnamespace = 'syncular'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm')
       AND obj_description(c.oid, 'pg_class') IS NULL$$,
  'every table and view of schema syncular has a COMMENT');
-- ... and every column of every catalog table (\d+ syncular.sync_*)
SELECT is_empty(
  $$SELECT c.relname || '.' || a.attname FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
     WHERE c.relnamespace = 'syncular'::regnamespace AND c.relkind IN ('r', 'p')
       AND a.attnum > 0 AND NOT a.attisdropped AND col_description(c.oid, a.attnum) IS NULL$$,
  'every column of every table of schema syncular has a COMMENT');

SELECT * FROM finish();
ROLLBACK;
