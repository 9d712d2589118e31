-- Armed faults (one-shot): the next matching lookup of the engine consumes the row.
CREATE TABLE syncular.sync_faults (
  fault       TEXT NOT NULL,
  partition   TEXT NOT NULL,
  client_id   TEXT NOT NULL,
  armed_at_ms BIGINT NOT NULL,
  PRIMARY KEY (partition, client_id, fault)
);
