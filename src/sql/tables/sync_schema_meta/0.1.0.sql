-- the schema marker (singleton)
CREATE TABLE syncular.sync_schema_meta (
  id              INTEGER PRIMARY KEY CHECK (id = 1),
  schema_version  BIGINT NOT NULL,
  layouts         TEXT NOT NULL DEFAULT '{}'
);
