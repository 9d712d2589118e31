-- syncular install script, part 59: auth leases (SPEC §7.3; src/leases.c; README "Auth leases").

CREATE TABLE syncular.sync_leases (
  partition       TEXT COLLATE "C" NOT NULL,
  client_id       TEXT COLLATE "C" NOT NULL,
  lease_id        TEXT COLLATE "C" NOT NULL UNIQUE,
  actor_id        TEXT COLLATE "C" NOT NULL,
  allowed_scopes  JSONB NOT NULL,
  issued_at_ms    BIGINT NOT NULL,
  expires_at_ms   BIGINT NOT NULL,
  revoked_at_ms   BIGINT,
  PRIMARY KEY (partition, client_id)
);
--#include indexes/sync_leases_by_actor/0.2.0.sql
SELECT pg_catalog.pg_extension_config_dump('syncular.sync_leases', '');
REVOKE ALL ON syncular.sync_leases FROM PUBLIC;
--#include comments/sync_leases/0.4.0.sql

--#include udfs/revoke_lease/0.4.0.sql

--#include udfs/revoke_leases/0.4.0.sql

--#include udfs/clear_lease/0.2.0.sql

--#include udfs/revoke_lease/0.4.0.comment.sql
--#include udfs/revoke_leases/0.2.0.comment.sql
--#include udfs/clear_lease/0.4.0.comment.sql
