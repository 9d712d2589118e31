-- client records (§4.5)
CREATE TABLE syncular.sync_clients (
  partition      TEXT NOT NULL,
  client_id      TEXT NOT NULL,
  actor_id       TEXT NOT NULL,
  wire_version   INTEGER NOT NULL DEFAULT 1,
  cursor         BIGINT NOT NULL,
  subscriptions  JSONB NOT NULL,
  updated_at_ms  BIGINT NOT NULL,
  PRIMARY KEY (partition, client_id)
);
