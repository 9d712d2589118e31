-- syncular_router 0.6.0 -> 0.7.0 (ALTER EXTENSION syncular_router UPDATE TO '0.7.0').
-- The router's version follows the shards' syncular version (a gateway checks it).
\echo Use "ALTER EXTENSION syncular_router UPDATE TO '0.7.0'" to load this file. \quit

-- every routed wrapper, re-created from the engine's signatures (router/routed.txt)
--#include generated/routed.sql

-- the wrappers new in 0.7.0 are owner-only until granted (90_grants.sql's model); a role that
-- may run realtime_fanout is a gateway role and gets realtime_fanout_arrays, which the gateway
-- of 0.7.0 calls instead
REVOKE EXECUTE ON FUNCTION syncular._r_realtime_fanout_arrays(text, bigint, bigint[], bigint[], text[]),
  syncular.realtime_fanout_arrays(text, bigint, bigint[], bigint[], text[]) FROM PUBLIC;
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
