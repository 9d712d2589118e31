-- syncular 0.6.0 -> 0.7.0 (ALTER EXTENSION syncular UPDATE TO '0.7.0').
\echo Use "ALTER EXTENSION syncular UPDATE TO '0.7.0'" to load this file. \quit

-- Realtime fanout with the registrations as text (src/fanout.c, src/fanout_regs.c): the gateway
-- passes each socket's registration text and the backend reuses its parse from commit to commit.
--#include udfs/realtime_fanout_arrays/0.7.0.sql
--#include udfs/realtime_fanout_arrays/0.7.0.comment.sql
REVOKE EXECUTE ON FUNCTION syncular.realtime_fanout_arrays(text, bigint, bigint[], bigint[], text[]) FROM PUBLIC;
-- A role that runs realtime_fanout is a gateway role: it gets realtime_fanout_arrays too, which
-- the gateway of 0.7.0 calls instead.
DO $$
DECLARE r record;
BEGIN
  FOR r IN SELECT DISTINCT a.grantee::regrole AS role
             FROM pg_catalog.pg_proc p, LATERAL pg_catalog.aclexplode(p.proacl) a
            WHERE p.oid = 'syncular.realtime_fanout(text,bigint,jsonb)'::pg_catalog.regprocedure
              AND a.privilege_type = 'EXECUTE' AND a.grantee <> 0 AND a.grantee <> p.proowner
  LOOP
    EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION syncular.realtime_fanout_arrays(text, '
                              'bigint, bigint[], bigint[], text[]) TO %s', r.role);
  END LOOP;
END $$;

-- The per-backend registration cache, observable (src/fanout_regs.c): realtime_connect now
-- parses the registration it answers into it.
--#include udfs/realtime_registration_cache/0.7.0.sql
--#include udfs/realtime_registration_cache/0.7.0.comment.sql
REVOKE EXECUTE ON FUNCTION syncular.realtime_registration_cache() FROM PUBLIC;
