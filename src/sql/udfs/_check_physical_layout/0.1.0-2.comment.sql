COMMENT ON FUNCTION syncular._check_physical_layout(jsonb) IS
'Internal; ensure_schema hook for a same-version open, after the stored-layout check (RFC 0007 §6.2). compiled: '
'the compiled schema (docs/compiled-schema.md). For each table in schema order the relation is resolved exactly '
'as the row statements name it, to_regclass(format(''%I.%I'', appSchema, name)), so mixed-case names work; reads '
'pg_attribute, format_type and pg_index (indisprimary, indkey ordinality). First failure wins, raising '
'sync.storage.physical_layout_mismatch (SQLSTATE 55000, message "a synced table does not match the storage layout '
'the running code reads and writes") with details {phase: "storage_migration", table, reason: "missing_table"} | '
'{phase, table, column, reason: "missing_column"} | {phase, table, column, reason: "type", expected '
'(TEXT/BIGINT/JSONB/BYTEA), actual (format_type text)} | {phase, table, column, reason: "nullability", expected, '
'actual ("not_null"/"nullable")} | {phase, table, column, reason: "primary_key"}. App column types/nullability are not checked; extra non-PK columns are allowed. Also '
'sync.storage.schema_not_registered (55000) when no app schema is known. Writes nothing.';
