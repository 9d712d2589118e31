COMMENT ON TABLE syncular.sync_schema_meta IS
'The stored schema marker (singleton id 1): the registered schema version and the stored column layouts of every synced table, checked by ensure_schema and readiness (barrier-rfc0007 storage checks).';
