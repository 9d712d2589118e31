-- A role that may run realtime_fanout is a gateway role (docs/realtime.md §2): it gets
-- realtime_fanout_arrays too, which the gateway of 0.7.0 calls instead.  The same block runs in
-- the engine's delta and in the router's (on its routed wrapper of the same signature).
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
