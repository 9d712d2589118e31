-- syncular install script, part 59: auth leases (SPEC §7.3; src/leases.c; README "Auth leases").

CREATE TABLE syncular.sync_leases (
  partition       TEXT NOT NULL,
  client_id       TEXT NOT NULL,
  lease_id        TEXT NOT NULL UNIQUE,
  actor_id        TEXT NOT NULL,
  allowed_scopes  JSONB NOT NULL,
  issued_at_ms    BIGINT NOT NULL,
  expires_at_ms   BIGINT NOT NULL,
  revoked_at_ms   BIGINT,
  PRIMARY KEY (partition, client_id)
);
CREATE INDEX sync_leases_by_actor ON syncular.sync_leases (partition, actor_id);
SELECT pg_catalog.pg_extension_config_dump('syncular.sync_leases', '');
REVOKE ALL ON syncular.sync_leases FROM PUBLIC;
COMMENT ON TABLE syncular.sync_leases IS
'Auth leases (SPEC §7.3.1): per (partition, client id) the leaseId, the actor, the allowed scopes the resolver returned at issuance and issued/expires (epoch ms); revoked_at_ms once revoked. Issued and slid by rounds while syncular.lease_ttl_ms > 0 (a revoked row is replaced by a fresh lease, new lease_id, on the next live-authorized round unless syncular.lease_reissue_after_revoke is off); read when the resolver signals an outage; revoked by revoke_lease / revoke_leases, deleted by clear_lease and unregister_schema.';

CREATE FUNCTION syncular.revoke_lease(partition text, lease_id text) RETURNS boolean
LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
  UPDATE syncular.sync_leases l
     SET revoked_at_ms = syncular.now_ms()
   WHERE l.partition = revoke_lease.partition AND l.lease_id = revoke_lease.lease_id
     AND l.revoked_at_ms IS NULL
  RETURNING true
$$;

CREATE FUNCTION syncular.revoke_leases(partition text, actor_id text) RETURNS integer
LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
  WITH r AS (
    UPDATE syncular.sync_leases l
       SET revoked_at_ms = syncular.now_ms()
     WHERE l.partition = revoke_leases.partition AND l.actor_id = revoke_leases.actor_id
       AND l.revoked_at_ms IS NULL
    RETURNING 1)
  SELECT count(*)::integer FROM r
$$;

CREATE FUNCTION syncular.clear_lease(partition text, lease_id text) RETURNS boolean
LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
  DELETE FROM syncular.sync_leases l
   WHERE l.partition = clear_lease.partition AND l.lease_id = clear_lease.lease_id
  RETURNING true
$$;

COMMENT ON FUNCTION syncular.revoke_lease(text, text) IS
'Revokes one auth lease (SPEC §7.3.4): partition and the leaseId of the LEASE frame. Durable: the revoked leaseId is never slid, never accepted again and never issued again; until the client''s next live-authorized round, a round that would be lease-authorized (resolver outage) fails with sync.auth_lease_revoked (HTTP 401). The next round the scope resolver authorizes replaces it with a fresh lease under a new leaseId (SPEC §7.3.4; set syncular.lease_reissue_after_revoke = off to keep the client without a lease until clear_lease instead); local data is not purged. To stop a client for good, make the resolver deny its actor. Returns true when a live lease was revoked, NULL when none matched (unknown or already revoked). Owner only.';
COMMENT ON FUNCTION syncular.revoke_leases(text, text) IS
'Revokes every live auth lease of an actor in a partition (SPEC §7.3.4), as revoke_lease does for one. Returns how many were revoked. Owner only.';
COMMENT ON FUNCTION syncular.clear_lease(text, text) IS
'Deletes one auth lease record (SPEC §7.3.4: the host clears a revocation), revoked or not: the client''s next authorized round mints a new leaseId. With syncular.lease_reissue_after_revoke = off this is the only way a revoked client gets a lease again. partition, lease_id as revoke_lease. Returns true when a record was deleted, NULL otherwise. Owner only.';
