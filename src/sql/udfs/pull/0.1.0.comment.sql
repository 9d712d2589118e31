COMMENT ON FUNCTION syncular.pull(text, text, text, jsonb, jsonb) IS
'Pulls from SQL through the same engine as clients (SPEC §4): builds a wire-3 request, serves it with '
'syncular.handle() and returns one section per subscription in request order. '
'subscriptions: [{"id": text, "table": text, "scopes": {variable: [values]}, "cursor"?: int (default -1 = bootstrap), '
'"bootstrapState"?: json}]; limits: {"limitCommits", "limitSnapshotRows", "maxSnapshotPages"} (0 or absent = defaults). '
'Returns [{"id", "status": "active"|"revoked"|"reset", "reasonCode", "effectiveScopes", "bootstrap", "commits": '
'[{"commitSeq", "createdAtMs", "actorId", "changes": [{"table", "rowId", "op", "rowVersion"?, "scopes", "row"?: {...}}]}], '
'"rows": [{"serverVersion", "row": {...}}], "nextCursor", "bootstrapState"?}]. Raises what syncular.handle() raises for '
'request-level errors (sync.invalid_subscription 22023, sync.unknown_table 42P01, ...).';
