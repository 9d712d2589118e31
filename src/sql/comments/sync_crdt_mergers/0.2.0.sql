COMMENT ON TABLE syncular.sync_crdt_mergers IS
  'CRDT merger registry (SPEC §5.10.2): crdtType -> fn(stored bytea, incoming bytea) RETURNS bytea. Written by syncular.set_crdt_merger; read by every push that merges a crdt column.';
