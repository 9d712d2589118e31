COMMENT ON COLUMN syncular.sync_crdt_mergers.crdt_type IS 'crdtType served by the merger (SPEC §5.10).';
COMMENT ON COLUMN syncular.sync_crdt_mergers.fn IS 'Merger function (stored bytea, incoming bytea) RETURNS bytea.';
