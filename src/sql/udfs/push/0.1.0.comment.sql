COMMENT ON FUNCTION syncular.push(text, text, text, jsonb) IS
'Pushes commits from SQL through the same engine as clients (SPEC §6): builds a wire-3 request, serves it with '
'syncular.handle() in the caller''s transaction, and returns one result per commit. '
'commits: [{"clientCommitId": text, "operations": [{"table": text, "op": "upsert"|"delete", "rowId"?: text, '
'"baseVersion"?: int (absent = last write wins, 0 = insert intent), "row"?: {column: value}}]}] — the row is sparse: '
'only its keys are written; the primary key is required; bytes as base64. '
'Returns [{"clientCommitId", "status": "applied"|"cached"|"rejected", "commitSeq"?, "results": [{"opIndex", "status", '
'"code"?, "message"?, "retryable"?, "serverVersion"?, "serverRow"?: {...}, "conflictColumns"?: [names]}], "details"?}]. '
'Raises what syncular.handle() raises for request-level errors (e.g. sync.invalid_client_id 22023, '
'sync.too_many_operations 54000), sync.unknown_table (42P01) for an unknown table, '
'sync.storage.schema_not_registered (55000) before ensure_schema. Partition state (epoch) is acquired on first use.';
