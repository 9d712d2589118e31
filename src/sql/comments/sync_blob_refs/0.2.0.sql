COMMENT ON TABLE syncular.sync_blob_refs IS
'The blob reference index (SPEC §5.9.4): the blob ids referenced by blob_ref values of current rows, per (partition, table, row id); replaced by every applied upsert, removed with the row. Read by blob_get (download authorization) and blob_gc (orphans).';
