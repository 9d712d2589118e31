-- syncular 0.2.0 -> 0.3.0 (ALTER EXTENSION syncular UPDATE TO '0.3.0').
\echo Use "ALTER EXTENSION syncular UPDATE TO '0.3.0'" to load this file. \quit

-- 56_wakeup: commit wake-ups (src/wakeup.c)
--#include udfs/commit_wakeup_mode/0.3.0.sql

--#include udfs/commit_wakeup_mode/0.3.0.comment.sql

--#include udfs/wait_commits/0.3.0.sql

--#include udfs/wait_commits/0.3.0.comment.sql

-- 30_engine: handles COMMENT names the commit wake-up modes (src/wakeup.c)
--#include udfs/handle/0.3.0.comment.sql

-- A role that runs realtime_fanout is a gateway role: it gets the two wake-up functions too, so
-- a gateway keeps receiving wake-ups when commit_wakeup resolves to the ring after the update.
DO $$
DECLARE r record;
BEGIN
  FOR r IN SELECT DISTINCT a.grantee::regrole AS role
             FROM pg_catalog.pg_proc p, LATERAL pg_catalog.aclexplode(p.proacl) a
            WHERE p.oid = 'syncular.realtime_fanout(text,bigint,jsonb)'::pg_catalog.regprocedure
              AND a.privilege_type = 'EXECUTE' AND a.grantee <> 0 AND a.grantee <> p.proowner
  LOOP
    EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION syncular.commit_wakeup_mode(), '
                              'syncular.wait_commits(bigint, integer) TO %s', r.role);
  END LOOP;
END $$;

-- Nothing new is executable by PUBLIC (90_grants).  Keep this last.
REVOKE EXECUTE ON ALL ROUTINES IN SCHEMA syncular FROM PUBLIC;
