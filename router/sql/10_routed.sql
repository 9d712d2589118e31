-- syncular_router install script, part 10: the calls routed to the shard of their partition.
--
-- Each public function has the signature of the syncular function of the same name and runs it
-- on one shard: PL/Proxy sends "select ... from syncular.<name>($1::type, ...)" to the logical
-- shard of hashtext(partition), in its own transaction there (autocommit; no two-phase commit
-- with the router's transaction).  The procedure syncular.sync is not routed (PL/Proxy calls
-- functions only); a routed handle() commits when its round ends, as a one-round procedure call.
-- The wrappers themselves are generated (part 15, built from router/routed.txt and the engine's
-- install script by scripts/gen-router-routed.py), so their signatures are the engine's.

-- the row type claim_reactions returns (the shard's table syncular.sync_reactions)
CREATE TYPE syncular.sync_reactions AS (
  partition                TEXT,
  idempotency_key          TEXT,
  type                     TEXT,
  version                  INTEGER,
  payload                  JSONB,
  source_client_id         TEXT,
  source_client_commit_id  TEXT,
  source_commit_seq        BIGINT,
  created_at_ms            BIGINT,
  available_at_ms          BIGINT,
  status                   TEXT,
  attempts                 INTEGER,
  max_attempts             INTEGER,
  lease_owner              TEXT,
  lease_expires_at_ms      BIGINT,
  completed_at_ms          BIGINT,
  last_failure             JSONB
);
COMMENT ON TYPE syncular.sync_reactions IS
'The rows of the shard table syncular.sync_reactions, as syncular.claim_reactions returns them through the router.';

