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
