CREATE TABLE syncular.sync_crdt_mergers (
  crdt_type TEXT PRIMARY KEY CHECK (crdt_type <> ''),
  fn        REGPROCEDURE NOT NULL
);
