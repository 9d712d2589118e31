COMMENT ON COLUMN syncular.sync_schema_meta.id IS 'Singleton key: always 1.';
COMMENT ON COLUMN syncular.sync_schema_meta.schema_version IS 'Schema version whose layouts are recorded.';
COMMENT ON COLUMN syncular.sync_schema_meta.layouts IS 'Stored row layouts of the registered schema (checked against the physical tables).';
